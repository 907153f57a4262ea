/* SPDX-License-Identifier: MIT
 *
 * test_flow.c - flow fidelity: the max-min solver on hand-checked cases,
 * and agreement with the packet model over a grid of scenarios,
 * collectives, algorithms and sizes (README "Fidelity").
 *
 * The grid: every run scenario in scenarios/, one node of every other
 * node preset, dgx-a100 at 2 nodes and dgx-h100 at 2 and 4 (rail fat
 * tree), every collective, Ring / Tree / NVLS / NVLSTree where the
 * collective and topology take them, 1 MiB, 16 MiB and 256 MiB (the last where the
 * packet model is quick: at most 8 ranks).
 * flow_agree checks busbw within 3 % (looser bounds, below, where the
 * models differ by mechanism); under AddressSanitizer it runs 1 and 16
 * MiB only. With NSIM_FLOW_GRID=big (cmake -DNSIM_FLOW_GRID_BIG=ON: test
 * unit.flow_big, label "grid") it adds 1 GiB and 8 nodes.
 * Rows that differ by more than a tenth of the bound are printed with
 * NSIM_FLOW_GRID_VERBOSE=1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nsim_test.h"

#include "models/fabric.h"
#include "models/flow.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"
#include "sim/topo/cluster.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"
#define AGREE 0.03
/* Where the two models differ by mechanism (README "Fidelity"), the
 * bound the grid holds them to, so that a change in either still shows:
 * latency-bound 1 MiB rows (per-WR vs per-packet timing); one host's
 * NVLink (NVSwitch saturated by 16-32 thread blocks: the packet model's
 * link FIFOs let the channels take turns, flows share the port max-min
 * and move in step; against the published DGX H100 rings, hwdata 15 and
 * 16, flow is the closer one at the LL128 sizes: docs/fidelity.md); GPUs
 * without P2P staging through host memory (SHM: each thread block sends,
 * then waits for its peer's slice, which is written to host memory and
 * read back; FIFO links let one channel's reads overlap another's
 * writes, where flows shared fairly move every channel through the same
 * phase at once and the CPU's link idles between them). Rail fat trees
 * are held to 3 % since streams are cut in at least stream_min_pieces
 * pieces (before, 64 KiB pieces reaching a leaf's links in bursts cost
 * the packet model up to 10 %). NVLSTree from 16 MiB: flow up to 3.4 %
 * lower on the big grid (2 hosts 256 MiB and 1 GiB, 8 hosts 16 MiB;
 * 2026-12-07, since IB ACKs load the link back without bounding the
 * flow; 3.8 % before), its hosts' NVLink ports 87 % busy against
 * the packet model's 90 % (2 hosts, 256 MiB): the channels in step
 * through the heads' ports, as on one host's NVLink. */
#define AGREE_SMALL 0.10
#define AGREE_NVSWITCH 0.15
#define AGREE_STAGED 0.38
#define AGREE_NVLSTREE 0.05

/* What a grid scenario's rows are held to beyond the size classes. */
typedef enum grid_kind {
    GRID_HOST,   /* hosts with P2P (3 %, or the NVSwitch bound on one) */
    GRID_STAGED, /* GPUs without P2P: SHM through host memory */
} grid_kind;

static int verbose(void)
{
    const char *v = getenv("NSIM_FLOW_GRID_VERBOSE");
    return v != NULL && *v == '1';
}

/* ---- the solver ---------------------------------------------------------- */

typedef struct done_log {
    nsim_time at[4];
    int n;
} done_log;

static void on_done(nsim_sim *sim, nsim_piece *p)
{
    done_log *d = p->ctx;
    d->at[p->tag] = nsim_sim_now(sim);
    d->n++;
}

/* A flow-fidelity fabric with no topology, for servers added by hand. */
typedef struct rig {
    nsim_sim *sim;
    nsim_topo *t;
    nsim_fabric *f;
    nsim_params p;
} rig;

static void rig_open(rig *r)
{
    nsim_err err;
    nsim_params_defaults(&r->p);
    CU_ASSERT_FATAL(nsim_sim_create(1, &r->sim, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_topo_create("empty", &r->t, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_create(r->sim, r->t, &r->p, &r->f, &err) ==
                    NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_set_flow(r->f, &err) == NSIM_OK);
}

static void rig_close(rig *r)
{
    nsim_fabric_destroy(r->f);
    nsim_topo_destroy(r->t);
    nsim_sim_destroy(r->sim);
}

/* Three flows, two raw servers of 10 and 20 GB/s: A over both, B over
 * the first, C over the second, 1 MB each, sent as streams of 1-byte
 * units (no store-and-forward tail). Max-min: the first server saturates
 * first, A = B = 5 GB/s; C gets the rest of the second, 15. */
static void test_maxmin_three_flows(void)
{
    rig r;
    done_log d = {{0}, 0};
    uint32_t s1, s2;
    rig_open(&r);
    nsim_sim *sim = r.sim;
    nsim_fabric *f = r.f;
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 10e9, 0, NSIM_WIRE_SYS, &s1) ==
                    NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 20e9, 0, NSIM_WIRE_SYS, &s2) ==
                    NSIM_OK);
    static uint32_t pa[2], pb[1], pc[1];
    pa[0] = s1;
    pa[1] = s2;
    pb[0] = s1;
    pc[0] = s2;
    CU_ASSERT(nsim_fabric_send_stream(f, pa, 2, 1000000, 1, on_done, &d, 0,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, pb, 1, 1000000, 1, on_done, &d, 1,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, pc, 1, 1000000, 1, on_done, &d, 2,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 3);
    /* 0-66.7 us: A 5, B 5, C 15 GB/s; C (1 MB) ends at 66.67 us. Then
     * A and B still share the first server at 5 each until B ends at
     * 200 us (A has 0 left too: both moved 1 MB at 5 GB/s) */
    CU_ASSERT(llabs((long long)d.at[2] - 66666667) < 10);
    CU_ASSERT(llabs((long long)d.at[1] - 200000000) < 100);
    CU_ASSERT(llabs((long long)d.at[0] - 200000000) < 100);
    /* time with a flow on it against busy time: the first server full
     * for its 200 us; the second carried A for 200 us and C for 66.7,
     * 2 MB at 20 GB/s, busy 100 us: A held at 5 by the first server */
    nsim_server_stats st1 = nsim_fabric_stats(f, s1);
    nsim_server_stats st2 = nsim_fabric_stats(f, s2);
    CU_ASSERT(llabs((long long)st1.occupied_ps - 200000000) < 100);
    CU_ASSERT(llabs((long long)st1.busy_ps - 200000000) < 100);
    CU_ASSERT(llabs((long long)st2.occupied_ps - 200000000) < 100);
    CU_ASSERT(llabs((long long)st2.busy_ps - 100000000) < 100);
    /* the solver's counters saw three flows and no delays */
    rig_close(&r);
}

/* A flow that ends lets the others rise: two flows on one 10 GB/s server,
 * 1 MB and 3 MB: 5 each until the first ends at 200 us, then the second
 * has 2 MB left at 10: ends at 400 us. A flow on a down server is dropped;
 * a degraded server slows its flows from then on. */
