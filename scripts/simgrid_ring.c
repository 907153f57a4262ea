/* SPDX-License-Identifier: MIT
 *
 * simgrid_ring.c - the reference point of issue 12's scale figures: a
 * ring AllReduce played by SimGrid (its S4U actors, through the C API),
 * a fluid max-min simulator, on the platform the issue measured it on:
 * hosts of 8 GPUs, 300 GB/s NVLink into an NVSwitch, a 50 GB/s NIC per
 * GPU on a non-blocking rail fabric. Not part of ncclsim: built and run
 * by scripts/bench_scale.sh where SimGrid is installed (Debian:
 * libsimgrid-dev), to print its wall time beside ncclsim's flow runs.
 *
 * Each channel is a ring over every GPU: channel c visits a host's GPUs
 * from c mod 8 on and leaves it from the GPU before, to GPU c mod 8 of
 * the next host (NCCL's rings on rail fabrics cross hosts on changing
 * GPUs the same way). An actor per channel and GPU sends its chunk to
 * the next one 2 (n - 1) times, a step at a time (sends and receives
 * overlap: both are posted, then waited for), as NCCL's ring AllReduce
 * does without its slicing and pipelining. The platform keeps routes
 * for the ring's neighbours only (2n), so it stays small at any size.
 * SimGrid's network model is CM02 (plain max-min, no TCP factors, no
 * cross traffic), the one comparable to ncclsim's flow fidelity.
 *
 *   simgrid_ring NODES BYTES [CHANNELS]
 *
 * Prints one line: ranks, channels, bytes, simulated time, busbw and
 * the number of messages. Exit status 2 on a bad argument.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#define GPUS_PER_HOST 8
#define NVLINK_BW "300GBps"
#define NIC_BW "50GBps"
#define NVLINK_LAT "250ns" /* a GPU port, then the NVSwitch's */
#define NIC_LAT "500ns"    /* a NIC and half the fabric, each side */

typedef struct ring_cfg {
    unsigned nodes, ranks, channels;
    double chunk; /* bytes a step, per channel */
    unsigned steps;
} ring_cfg;

static ring_cfg cfg;
static int payload; /* messages carry no data, only their size */

/* The GPU at position p of channel c's ring. */
static unsigned ring_gpu(unsigned c, unsigned p)
{
    return p / GPUS_PER_HOST * GPUS_PER_HOST +
           (c + p % GPUS_PER_HOST) % GPUS_PER_HOST;
}

static void rank_main(int argc, char **argv)
{
    if (argc != 3)
        return;
    unsigned c = (unsigned)atoi(argv[1]), p = (unsigned)atoi(argv[2]);
    char name[48];
    snprintf(name, sizeof name, "c%u-p%u", c, p);
    sg_mailbox_t in = sg_mailbox_by_name(name);
    snprintf(name, sizeof name, "c%u-p%u", c, (p + 1) % cfg.ranks);
    sg_mailbox_t out = sg_mailbox_by_name(name);
    for (unsigned s = 0; s < cfg.steps; s++) {
        void *got = NULL;
        sg_comm_t comms[2] = {
            sg_mailbox_put_async(out, &payload, (long)cfg.chunk),
            sg_mailbox_get_async(in, &got),
        };
        sg_comm_wait_all(comms, 2);
    }
}

