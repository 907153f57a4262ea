/* SPDX-License-Identifier: MIT
 *
 * test_soak.c - the fault soak: seeded random fault plans (qp_error,
 * port_down, link_down, link_degraded, loss; failover rebind_qp,
 * rebind_nic or fail; random times, channels, QPs, channel modes,
 * protocols and collectives) on seven topologies (the seed example, two
 * DGX H100, two DGX A100, two A100 PCIe hosts, dual-port NICs, RoCE
 * without GPUDirect, four single-GPU hosts).
 * Every plan the scenario checks accept must either complete with every
 * byte delivered exactly once on every connection (the executor's slices
 * and bytes, and the NET transport's own count of pieces accepted at the
 * receiver, with no piece matched to the wrong slice) or stop with the
 * fault report (NSIM_EFAULT and a message naming the channel); never a
 * stall or another error. The same plan seed gives the same outcome.
 * Plans the checks refuse are counted apart and must stay a minority.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nsim_test.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"

/* ASan + UBSan runs are ~10x slower: fewer plans there. */
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_PLANS 80
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_PLANS 80
#endif
#endif
#ifndef SOAK_PLANS
#define SOAK_PLANS 240
#endif

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t pick(rng *r, uint32_t n) { return (uint32_t)(next(r) % n); }
static double unit(rng *r) { return (double)(next(r) >> 11) / 9007199254740992.0; }

typedef enum outcome {
    OUT_DONE,    /* completed, every byte once */
    OUT_FAULT,   /* stopped with the fault report */
    OUT_REFUSED, /* the scenario checks refused the plan */
    OUT_BAD,     /* a stall, a lost or doubled byte, another error */
} outcome;

typedef struct result {
    outcome out;
    uint64_t time_ps, events;
    uint64_t failovers, dup_pieces; /* failovers that happened; pieces
                                     * that came twice and were ignored */
    char msg[600];
} result;

typedef struct topo_desc {
    const char *file;     /* under the source tree */
    uint32_t hosts, nics; /* NICs per host */
    const char *nic_fmt;  /* printf of host, nic */
    const char *sw_fmt;   /* the NIC's switch: printf of nic */
    double span_us;       /* about how long the runs take */
} topo_desc;

/* The seed; two DGX H100 (rails, spine); two DGX A100 and two A100 PCIe
 * hosts (GDR flush reads before Hopper; the DGX A100's planning is slow,
 * ~0.4 s, so it is drawn less); dual-port NICs (every message split over
 * the ports); RoCE without GPUDirect (staged through host memory); four
 * hosts of one GPU each (a ring over the network only). */
static const topo_desc topos[] = {
    {"scenarios/seed-4gpu.topo.json", 2, 1, "h%u.nic", "ib.sw", 700},
    {"scenarios/dgx-h100-2node.topo.json", 2, 8, "h%u.nic%u", "ib.rail%u",
     250},
    {"tests/data/dgx-a100-2node.topo.json", 2, 8, "h%u.nic%u", "leaf.r%u.0",
     400},
    {"tests/data/a100pcie-2host-hdr.topo.json", 2, 1, "h%u.nic0", "ib.sw0",
     400},
    {"tests/data/seed-dualport.topo.json", 2, 1, "h%u.nic", "ib.sw", 500},
    {"tests/data/h100-2host-1gpu-roce-nogdr.topo.json", 2, 1, "h%u.nic0",
     "eth.rail0", 400},
    {"tests/data/h100-4host-1gpu.topo.json", 4, 1, "h%u.nic0", "ib.rail0",
     400},
};
static const uint32_t topo_weight[] = {5, 5, 1, 2, 3, 2, 2}; /* of 20 */

static const topo_desc *pick_topo(uint32_t v)
{
    uint32_t i = 0;
    while (v >= topo_weight[i])
        v -= topo_weight[i++];
    return &topos[i];
}

static void nic_name(const topo_desc *t, uint32_t h, uint32_t n, char *out,
                     size_t len)
{
    snprintf(out, len, t->nic_fmt, h, n); /* formats may ignore n */
}