static void test_maxmin_release_and_faults(void)
{
    rig r;
    done_log d = {{0}, 0};
    uint32_t s1, s2;
    static uint32_t path1[1], path2[1];
    rig_open(&r);
    nsim_sim *sim = r.sim;
    nsim_fabric *f = r.f;
    CU_ASSERT(nsim_fabric_is_flow(f));
    CU_ASSERT_EQUAL(nsim_fabric_stream_npieces(f, 1 << 20, 4096), 1);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 10e9, 0, NSIM_WIRE_SYS, &s1) ==
                    NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 10e9, 0, NSIM_WIRE_SYS, &s2) ==
                    NSIM_OK);
    path1[0] = s1;
    path2[0] = s2;
    CU_ASSERT(nsim_fabric_send_stream(f, path1, 1, 1000000, 1, on_done, &d,
                                      0, 0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, path1, 1, 3000000, 1, on_done, &d,
                                      1, 0) == NSIM_OK);
    /* the server drains 4 MB at 10 GB/s */
    CU_ASSERT(llabs((long long)nsim_fabric_free_at(f, s1) - 400000000) < 10);
    /* on the second server: one flow dropped when it goes down */
    CU_ASSERT(nsim_fabric_send_stream(f, path2, 1, 1000000, 1, on_done, &d,
                                      2, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, 50000000) == NSIM_OK);
    nsim_fabric_set_down(f, s2, 1);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 2);
    CU_ASSERT(llabs((long long)d.at[0] - 200000000) < 100);
    CU_ASSERT(llabs((long long)d.at[1] - 400000000) < 10);
    CU_ASSERT_EQUAL(nsim_fabric_dropped(f, s2), 1);
    rig_close(&r);
}

/* A rate that falls: A (3 MB) alone on a 10 GB/s server for 100 us,
 * then B (1 MB) joins it there and crosses a second one: 5 each, B ends
 * at 300 us, A (1 MB left) at 400. A's fall marks its server for the
 * recompute's next pass; that pass takes it, and no recompute event is
 * left with nothing to do (one was, for every such fall: 1.66 M of a
 * 128-host NVLSTree run's 4.41 M recomputes). */
static void test_falling_rate_one_recompute(void)
{
    rig r;
    done_log d = {{0}, 0};
    uint32_t s1, s2;
    static uint32_t pa[1], pb[2];
    rig_open(&r);
    CU_ASSERT_FATAL(r.p.flow_passes >= 2);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r.f, 10e9, 0, NSIM_WIRE_SYS,
                                           &s1) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r.f, 10e9, 0, NSIM_WIRE_SYS,
                                           &s2) == NSIM_OK);
    pa[0] = s1;
    pb[0] = s1;
    pb[1] = s2;
    CU_ASSERT(nsim_fabric_send_stream(r.f, pa, 1, 3000000, 1, on_done, &d,
                                      0, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, 100000000) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(r.f, pb, 2, 1000000, 1, on_done, &d,
                                      1, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 2);
    CU_ASSERT(llabs((long long)d.at[1] - 300000000) < 1000);
    CU_ASSERT(llabs((long long)d.at[0] - 400000000) < 1000);
    nsim_flownet_counters fc = nsim_fabric_flow_counters(r.f);
    CU_ASSERT(fc.recomputes >= 3); /* A; B (two passes); B's end */
    CU_ASSERT_EQUAL(fc.idle, 0);
    rig_close(&r);
}

/* Opens r with two servers of bw1 and bw2 GB/s (NSIM_WIRE_SYS): both =
 * {first, second}, one = {first}. The paths live as long as the run. */
static void rig_two_servers(rig *r, double bw1, double bw2, uint32_t both[2],
                            uint32_t one[1])
{
    rig_open(r);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r->f, bw1, 0, NSIM_WIRE_SYS,
                                           &both[0]) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r->f, bw2, 0, NSIM_WIRE_SYS,
                                           &both[1]) == NSIM_OK);
    one[0] = both[0];
}

/* A stream of bytes in 1-byte units (no store-and-forward tail) over
 * path, logged in d under tag. */
static int rig_send(rig *r, const uint32_t *path, uint32_t n, uint64_t bytes,
                    done_log *d, uint64_t tag)
{
    return nsim_fabric_send_stream(r->f, path, n, bytes, 1, on_done, d, tag,
                                   0);
}

/* Sends [from, to) of a run of sizes 1000 + i % sizes on path, one at a
 * time, each run to its end; the bytes sent are added to *bytes. */
static int send_sizes(rig *r, const uint32_t *path, uint64_t from,
                      uint64_t to, uint32_t sizes, done_log *d,
                      uint64_t *bytes)
{
    int rc = NSIM_OK;
    for (uint64_t i = from; i < to && rc == NSIM_OK; i++) {
        *bytes += 1000 + i % sizes;
        rc = rig_send(r, path, 1, 1000 + i % sizes, d, 0);
        if (rc == NSIM_OK)
            rc = nsim_sim_run(r->sim, NSIM_TIME_MAX);
    }
    return rc;
}

/* More routes than the kept routes' table holds (16,384 slots), used in
 * turn: a miss costs a build and the table's memory, so where more than a
 * quarter of a window's sends (262,144) miss, the table is dropped and
 * every later send is computed (NCCL's default AllReduce on 128 DGX H100,
 * folded: 28,256 routes; a larger table kept them but missed the cache
 * instead, docs/fidelity.md 2026-12-07). 8,000 sizes on one path, in
 * turn: over the first window more than a quarter are built, and all of
 * the next 80,000; the server's counters see every send either way. */
static void test_kept_routes_off(void)
{
    rig r;
    done_log d = {{0}, 0};
    static uint32_t path[1];
    rig_open(&r);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r.f, 100e9, 0, NSIM_WIRE_SYS,
                                           &path[0]) == NSIM_OK);
    const uint32_t sizes = 8000, window = 16 * 16384;
    uint64_t bytes = 0;
    CU_ASSERT_FATAL(send_sizes(&r, path, 0, window, sizes, &d, &bytes) ==
                    NSIM_OK);
    nsim_flownet_counters c1 = nsim_fabric_flow_counters(r.f);
    CU_ASSERT_EQUAL(c1.route_slots, 16384);
    CU_ASSERT(c1.route_builds > window / 4);
    CU_ASSERT_FATAL(send_sizes(&r, path, window, window + 80000, sizes, &d,
                               &bytes) == NSIM_OK);
    nsim_flownet_counters c2 = nsim_fabric_flow_counters(r.f);
    CU_ASSERT_EQUAL(c2.route_slots, 0);
    CU_ASSERT_EQUAL(c2.route_builds - c1.route_builds, 80000);
    CU_ASSERT_EQUAL(d.n, (int)(window + 80000));
    /* every send counted on the server, kept route or not */
    CU_ASSERT_EQUAL(nsim_fabric_stats(r.f, path[0]).bytes, bytes);
    rig_close(&r);
}

