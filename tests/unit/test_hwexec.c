/* SPDX-License-Identifier: MIT
 *
 * test_hwexec.c - the hardware executor on the host backend: the data
 * types' conversions and reductions, every ring and point-to-point
 * collective moving real data through shared-memory slots (threads and
 * processes) with nccl-tests' #wrong at 0, a corrupted plan caught by the
 * check, plans the executor refuses, and the plan read back from its
 * JSON form (and refused when it does not fit).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/host/host_xport.h"
#include "nsim_test.h"
#include "sim/plan/plan.h"
#include "sim/core/jread.h"
#include "sim/plan/plan_read.h"

/* A host topology: n cores as ranks around one memory. */
static nsim_topo *host_topo(uint32_t n)
{
    nsim_err err = {0};
    char js[8192];
    size_t off = 0;
    off += (size_t)snprintf(js + off, sizeof js - off,
                            "{\"format\":\"ncclsim-topology\",\"version\":1,"
                            "\"name\":\"host-test\",\"devices\":[{\"id\":"
                            "\"mem\",\"type\":\"cpu\",\"host\":0}");
    for (uint32_t r = 0; r < n; r++)
        off += (size_t)snprintf(js + off, sizeof js - off,
                                ",{\"id\":\"c%u\",\"type\":\"gpu\",\"host\":0,"
                                "\"gen\":\"host\",\"sm\":60,\"rank\":%u,"
                                "\"p2p\":false}", r, r);
    off += (size_t)snprintf(js + off, sizeof js - off, "],\"links\":[");
    for (uint32_t r = 0; r < n; r++)
        off += (size_t)snprintf(js + off, sizeof js - off,
                                "%s{\"a\":\"c%u\",\"b\":\"mem\",\"type\":"
                                "\"c2c\",\"bw\":\"5 GB/s\",\"latency\":"
                                "\"100 ns\"}", r ? "," : "", r);
    snprintf(js + off, sizeof js - off, "]}");
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_parse(js, strlen(js), "host-test", &t, &err));
    return t;
}

static nsim_plan *plan_of(nsim_topo *t, nsim_coll c, uint64_t bytes,
                          uint32_t ts, uint32_t nch, uint64_t buffsize)
{
    nsim_err err = {0};
    nsim_plan *p = NULL;
    nsim_plan_req r = {c, NSIM_ALGO_RING, NSIM_PROTO_SIMPLE, bytes, ts, nch,
                       1, buffsize, NSIM_CHANNEL_DEDICATED};
    r.root = 1;
    NSIM_ASSERT_OK(nsim_plan_build(t, &r, &p, &err));
    return p;
}

static nsim_hwx_measure run(const nsim_plan *p, nsim_hdt dt, nsim_hop op,
                            int processes)
{
    nsim_err err = {0};
    nsim_hwx_measure m = {0};
    nsim_host_cfg c = {p, dt, op, processes, 20, 1, 2, 1, 0, -1};
    NSIM_ASSERT_OK(nsim_host_measure(&c, &m, NULL, &err));
    return m;
}

