/* SPDX-License-Identifier: MIT
 *
 * test_fold.c - symmetry folding (plan/fold.h): a ring on identical hosts
 * played by two of them gives the whole ring's time (exactly where every
 * hop has the same route), the folded plan is well formed, the played
 * hosts take the slowest route where routes differ, and what may not
 * fold does not (with the reason).
 */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "nsim_test.h"

#include "sim/exec/run.h"
#include "sim/plan/fold.h"
#include "sim/topo/cluster.h"

static nsim_topo *cluster(uint32_t nodes, uint32_t radix)
{
    nsim_topo *t = NULL;
    nsim_err err;
    nsim_fabric_cfg cfg = {NSIM_FABRIC_RAIL_FAT_TREE, radix, 1, 0, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", nodes, &cfg, &t, &err));
    return t;
}

static nsim_plan_req ring_req(nsim_coll coll, uint64_t bytes)
{
    nsim_plan_req r = {0};
    r.coll = coll;
    r.algo = NSIM_ALGO_RING;
    r.proto = NSIM_PROTO_SIMPLE;
    r.bytes = bytes;
    r.type_size = 4;
    r.qps_per_conn = 1;
    r.buffsize = 4u << 20;
    r.compact_ops = 1;
    return r;
}

static nsim_plan *plan(nsim_topo *t, const nsim_plan_req *r)
{
    nsim_plan *p = NULL;
    nsim_err err;
    NSIM_ASSERT_OK(nsim_plan_build(t, r, &p, &err));
    return p;
}

static nsim_time run(nsim_topo *t, const nsim_plan *p, nsim_fidelity fid)
{
    nsim_params prm;
    nsim_exec_result res = {0};
    nsim_err err;
    nsim_params_defaults(&prm);
    nsim_exec_opts o = {1, 0, NULL};
    o.fidelity = fid;
    NSIM_ASSERT_OK(nsim_exec_run(t, p, &prm, &o, &res, &err));
    nsim_time ps = res.time_ps;
    nsim_exec_result_free(&res);
    return ps;
}

/* The folded plan is a ring over the played ranks: every lane sends on
 * its own connection and receives on exactly one, from a played rank,
 * and the NICs of every connection are on the played hosts. */
static void check_folded_shape(nsim_topo *t, const nsim_plan *p,
                               const nsim_fold_info *fi, uint32_t per_host)
{
    uint32_t gm = fi->played * per_host, first = fi->first_played * per_host;
    CU_ASSERT_EQUAL(p->nlanes, p->nchannels * gm);
    CU_ASSERT_EQUAL(p->nconns, p->nlanes);
    for (uint32_t i = 0; i < p->nlanes; i++) {
        const nsim_plan_lane *l = &p->lanes[i];
        CU_ASSERT_FATAL(l->send_conn < p->nconns && l->recv_conn < p->nconns);
        const nsim_plan_conn *s = &p->conns[l->send_conn];
        const nsim_plan_conn *r = &p->conns[l->recv_conn];
        CU_ASSERT_EQUAL(s->send_lane, i);
        CU_ASSERT_EQUAL(r->recv_lane, i);
        CU_ASSERT_EQUAL(s->from, l->rank);
        CU_ASSERT_EQUAL(r->to, l->rank);
        CU_ASSERT((l->rank + p->nranks - first) % p->nranks < gm);
        CU_ASSERT(l->ops != NULL && l->nops > 0);
        if (s->transport == NSIM_TRANSPORT_NET) {
            uint32_t h = (uint32_t)nsim_topo_device(t, s->recv_nic)->host;
            CU_ASSERT((h + fi->hosts - fi->first_played) % fi->hosts <
                      fi->played);
        }
    }
}

/* Eight hosts under one leaf per rail: every hop has the same route, so
 * two played hosts give the whole ring's time to the picosecond, in flow
 * and in packet fidelity, for AllReduce, AllGather and ReduceScatter. */
static void test_fold_exact_on_one_leaf(void)
{
    nsim_topo *t = cluster(8, 0);
    const nsim_coll colls[] = {NSIM_COLL_ALLREDUCE, NSIM_COLL_ALLGATHER,
                               NSIM_COLL_REDUCESCATTER};
    nsim_err err;
    for (size_t c = 0; c < 3; c++) {
        nsim_plan_req r = ring_req(colls[c], 64u << 20);
        nsim_plan *whole = plan(t, &r), *folded = plan(t, &r);
        nsim_fold_info fi;
        NSIM_ASSERT_OK(nsim_plan_fold(t, folded, &fi, &err));
        CU_ASSERT_STRING_EQUAL(fi.why_not, "");
        CU_ASSERT_EQUAL(fi.hosts, 8);
        CU_ASSERT_EQUAL(fi.played, 2);
        CU_ASSERT_EQUAL(fi.partner, UINT32_MAX); /* a ring */
        CU_ASSERT_EQUAL(fi.net_unlike, 0);
        CU_ASSERT_EQUAL(fi.net_conns, whole->nchannels * 8);
        check_folded_shape(t, folded, &fi, 8);
        CU_ASSERT_EQUAL(run(t, folded, NSIM_FIDELITY_FLOW),
                        run(t, whole, NSIM_FIDELITY_FLOW));
        if (c == 0) { /* packet: a smaller size, same answer */
            nsim_plan_destroy(whole);
            nsim_plan_destroy(folded);
            r.bytes = 4u << 20;
            whole = plan(t, &r);
            folded = plan(t, &r);
            NSIM_ASSERT_OK(nsim_plan_fold(t, folded, &fi, &err));
            CU_ASSERT_EQUAL(fi.played, 2);
            CU_ASSERT_EQUAL(run(t, folded, NSIM_FIDELITY_PACKET),
                            run(t, whole, NSIM_FIDELITY_PACKET));
        }
        nsim_plan_destroy(whole);
        nsim_plan_destroy(folded);
    }
    nsim_topo_destroy(t);
}

/* A size that does not divide over the ranks: the last positions get a
 * few elements less, twins' ops differ by a little; the played lanes
 * play every op at the largest payload of their twins (new patch
 * arrays; the dropped and replaced ones are freed or handed over: ASan
 * and valgrind check), and the fold says how much the twins differ.
 * Past NSIM_FOLD_BYTES_TOL (a small size over many ranks) it refuses,
 * saying by how much. */
static void test_fold_uneven_size(void)
{
    nsim_topo *t = cluster(8, 0);
    nsim_err err;
    nsim_plan_req r = ring_req(NSIM_COLL_ALLREDUCE, (256u << 20) + 64);
    nsim_plan *whole = plan(t, &r), *folded = plan(t, &r);
    nsim_fold_info fi;
    NSIM_ASSERT_OK(nsim_plan_fold(t, folded, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, 2);
    CU_ASSERT(fi.bytes_diff > 0 && fi.bytes_diff <= NSIM_FOLD_BYTES_TOL);
    check_folded_shape(t, folded, &fi, 8);
    double a = (double)run(t, folded, NSIM_FIDELITY_FLOW);
    double b = (double)run(t, whole, NSIM_FIDELITY_FLOW);
    CU_ASSERT(a > 0.995 * b && a < 1.005 * b);
    uint32_t nch = whole->nchannels;
    nsim_plan_destroy(whole);
    nsim_plan_destroy(folded);
    /* chunks of 1,376 bytes but the last, empty (LL128): the played
     * lanes play every chunk at its largest, which is the whole ring of
     * the size with that chunk full, to the picosecond (the played
     * lanes' own payloads, empty chunk and all, ran 0.7 % short) */
    r.proto = NSIM_PROTO_LL128;
    r.bytes = 64ull * nch * 1376 - 1376;
    folded = plan(t, &r);
    NSIM_ASSERT_OK(nsim_plan_fold(t, folded, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, 2);
    CU_ASSERT(fi.bytes_diff > 0);
    r.bytes += 1376;
    whole = plan(t, &r);
    CU_ASSERT_EQUAL(run(t, folded, NSIM_FIDELITY_FLOW),
                    run(t, whole, NSIM_FIDELITY_FLOW));
    CU_ASSERT_EQUAL(run(t, folded, NSIM_FIDELITY_PACKET),
                    run(t, whole, NSIM_FIDELITY_PACKET));
    nsim_plan_destroy(whole);
    nsim_plan_destroy(folded);
    /* 1 MiB + 64 over 64 ranks: payloads 3.1 % apart, over the bound */
    r.proto = NSIM_PROTO_SIMPLE;
    r.bytes = (1u << 20) + 64;
    folded = plan(t, &r);
    NSIM_ASSERT_OK(nsim_plan_fold(t, folded, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, 8);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, "payloads differ from rank"));
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, "does not divide evenly over "
                                              "64 ranks"));
    nsim_plan_destroy(folded);
    nsim_topo_destroy(t);
}