/* A flow leaving a saturated server: only the flows that server bounds
 * are recomputed. s1 10 GB/s, s2 2 GB/s; A (10 MB) over both, bounded
 * by s2 at 2; B (1 MB) and C (5 MB) on s1 at 4 each. B ends at 250 us
 * and C rises to 8 (4 MB left: ends at 750 us); A, bounded by s2, is not
 * visited then (it was, before 2026-12-06: 6 flows visited in all, now
 * 5); A ends at 5,000 us. */
static void test_leaving_visits_bounded_only(void)
{
    rig r;
    done_log d = {{0}, 0};
    static uint32_t pa[2], pb[1];
    rig_two_servers(&r, 10e9, 2e9, pa, pb);
    CU_ASSERT(rig_send(&r, pa, 2, 10000000, &d, 0) == NSIM_OK);
    CU_ASSERT(rig_send(&r, pb, 1, 1000000, &d, 1) == NSIM_OK);
    CU_ASSERT(rig_send(&r, pb, 1, 5000000, &d, 2) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 3);
    CU_ASSERT(llabs((long long)d.at[1] - 250000000) < 1000);
    CU_ASSERT(llabs((long long)d.at[2] - 750000000) < 1000);
    CU_ASSERT(llabs((long long)d.at[0] - 5000000000) < 1000);
    nsim_flownet_counters fc = nsim_fabric_flow_counters(r.f);
    CU_ASSERT_EQUAL(fc.visited, 5);
    rig_close(&r);
}

/* A flow joining a saturated server. s1 10 GB/s, s2 2 GB/s: A (10 MB)
 * over both, bounded by s2 at 2; C (8 MB) on s1 at 8. B (2 MB) joins s1
 * at 500 us: B = C = 4, A (below the new share) is not visited; B ends
 * at 1,000 us, C (2 MB left, at 8 again) at 1,250 us, A at 5,000 us.
 * Flows visited: 2; B and C twice (C's fall makes a second pass); 1; 1:
 * 8 in all (11 when every flow on a changed saturated server was).
 * Then where the new share falls below a flow bounded elsewhere: s3 10 GB/s, s4 4 GB/s, A2 (40 MB) over both
 * at 4, C2 (60 MB) on s3 at 6; B2 (10 MB) joins s3 at 500 us: the share
 * the two get beside A2 (3 each) is below A2's 4, so the next pass
 * takes A2 too and all three get 10/3: B2 ends at 3,500 us. */
static void test_joining_visits(void)
{
    rig r;
    done_log d = {{0}, 0};
    static uint32_t pa[2], pb[1];
    rig_two_servers(&r, 10e9, 2e9, pa, pb);
    CU_ASSERT(rig_send(&r, pa, 2, 10000000, &d, 0) == NSIM_OK);
    CU_ASSERT(rig_send(&r, pb, 1, 8000000, &d, 2) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, 500000000) == NSIM_OK);
    CU_ASSERT(rig_send(&r, pb, 1, 2000000, &d, 1) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 3);
    CU_ASSERT(llabs((long long)d.at[1] - 1000000000) < 1000);
    CU_ASSERT(llabs((long long)d.at[2] - 1250000000) < 1000);
    CU_ASSERT(llabs((long long)d.at[0] - 5000000000) < 1000);
    CU_ASSERT_EQUAL(nsim_fabric_flow_counters(r.f).visited, 8);
    rig_close(&r);

    done_log d2 = {{0}, 0};
    static uint32_t pa2[2], pb2[1];
    rig_two_servers(&r, 10e9, 4e9, pa2, pb2);
    CU_ASSERT(rig_send(&r, pa2, 2, 40000000, &d2, 0) == NSIM_OK);
    CU_ASSERT(rig_send(&r, pb2, 1, 60000000, &d2, 2) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, 500000000) == NSIM_OK);
    CU_ASSERT(rig_send(&r, pb2, 1, 10000000, &d2, 1) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, 3600000000) == NSIM_OK);
    CU_ASSERT_EQUAL(d2.n, 1);
    CU_ASSERT(llabs((long long)d2.at[1] - 3500000000) < 1000);
    rig_close(&r);
}

/* One 1 MB stream of 4 KiB units over an NVLink of bw on a fresh rig:
 * the counters one send leaves (the reference for the kept routes). */