static void test_conversions(void)
{
    CU_ASSERT_EQUAL(nsim_float_to_half(1.0f), 0x3c00);
    CU_ASSERT_EQUAL(nsim_float_to_half(-2.5f), 0xc100);
    CU_ASSERT_EQUAL(nsim_float_to_half(65504.0f), 0x7bff);
    CU_ASSERT_EQUAL(nsim_float_to_half(1e6f), 0x7c00); /* inf */
    CU_ASSERT_EQUAL(nsim_float_to_half(5.960464477539063e-08f), 0x0001);
    CU_ASSERT(nsim_half_to_float(0x3555) > 0.333f &&
              nsim_half_to_float(0x3555) < 0.3334f);
    /* round to nearest even: 2049 lies between 2048 and 2050 */
    CU_ASSERT_EQUAL(nsim_half_to_float(nsim_float_to_half(2049.0f)), 2048.0f);
    CU_ASSERT_EQUAL(nsim_half_to_float(nsim_float_to_half(2051.0f)), 2052.0f);
    CU_ASSERT_EQUAL(nsim_float_to_bf16(1.0f), 0x3f80);
    CU_ASSERT_EQUAL(nsim_bf16_to_float(nsim_float_to_bf16(257.0f)), 256.0f);
    CU_ASSERT_EQUAL(nsim_fp8_to_float(0x7e, 0), 448.0f);  /* e4m3 max */
    CU_ASSERT(isnan(nsim_fp8_to_float(0x7f, 0)));
    CU_ASSERT_EQUAL(nsim_fp8_to_float(0x7b, 1), 57344.0f); /* e5m2 max */
    CU_ASSERT_EQUAL(nsim_float_to_fp8(1.0f, 0), 0x38);
    CU_ASSERT_EQUAL(nsim_float_to_fp8(-3.0f, 1), 0xc2);
    CU_ASSERT_EQUAL(nsim_float_to_fp8(1000.0f, 0), 0x7e); /* saturates */
    for (int v = 0; v < 256; v++) { /* every finite code round-trips */
        float f = nsim_fp8_to_float((uint8_t)v, 0);
        if (!isnan(f) && v != 0x80)
            CU_ASSERT_EQUAL(nsim_float_to_fp8(f, 0), v);
    }
}

static void test_reductions(void)
{
    int8_t a[4] = {100, -3, 7, 0}, b[4] = {100, 5, -9, 0}, d[4];
    nsim_hdt_reduce(NSIM_HDT_INT8, NSIM_HOP_SUM, d, a, b, 4);
    CU_ASSERT_EQUAL(d[0], (int8_t)(uint8_t)200); /* wraps as the GPU */
    CU_ASSERT_EQUAL(d[1], 2);
    nsim_hdt_reduce(NSIM_HDT_INT8, NSIM_HOP_MIN, d, a, b, 4);
    CU_ASSERT_EQUAL(d[2], -9);
    float fa[3] = {1, 2, 3}, fb[3] = {4, 5, -6}, fd[3];
    nsim_hdt_reduce(NSIM_HDT_FLOAT, NSIM_HOP_PROD, fd, fa, fb, 3);
    CU_ASSERT_EQUAL(fd[2], -18.0f);
    nsim_hdt_reduce(NSIM_HDT_FLOAT, NSIM_HOP_MAX, fd, fa, fb, 3);
    CU_ASSERT_EQUAL(fd[1], 5.0f);
    uint16_t ha[2], hb[2], hd[2];
    ha[0] = nsim_float_to_half(1.5f);
    hb[0] = nsim_float_to_half(2.25f);
    ha[1] = hb[1] = nsim_float_to_half(3.0f);
    nsim_hdt_reduce(NSIM_HDT_HALF, NSIM_HOP_SUM, hd, ha, hb, 2);
    CU_ASSERT_EQUAL(nsim_half_to_float(hd[0]), 3.75f);
    nsim_hdt_postdiv(NSIM_HDT_HALF, hd, hd, 2, 2);
    CU_ASSERT_EQUAL(nsim_half_to_float(hd[1]), 3.0f);
    /* the pattern: a rank's fill checks against itself, not another */
    float buf[64];
    uint64_t bad;
    nsim_hdt_fill(NSIM_HDT_FLOAT, NSIM_HOP_SUM, 4, 2, 100, buf, 64);
    CU_ASSERT_EQUAL(nsim_hdt_check(NSIM_HDT_FLOAT, NSIM_HOP_SUM, 4, 2, 100,
                                   buf, 64, &bad), 0);
    CU_ASSERT(nsim_hdt_check(NSIM_HDT_FLOAT, NSIM_HOP_SUM, 4, 1, 100, buf, 64,
                             &bad) > 32);
    buf[7] += 1;
    CU_ASSERT_EQUAL(nsim_hdt_check(NSIM_HDT_FLOAT, NSIM_HOP_SUM, 4, 2, 100,
                                   buf, 64, &bad), 1);
    CU_ASSERT_EQUAL(bad, 107);
}

/* Every ring and point-to-point collective, with several slices per
 * chunk (a 64 KiB buffer: 8 KiB steps) and two channels. */