/* Twins each within the bound, but differing at different ops: rank
 * 16 carries more at one op, rank 32 at another (patches written here
 * over the shared array of an even size). Playing every op at its
 * largest would add both to the played lane: without a predicted time
 * the fold counts that against the same bound and refuses, leaving the
 * plan as it was. With one it weighs the bytes in time (3 % of a lane's
 * 2 MiB through half of a 50 GB/s NIC: 2.5 us): folded against 1 ms,
 * refused against 100 us (past 1 %). */
static nsim_plan *merging_adds_plan(nsim_topo *t)
{
    nsim_plan_req r = ring_req(NSIM_COLL_ALLREDUCE, 16u << 20);
    nsim_plan *p = plan(t, &r);
    uint32_t n = p->nranks;
    nsim_plan_lane *w = &p->lanes[0];
    uint64_t total = 0;
    for (uint32_t i = 0; i < w->nops; i++)
        total += w->ops[i].bytes;
    const uint32_t twins[2] = {16, 32}, at[2] = {2, 6};
    for (int k = 0; k < 2; k++) {
        nsim_plan_lane *l = &p->lanes[twins[k]];
        CU_ASSERT_FATAL(l->ops == w->ops && l->npatch == 0 && n == 64);
        nsim_plan_patch *a = malloc(sizeof *a);
        CU_ASSERT_FATAL(a != NULL);
        a->at = at[k];
        a->op = w->ops[at[k]];
        a->op.bytes += total * 3 / 200; /* 1.5 % of the lane */
        l->patch = a;
        l->npatch = 1;
        l->patch_shared = 0;
    }
    return p;
}

static void test_fold_refuses_what_merging_adds(void)
{
    nsim_topo *t = cluster(8, 0);
    nsim_err err;
    nsim_fold_info fi;
    nsim_plan *p = merging_adds_plan(t);
    uint32_t nlanes = p->nlanes;
    NSIM_ASSERT_OK(nsim_plan_fold(t, p, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, fi.hosts);
    CU_ASSERT_EQUAL(p->nlanes, nlanes);
    CU_ASSERT(fi.bytes_added > 0.029 && fi.bytes_added < 0.031);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, "every chunk at its largest "
                                              "would add 3.00 %"));
    nsim_plan_destroy(p);
    /* a predicted time of 1 ms: 2.5 us is well within 1 % of it */
    p = merging_adds_plan(t);
    p->req.fold_row_ps = 1000000000;
    NSIM_ASSERT_OK(nsim_plan_fold(t, p, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, 2);
    CU_ASSERT(fi.bytes_added > 0.029 && fi.bytes_added < 0.031);
    CU_ASSERT(fi.bytes_time_ps > 2000000 && fi.bytes_time_ps < 3000000);
    nsim_plan_destroy(p);
    /* of 100 us, past 1 % */
    p = merging_adds_plan(t);
    p->req.fold_row_ps = 100000000;
    NSIM_ASSERT_OK(nsim_plan_fold(t, p, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, fi.hosts);
    CU_ASSERT_EQUAL(p->nlanes, nlanes);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, "every chunk at its largest "
                                              "adds 3.00 % to a lane's "
                                              "payload, 2.50 us, 2.5 % of "
                                              "NCCL's estimate"));
    nsim_plan_destroy(p);
    nsim_topo_destroy(t);
}

/* Sixteen hosts, two leaves per rail (radix 16: eight hosts under
 * each): the ring's hops from host 7 to 8 and from 15 to 0 cross the
 * spine. The played hosts start at host 7, so the played ring has that
 * slowest route; the other hops are counted as faster. */