static nsim_server_stats one_send(double bw)
{
    rig r;
    done_log d = {{0}, 0};
    uint32_t s;
    static uint32_t path[1];
    rig_open(&r);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r.f, bw, 1000, NSIM_WIRE_NVLINK,
                                           &s) == NSIM_OK);
    path[0] = s;
    CU_ASSERT(nsim_fabric_send_stream(r.f, path, 1, 1000000, 4096, on_done,
                                      &d, 0, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    nsim_server_stats st = nsim_fabric_stats(r.f, s);
    rig_close(&r);
    return st;
}

/* Sends on one path with the same bytes reuse what the first cost (a kept
 * route): the server's counters still see every send, when read at any
 * time; a server that changes, or a path array whose ids change in
 * place, gets its costs computed again. */
static void test_kept_routes(void)
{
    nsim_server_stats one = one_send(100e9), slow = one_send(50e9);
    CU_ASSERT(one.pieces == 245 && one.bytes == 1000000);
    CU_ASSERT(one.wire_bytes > one.bytes); /* headers and responses */
    CU_ASSERT(slow.busy_ps > one.busy_ps + one.busy_ps / 2);
    rig r;
    done_log d = {{0}, 0};
    uint32_t s1, s2;
    static uint32_t path[1];
    rig_open(&r);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r.f, 100e9, 1000,
                                           NSIM_WIRE_NVLINK, &s1) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r.f, 100e9, 1000,
                                           NSIM_WIRE_NVLINK, &s2) == NSIM_OK);
    path[0] = s1;
    for (int i = 0; i < 3; i++)
        CU_ASSERT(nsim_fabric_send_stream(r.f, path, 1, 1000000, 4096,
                                          on_done, &d, 0, 0) == NSIM_OK);
    /* counted at the send, before the flows run */
    nsim_server_stats st = nsim_fabric_stats(r.f, s1);
    CU_ASSERT_EQUAL(st.bytes, 3 * one.bytes);
    CU_ASSERT_EQUAL(st.wire_bytes, 3 * one.wire_bytes);
    CU_ASSERT_EQUAL(st.pieces, 3 * one.pieces);
    CU_ASSERT_EQUAL(st.busy_ps, 3 * one.busy_ps);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    /* half the bandwidth: the next send costs twice the time */
    nsim_fabric_set_bw(r.f, s1, 50e9);
    CU_ASSERT(nsim_fabric_send_stream(r.f, path, 1, 1000000, 4096, on_done,
                                      &d, 0, 0) == NSIM_OK);
    /* the same array, another server */
    path[0] = s2;
    CU_ASSERT(nsim_fabric_send_stream(r.f, path, 1, 1000000, 4096, on_done,
                                      &d, 0, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    st = nsim_fabric_stats(r.f, s1);
    CU_ASSERT_EQUAL(st.busy_ps, 3 * one.busy_ps + slow.busy_ps);
    CU_ASSERT_EQUAL(st.pieces, 4 * one.pieces);
    st = nsim_fabric_stats(r.f, s2);
    CU_ASSERT_EQUAL(st.bytes, one.bytes);
    CU_ASSERT_EQUAL(st.busy_ps, one.busy_ps);
    CU_ASSERT_EQUAL(d.n, 5);
    /* a path longer than a slot holds (12 hops, its ids in the block)
     * whose last id changes in place, and one too long to keep (40) */
    static uint32_t longp[40];
    uint32_t raw[41];
    for (int i = 0; i < 41; i++)
        CU_ASSERT_FATAL(nsim_fabric_add_server(r.f, 10e9, 0, NSIM_WIRE_SYS,
                                               &raw[i]) == NSIM_OK);
    for (int i = 0; i < 40; i++)
        longp[i] = raw[i];
    for (int k = 0; k < 2; k++)
        CU_ASSERT(nsim_fabric_send_stream(r.f, longp, 12, 1000, 1000,
                                          on_done, &d, 0, 0) == NSIM_OK);
    longp[11] = raw[40];
    CU_ASSERT(nsim_fabric_send_stream(r.f, longp, 12, 1000, 1000, on_done,
                                      &d, 0, 0) == NSIM_OK);
    for (int k = 0; k < 2; k++)
        CU_ASSERT(nsim_fabric_send_stream(r.f, longp, 40, 1000, 1000,
                                          on_done, &d, 0, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 10);
    CU_ASSERT_EQUAL(nsim_fabric_stats(r.f, raw[0]).bytes, 5000);
    CU_ASSERT_EQUAL(nsim_fabric_stats(r.f, raw[11]).bytes, 2000);
    CU_ASSERT_EQUAL(nsim_fabric_stats(r.f, raw[40]).bytes, 3000);
    CU_ASSERT_EQUAL(nsim_fabric_stats(r.f, raw[39]).bytes, 2000);
    rig_close(&r);
}

/* A flow whose rate falls keeps its end event, which then comes early
 * and moves itself on: A (1 MB) alone on a 10 GB/s server would end at
 * 100 us; B (1 MB) joins at 50 us, both at 5 GB/s, so A ends at 150 us
 * (not at 100, when its first event fires) and B, alone again, at 200
 * us. Then A's rate rises (C leaves): the event moves back. */
static void test_falling_rate_moves_end(void)
{
    rig r;
    done_log d = {{0}, 0};
    uint32_t s1;
    static uint32_t path[1];
    rig_open(&r);
    nsim_sim *sim = r.sim;
    nsim_fabric *f = r.f;
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 10e9, 0, NSIM_WIRE_SYS, &s1) ==
                    NSIM_OK);
    path[0] = s1;
    CU_ASSERT(nsim_fabric_send_stream(f, path, 1, 1000000, 1, on_done, &d, 0,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, 50000000) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, path, 1, 1000000, 1, on_done, &d, 1,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, 120000000) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 0); /* A's first event came at 100 us and moved */
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 2);
    CU_ASSERT(llabs((long long)d.at[0] - 150000000) < 10);
    CU_ASSERT(llabs((long long)d.at[1] - 200000000) < 10);
    /* a rise after a fall: A (2 MB) and C (0.5 MB) share from 200 us; C
     * ends at 300 us, A (1.5 MB left) then at 10 GB/s: 450 us, earlier
     * than its event from the shared rate (600 us) */
    d = (done_log){{0}, 0};
    CU_ASSERT(nsim_fabric_send_stream(f, path, 1, 2000000, 1, on_done, &d, 0,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, path, 1, 500000, 1, on_done, &d, 2,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 2);
    CU_ASSERT(llabs((long long)d.at[2] - 300000000) < 10);
    CU_ASSERT(llabs((long long)d.at[0] - 450000000) < 10);
    rig_close(&r);
}

/* A cut flow (nsim_fabric_cut: a go-back-N abandons the message on the
 * wire) stops sending at once and leaves its share to the others: A and
 * B (1 MB each) share a 10 GB/s server; A is cut at 100 us with 0.5 MB
 * passed and is done then (not at 200 us); B, alone, sends its last 0.5
 * MB at 10 GB/s and ends at 150 us (not 200). One cut before its
 * delayed start passes nothing: done as it starts (20 us on). */
static nsim_piece *cut_me;
static void on_cut(nsim_sim *sim, nsim_event *ev)
{
    (void)sim;
    nsim_fabric_cut(ev->target, cut_me);
}

static void test_cut(void)
{
    rig r;
    done_log d = {{0}, 0};
    uint32_t s1;
    static uint32_t path[1];
    rig_open(&r);
    CU_ASSERT_FATAL(nsim_fabric_add_server(r.f, 10e9, 0, NSIM_WIRE_SYS,
                                           &s1) == NSIM_OK);
    path[0] = s1;
    for (uint64_t k = 0; k < 2; k++) {
        nsim_piece *p;
        CU_ASSERT_FATAL(nsim_fabric_piece(r.f, &p) == NSIM_OK);
        *p = (nsim_piece){.path = path, .nhops = 1, .bytes = 1000000,
                          .done = on_done, .ctx = &d, .tag = k};
        CU_ASSERT(nsim_fabric_send_unit(r.f, p, 1, 0, NULL) == NSIM_OK);
        if (k == 0)
            cut_me = p;
    }
    CU_ASSERT(nsim_sim_schedule(r.sim, 100000000, on_cut, r.f, 0, 0, NULL) ==
              NSIM_OK);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 2);
    CU_ASSERT(llabs((long long)d.at[0] - 100000000) < 10);
    CU_ASSERT(llabs((long long)d.at[1] - 150000000) < 10);
    nsim_piece stray = {.path = path, .nhops = 1, .bytes = 1};
    nsim_fabric_cut(r.f, &stray); /* on no server: nothing happens */
    CU_ASSERT_EQUAL(d.n, 2);
    /* cut before it starts (20 us of delay): it passes nothing, and is
     * done as it starts */
    nsim_piece *late;
    nsim_time t0 = nsim_sim_now(r.sim);
    CU_ASSERT_FATAL(nsim_fabric_piece(r.f, &late) == NSIM_OK);
    *late = (nsim_piece){.path = path, .nhops = 1, .bytes = 1000000,
                         .done = on_done, .ctx = &d, .tag = 2,
                         .start_delay = 20000000};
    CU_ASSERT(nsim_fabric_send_unit(r.f, late, 1, 0, NULL) == NSIM_OK);
    nsim_fabric_cut(r.f, late);
    CU_ASSERT(nsim_sim_run(r.sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 3);
    CU_ASSERT(llabs((long long)(d.at[2] - t0) - 20000000) < 10);
    rig_close(&r);
}

/* A bottleneck left with a little room is still one: L (9 GB/s) carries
 * A (also over P), B (1 MB) and C (4 MB) at 3 GB/s each. At 10 us G
 * joins P (5.998 GB/s) over Q (3.003): P now limits A and G to 2.999,
 * a fall of 0.03 % that is not passed on (flow.c PROPAGATE_REL), so B
 * and C keep 3 and L has 0.001 GB/s spare. When B ends (333.3 us), C
 * takes what L has left: 9 - 2.999 = 6.001 GB/s, its last 3 MB in
 * 499.9 us, ending at 833.2 us. (The solver once took a server with any
 * room for one that limits nothing, and left C at 3 GB/s to 1,333 us;
 * flow_check then counts C below max-min.) */