/* One random fault as JSON. */
static int fault_json(rng *r, const topo_desc *t, uint32_t nch, uint32_t qps,
                      char *out, size_t len)
{
    char nic[64], sw[64];
    uint32_t h = pick(r, t->hosts), n = pick(r, t->nics);
    double at = unit(r) * t->span_us;
    nic_name(t, h, n, nic, sizeof nic);
    snprintf(sw, sizeof sw, t->sw_fmt, n);
    switch (pick(r, 5)) {
    case 0: /* now and then a channel or QP out of range: refused */
        return snprintf(out, len,
                        "{\"at\": \"%.3f us\", \"kind\": \"qp_error\", "
                        "\"channel\": %u, \"qp\": %u}",
                        at, pick(r, nch + (pick(r, 16) == 0)),
                        pick(r, qps + (pick(r, 16) == 0)));
    case 1:
        return snprintf(out, len,
                        "{\"at\": \"%.3f us\", \"kind\": \"port_down\", "
                        "\"nic\": \"%s\"}",
                        at, nic);
    case 2:
        return pick(r, 2)
                   ? snprintf(out, len,
                              "{\"at\": \"%.3f us\", \"kind\": \"link_down\","
                              " \"a\": \"%s\", \"b\": \"%s\"}",
                              at, nic, sw)
                   : snprintf(out, len,
                              "{\"at\": \"%.3f us\", \"kind\": \"link_down\","
                              " \"a\": \"%s\", \"b\": \"%s\"}",
                              at, sw, nic);
    case 3:
        return snprintf(out, len,
                        "{\"at\": \"%.3f us\", \"kind\": \"link_degraded\", "
                        "\"a\": \"%s\", \"b\": \"%s\", \"bw\": \"%u Gb/s\"}",
                        at, nic, sw, 25 + 25 * pick(r, 12));
    default:
        return snprintf(out, len,
                        "{\"at\": \"%.3f us\", \"kind\": \"loss\", \"nic\": "
                        "\"%s\", \"probability\": %.4f}",
                        at * 0.5, nic, 0.0005 + 0.01 * unit(r));
    }
}

/* The scenario of plan `seed`, written to path. */
static void write_plan(uint64_t seed, const char *path)
{
    rng r = {seed * 0x2545f4914f6cdd1dull + 17};
    const topo_desc *t = pick_topo(pick(&r, 20));
    static const char *const colls[] = {"all_reduce_perf", "all_reduce_perf",
                                        "all_gather_perf",
                                        "reduce_scatter_perf"};
    static const char *const protos[] = {"Simple", "Simple", "Simple", "LL128",
                                         "LL"};
    static const uint32_t qps_of[] = {1, 2, 2, 4};
    const char *coll = colls[pick(&r, 4)];
    const char *proto = protos[pick(&r, 5)];
    const char *algo = strcmp(coll, "all_reduce_perf") == 0 && pick(&r, 4) == 0
                           ? "Tree"
                           : "Ring";
    uint32_t qps = qps_of[pick(&r, 4)];
    uint32_t nch = t->nics == 1 ? 2u + 2 * pick(&r, 2) : 2u << pick(&r, 4);
    uint32_t mib = 1u << pick(&r, 3);
    /* policies that cannot apply are refused: keep them rare */
    const char *pol;
    uint32_t pp = pick(&r, 20);
    if (pp < 4)
        pol = "fail";
    else if (pp < (t->nics > 1 ? 12u : 5u))
        pol = "rebind_nic";
    else
        pol = qps > 1 || pp == 19 ? "rebind_qp" : "rebind_nic";
    if (strcmp(pol, "rebind_nic") == 0 && t->nics == 1 && pp >= 5)
        pol = "fail";
    char faults[2048] = "";
    size_t used = 0;
    uint32_t nf = 1 + pick(&r, 3);
    for (uint32_t i = 0; i < nf; i++) {
        if (i > 0)
            used += (size_t)snprintf(faults + used, sizeof faults - used, ", ");
        used += (size_t)fault_json(&r, t, nch, qps, faults + used,
                                   sizeof faults - used);
    }
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fprintf(f,
            "{\"format\": \"ncclsim-scenario\", \"version\": 1,\n"
            " \"name\": \"soak-%llu\",\n"
            " \"topology\": \"%s/%s\",\n"
            " \"collective\": \"%s\", \"datatype\": \"float\", \"op\": "
            "\"sum\",\n"
            " \"min_bytes\": \"%uM\", \"max_bytes\": \"%uM\",\n"
            " \"protocol\": \"%s\", \"algorithm\": \"%s\", \"nchannels\": %u,"
            "\n \"qps_per_connection\": %u, \"channel_mode\": \"%s\",\n"
            " \"failover\": \"%s\", \"faults\": [%s],\n"
            " \"params\": {\"ib_timeout_exp\": %u}, \"seed\": %llu}\n",
            (unsigned long long)seed, NSIM_SOURCE_DIR, t->file, coll, mib, mib,
            proto, algo, nch, qps, pick(&r, 3) == 0 ? "shared" : "dedicated",
            pol, faults, 8 + pick(&r, 5), (unsigned long long)seed);
    fclose(f);
}