static void test_fold_plays_the_slowest_route(void)
{
    nsim_topo *t = cluster(16, 16);
    nsim_err err;
    nsim_plan_req r = ring_req(NSIM_COLL_ALLREDUCE, 64u << 20);
    nsim_plan *whole = plan(t, &r), *folded = plan(t, &r);
    nsim_fold_info fi;
    NSIM_ASSERT_OK(nsim_plan_fold(t, folded, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, 2);
    CU_ASSERT_EQUAL(fi.first_played, 7);
    CU_ASSERT_EQUAL(fi.net_unlike, fi.net_conns - 2 * whole->nchannels);
    /* two more cables (60 ns) and switches (the spine and the other
     * leaf, 200 ns each) */
    CU_ASSERT_EQUAL(fi.lat_diff_ps, 2 * 60000 + 2 * 200000);
    check_folded_shape(t, folded, &fi, 8);
    double a = (double)run(t, folded, NSIM_FIDELITY_FLOW);
    double b = (double)run(t, whole, NSIM_FIDELITY_FLOW);
    fprintf(stderr, "\n  fold over two leaves: folded %.2f us, whole %.2f us "
                    "(%+.2f%%)\n",
            a / 1e6, b / 1e6, 100 * (a - b) / b);
    CU_ASSERT(a > 0.97 * b && a < 1.03 * b);
    nsim_plan_destroy(whole);
    nsim_plan_destroy(folded);
    nsim_topo_destroy(t);
}

/* Where the ring is latency-bound, the slowest route on every played
 * hop adds up (every hop of a lap crosses the spine where 2 of 16 do):
 * given the size's predicted time, the fold plays a longer run of hosts,
 * the fewest that keep what its routes add under NSIM_FOLD_LAT_TOL of
 * it, and the folded ring comes within a percent of the whole one; with
 * no predicted time it plays two; past half the hosts it refuses, unless
 * asked to fold whatever the latency (--fold on). */
static void test_fold_latency_bound_plays_more_hosts(void)
{
    nsim_topo *t = cluster(16, 16);
    nsim_err err;
    nsim_plan_req r = ring_req(NSIM_COLL_ALLREDUCE, 1u << 20);
    r.proto = NSIM_PROTO_LL;
    r.nchannels = 1;
    nsim_plan *whole = plan(t, &r);
    double b = (double)run(t, whole, NSIM_FIDELITY_FLOW);
    nsim_fold_info fi;
    /* two hosts, every lap 14 crossings (of 16 hops) too many: 14 x 0.52
     * us per lap, two laps */
    nsim_plan *two = plan(t, &r);
    NSIM_ASSERT_OK(nsim_plan_fold(t, two, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, 2);
    CU_ASSERT_EQUAL(fi.lat_added_ps, 2 * 14 * 520000);
    double a2 = (double)run(t, two, NSIM_FIDELITY_FLOW);
    /* the whole ring's own time as the size's predicted time */
    r.fold_row_ps = (nsim_time)b;
    nsim_plan *more = plan(t, &r);
    NSIM_ASSERT_OK(nsim_plan_fold(t, more, &fi, &err));
    CU_ASSERT(fi.played > 2 && fi.played < fi.hosts);
    CU_ASSERT((double)fi.lat_added_ps <= NSIM_FOLD_LAT_TOL * b);
    CU_ASSERT_EQUAL(fi.first_played, 7);
    check_folded_shape(t, more, &fi, 8);
    double a = (double)run(t, more, NSIM_FIDELITY_FLOW);
    fprintf(stderr, "\n  latency-bound over two leaves: whole %.2f us, two "
                    "hosts %.2f (%+.2f%%), %u hosts %.2f (%+.2f%%)\n",
            b / 1e6, a2 / 1e6, 100 * (a2 - b) / b, fi.played, a / 1e6,
            100 * (a - b) / b);
    CU_ASSERT(a2 > 1.03 * b); /* what the longer run of hosts mends */
    CU_ASSERT(a > 0.99 * b && a < 1.01 * b);
    /* a predicted time so short that no period keeps under it */
    r.fold_row_ps = 1000000;
    nsim_plan *none = plan(t, &r);
    NSIM_ASSERT_OK(nsim_plan_fold(t, none, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, fi.hosts);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, "latency-bound ring across "
                                              "leaves"));
    /* --fold on: folded all the same, on the period that adds least (the
     * longest, as above), what it adds said: the row errs long */
    r.fold_lat_any = 1;
    nsim_plan *any = plan(t, &r);
    NSIM_ASSERT_OK(nsim_plan_fold(t, any, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, 8);
    CU_ASSERT_EQUAL(fi.first_played, 7);
    CU_ASSERT(fi.lat_added_ps > 0 &&
              (double)fi.lat_added_ps > NSIM_FOLD_LAT_TOL * 1000000);
    CU_ASSERT_EQUAL(fi.why_not[0], '\0');
    check_folded_shape(t, any, &fi, 8);
    double on = (double)run(t, any, NSIM_FIDELITY_FLOW);
    CU_ASSERT(on >= b && on < 1.01 * b); /* long, by about what it adds */
    nsim_plan_destroy(whole);
    nsim_plan_destroy(two);
    nsim_plan_destroy(more);
    nsim_plan_destroy(none);
    nsim_plan_destroy(any);
    nsim_topo_destroy(t);
}

static void expect_refused(nsim_topo *t, const nsim_plan_req *r,
                           const char *why)
{
    nsim_err err;
    nsim_fold_info fi;
    nsim_plan *p = plan(t, r);
    uint32_t nlanes = p->nlanes;
    NSIM_ASSERT_OK(nsim_plan_fold(t, p, &fi, &err));
    CU_ASSERT_EQUAL(fi.played, fi.hosts);
    CU_ASSERT_EQUAL(p->nlanes, nlanes); /* untouched */
    if (strstr(fi.why_not, why) == NULL)
        fprintf(stderr, "\n  expected \"%s\" in \"%s\"\n", why, fi.why_not);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, why));
    nsim_plan_destroy(p);
}

/* What does not fold, and why: trees, chains (Broadcast) on too few
 * hosts to gain, plans that keep their placement, too few hosts, a host
 * unlike the others. */
static void test_fold_refusals(void)
{
    nsim_topo *t = cluster(8, 0);
    nsim_plan_req r = ring_req(NSIM_COLL_ALLREDUCE, 16u << 20);
    r.algo = NSIM_ALGO_TREE;
    expect_refused(t, &r, "only ring");
    r = ring_req(NSIM_COLL_BROADCAST, 16u << 20);
    expect_refused(t, &r, "and folds from 192");
    r = ring_req(NSIM_COLL_ALLREDUCE, 16u << 20);
    r.compact_ops = 0;
    expect_refused(t, &r, "placement");

    /* host 5's first NIC at half the speed */
    nsim_err err;
    char *js = NULL;
    NSIM_ASSERT_OK(nsim_topo_to_json(t, &js, &err));
    char *nic = strstr(js, "\"h5.nic0\"");
    CU_ASSERT_FATAL(nic != NULL);
    char *speed = strstr(nic, "\"50 GB/s\"");
    CU_ASSERT_FATAL(speed != NULL);
    memcpy(speed + 1, "25", 2);
    nsim_topo *odd = NULL;
    NSIM_ASSERT_OK(nsim_topo_parse(js, strlen(js), "odd", &odd, &err));
    free(js);
    r = ring_req(NSIM_COLL_ALLREDUCE, 16u << 20);
    expect_refused(odd, &r, "host 5 differs from host 1");
    nsim_topo_destroy(odd);
    nsim_topo_destroy(t);

    t = cluster(2, 0);
    expect_refused(t, &r, "fewer than 4 hosts");
    nsim_topo_destroy(t);
}

/* When a run may fold: auto in flow only, on in packet too, off never;
 * with a fault plan, where the faults strike every host alike, or one
 * place (a ring, a tree, an AllToAll or SendRecv folds around it; an
 * AllToAll not around ranks' QPs), a link between switches under a ring
 * (whose fold finds the connections it strikes); random loss on a NIC
 * as a fault on that NIC (the played host draws its own losses). */