static int parse_uint(const char *s, unsigned long long max,
                      unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v == 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Writes the platform to f: per GPU a host and four links (NVLink up and
 * down, NIC up and down), and one route per ring neighbour pair. */
static void write_platform(FILE *f)
{
    fprintf(f, "<?xml version='1.0'?>\n"
               "<!DOCTYPE platform SYSTEM "
               "\"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n"
               "<zone id=\"world\" routing=\"Full\">\n");
    for (unsigned g = 0; g < cfg.ranks; g++) {
        fprintf(f, "<host id=\"g%u\" speed=\"1Gf\"/>\n", g);
        fprintf(f, "<link id=\"nvu%u\" bandwidth=\"%s\" latency=\"%s\"/>\n",
                g, NVLINK_BW, NVLINK_LAT);
        fprintf(f, "<link id=\"nvd%u\" bandwidth=\"%s\" latency=\"%s\"/>\n",
                g, NVLINK_BW, NVLINK_LAT);
        fprintf(f, "<link id=\"nicu%u\" bandwidth=\"%s\" latency=\"%s\"/>\n",
                g, NIC_BW, NIC_LAT);
        fprintf(f, "<link id=\"nicd%u\" bandwidth=\"%s\" latency=\"%s\"/>\n",
                g, NIC_BW, NIC_LAT);
    }
    unsigned crossings = cfg.channels < GPUS_PER_HOST ? cfg.channels
                                                      : GPUS_PER_HOST;
    for (unsigned h = 0; h < cfg.nodes; h++) {
        unsigned base = h * GPUS_PER_HOST;
        unsigned next = (h + 1) % cfg.nodes * GPUS_PER_HOST;
        for (unsigned i = 0; i < GPUS_PER_HOST; i++) {
            unsigned a = base + i, b = base + (i + 1) % GPUS_PER_HOST;
            fprintf(f,
                    "<route src=\"g%u\" dst=\"g%u\" symmetrical=\"NO\">"
                    "<link_ctn id=\"nvu%u\"/><link_ctn id=\"nvd%u\"/>"
                    "</route>\n",
                    a, b, a, b);
        }
        for (unsigned c = 0; c < crossings; c++) {
            unsigned a = base + (c + GPUS_PER_HOST - 1) % GPUS_PER_HOST;
            unsigned b = next + c % GPUS_PER_HOST;
            fprintf(f,
                    "<route src=\"g%u\" dst=\"g%u\" symmetrical=\"NO\">"
                    "<link_ctn id=\"nicu%u\"/><link_ctn id=\"nicd%u\"/>"
                    "</route>\n",
                    a, b, a, b);
        }
    }
    fprintf(f, "</zone>\n</platform>\n");
}

int main(int argc, char **argv)
{
    unsigned long long nodes, bytes, channels = 1;
    if (argc < 3 || argc > 4 || parse_uint(argv[1], 65536, &nodes) != 0 ||
        nodes < 2 || parse_uint(argv[2], 1ull << 40, &bytes) != 0 ||
        (argc == 4 && parse_uint(argv[3], 64, &channels) != 0)) {
        fprintf(stderr, "usage: simgrid_ring NODES (2..65536) BYTES "
                        "[CHANNELS (1..64)]\n");
        return 2;
    }
    cfg.nodes = (unsigned)nodes;
    cfg.ranks = cfg.nodes * GPUS_PER_HOST;
    cfg.channels = (unsigned)channels;
    cfg.chunk = (double)bytes / channels / cfg.ranks;
    cfg.steps = 2 * (cfg.ranks - 1);

    char path[] = "/tmp/simgrid_ring.XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (f == NULL) {
        fprintf(stderr, "simgrid_ring: cannot write a platform in /tmp\n");
        return 1;
    }
    write_platform(f);
    if (fclose(f) != 0) {
        unlink(path);
        fprintf(stderr, "simgrid_ring: cannot write %s\n", path);
        return 1;
    }

    char *sg_argv[] = {argv[0],
                       "--cfg=network/model:CM02",
                       "--cfg=network/crosstraffic:0",
                       "--cfg=contexts/stack-size:64",
                       "--log=root.thres:critical",
                       NULL};
    int sg_argc = 5;
    simgrid_init(&sg_argc, sg_argv);
    simgrid_load_platform(path);
    unlink(path);
    for (unsigned c = 0; c < cfg.channels; c++)
        for (unsigned p = 0; p < cfg.ranks; p++) {
            char cs[16], ps[16], name[32];
            snprintf(cs, sizeof cs, "%u", c);
            snprintf(ps, sizeof ps, "%u", p);
            snprintf(name, sizeof name, "c%u-p%u", c, p);
            char *args[] = {name, cs, ps};
            char host[24];
            snprintf(host, sizeof host, "g%u", ring_gpu(c, p));
            sg_actor_create(name, sg_host_by_name(host), rank_main, 3, args);
        }
    simgrid_run();
    double t = simgrid_get_clock();
    double busbw = (double)bytes / t * 2.0 * (cfg.ranks - 1) / cfg.ranks;
    printf("simgrid_ring: %u ranks, %u channel(s), %llu bytes: %.2f us "
           "simulated, busbw %.2f GB/s, %llu messages\n",
           cfg.ranks, cfg.channels, bytes, t * 1e6, busbw / 1e9,
           (unsigned long long)cfg.channels * cfg.ranks * cfg.steps);
    return 0;
}