static void run_plan(uint64_t seed, const char *dir, result *out)
{
    char path[1024];
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    nsim_plan *plan = NULL;
    nsim_exec_result res;
    nsim_run_row row;
    nsim_run_opts o = {.keep = 1};
    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "%s/plan-%llu.json", dir,
             (unsigned long long)seed);
    write_plan(seed, path);
    int rc = nsim_scenario_load(path, &s, &err);
    if (rc == NSIM_OK)
        rc = nsim_run_size(s, &o, s->max_bytes, &row, &plan, &res, &err);
    snprintf(out->msg, sizeof out->msg, "%s", rc ? err.msg : "");
    if (rc == NSIM_OK) {
        out->out = nsim_test_delivered_once(&res, out->msg,
                                                sizeof out->msg) ? OUT_DONE
                                                                  : OUT_BAD;
        out->time_ps = res.time_ps;
        out->events = res.events;
        out->failovers = res.xport.nfailovers;
        for (uint32_t i = 0; i < res.nconns; i++)
            out->dup_pieces += res.conns[i].xport.dup_pieces;
        nsim_exec_result_free(&res);
        nsim_plan_destroy(plan);
    } else if (rc == NSIM_ECONFIG) {
        out->out = OUT_REFUSED;
    } else if (rc == NSIM_EFAULT && strstr(err.msg, "channel ") != NULL) {
        out->out = OUT_FAULT;
    } else {
        out->out = OUT_BAD;
    }
    nsim_scenario_destroy(s);
    if (getenv("NSIM_SOAK_KEEP") == NULL) /* keep the plans to look at */
        remove(path);
}

static void test_soak(void)
{
    char dir[] = "/tmp/nsim-soak-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    uint32_t n[4] = {0}, bad = 0;
    uint64_t failovers = 0, dups = 0;
    for (uint64_t seed = 1; seed <= SOAK_PLANS; seed++) {
        result r, again;
        run_plan(seed, dir, &r);
        n[r.out]++;
        failovers += r.failovers;
        dups += r.dup_pieces;
        if (r.out == OUT_BAD && bad++ < 12)
            fprintf(stderr, "\n  soak plan %llu: %s",
                    (unsigned long long)seed, r.msg);
        if (seed % 5 == 0) { /* deterministic per seed */
            run_plan(seed, dir, &again);
            CU_ASSERT(again.out == r.out && again.time_ps == r.time_ps &&
                      again.events == r.events &&
                      strcmp(again.msg, r.msg) == 0);
        }
    }
    if (getenv("NSIM_SOAK_KEEP") == NULL)
        rmdir(dir);
    else
        fprintf(stderr, "\n  soak: plans kept in %s", dir);
    fprintf(stderr,
            "\n  soak: %u plans: %u completed exactly once, %u stopped with "
            "the fault report, %u refused, %u stalled or wrong; %llu "
            "failovers in the completed runs, %llu pieces that came twice "
            "ignored\n",
            SOAK_PLANS, n[OUT_DONE], n[OUT_FAULT], n[OUT_REFUSED],
            n[OUT_BAD], (unsigned long long)failovers,
            (unsigned long long)dups);
    CU_ASSERT_EQUAL(n[OUT_BAD], 0);
    CU_ASSERT(n[OUT_DONE] + n[OUT_FAULT] >= SOAK_PLANS * 3 / 4);
    CU_ASSERT(n[OUT_DONE] > SOAK_PLANS / 4);
    CU_ASSERT(n[OUT_FAULT] > 0);
}

CU_TestInfo nsim_test_soak[] = {
    {"random fault plans: exactly once or the fault report", test_soak},
    CU_TEST_INFO_NULL,
};