static void test_fold_run_policy(void)
{
    nsim_scenario s;
    memset(&s, 0, sizeof s);
    nsim_plan_req ring = ring_req(NSIM_COLL_ALLREDUCE, 1u << 20);
    nsim_plan_req tree = ring, a2a = ring, p2p = ring;
    tree.algo = NSIM_ALGO_TREE;
    a2a.coll = NSIM_COLL_ALLTOALL;
    p2p.coll = NSIM_COLL_SENDRECV;
    s.topo = cluster(16, 16); /* two leaves under spines */
    CU_ASSERT_EQUAL(s.fold, NSIM_FOLD_AUTO); /* the default */
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &ring));
    CU_ASSERT(!nsim_run_may_fold(&s, NSIM_FIDELITY_PACKET, &ring));
    s.fold = NSIM_FOLD_ON;
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_PACKET, &ring));
    /* a QP error on a whole channel strikes every host alike; one that
     * names a rank, or a NIC's port, strikes one place */
    nsim_fault faults[2] = {
        {.kind = NSIM_FAULT_QP_ERROR, .channel = 1, .from = -1, .to = -1},
        {.kind = NSIM_FAULT_QP_ERROR, .channel = -1, .from = -1, .to = -1}};
    s.faults = faults;
    s.nfaults = 2;
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &ring));
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &tree));
    faults[1].to = 3;
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &ring));
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &tree));
    CU_ASSERT(!nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &a2a));
    uint32_t nic = UINT32_MAX, spine = UINT32_MAX;
    for (uint32_t d = 0; d < nsim_topo_ndevices(s.topo); d++)
        if (nic == UINT32_MAX &&
            nsim_topo_device(s.topo, d)->type == NSIM_DEV_NIC)
            nic = d;
    for (uint32_t l = 0; l < nsim_topo_nlinks(s.topo); l++) {
        const nsim_link *k = nsim_topo_link(s.topo, l);
        if (spine == UINT32_MAX && nsim_topo_device(s.topo, k->src)->host < 0 &&
            nsim_topo_device(s.topo, k->dst)->host < 0)
            spine = l;
    }
    CU_ASSERT_FATAL(nic != UINT32_MAX && spine != UINT32_MAX);
    faults[1] = (nsim_fault){.kind = NSIM_FAULT_PORT_DOWN, .channel = -1,
                             .from = -1, .to = -1, .dev = nic};
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &ring));
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &tree));
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &a2a));
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &p2p));
    faults[1] = (nsim_fault){.kind = NSIM_FAULT_LINK_DEGRADED,
                             .channel = -1, .from = -1, .to = -1,
                             .link = spine, .bw = 1e9};
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &ring));
    CU_ASSERT(!nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &tree));
    /* random loss on a NIC: its host played, drawing its own losses */
    faults[1] = (nsim_fault){.kind = NSIM_FAULT_LOSS, .channel = -1,
                             .from = -1, .to = -1, .dev = nic, .prob = 0.01};
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &ring));
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &tree));
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &a2a));
    CU_ASSERT(nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &p2p));
    nsim_topo_destroy(s.topo);
    s.topo = NULL;
    s.faults = NULL;
    s.nfaults = 0;
    s.fold = NSIM_FOLD_OFF;
    CU_ASSERT(!nsim_run_may_fold(&s, NSIM_FIDELITY_FLOW, &ring));
    nsim_fold_mode m;
    CU_ASSERT(nsim_fold_mode_parse("on", &m) == NSIM_OK && m == NSIM_FOLD_ON);
    CU_ASSERT(nsim_fold_mode_parse("off", &m) == NSIM_OK &&
              m == NSIM_FOLD_OFF);
    CU_ASSERT(nsim_fold_mode_parse("Auto", &m) == NSIM_EINVAL);
    CU_ASSERT_STRING_EQUAL(nsim_fold_mode_name(NSIM_FOLD_AUTO), "auto");
}

/* ---- AllToAll -------------------------------------------------------- */

/* t as a topology file and a flow scenario of collective (an
 * nccl-tests name) on it, with extra keys; the scenario is loaded and
 * the files removed. */
static nsim_scenario *flow_scenario(nsim_topo *t, const char *name,
                                    const char *collective,
                                    const char *extra)
{
    nsim_err err;
    char topo[256], path[256];
    snprintf(topo, sizeof topo, "/tmp/nsim_fold_%s_%d.topo.json", name,
             (int)getpid());
    snprintf(path, sizeof path, "/tmp/nsim_fold_%s_%d.json", name,
             (int)getpid());
    NSIM_ASSERT_OK(nsim_topo_save(t, topo, &err));
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, "{\"format\": \"ncclsim-scenario\", \"version\": 1, "
               "\"name\": \"%s\", \"topology\": \"%s\", \"collective\": "
               "\"%s\", \"datatype\": \"float\", \"min_bytes\": "
               "\"1M\", \"max_bytes\": \"1M\", \"fidelity\": \"flow\"%s}\n",
            name, topo, collective, extra);
    fclose(f);
    nsim_scenario *s = NULL;
    NSIM_ASSERT_OK(nsim_scenario_load(path, &s, &err));
    remove(path);
    remove(topo);
    return s;
}

static nsim_scenario *alltoall_scenario(nsim_topo *t, const char *name)
{
    return flow_scenario(t, name, "alltoall_perf", "");
}

static nsim_run_row run_size(nsim_scenario *s, uint64_t size,
                             nsim_fold_mode mode)
{
    nsim_run_opts o = {0, 0, 0};
    nsim_run_row row;
    nsim_err err;
    s->fold = mode;
    NSIM_ASSERT_OK(nsim_run_size(s, &o, nsim_run_test_bytes(s, size), &row,
                                 NULL, NULL, &err));
    return row;
}

/* Eight hosts, 32 MiB: two played ones, each sending what a host sends to the
 * other, give the whole AllToAll's time within 1 %. */
static void test_fold_alltoall(void)
{
    nsim_topo *t = cluster(8, 0);
    nsim_scenario *s = alltoall_scenario(t, "a2a");
    nsim_run_row folded = run_size(s, 32u << 20, NSIM_FOLD_AUTO);
    nsim_run_row whole = run_size(s, 32u << 20, NSIM_FOLD_OFF);
    CU_ASSERT_EQUAL(folded.fold.hosts, 8);
    CU_ASSERT_EQUAL(folded.fold.played, 2);
    CU_ASSERT_EQUAL(folded.fold.partner, 1);
    CU_ASSERT_EQUAL(whole.fold.played, 8);
    CU_ASSERT(folded.events < whole.events / 3);
    fprintf(stderr, "\n  AllToAll 32 MiB, 8 hosts: folded %.2f us, whole "
                    "%.2f us\n",
            folded.time_us, whole.time_us);
    CU_ASSERT(fabs(folded.time_us - whole.time_us) < 0.01 * whole.time_us);
    nsim_scenario_destroy(s);
    nsim_topo_destroy(t);
}

/* Scenario name (coll, extra keys) on t at bytes, folded (auto) and with
 * every host played. */
static void run_both(nsim_topo *t, const char *name, const char *coll,
                     const char *extra, uint64_t bytes, nsim_run_row *folded,
                     nsim_run_row *whole)
{
    nsim_scenario *s = flow_scenario(t, name, coll, extra);
    *folded = run_size(s, bytes, NSIM_FOLD_AUTO);
    *whole = run_size(s, bytes, NSIM_FOLD_OFF);
    nsim_scenario_destroy(s);
}

/* Scenario name (coll, extra keys: h5.nic3 down) on 8 hosts t at bytes,
 * folded around host 5 onto `played` hosts (a ring, a pair: from host 5)
 * within tol of every host played; returns the whole run's row. */
static nsim_run_row struck_fold(nsim_topo *t, const char *name,
                                const char *coll, const char *extra,
                                uint64_t bytes, uint32_t played, double tol,
                                const char *label)
{
    nsim_run_row folded, whole;
    run_both(t, name, coll, extra, bytes, &folded, &whole);
    CU_ASSERT_EQUAL(folded.fold.played, played);
    CU_ASSERT(played > 2 || folded.fold.first_played == 5);
    CU_ASSERT_EQUAL(folded.fold.struck, 1);
    CU_ASSERT(fabs(folded.time_us - whole.time_us) <= tol * whole.time_us);
    fprintf(stderr, "  h5.nic3 down, %s, 8 hosts, %llu MiB: folded %.2f us "
                    "(%u hosts from host %u), whole %.2f us\n",
            label, (unsigned long long)(bytes >> 20), folded.time_us,
            folded.fold.played, folded.fold.first_played, whole.time_us);
    return whole;
}