static void test_collectives_threads(void)
{
    nsim_topo *t = host_topo(3);
    static const nsim_coll colls[] = {
        NSIM_COLL_ALLREDUCE, NSIM_COLL_ALLGATHER, NSIM_COLL_REDUCESCATTER,
        NSIM_COLL_BROADCAST, NSIM_COLL_REDUCE,    NSIM_COLL_SENDRECV,
        NSIM_COLL_ALLTOALL};
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        nsim_plan *p = plan_of(t, colls[i], 3 * 40960, 4, 2, 65536);
        nsim_hwx_measure m = run(p, NSIM_HDT_FLOAT, NSIM_HOP_SUM, 0);
        CU_ASSERT_EQUAL(m.wrong, 0);
        if (!nsim_coll_is_p2p(colls[i]))
            CU_ASSERT_EQUAL(m.wrong_ip, 0);
        CU_ASSERT(m.time_us > 0 && m.time_ip_us > 0);
        if (m.wrong != 0)
            fprintf(stderr, "\n  %s: %lld wrong\n", nsim_coll_name(colls[i]),
                    (long long)m.wrong);
        nsim_plan_destroy(p);
    }
    nsim_topo_destroy(t);
}

static void test_types_and_ops(void)
{
    nsim_topo *t = host_topo(4);
    for (int dt = 0; dt < NSIM_HDT__COUNT; dt++)
        for (int op = 0; op < NSIM_HOP__COUNT; op++) {
            uint32_t ts = nsim_hdt_size((nsim_hdt)dt);
            nsim_plan *p = plan_of(t, NSIM_COLL_ALLREDUCE, 4 * 4096, ts, 1,
                                   65536);
            nsim_hwx_measure m = run(p, (nsim_hdt)dt, (nsim_hop)op, 0);
            CU_ASSERT_EQUAL(m.wrong, 0);
            CU_ASSERT_EQUAL(m.wrong_ip, 0);
            if (m.wrong || m.wrong_ip)
                fprintf(stderr, "\n  %s %s: %lld / %lld wrong\n",
                        nsim_hdt_name((nsim_hdt)dt), nsim_hop_name((nsim_hop)op),
                        (long long)m.wrong, (long long)m.wrong_ip);
            nsim_plan_destroy(p);
        }
    nsim_topo_destroy(t);
}

static void test_processes(void)
{
    nsim_topo *t = host_topo(3);
    nsim_plan *p = plan_of(t, NSIM_COLL_REDUCESCATTER, 3 * 65536, 2, 2, 65536);
    nsim_hwx_measure m = run(p, NSIM_HDT_BF16, NSIM_HOP_MAX, 1);
    CU_ASSERT_EQUAL(m.wrong, 0);
    CU_ASSERT_EQUAL(m.wrong_ip, 0);
    /* a rank's process dies mid-run: a clear error, quickly */
    nsim_err err = {0};
    nsim_host_cfg c = {p, NSIM_HDT_BF16, NSIM_HOP_MAX, 1, 20, 1, 2, 1, 0, 1};
    CU_ASSERT_NOT_EQUAL(nsim_host_measure(&c, &m, NULL, &err), NSIM_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "rank 1's process"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "lost mid-run"));
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

/* A plan whose ops point at the wrong bytes moves data that the check
 * catches: the check can fail. */
static void test_corrupt_plan_is_caught(void)
{
    nsim_topo *t = host_topo(2);
    nsim_plan *p = plan_of(t, NSIM_COLL_ALLREDUCE, 2 * 8192, 4, 1, 65536);
    nsim_plan_lane *l = &p->lanes[0];
    for (uint32_t i = 0; i < l->nops; i++)
        if (l->ops[i].prim == (NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT) &&
            l->ops[i].bytes >= 64)
            l->ops[i].offset = 0; /* the last copy lands on chunk 0 */
    nsim_hwx_measure m = run(p, NSIM_HDT_FLOAT, NSIM_HOP_SUM, 0);
    CU_ASSERT(m.wrong > 0);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

static void test_refusals(void)
{
    nsim_err err = {0};
    nsim_hwx_measure m;
    nsim_topo *t = host_topo(2);
    nsim_plan *p = plan_of(t, NSIM_COLL_ALLREDUCE, 2 * 8192, 4, 1, 65536);
    nsim_host_cfg c = {p, NSIM_HDT_FLOAT, NSIM_HOP_SUM, 0, 5, 1, 1, 1, 0, -1};
    p->lanes[1].ops[0].offset = 1u << 30; /* outside the buffer */
    CU_ASSERT_EQUAL(nsim_host_measure(&c, &m, NULL, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "outside the"));
    p->lanes[1].ops[0].offset = 0;
    c.dtype = NSIM_HDT_DOUBLE; /* 8-byte elements, a 4-byte plan */
    CU_ASSERT_EQUAL(nsim_host_measure(&c, &m, NULL, &err), NSIM_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "type_size"));
    c.dtype = NSIM_HDT_FLOAT;
    p->req.algo = NSIM_ALGO_TREE;
    CU_ASSERT_EQUAL(nsim_host_measure(&c, &m, NULL, &err), NSIM_ENOTSUP);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "Tree"));
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