static void test_bottleneck_with_room(void)
{
    rig r;
    done_log d = {{0}, 0};
    uint32_t l, p, q;
    static uint32_t pa[2], pl[1], pg[2];
    rig_open(&r);
    r.p.flow_check = 1; /* the solver reads its params as it runs */
    nsim_sim *sim = r.sim;
    nsim_fabric *f = r.f;
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 9e9, 0, NSIM_WIRE_SYS, &l) ==
                    NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 5.998e9, 0, NSIM_WIRE_SYS,
                                           &p) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 3.003e9, 0, NSIM_WIRE_SYS,
                                           &q) == NSIM_OK);
    pa[0] = l;
    pa[1] = p;
    pl[0] = l;
    pg[0] = p;
    pg[1] = q;
    CU_ASSERT(nsim_fabric_send_stream(f, pa, 2, 10000000, 1, on_done, &d, 0,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, pl, 1, 1000000, 1, on_done, &d, 1,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, pl, 1, 4000000, 1, on_done, &d, 2,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, 10000000) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, pg, 2, 10000000, 1, on_done, &d, 3,
                                      0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 4);
    CU_ASSERT(llabs((long long)d.at[1] - 333333333) < 1000);
    /* 1 MB at 3 GB/s, then 3 MB at 6.001 GB/s */
    CU_ASSERT(llabs((long long)d.at[2] - (333333333 + 499916681)) < 1000);
    /* and flow_check saw every flow on a saturated server throughout */
    nsim_flownet_counters fc = nsim_fabric_flow_counters(f);
    CU_ASSERT(fc.checked >= 8);
    CU_ASSERT_EQUAL(fc.below, 0);
    rig_close(&r);
}

/* A thread block (a raw server first on the path) is a FIFO per path, as
 * in the packet model: two 1 MB slices of one connection through a 10
 * GB/s block pass one after the other, while a third to another link
 * shares the block: the first and the third at 5 GB/s end at 200 us, the
 * second then alone at 300 us (not all three at 300). */
static void test_fifo_thread_block(void)
{
    rig r;
    done_log d = {{0}, 0};
    uint32_t sm, l, l2;
    static uint32_t path[2], other[2];
    rig_open(&r);
    nsim_sim *sim = r.sim;
    nsim_fabric *f = r.f;
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 10e9, 0, NSIM_WIRE_RAW, &sm) ==
                    NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 20e9, 0, NSIM_WIRE_SYS, &l) ==
                    NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 20e9, 0, NSIM_WIRE_SYS, &l2) ==
                    NSIM_OK);
    path[0] = other[0] = sm;
    path[1] = l;
    other[1] = l2;
    for (uint64_t k = 0; k < 2; k++)
        CU_ASSERT(nsim_fabric_send_stream(f, path, 2, 1000000, 1, on_done,
                                          &d, k, 0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, other, 2, 1000000, 1, on_done, &d,
                                      2, 0) == NSIM_OK);
    /* the block's free time counts the waiting slice */
    CU_ASSERT(llabs((long long)nsim_fabric_free_at(f, sm) - 300000000) < 100);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 3);
    CU_ASSERT(llabs((long long)d.at[0] - 200000000) < 100);
    CU_ASSERT(llabs((long long)d.at[2] - 200000000) < 100);
    CU_ASSERT(llabs((long long)d.at[1] - 300000000) < 100);
    rig_close(&r);
}

/* An IB responder's ACKs load the link back, and do not bound the flow
 * they acknowledge (models/flow.c, USE_LOAD). Two hosts' NICs through a
 * switch, 50 GB/s links: A sends 1 MB one way in 4 KiB packets, B, C and
 * D 1 MB each the other way, so A's ACKs (30 bytes every 16 packets)
 * share the links B, C and D fill. A has its links alone: 1 MB at
 * 50 GB/s x 4096 / 4122 (IB headers) is 20.13 us, and it lands at 20.54
 * (the hops' and the switch's latency and a packet's store and forward);
 * B, C and D share theirs, 3 MB x 4122 / 4096 at 50 GB/s, and land at
 * 60.79 us. Held to the rate of the flows the link back bounds, as a use
 * that bounds would hold it, A landed with them, at 60.79 us. */