/* The first link out of the device named name into the fabric (to a
 * switch off every host). */
static uint32_t first_link_out(const nsim_topo *t, const char *name)
{
    for (uint32_t l = 0; l < nsim_topo_nlinks(t); l++)
        if (strcmp(nsim_topo_device(t, nsim_topo_link(t, l)->src)->name,
                   name) == 0 &&
            nsim_topo_device(t, nsim_topo_link(t, l)->dst)->host < 0)
            return l;
    CU_FAIL("no such device");
    return 0;
}

/* Marks in used[] the spines (devices "spine.N", N < 64) the data and
 * ACK paths of the InfiniBand QP pair between NICs a and b pass
 * (nsim_topo_ib_pick, one path per pair, as the HCA model takes). */
static void pair_spines(nsim_topo *t, const char *a, const char *b,
                        uint8_t used[64])
{
    uint32_t da, db;
    nsim_err err;
    CU_ASSERT_FATAL(nsim_topo_find(t, a, &da) == NSIM_OK &&
                    nsim_topo_find(t, b, &db) == NSIM_OK);
    for (int back = 0; back < 2; back++) {
        const nsim_route *r;
        NSIM_ASSERT_OK(nsim_topo_route(t, back ? db : da, back ? da : db,
                                       &r, &err));
        const uint32_t *path =
            nsim_topo_route_path(r, nsim_topo_ib_pick(da, db));
        for (uint32_t h = 0; h < r->hops; h++) {
            unsigned k;
            if (sscanf(nsim_topo_device(t, nsim_topo_link(t, path[h])->dst)
                           ->name,
                       "spine.%u", &k) == 1 && k < 64)
                used[k] = 1;
        }
    }
}

/* A fault plan folds where it strikes every host alike: QP errors on
 * whole channels (every twin's connection of the channel fails at the
 * same moment, the played ones among them) give the whole ring's time,
 * failover and all; a fault on one NIC plays every host and says which;
 * a failing folded run says that the ranks it names may be a twin's. */
static void test_fold_faults(void)
{
    const char *alike =
        ", \"algorithm\": \"Ring\", \"qps_per_connection\": 2, "
        "\"failover\": \"%s\", \"faults\": [{\"at\": \"50 us\", "
        "\"kind\": \"qp_error\", \"channel\": 1, \"qp\": 0}, "
        "{\"at\": \"80 us\", \"kind\": \"qp_error\", \"qp\": 1%s}]";
    char extra[512];
    nsim_topo *t = cluster(8, 0);
    snprintf(extra, sizeof extra, alike, "rebind_qp", ", \"channel\": 3");
    nsim_scenario *s = flow_scenario(t, "qp_alike", "all_reduce_perf", extra);
    nsim_run_row folded = run_size(s, 16u << 20, NSIM_FOLD_AUTO);
    nsim_run_row whole = run_size(s, 16u << 20, NSIM_FOLD_OFF);
    nsim_scenario_destroy(s);
    CU_ASSERT_EQUAL(folded.fold.played, 2);
    CU_ASSERT_EQUAL(whole.fold.played, 8);
    CU_ASSERT(folded.events < whole.events / 3);
    CU_ASSERT_EQUAL(folded.time_us, whole.time_us);
    /* the faults cost time: the same run without them is faster */
    s = flow_scenario(t, "qp_none", "all_reduce_perf",
                      ", \"algorithm\": \"Ring\", "
                      "\"qps_per_connection\": 2");
    nsim_run_row clean = run_size(s, 16u << 20, NSIM_FOLD_AUTO);
    nsim_scenario_destroy(s);
    CU_ASSERT(clean.time_us < whole.time_us);
    fprintf(stderr, "\n  QP errors on whole channels, 8 hosts, 16 MiB: "
                    "folded %.2f us, whole %.2f us (no faults %.2f us)\n",
            folded.time_us, whole.time_us, clean.time_us);

    /* policy fail: the folded run fails as the whole one does */
    snprintf(extra, sizeof extra, alike, "fail", "");
    s = flow_scenario(t, "qp_fail", "all_reduce_perf", extra);
    nsim_run_opts o = {0, 0, 0};
    nsim_run_row row;
    nsim_err err;
    CU_ASSERT_EQUAL(nsim_run_size(s, &o, nsim_run_test_bytes(s, 16u << 20),
                                  &row, NULL, NULL, &err),
                    NSIM_EFAULT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "failover policy: fail"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "folded: 2 of 8 hosts played"));
    s->fold = NSIM_FOLD_OFF;
    CU_ASSERT_EQUAL(nsim_run_size(s, &o, nsim_run_test_bytes(s, 16u << 20),
                                  &row, NULL, NULL, &err),
                    NSIM_EFAULT);
    CU_ASSERT_PTR_NULL(strstr(err.msg, "folded"));
    nsim_scenario_destroy(s);

    /* one NIC's port: the ring folds around its host, which stands for
     * its twins, and gives the whole ring's time (a ring runs at its
     * slowest hop); a tree plays every host, and the row says why */
    const char *port = ", \"algorithm\": \"%s\", \"qps_per_connection\": 2, "
                       "\"failover\": \"rebind_nic\", \"faults\": "
                       "[{\"at\": \"50 us\", \"kind\": \"qp_error\", "
                       "\"channel\": 2, \"qp\": 0}, {\"at\": \"60 us\", "
                       "\"kind\": \"port_down\", \"nic\": \"h5.nic3\"}]";
    snprintf(extra, sizeof extra, port, "Ring");
    const char *keys = strstr(extra, ", \"qps_per_connection\"");
    whole = struck_fold(t, "port", "all_reduce_perf", extra, 16u << 20, 2,
                        0.005, "Ring");
    CU_ASSERT_EQUAL(whole.fold.struck, 0);
    CU_ASSERT(whole.time_us > clean.time_us);
    /* a tree folds around it too: the struck host played, standing for
     * the hosts of its roles (6 of 8 played) */
    snprintf(extra, sizeof extra, port, "Tree");
    (void)struck_fold(t, "port_tree", "all_reduce_perf", extra, 16u << 20, 6,
                      0.01, "Tree");
    /* an AllToAll folds onto the struck host and a partner, each doing
     * what a host does; SendRecv onto the pair it strikes: host 5's
     * sends and (from host 6, standing for host 4) its receives */
    (void)struck_fold(t, "port_a2a", "alltoall_perf", keys, 4u << 20, 2, 0.02,
                      "AllToAll");
    (void)struck_fold(t, "port_sr", "sendrecv_perf", keys, 16u << 20, 2,
                      0.01, "SendRecv");
    /* not an AllToAll around a QP error on ranks' connections */
    s = flow_scenario(t, "qp_a2a", "alltoall_perf",
                      ", \"qps_per_connection\": 2, \"failover\": "
                      "\"rebind_qp\", \"faults\": [{\"at\": \"20 us\", "
                      "\"kind\": \"qp_error\", \"from\": 3, \"to\": 12, "
                      "\"qp\": 0}]");
    row = run_size(s, 1u << 20, NSIM_FOLD_AUTO);
    CU_ASSERT_EQUAL(row.fold.played, 8);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(row.fold.why_not, "faults[0] (a QP error on rank 3 -> 12) "
                                 "strikes ranks' connections"));
    nsim_scenario_destroy(s);
    nsim_topo_destroy(t);

    /* two leaves of 8 hosts: the played hosts cover the struck one and a
     * hop that crosses the spine (a ring runs at its slowest hop) */
    t = cluster(16, 16);
    snprintf(extra, sizeof extra,
             ", \"algorithm\": \"Ring\", \"faults\": [{\"at\": \"20 us\", "
             "\"kind\": \"link_degraded\", \"a\": \"h4.nic0\", "
             "\"b\": \"%s\", \"bw\": \"100 Gb/s\"}]",
             nsim_topo_device(t, nsim_topo_link(t, first_link_out(
                                                       t, "h4.nic0"))->dst)
                 ->name);
    run_both(t, "degraded", "all_reduce_perf", extra, 64u << 20, &folded,
             &whole);
    CU_ASSERT(folded.fold.played > 2 && folded.fold.played < 16);
    CU_ASSERT(fabs(folded.time_us - whole.time_us) <= 0.005 * whole.time_us);
    fprintf(stderr, "  h4.nic0's uplink at 100 Gb/s, 16 hosts on 2 leaves, "
                    "64 MiB: folded %.2f us (%u hosts from host %u), whole "
                    "%.2f us\n",
            folded.time_us, folded.fold.played, folded.fold.first_played,
            whole.time_us);
    /* a leaf's uplink to a spine: the ring's fold finds the connections
     * whose paths cross it (InfiniBand: one path per NIC pair). A spine
     * no crossing of the ring on rail 0 (hosts 7 -> 8 and 15 -> 0, and
     * their ACKs) passes: the fold is the fault-free one; the spines of
     * both crossings degraded: 10 hosts to play, over half of them, so
     * every host plays */
    uint8_t low[64] = {0}, wrap[64] = {0};
    pair_spines(t, "h7.nic0", "h8.nic0", low);
    pair_spines(t, "h15.nic0", "h0.nic0", wrap);
    int nspines = 0, s_free = -1, s_low = -1, s_wrap = -1;
    char nm[16];
    uint32_t dev;
    while (snprintf(nm, sizeof nm, "spine.%d", nspines),
           nspines < 64 && nsim_topo_find(t, nm, &dev) == NSIM_OK)
        nspines++;
    for (int k = nspines - 1; k >= 0; k--) {
        if (!low[k] && !wrap[k])
            s_free = k;
        if (low[k])
            s_low = k;
        if (wrap[k])
            s_wrap = k;
    }
    CU_ASSERT_FATAL(s_free >= 0 && s_low >= 0 && s_wrap >= 0);