static void test_plan_json_round_trip(void)
{
    nsim_err err = {0};
    nsim_topo *t = host_topo(3), *other = host_topo(4);
    nsim_plan *p = plan_of(t, NSIM_COLL_ALLGATHER, 3 * 40960, 4, 2, 65536);
    nsim_plan *q = NULL;
    char *js = NULL, path[256];
    NSIM_ASSERT_OK(nsim_plan_to_json(p, t, &js, &err));
    snprintf(path, sizeof path, "/tmp/nsim-plan-%ld.json", (long)getpid());
    NSIM_ASSERT_OK(nsim_write_file_atomic(path, js, strlen(js), &err));
    NSIM_ASSERT_OK(nsim_plan_load(path, t, &q, &err));
    CU_ASSERT_EQUAL(q->nlanes, p->nlanes);
    CU_ASSERT_EQUAL(q->nconns, p->nconns);
    CU_ASSERT_EQUAL(q->slice_steps, p->slice_steps);
    for (uint32_t i = 0; i < p->nlanes; i++) {
        CU_ASSERT_EQUAL(q->lanes[i].nops, p->lanes[i].nops);
        CU_ASSERT(memcmp(q->lanes[i].ops, p->lanes[i].ops,
                         p->lanes[i].nops * sizeof *p->lanes[i].ops) == 0);
    }
    for (uint32_t i = 0; i < p->nconns; i++) {
        CU_ASSERT_EQUAL(q->conns[i].send_lane, p->conns[i].send_lane);
        CU_ASSERT_EQUAL(q->conns[i].recv_lane, p->conns[i].recv_lane);
    }
    nsim_hwx_measure m = run(q, NSIM_HDT_FLOAT, NSIM_HOP_SUM, 0);
    CU_ASSERT_EQUAL(m.wrong, 0);
    nsim_plan_destroy(q);
    q = NULL;
    /* another topology's plan, another version: refused by name */
    CU_ASSERT_NOT_EQUAL(nsim_plan_load(path, other, &q, &err), NSIM_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "topology"));
    char *v = strstr(js, "\"version\":\t1");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    v[strlen("\"version\":\t")] = '2';
    char path2[280];
    snprintf(path2, sizeof path2, "%s.v2.json", path);
    NSIM_ASSERT_OK(nsim_write_file_atomic(path2, js, strlen(js), &err));
    CU_ASSERT_NOT_EQUAL(nsim_plan_load(path2, t, &q, &err), NSIM_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "version"));
    CU_ASSERT_PTR_NULL(q);
    unlink(path);
    unlink(path2);
    free(js);
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
    nsim_topo_destroy(other);
}

CU_TestInfo nsim_test_hwexec[] = {
    {"half, bfloat16, fp8 conversions", test_conversions},
    {"reductions and the pattern", test_reductions},
    {"every collective, threads", test_collectives_threads},
    {"every data type and op", test_types_and_ops},
    {"processes; a rank lost mid-run", test_processes},
    {"a corrupted plan is caught", test_corrupt_plan_is_caught},
    {"plans the executor refuses", test_refusals},
    {"plan JSON round trip and refusals", test_plan_json_round_trip},
    CU_TEST_INFO_NULL,
};