static void test_acks_load_not_bound(void)
{
    nsim_err err;
    nsim_params p;
    nsim_sim *sim;
    nsim_topo *t;
    nsim_fabric *f;
    uint32_t sw, gpu[2], nic[2], up[2];
    done_log d = {{0}, 0};
    nsim_params_defaults(&p);
    CU_ASSERT_FATAL(nsim_sim_create(1, &sim, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_topo_create("acks", &t, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_test_ib_device(t, NSIM_DEV_SWITCH, "ib", -1, &sw,
                                        &err) == NSIM_OK);
    for (int h = 0; h < 2; h++) {
        char name[16];
        snprintf(name, sizeof name, "gpu%d", h);
        CU_ASSERT_FATAL(nsim_test_ib_device(t, NSIM_DEV_GPU, name, h,
                                            &gpu[h], &err) == NSIM_OK);
        snprintf(name, sizeof name, "nic%d", h);
        CU_ASSERT_FATAL(nsim_test_ib_device(t, NSIM_DEV_NIC, name, h,
                                            &nic[h], &err) == NSIM_OK);
        CU_ASSERT_FATAL(nsim_topo_add_link(t, gpu[h], nic[h],
                                           NSIM_LINK_PCIE, 4e9, 100000, 16,
                                           NULL, &err) == NSIM_OK);
        CU_ASSERT_FATAL(nsim_topo_add_link(t, nic[h], sw, NSIM_LINK_IB,
                                           50e9, 60000, 1, &up[h], &err) ==
                        NSIM_OK);
    }
    CU_ASSERT_FATAL(nsim_topo_finalize(t, "acks", &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_create(sim, t, &p, &f, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_set_flow(f, &err) == NSIM_OK);
    static uint32_t there[2], back[2];
    there[0] = up[0];
    there[1] = nsim_topo_link(t, up[1])->reverse;
    back[0] = up[1];
    back[1] = nsim_topo_link(t, up[0])->reverse;
    CU_ASSERT(nsim_fabric_send_pieces(f, there, 2, 1000000, 4096, on_done,
                                      &d, 0, 0) == NSIM_OK);
    for (uint64_t k = 1; k < 4; k++)
        CU_ASSERT(nsim_fabric_send_pieces(f, back, 2, 1000000, 4096,
                                          on_done, &d, k, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 4);
    CU_ASSERT(d.at[0] > 20000000 && d.at[0] < 21000000);
    for (int k = 1; k < 4; k++)
        CU_ASSERT(d.at[k] > 60000000 && d.at[k] < 61000000);
    nsim_fabric_destroy(f);
    nsim_topo_destroy(t);
    nsim_sim_destroy(sim);
}

/* A shared port (nsim_fabric_set_fair), packet fidelity: inputs a and b
 * share 10 GB/s from the start, c joins at 100 us and the three share it;
 * a's second piece waits behind its first (FIFO within an input) and
 * then has the port alone. By hand: a1, b and c end at 250 us (0.5 MB of
 * a1 and b left at 100 us, then 0.5 MB each at 10/3 GB/s), a2 at 350 us;
 * FIFO in arrival order would end a1 at 100 us. */
static void test_fair_share_port(void)
{
    static uint32_t pa[2], pb[2], pc[2];
    nsim_err err;
    nsim_params p;
    nsim_sim *sim;
    nsim_topo *t;
    nsim_fabric *f;
    done_log d = {{0}, 0};
    uint32_t port, a, b, c;
    nsim_params_defaults(&p);
    p.stream_min_pieces = 1; /* each stream one piece */
    CU_ASSERT_FATAL(nsim_sim_create(1, &sim, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_topo_create("empty", &t, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_create(sim, t, &p, &f, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 10e9, 0, NSIM_WIRE_SYS,
                                           &port) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_set_fair(f, port) == NSIM_OK);
    /* the inputs: servers that pass a piece on in a picosecond */
    uint32_t *in[3] = {&a, &b, &c};
    for (int k = 0; k < 3; k++)
        CU_ASSERT_FATAL(nsim_fabric_add_server(f, 1e18, 0, NSIM_WIRE_RAW,
                                               in[k]) == NSIM_OK);
    pa[0] = a, pb[0] = b, pc[0] = c;
    pa[1] = pb[1] = pc[1] = port;
    CU_ASSERT(nsim_fabric_send_stream(f, pa, 2, 1000000, 1000000, on_done,
                                      &d, 0, 0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, pa, 2, 1000000, 1000000, on_done,
                                      &d, 1, 0) == NSIM_OK);
    CU_ASSERT(nsim_fabric_send_stream(f, pb, 2, 1000000, 1000000, on_done,
                                      &d, 2, 0) == NSIM_OK);
    nsim_piece *late;
    CU_ASSERT_FATAL(nsim_fabric_piece(f, &late) == NSIM_OK);
    *late = (nsim_piece){.path = pc, .nhops = 2, .bytes = 500000,
                         .done = on_done, .ctx = &d, .tag = 3,
                         .start_delay = 100 * NSIM_PS_PER_US};
    CU_ASSERT(nsim_fabric_send(f, late) == NSIM_OK);
    /* at 1 us: a1, a2 and b in, drained by 300 us (FIFO's time too) */
    CU_ASSERT(nsim_sim_run(sim, NSIM_PS_PER_US) == NSIM_OK);
    CU_ASSERT(llabs((long long)nsim_fabric_free_at(f, port) -
                    (long long)(300 * NSIM_PS_PER_US)) < 1000);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 4);
    static const nsim_time want[4] = {250, 350, 250, 250};
    for (int k = 0; k < 4; k++)
        CU_ASSERT(llabs((long long)d.at[k] -
                        (long long)(want[k] * NSIM_PS_PER_US)) < 1000);
    nsim_server_stats st = nsim_fabric_stats(f, port);
    CU_ASSERT_EQUAL(st.bytes, 3500000);
    CU_ASSERT(llabs((long long)st.busy_ps -
                    (long long)(350 * NSIM_PS_PER_US)) < 1000);

    /* a rate changed midway: 1 MB from a alone, half of it served by
     * 400 us (at 350 us + 50 us of 10 GB/s), the rest at 5 GB/s: 500 us */
    d = (done_log){{0}, 0};
    CU_ASSERT(nsim_fabric_send_stream(f, pa, 2, 1000000, 1000000, on_done,
                                      &d, 0, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, 400 * NSIM_PS_PER_US) == NSIM_OK);
    nsim_fabric_set_bw(f, port, 5e9);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 1);
    CU_ASSERT(llabs((long long)d.at[0] -
                    (long long)(500 * NSIM_PS_PER_US)) < 1000);
    nsim_fabric_destroy(f);
    nsim_topo_destroy(t);
    nsim_sim_destroy(sim);
}

/* A stream's pieces: at least stream_min_pieces of whole 4 KiB, at most
 * stream_chunk_bytes each; counted as sent. */
static void test_stream_min_pieces(void)
{
    nsim_params p;
    nsim_params_defaults(&p);
    const uint64_t chunk = 65536;
    p.stream_min_pieces = 4;
    CU_ASSERT_EQUAL(nsim_fabric_stream_piece(&p, 1u << 20, chunk), chunk);
    CU_ASSERT_EQUAL(nsim_fabric_stream_piece(&p, 256u << 10, chunk), chunk);
    /* 128 KiB: four of 32 KiB; 10,000 B: 2,500 rounds up to 4 KiB */
    CU_ASSERT_EQUAL(nsim_fabric_stream_piece(&p, 128u << 10, chunk),
                    32768);
    CU_ASSERT_EQUAL(nsim_fabric_stream_piece(&p, 10000, chunk), 4096);
    CU_ASSERT_EQUAL(nsim_fabric_npieces(10000, 4096), 3);
    /* at most one 4 KiB piece: as it was */
    CU_ASSERT_EQUAL(nsim_fabric_stream_piece(&p, 4096, chunk), chunk);
    CU_ASSERT_EQUAL(nsim_fabric_stream_piece(&p, 0, chunk), chunk);
    p.stream_min_pieces = 1;
    CU_ASSERT_EQUAL(nsim_fabric_stream_piece(&p, 10000, chunk), chunk);

    /* a packet-level fabric sends and counts the same pieces */
    nsim_err err;
    nsim_sim *sim;
    nsim_topo *t;
    nsim_fabric *f;
    done_log d = {{0}, 0};
    static uint32_t path[1];
    p.stream_min_pieces = 4;
    CU_ASSERT_FATAL(nsim_sim_create(1, &sim, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_topo_create("empty", &t, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_create(sim, t, &p, &f, &err) == NSIM_OK);
    CU_ASSERT_FATAL(nsim_fabric_add_server(f, 10e9, 0, NSIM_WIRE_RAW,
                                           &path[0]) == NSIM_OK);
    CU_ASSERT_EQUAL(nsim_fabric_stream_npieces(f, 100000, chunk), 4);
    CU_ASSERT(nsim_fabric_send_stream(f, path, 1, 100000, chunk, on_done, &d,
                                      0, 0) == NSIM_OK);
    /* passed on as they are: one piece */
    CU_ASSERT(nsim_fabric_send_pieces(f, path, 1, 30000, chunk, on_done, &d,
                                      1, 0) == NSIM_OK);
    CU_ASSERT(nsim_sim_run(sim, NSIM_TIME_MAX) == NSIM_OK);
    CU_ASSERT_EQUAL(d.n, 5);
    CU_ASSERT_EQUAL(nsim_fabric_stats(f, path[0]).pieces, 5);
    nsim_fabric_destroy(f);
    nsim_topo_destroy(t);
    nsim_sim_destroy(sim);
}

/* ---- agreement with the packet model -------------------------------------- */

/* The rows of each bound (the classes above), for the report. */
enum {
    CLASS_HELD,
    CLASS_SMALL,
    CLASS_NVSWITCH,
    CLASS_STAGED,
    CLASS_NVLSTREE,
    NCLASSES
};
static const char *const class_name[NCLASSES] = {
    "held (network-, PCIe-bound, fat trees)", "1 MiB", "one host on NVLink",
    "SHM (no P2P)", "NVLSTree"};
static const double class_bound[NCLASSES] = {
    AGREE, AGREE_SMALL, AGREE_NVSWITCH, AGREE_STAGED, AGREE_NVLSTREE};

typedef struct grid_stats {
    double max_diff, sum;
    int n, over;
    int class_n[NCLASSES], class_over[NCLASSES];
    double class_max[NCLASSES];
    double diffs[4096];
} grid_stats;


static int run_one(nsim_scenario *s, nsim_fidelity fid, uint64_t size,
                   nsim_run_row *row)
{
    nsim_run_opts o = {0, 0, 0};
    nsim_err err;
    s->fidelity = fid;
    uint64_t bytes = nsim_run_test_bytes(s, size);
    if (bytes == 0)
        return -1;
    int rc = nsim_run_size(s, &o, bytes, row, NULL, NULL, &err);
    if (rc != NSIM_OK && verbose())
        fprintf(stderr, "  %s: %s\n", nsim_fidelity_name(fid), err.msg);
    return rc;
}

static const nsim_coll colls[] = {
    NSIM_COLL_ALLREDUCE, NSIM_COLL_ALLGATHER, NSIM_COLL_REDUCESCATTER,
    NSIM_COLL_BROADCAST, NSIM_COLL_REDUCE, NSIM_COLL_ALLTOALL,
    NSIM_COLL_SENDRECV};
static const nsim_algo algos[] = {NSIM_ALGO_RING, NSIM_ALGO_TREE,
                                  NSIM_ALGO_NVLS, NSIM_ALGO_NVLSTREE};

/* One scenario over every collective, algorithm and size it takes. */
static void grid_scenario(const char *path, const uint64_t *sizes,
                          int nsizes, uint32_t max_ranks_big, grid_kind kind,
                          grid_stats *g)
{
    nsim_scenario *s = NULL;
    nsim_err err;
    if (nsim_scenario_load(path, &s, &err) != NSIM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        CU_FAIL("scenario loads");
        return;
    }
    nsim_scenario tmpl = *s;
    uint32_t nranks = nsim_topo_nranks(s->topo);
    int nvlink = 0; /* one host's GPUs on NVLink: the NVSwitch class */
    for (uint32_t i = 0; i < nsim_topo_nlinks(s->topo); i++)
        nvlink |= nsim_topo_link(s->topo, i)->type == NSIM_LINK_NVLINK;
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++)
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
            int p2p = colls[c] == NSIM_COLL_ALLTOALL ||
                      colls[c] == NSIM_COLL_SENDRECV;
            if (p2p && a > 0)
                continue; /* point-to-point has no algorithm */
            for (int k = 0; k < nsizes; k++) {
                nsim_run_row rp, rf;
                if (k == nsizes - 1 && nranks > max_ranks_big)
                    continue; /* the largest only where packet is quick */
                s->coll = colls[c];
                s->algo = algos[a];
                s->algo_set = !p2p;
                if (run_one(s, NSIM_FIDELITY_PACKET, sizes[k], &rp) != 0)
                    continue; /* a combination the planner refuses */
                CU_ASSERT_FATAL(run_one(s, NSIM_FIDELITY_FLOW, sizes[k],
                                        &rf) == NSIM_OK);
                double d = fabs(rf.busbw - rp.busbw) / rp.busbw;
                if (g->n < 4096)
                    g->diffs[g->n] = d;
                g->n++;
                g->sum += d;
                g->max_diff = d > g->max_diff ? d : g->max_diff;
                if (d > AGREE)
                    g->over++;
                int one_host = nsim_topo_nhosts(s->topo) == 1 && nvlink;
                int cls = sizes[k] < (16u << 20) ? CLASS_SMALL
                          : kind == GRID_STAGED  ? CLASS_STAGED
                          : one_host             ? CLASS_NVSWITCH
                          : algos[a] == NSIM_ALGO_NVLSTREE ? CLASS_NVLSTREE
                                                 : CLASS_HELD;
                double bound = class_bound[cls];
                g->class_n[cls]++;
                g->class_over[cls] += d > AGREE;
                if (d > g->class_max[cls])
                    g->class_max[cls] = d;
                if (verbose() && d > AGREE / 10)
                    fprintf(stderr,
                            "  %-28s %-14s %-5s %10llu  packet %8.2f  flow "
                            "%8.2f  %+6.2f%%\n",
                            nsim_topo_name(s->topo), nsim_coll_name(s->coll),
                            p2p ? "P2P" : nsim_algo_name(s->algo),
                            (unsigned long long)sizes[k], rp.busbw, rf.busbw,
                            100 * (rf.busbw - rp.busbw) / rp.busbw);
                CU_ASSERT(d <= bound);
            }
        }
    s->coll = tmpl.coll;
    nsim_scenario_destroy(s);
}

/* A cluster of a node preset as a scenario file (the loader's own
 * path). */
static int cluster_scenario(const char *preset, uint32_t nodes, char *path,
                            size_t n)
{
    nsim_topo *t;
    nsim_err err;
    nsim_fabric_cfg cfg = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 0, 0, 0};
    char topo[256];
    snprintf(topo, sizeof topo, "/tmp/nsim_flow_%s_%u_%d.topo.json", preset,
             nodes, (int)getpid());
    snprintf(path, n, "/tmp/nsim_flow_%s_%u_%d.json", preset, nodes,
             (int)getpid());
    if (nsim_cluster_build(preset, nodes, &cfg, &t, &err) != NSIM_OK ||
        nsim_topo_save(t, topo, &err) != NSIM_OK)
        return -1;
    nsim_topo_destroy(t);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "{\"format\": \"ncclsim-scenario\", \"version\": 1, "
               "\"name\": \"%s %u\", \"topology\": \"%s\", "
               "\"collective\": \"all_reduce_perf\", \"datatype\": "
               "\"float\", \"op\": \"sum\", \"min_bytes\": \"1M\", "
               "\"max_bytes\": \"1M\"}\n",
            preset, nodes, topo);
    fclose(f);
    return 0;
}

/* Runs the grid on a cluster of a preset, then removes its files. */
static void grid_cluster(const char *preset, uint32_t nodes,
                         const uint64_t *sizes, int nsizes,
                         uint32_t max_ranks_big, grid_kind kind,
                         grid_stats *g)
{
    char path[256], topo[256];
    CU_ASSERT_FATAL(cluster_scenario(preset, nodes, path, sizeof path) == 0);
    grid_scenario(path, sizes, nsizes, max_ranks_big, kind, g);
    remove(path);
    snprintf(topo, sizeof topo, "/tmp/nsim_flow_%s_%u_%d.topo.json", preset,
             nodes, (int)getpid());
    remove(topo);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, grid_stats *g)
{
    int n = g->n < 4096 ? g->n : 4096;
    qsort(g->diffs, (size_t)n, sizeof g->diffs[0], cmp_double);
    fprintf(stderr,
            "\n  flow vs packet busbw (%s): %d rows, max %.2f %%, median "
            "%.2f %%, mean %.2f %%, %d over %.0f %%\n",
            what, g->n, 100 * g->max_diff, n ? 100 * g->diffs[n / 2] : 0.0,
            g->n ? 100 * g->sum / g->n : 0.0, g->over, 100 * AGREE);
    for (int c = 0; c < NCLASSES; c++)
        fprintf(stderr,
                "  %-40s bound %2.0f %%: %3d rows, max %5.2f %%, %3d over "
                "3 %%\n",
                class_name[c], 100 * class_bound[c], g->class_n[c],
                100 * g->class_max[c], g->class_over[c]);
}

static void grid(int big)
{
    static const char *const scen[] = {"seed-allreduce.json",
                                       "dgx-h100-allreduce.json",
                                       "dgx-h100-2node-allreduce.json"};
    static const uint64_t small[] = {1u << 20, 16u << 20, 256u << 20};
    static const uint64_t large[] = {1u << 20, 16u << 20, 256u << 20,
                                     1u << 30};
    static grid_stats g;
    memset(&g, 0, sizeof g);
    const uint64_t *sizes = big ? large : small;
    int nsizes = big ? 4 : 3;
#if defined(__SANITIZE_ADDRESS__)
    nsizes = 2; /* under the sanitizer: 1 and 16 MiB */
#endif
    for (size_t i = 0; i < sizeof scen / sizeof scen[0]; i++)
        grid_scenario(i == 0 ? SCEN "seed-allreduce.json"
                      : i == 1 ? SCEN "dgx-h100-allreduce.json"
                               : SCEN "dgx-h100-2node-allreduce.json",
                      sizes, nsizes, big ? 16 : 8, GRID_HOST, &g);
    (void)scen;
    /* every other node preset, one node (dgx-h100's is the scenario
     * above), and the A100 cluster's fabric at 2 nodes */
    static const char *const presets[] = {"dgx-a100",    "hgx-h100",
                                          "hgx-h200",    "pcie-8xl40s",
                                          "pcie-2gpu-nop2p", "gb200-nvl"};
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        grid_cluster(presets[i], 1, sizes, nsizes, big ? 16 : 8,
                     strcmp(presets[i], "pcie-2gpu-nop2p") == 0 ? GRID_STAGED
                                                                : GRID_HOST,
                     &g);
    grid_cluster("dgx-a100", 2, sizes, nsizes, 0, GRID_HOST, &g);
    static const uint32_t nodes_small[] = {2, 4}, nodes_big[] = {2, 4, 8};
    const uint32_t *nodes = big ? nodes_big : nodes_small;
    for (int i = 0; i < (big ? 3 : 2); i++)
        grid_cluster("dgx-h100", nodes[i], sizes, nsizes, 0, GRID_HOST,
                     &g);
    report(big ? "big grid" : "grid", &g);
}

/* auto (the default): flow above flow_auto_packets estimated packets and
 * stream pieces, else packet (the events' test is the CLI's). */
static void test_auto_picks(void)
{
    nsim_scenario *s;
    nsim_err err;
    CU_ASSERT_FATAL(nsim_scenario_load(SCEN "seed-allreduce.json", &s,
                                       &err) == NSIM_OK);
    /* auto is the default */
    CU_ASSERT_EQUAL(s->fidelity, NSIM_FIDELITY_AUTO);
    double est = nsim_run_packets_estimate(s, 1u << 20);
    /* AllReduce on 4 ranks, two hosts of 2: 2 x 3/4 x 1 MiB x 4 ranks,
     * half across hosts in 4 KiB packets, half over NVLink in 64 KiB
     * stream pieces */
    CU_ASSERT_DOUBLE_EQUAL(est, 768.0 + 48.0, 1e-9);
    s->params.flow_auto_packets = 816;
    nsim_auto_why why = NSIM_AUTO_BUDGET;
    CU_ASSERT_EQUAL(nsim_run_fidelity(s, 1u << 20, &why), NSIM_FIDELITY_PACKET);
    CU_ASSERT_EQUAL(why, NSIM_AUTO_NONE);
    CU_ASSERT_EQUAL(nsim_run_fidelity(s, 2u << 20, &why), NSIM_FIDELITY_FLOW);
    CU_ASSERT_EQUAL(why, NSIM_AUTO_PACKETS);
    s->fidelity = NSIM_FIDELITY_PACKET;
    CU_ASSERT_EQUAL(nsim_run_fidelity(s, 1u << 30, &why), NSIM_FIDELITY_PACKET);
    CU_ASSERT_EQUAL(why, NSIM_AUTO_NONE);
    nsim_scenario_destroy(s);
    /* two DGX H100: a ring's or tree's bytes cross hosts once a host's 8
     * ranks, in 4 KiB packets; an AllToAll's 8 of every 15 */
    CU_ASSERT_FATAL(nsim_scenario_load(SCEN "dgx-h100-2node-allreduce.json",
                                       &s, &err) == NSIM_OK);
    double bus = 1024.0 * 1024 * 1024 * 2 * 15 / 16 * 16;
    CU_ASSERT_DOUBLE_EQUAL(nsim_run_packets_estimate(s, 1u << 30),
                           bus / 8 / 4096 + bus * 7 / 8 / 65536, 1e-6);
    s->coll = NSIM_COLL_ALLTOALL;
    CU_ASSERT_DOUBLE_EQUAL(nsim_run_packets_estimate(s, 1u << 20),
                           8.0 * 256 + 7.0 * 16, 1e-9);
    nsim_fidelity f;
    CU_ASSERT_EQUAL(nsim_fidelity_parse("flow", &f), NSIM_OK);
    CU_ASSERT_EQUAL(f, NSIM_FIDELITY_FLOW);
    CU_ASSERT_NOT_EQUAL(nsim_fidelity_parse("Flow", &f), NSIM_OK);
    nsim_scenario_destroy(s);
}

static void test_flow_agree(void)
{
    const char *v = getenv("NSIM_FLOW_GRID");
    grid(v != NULL && strcmp(v, "big") == 0);
}

CU_TestInfo nsim_test_flow[] = {
    {"maxmin_three_flows", test_maxmin_three_flows},
    {"maxmin_release_and_faults", test_maxmin_release_and_faults},
    {"falling rate: one recompute event", test_falling_rate_one_recompute},
    {"a flow leaving: the flows it bounded", test_leaving_visits_bounded_only},
    {"a flow joining: the flows above the share", test_joining_visits},
    {"falling rate: the end event moves on", test_falling_rate_moves_end},
    {"a cut flow: stops at once, its share to the others", test_cut},
    {"a bottleneck with a little room left", test_bottleneck_with_room},
    {"fifo_thread_block", test_fifo_thread_block},
    {"IB ACKs: load on the link back, not a bound", test_acks_load_not_bound},
    {"fair share: a port's inputs share it", test_fair_share_port},
    {"streams: at least stream_min_pieces pieces", test_stream_min_pieces},
    {"kept routes: counted, built again on a change", test_kept_routes},
    {"kept routes: off where too many miss", test_kept_routes_off},
    {"auto_picks", test_auto_picks},
    {"flow_agree", test_flow_agree},
    CU_TEST_INFO_NULL,
};