#define SPINE_FAULT                                                          \
    "{\"at\": \"20 us\", \"kind\": \"link_degraded\", \"a\": "              \
    "\"leaf.r0.0\", \"b\": \"spine.%d\", \"bw\": \"100 Gb/s\"}"
    const char *spine = ", \"algorithm\": \"Ring\", \"faults\": ["
                        SPINE_FAULT ", " SPINE_FAULT "]";
    nsim_run_row clean16;
    s = flow_scenario(t, "clean16", "all_reduce_perf",
                      ", \"algorithm\": \"Ring\"");
    clean16 = run_size(s, 16u << 20, NSIM_FOLD_AUTO);
    nsim_scenario_destroy(s);
    snprintf(extra, sizeof extra,
             ", \"algorithm\": \"Ring\", \"faults\": [" SPINE_FAULT "]",
             s_free);
#undef SPINE_FAULT
    s = flow_scenario(t, "spine0", "all_reduce_perf", extra);
    row = run_size(s, 16u << 20, NSIM_FOLD_AUTO);
    nsim_scenario_destroy(s);
    CU_ASSERT_EQUAL(row.fold.played, clean16.fold.played);
    CU_ASSERT_EQUAL(row.fold.fabric_links, 1);
    CU_ASSERT_EQUAL(row.fold.fabric_conns, 0);
    CU_ASSERT_EQUAL(row.time_us, clean16.time_us);
    snprintf(extra, sizeof extra, spine, s_low, s_wrap);
    run_both(t, "spine3", "all_reduce_perf", extra, 16u << 20, &folded,
             &whole);
    CU_ASSERT_EQUAL(folded.fold.played, 16);
    CU_ASSERT_PTR_NOT_NULL(strstr(folded.fold.why_not,
                                  "the hosts the faults strike span 10 "
                                  "hosts, more than the 8 played"));
    CU_ASSERT_EQUAL(folded.time_us, whole.time_us);
    fprintf(stderr, "  leaf.r0.0 -> spine.%d / spine.%d and %d at 100 Gb/s, "
                    "16 hosts, 16 MiB: folded as without it, %.2f us; every "
                    "host played, %.2f us\n",
            s_free, s_low, s_wrap, row.time_us, whole.time_us);
    /* a tree plays every host, and says why */
    snprintf(extra, sizeof extra, spine, s_low, s_wrap);
    memcpy(strstr(extra, "Ring"), "Tree", 4);
    s = flow_scenario(t, "spine3_tree", "all_reduce_perf", extra);
    row = run_size(s, 1u << 20, NSIM_FOLD_AUTO);
    CU_ASSERT_EQUAL(row.fold.played, 16);
    CU_ASSERT_PTR_NOT_NULL(strstr(row.fold.why_not,
                                  "strikes the fabric between hosts, where "
                                  "only a ring's fold finds"));
    nsim_scenario_destroy(s);
    nsim_topo_destroy(t);
}

/* nccl-tests' SendRecv (rank r to r + 1): two played hosts, the first
 * of them the one whose route to the next is the slowest, give the whole
 * run's time: on one leaf (hosts 0 and 1), and across two leaves (8 and
 * 4 hosts a rail: hosts 7 and 8, whose pair crosses the spine), small
 * and large. */
static void test_fold_sendrecv(void)
{
    static const uint32_t nodes[2] = {8, 12}, radix[2] = {0, 16};
    static const uint32_t first[2] = {0, 7};
    static const uint64_t sizes[2] = {64u << 10, 64u << 20};
    for (int k = 0; k < 2; k++) {
        nsim_topo *t = cluster(nodes[k], radix[k]);
        nsim_scenario *s = flow_scenario(t, "sendrecv", "sendrecv_perf", "");
        for (int z = 0; z < 2; z++) {
            nsim_run_row folded = run_size(s, sizes[z], NSIM_FOLD_AUTO);
            nsim_run_row whole = run_size(s, sizes[z], NSIM_FOLD_OFF);
            CU_ASSERT_EQUAL(folded.fold.hosts, nodes[k]);
            CU_ASSERT_EQUAL(folded.fold.played, 2);
            CU_ASSERT_EQUAL(folded.fold.first_played, first[k]);
            CU_ASSERT_EQUAL(folded.fold.partner, first[k] + 1);
            CU_ASSERT_EQUAL(whole.fold.played, nodes[k]);
            CU_ASSERT(folded.events < whole.events / 3);
            CU_ASSERT_EQUAL(folded.time_us, whole.time_us);
        }
        nsim_scenario_destroy(s);
        nsim_topo_destroy(t);
    }
}

/* Broadcast and Reduce: a chain played on 64 hosts and on 32 gives the
 * whole chain's time, each host not played adding what one of the first
 * run's last 32 added: 192 hosts on six leaves (32 a leaf), where the
 * whole chain crosses the spine more often than the played ones
 * (chain_lat_ps); the root on host 0 and on host 1 (the played hosts
 * start at the host before its); small and large. Measured: within
 * 0.05 %. Fewer than 192 hosts and a fault plan play every host. */
static void test_fold_chain(void)
{
    static const char *const colls[2] = {"broadcast_perf", "reduce_perf"};
    static const uint64_t sizes[2] = {1u << 20, 64u << 20};
    nsim_topo *t = cluster(192, 0);
    for (int c = 0; c < 2; c++) {
        nsim_scenario *s = flow_scenario(t, "chain", colls[c],
                                         c == 0 ? "" : ", \"root\": 13");
        uint32_t first = c == 0 ? 191 : 0; /* rank 13: host 1 */
        for (int z = 0; z < 2; z++) {
            nsim_run_row folded = run_size(s, sizes[z], NSIM_FOLD_AUTO);
            nsim_run_row whole = run_size(s, sizes[z], NSIM_FOLD_OFF);
            CU_ASSERT_EQUAL(folded.fold.hosts, 192);
            CU_ASSERT_EQUAL(folded.fold.played, NSIM_FOLD_CHAIN_HOSTS);
            CU_ASSERT_EQUAL(folded.fold.chain_hosts, NSIM_FOLD_CHAIN_HOSTS);
            CU_ASSERT_EQUAL(folded.fold.first_played, first);
            CU_ASSERT(folded.fold.chain_host_ps > 0);
            /* the played runs cross the spine more often, per host, than
             * the whole chain (one crossing in 32 hosts): what the whole
             * chain's routes add is less than the delay holds */
            CU_ASSERT(folded.fold.chain_lat_ps < 0);
            CU_ASSERT_EQUAL(whole.fold.played, 192);
            CU_ASSERT(folded.events < whole.events);
            fprintf(stderr, "\n  %s %llu MiB, 192 hosts: folded %.2f us "
                            "(+%.2f us a host), whole %.2f us",
                    colls[c], (unsigned long long)(sizes[z] >> 20),
                    folded.time_us, (double)folded.fold.chain_host_ps / 1e6,
                    whole.time_us);
            CU_ASSERT(fabs(folded.time_us - whole.time_us) <=
                      0.002 * whole.time_us);
        }
        nsim_scenario_destroy(s);
    }
    nsim_topo_destroy(t);
    /* a fault plan plays every host: the chain's added hosts would be
     * healthy ones */
    t = cluster(16, 0);
    nsim_scenario *s = flow_scenario(
        t, "chainfault", "broadcast_perf",
        ", \"failover\": \"rebind_nic\", \"faults\": [{\"at\": \"10 us\", "
        "\"kind\": \"port_down\", \"nic\": \"h5.nic3\"}]");
    nsim_run_row row = run_size(s, 1u << 20, NSIM_FOLD_AUTO);
    CU_ASSERT_EQUAL(row.fold.played, 16);
    CU_ASSERT_PTR_NOT_NULL(strstr(row.fold.why_not, "chain"));
    nsim_scenario_destroy(s);
    nsim_topo_destroy(t);
}

/* Refused AllToAll folds: RoCE (ECMP collisions depend on every host's
 * flows) before planning; a fabric whose routes differ in bandwidth
 * (rail 0's second leaf reaches the spines at half the speed) after
 * planning two hosts' sends, which are then planned again for every
 * host: the row is the whole AllToAll's. */
static void test_fold_alltoall_refusals(void)
{
    nsim_err err;
    nsim_topo *t = NULL;
    nsim_fabric_cfg roce = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 1, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", 4, &roce, &t, &err));
    nsim_plan_req r = ring_req(NSIM_COLL_ALLTOALL, 1u << 20);
    nsim_fold_info fi;
    NSIM_ASSERT_OK(nsim_plan_fold_prepare(t, &r, &fi, &err));
    CU_ASSERT_EQUAL(r.fold_senders, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, "RoCE"));
    nsim_topo_destroy(t);

    t = cluster(12, 16); /* two leaves per rail: 8 and 4 hosts */
    char *js = NULL, *at;
    NSIM_ASSERT_OK(nsim_topo_to_json(t, &js, &err));
    nsim_topo_destroy(t);
    int slowed = 0;
    for (at = strstr(js, "\"leaf.r0.1\""); at != NULL;
         at = strstr(at + 1, "\"leaf.r0.1\"")) {
        char *end = strchr(at, '}'), *spine = strstr(at, "\"spine.");
        char *bw = strstr(at, "\"50 GB/s\"");
        if (spine != NULL && bw != NULL && spine < end && bw < end) {
            memcpy(bw + 1, "25", 2);
            slowed++;
        }
    }
    CU_ASSERT(slowed > 0);
    NSIM_ASSERT_OK(nsim_topo_parse(js, strlen(js), "slow-leaf", &t, &err));
    free(js);
    nsim_scenario *s = alltoall_scenario(t, "a2a_slow");
    nsim_run_row folded = run_size(s, 4u << 20, NSIM_FOLD_AUTO);
    nsim_run_row whole = run_size(s, 4u << 20, NSIM_FOLD_OFF);
    CU_ASSERT_EQUAL(folded.fold.played, 12);
    CU_ASSERT_PTR_NOT_NULL(strstr(folded.fold.why_not, "than the played"));
    CU_ASSERT_EQUAL(folded.time_us, whole.time_us);
    CU_ASSERT_EQUAL(folded.events, whole.events);
    nsim_scenario_destroy(s);
    nsim_topo_destroy(t);
}

/* ---- NVLSTree --------------------------------------------------------- */

/* The played hosts of a folded NVLSTree stand for every host: each lane
 * holds the connections it sends and receives on (each of which names
 * the lane back), a phantom connection keeps the ranks of the hosts it
 * joins, and exactly one of its ends is played. */
static void check_tree_plan(nsim_topo *t, const nsim_plan *p)
{
    uint32_t per_host = p->nranks / p->nhosts, phantoms = 0;
    uint8_t *on = calloc(p->nhosts, 1);
    CU_ASSERT_FATAL(on != NULL);
    uint32_t lanes = p->req.algo == NSIM_ALGO_TREE ? 2 : 4;
    CU_ASSERT_EQUAL(p->nlanes,
                    lanes * p->nchannels * p->played_hosts * per_host);
    for (uint32_t i = 0; i < p->nlanes; i++) {
        on[p->lanes[i].rank / per_host] = 1;
        /* only a root's down lane has no ops */
        CU_ASSERT(p->lanes[i].nops > 0 || i % lanes == lanes - 1);
    }
    for (uint32_t i = 0; i < p->nconns; i++) {
        const nsim_plan_conn *c = &p->conns[i];
        if (c->transport == NSIM_TRANSPORT_NVLS) /* one side a switch */
            continue;
        CU_ASSERT_FATAL(c->send_lane < p->nlanes && c->recv_lane < p->nlanes);
        const nsim_plan_lane *sl = &p->lanes[c->send_lane];
        const nsim_plan_lane *rl = &p->lanes[c->recv_lane];
        int in_s = sl->send_conn == i, in_r = rl->recv_conn == i;
        for (uint32_t k = 0; k < sl->nsend_more; k++)
            in_s |= sl->send_more[k] == i;
        for (uint32_t k = 0; k < rl->nrecv_more; k++)
            in_r |= rl->recv_more[k] == i;
        CU_ASSERT(in_s && in_r);
        CU_ASSERT_EQUAL(sl->channel, c->channel);
        CU_ASSERT_EQUAL(rl->channel, c->channel);
        if (c->transport != NSIM_TRANSPORT_NET) { /* a Tree's chain */
            CU_ASSERT(sl->rank == c->from && rl->rank == c->to);
            continue;
        }
        uint32_t hs = c->from / per_host, hr = c->to / per_host;
        CU_ASSERT(on[hs] || on[hr]);
        if (p->req.algo == NSIM_ALGO_NVLSTREE) /* head i to head i */
            CU_ASSERT_EQUAL(c->from % per_host, c->to % per_host);
        CU_ASSERT_EQUAL(nsim_topo_device(t, c->send_nic)->host, (int32_t)hs);
        CU_ASSERT_EQUAL(nsim_topo_device(t, c->recv_nic)->host, (int32_t)hr);
        if (sl->rank != c->from || rl->rank != c->to) {
            phantoms++;
            CU_ASSERT(!on[hs] || !on[hr]);
        }
    }
    uint32_t played = 0;
    for (uint32_t h = 0; h < p->nhosts; h++)
        played += on[h];
    CU_ASSERT_EQUAL(played, p->played_hosts);
    CU_ASSERT_EQUAL(phantoms, p->phantom_conns);
    free(on);
}

/* At 2^k hosts both trees are complete: one host per role, 2 (k + 1) in
 * all; the plan is well formed at 16 and at 1,024 hosts (planned, not
 * run), for NVLSTree and for Tree. */
static void test_fold_tree_plans(void)
{
    static const uint32_t hosts[] = {16, 1024, 16};
    for (unsigned k = 0; k < 3; k++) {
        nsim_topo *t = cluster(hosts[k], 0);
        nsim_err err;
        nsim_plan_req r = ring_req(NSIM_COLL_ALLREDUCE, 64u << 20);
        r.algo = k < 2 ? NSIM_ALGO_NVLSTREE : NSIM_ALGO_TREE;
        nsim_fold_info fi;
        NSIM_ASSERT_OK(nsim_plan_fold_prepare(t, &r, &fi, &err));
        CU_ASSERT_EQUAL(r.fold_tree, 1);
        nsim_plan *p = plan(t, &r);
        NSIM_ASSERT_OK(nsim_plan_fold(t, p, &fi, &err));
        uint32_t lg = 0;
        while ((1u << lg) < hosts[k])
            lg++;
        fprintf(stderr, "\n  %s, %u hosts: %u played, %u of %u NET "
                        "connections phantom",
                k < 2 ? "NVLSTree" : "Tree", hosts[k], fi.played,
                fi.phantom_conns, fi.net_conns);
        CU_ASSERT_EQUAL(fi.played, p->played_hosts);
        CU_ASSERT(fi.played <= 2 * (lg + 1) && fi.played < hosts[k]);
        CU_ASSERT(fi.phantom_conns > 0 && fi.why_not[0] == '\0');
        check_tree_plan(t, p);
        nsim_plan_destroy(p);
        nsim_topo_destroy(t);
    }
}

/* AllReduce of 16 MiB on t (hosts hosts; extra: the scenario's keys),
 * folded within tol of every host played; labelled label. */
static void tree_fold_within(nsim_topo *t, const char *name,
                             const char *extra, uint32_t hosts, double tol,
                             const char *label)
{
    nsim_run_row folded, whole;
    run_both(t, name, "all_reduce_perf", extra, 16u << 20, &folded, &whole);
    CU_ASSERT_EQUAL(folded.fold.hosts, hosts);
    CU_ASSERT(folded.fold.played < hosts && whole.fold.played == hosts);
    CU_ASSERT(folded.events < whole.events);
    fprintf(stderr, "\n  %s 16 MiB, %u hosts: folded %.2f us (%u hosts), "
                    "whole %.2f us",
            label, hosts, folded.time_us, folded.fold.played, whole.time_us);
    CU_ASSERT(fabs(folded.time_us - whole.time_us) < tol * whole.time_us);
}

/* Sixteen hosts, 16 MiB: eight played hosts give the whole NVLSTree's
 * and the whole Tree's time within 2 %; fewer than 8 hosts, RoCE and
 * --fold off play all. */
static void test_fold_tree_runs(void)
{
    nsim_topo *t = cluster(16, 0);
    tree_fold_within(t, "nvlstree", ", \"algorithm\": \"NVLSTree\"", 16,
                     0.02, "NVLSTree");
    tree_fold_within(t, "tree", ", \"algorithm\": \"Tree\"", 16, 0.02,
                     "Tree");
    fprintf(stderr, "\n");
    nsim_topo_destroy(t);

    nsim_err err;
    nsim_fold_info fi;
    nsim_plan_req r = ring_req(NSIM_COLL_ALLREDUCE, 1u << 20);
    r.algo = NSIM_ALGO_NVLSTREE;
    t = cluster(4, 0);
    NSIM_ASSERT_OK(nsim_plan_fold_prepare(t, &r, &fi, &err));
    CU_ASSERT_EQUAL(r.fold_tree, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, "fewer than 8"));
    nsim_topo_destroy(t);
    nsim_fabric_cfg roce = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 1, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", 8, &roce, &t, &err));
    NSIM_ASSERT_OK(nsim_plan_fold_prepare(t, &r, &fi, &err));
    CU_ASSERT_EQUAL(r.fold_tree, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(fi.why_not, "RoCE"));
    nsim_topo_destroy(t);
}

/* A phantom's proxy: 32 hosts, Tree in LL128 at 16 MiB (NCCL's tuner's
 * choice there), where each step waits on the proxies' actions. A
 * phantom's own proxy thread runs only the phantom transfer, where in the
 * whole run it runs its other channels' too; its actions wait out the
 * backlog of the proxy standing in for it instead, and the fold comes
 * within 1 % (its own proxy alone: 306.10 against 311.78 us, -1.8 %). */
static void test_fold_tree_phantom_proxy(void)
{
    nsim_topo *t = cluster(32, 0);
    tree_fold_within(t, "treeproxy",
                     ", \"algorithm\": \"Tree\", \"protocol\": \"LL128\"",
                     32, 0.01, "Tree LL128");
    fprintf(stderr, "\n");
    nsim_topo_destroy(t);
}

CU_TestInfo nsim_test_fold[] = {
    {"exact on one leaf", test_fold_exact_on_one_leaf},
    {"uneven size", test_fold_uneven_size},
    {"refuses what merging adds", test_fold_refuses_what_merging_adds},
    {"plays the slowest route", test_fold_plays_the_slowest_route},
    {"latency-bound: plays more hosts",
     test_fold_latency_bound_plays_more_hosts},
    {"refusals", test_fold_refusals},
    {"run policy", test_fold_run_policy},
    {"alltoall", test_fold_alltoall},
    {"faults", test_fold_faults},
    {"sendrecv", test_fold_sendrecv},
    {"chain", test_fold_chain},
    {"alltoall refusals", test_fold_alltoall_refusals},
    {"tree plans", test_fold_tree_plans},
    {"tree runs", test_fold_tree_runs},
    {"tree: a phantom's proxy", test_fold_tree_phantom_proxy},
    CU_TEST_INFO_NULL,
};
