/* SPDX-License-Identifier: MIT
 *
 * test_topo.c - topology: the presets load, write/load round trips, routes
 * follow NCCL's preference with equal-cost choices kept, units, and every
 * bad file in tests/data/bad_topo fails with its expected message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsim_test.h"
#include "sim/core/units.h"
#include "sim/topo/cluster.h"
#include "sim/topo/topo.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

static void test_presets_load(void)
{
    static const struct {
        const char *file;
        uint32_t ranks, hosts;
    } p[] = {
        {"seed-4gpu.topo.json", 4, 2},
        {"dgx-h100.topo.json", 8, 1},
        {"dgx-h100-2node.topo.json", 16, 2},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        nsim_err err = {0};
        nsim_topo *t = NULL;
        char path[512];
        snprintf(path, sizeof path, SCEN "%s", p[i].file);
        NSIM_ASSERT_OK(nsim_topo_load(path, &t, &err));
        CU_ASSERT_EQUAL(nsim_topo_nranks(t), p[i].ranks);
        CU_ASSERT_EQUAL(nsim_topo_nhosts(t), p[i].hosts);
        nsim_topo_destroy(t);
    }
}

static void test_round_trip(void)
{
    nsim_err err = {0};
    nsim_topo *a = NULL, *b = NULL;
    char *ja = NULL, *jb = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &a, &err));
    NSIM_ASSERT_OK(nsim_topo_to_json(a, &ja, &err));
    NSIM_ASSERT_OK(nsim_topo_parse(ja, strlen(ja), "mem", &b, &err));
    NSIM_ASSERT_OK(nsim_topo_to_json(b, &jb, &err));
    CU_ASSERT_STRING_EQUAL(ja, jb);
    CU_ASSERT_EQUAL(nsim_topo_ndevices(a), nsim_topo_ndevices(b));
    CU_ASSERT_EQUAL(nsim_topo_nlinks(a), nsim_topo_nlinks(b));
    for (uint32_t i = 0; i < nsim_topo_nlinks(a); i++) {
        const nsim_link *la = nsim_topo_link(a, i), *lb = nsim_topo_link(b, i);
        CU_ASSERT(la->src == lb->src && la->dst == lb->dst &&
                  la->type == lb->type && la->bw == lb->bw &&
                  la->lat_ps == lb->lat_ps && la->count == lb->count);
    }
    for (uint32_t i = 0; i < nsim_topo_ndevices(a); i++) {
        const nsim_device *da = nsim_topo_device(a, i);
        const nsim_device *db = nsim_topo_device(b, i);
        CU_ASSERT(strcmp(da->name, db->name) == 0 && da->type == db->type &&
                  da->host == db->host && da->rank == db->rank &&
                  da->port_bw == db->port_bw && da->lat_ps == db->lat_ps);
    }
    /* and through a file */
    NSIM_ASSERT_OK(nsim_topo_save(b, "roundtrip.topo.json", &err));
    nsim_topo *c = NULL;
    NSIM_ASSERT_OK(nsim_topo_load("roundtrip.topo.json", &c, &err));
    CU_ASSERT_EQUAL(nsim_topo_nlinks(c), nsim_topo_nlinks(a));
    remove("roundtrip.topo.json");
    free(ja);
    free(jb);
    nsim_topo_destroy(a);
    nsim_topo_destroy(b);
    nsim_topo_destroy(c);
}

static const nsim_route *route_ranks(nsim_topo *t, uint32_t a, uint32_t b)
{
    nsim_err err = {0};
    const nsim_route *r = NULL;
    if (nsim_topo_route(t, nsim_topo_rank_device(t, a),
                        nsim_topo_rank_device(t, b), &r, &err) != NSIM_OK)
        return NULL;
    return r;
}

static void test_routes_preference(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_load(SCEN "dgx-h100-2node.topo.json", &t, &err));
    const nsim_route *r = route_ranks(t, 0, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NVL);
    CU_ASSERT_EQUAL(r->hops, 2);
    CU_ASSERT_DOUBLE_EQUAL(r->bw, 450e9, 1);
    r = route_ranks(t, 0, 8); /* same rail: GPU-PCIe-NIC-switch-NIC-PCIe-GPU */
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NET);
    CU_ASSERT_EQUAL(r->hops, 6);
    CU_ASSERT_EQUAL(r->npaths, 1);
    CU_ASSERT_DOUBLE_EQUAL(r->bw, 50e9, 1);
    /* GPU to its own NIC: one PCIe switch */
    uint32_t nic;
    NSIM_ASSERT_OK(nsim_topo_find(t, "h0.nic3", &nic) == NSIM_OK ? 0 : 1);
    const nsim_route *rn;
    NSIM_ASSERT_OK(nsim_topo_route(t, nsim_topo_rank_device(t, 3), nic, &rn,
                                   &err));
    CU_ASSERT_EQUAL(rn->type, NSIM_PATH_PIX);
    /* GPU to a NIC of the other socket crosses the CPUs */
    NSIM_ASSERT_OK(nsim_topo_route(t, nsim_topo_rank_device(t, 7),
                                   (nsim_topo_find(t, "h0.nic0", &nic), nic),
                                   &rn, &err));
    CU_ASSERT_EQUAL(rn->type, NSIM_PATH_SYS);
    /* cached: same pointer the second time */
    CU_ASSERT_PTR_EQUAL(route_ranks(t, 0, 8), route_ranks(t, 0, 8));
    nsim_topo_destroy(t);
}

/* Every pair of a host's GPUs over NVLink or not: the one-search-per-GPU
 * answer matches the route of every pair, before and after a link that
 * makes one pair NVB (through a GPU), and is not kept past a change. */
static void test_hosts_nvlink_whole(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_create("nvl", &t, &err));
    const char *names[] = {"g0", "g1", "g2", "sw"};
    for (int i = 0; i < 4; i++) {
        nsim_device d = {0};
        snprintf(d.name, sizeof d.name, "%s", names[i]);
        d.rank = -1;
        d.host = 0;
        d.type = i < 3 ? NSIM_DEV_GPU : NSIM_DEV_PCIE_SWITCH;
        snprintf(d.gen, sizeof d.gen, "%s", i < 3 ? "h100" : "");
        NSIM_ASSERT_OK(nsim_topo_add_device(t, &d, NULL, &err));
    }
    for (uint32_t g = 0; g < 3; g++)
        NSIM_ASSERT_OK(nsim_topo_add_link(t, g, 3, NSIM_LINK_PCIE, 4e9, 0, 16, NULL, &err));
    NSIM_ASSERT_OK(nsim_topo_add_link(t, 0, 1, NSIM_LINK_NVLINK, 25e9, 0, 4, NULL, &err));
    CU_ASSERT_EQUAL(nsim_topo_hosts_nvlink_whole(t), 0); /* not finalized */
    NSIM_ASSERT_OK(nsim_topo_finalize(t, "nvl", &err));
    CU_ASSERT_EQUAL(nsim_topo_hosts_nvlink_whole(t), 0);
    const nsim_route *r = NULL;
    NSIM_ASSERT_OK(nsim_topo_route(t, 0, 1, &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NVL);
    NSIM_ASSERT_OK(nsim_topo_route(t, 0, 2, &r, &err));
    CU_ASSERT(r->type > NSIM_PATH_NVB);
    NSIM_ASSERT_OK(nsim_topo_add_link(t, 1, 2, NSIM_LINK_NVLINK, 25e9, 0, 4, NULL, &err));
    NSIM_ASSERT_OK(nsim_topo_finalize(t, "nvl", &err));
    CU_ASSERT_EQUAL(nsim_topo_hosts_nvlink_whole(t), 1);
    nsim_topo *u = NULL; /* routes are kept: a fresh topology for them */
    NSIM_ASSERT_OK(nsim_topo_create("nvl2", &u, &err));
    for (uint32_t i = 0; i < 4; i++)
        NSIM_ASSERT_OK(nsim_topo_add_device(u, nsim_topo_device(t, i), NULL, &err));
    for (uint32_t l = 0; l < nsim_topo_nlinks(t); l += 2) {
        const nsim_link *k = nsim_topo_link(t, l);
        NSIM_ASSERT_OK(nsim_topo_add_link(u, k->src, k->dst, k->type, k->lane_bw,
                                          k->lat_ps, k->count, NULL, &err));
    }
    NSIM_ASSERT_OK(nsim_topo_finalize(u, "nvl2", &err));
    NSIM_ASSERT_OK(nsim_topo_route(u, 0, 2, &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NVB);
    CU_ASSERT_EQUAL(nsim_topo_hosts_nvlink_whole(u), 1);
    nsim_topo_destroy(u);
    nsim_topo_destroy(t);
}

/* Fewest-hop paths from a to b over the network (IB/RoCE links, only
 * switches in between), counted layer by layer: what a route between
 * two hosts' NICs must hold. Returns the hops; *count the paths. */
static uint32_t count_net_paths(const nsim_topo *t, uint32_t a, uint32_t b,
                                double *count)
{
    uint32_t n = nsim_topo_ndevices(t);
    uint32_t *dist = malloc(n * sizeof *dist);
    uint32_t *queue = malloc(n * sizeof *queue);
    double *ways = calloc(n, sizeof *ways);
    for (uint32_t i = 0; i < n; i++)
        dist[i] = UINT32_MAX;
    uint32_t head = 0, tail = 0;
    dist[a] = 0;
    ways[a] = 1;
    queue[tail++] = a;
    while (head < tail) {
        uint32_t u = queue[head++];
        if (u != a && nsim_topo_device(t, u)->type != NSIM_DEV_SWITCH)
            continue;
        const uint32_t *out = nsim_topo_out(t, u);
        for (uint32_t k = 0; k < nsim_topo_nout(t, u); k++) {
            const nsim_link *l = nsim_topo_link(t, out[k]);
            if (l->type != NSIM_LINK_IB && l->type != NSIM_LINK_ROCE)
                continue;
            if (dist[l->dst] == UINT32_MAX) {
                dist[l->dst] = dist[u] + 1;
                queue[tail++] = l->dst;
            }
            if (dist[l->dst] == dist[u] + 1)
                ways[l->dst] += ways[u];
        }
    }
    uint32_t hops = dist[b];
    *count = ways[b];
    free(dist);
    free(queue);
    free(ways);
    return hops;
}

/* Routes between NICs of a cluster (found from both ends at once): for
 * pairs on one leaf, one rail and across rails, every fewest-hop path
 * and no other, each a chain of links from a to b. */
static void test_routes_cluster_net(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_fabric_cfg cfg = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 0, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", 40, &cfg, &t, &err));
    uint32_t nics[512], nn = 0;
    for (uint32_t d = 0; d < nsim_topo_ndevices(t) && nn < 512; d++)
        if (nsim_topo_device(t, d)->type == NSIM_DEV_NIC)
            nics[nn++] = d;
    CU_ASSERT_FATAL(nn >= 24);
    uint32_t checked = 0, multi = 0;
    for (uint32_t i = 0; i < nn; i += 37)
        for (uint32_t j = 1; j < nn; j += 23) {
            uint32_t a = nics[i], b = nics[j];
            if (nsim_topo_device(t, a)->host == nsim_topo_device(t, b)->host)
                continue;
            const nsim_route *r = NULL;
            NSIM_ASSERT_OK(nsim_topo_route(t, a, b, &r, &err));
            double ways = 0;
            uint32_t hops = count_net_paths(t, a, b, &ways);
            CU_ASSERT_EQUAL(r->type, NSIM_PATH_NET);
            CU_ASSERT_EQUAL(r->hops, hops);
            CU_ASSERT_EQUAL(r->npaths, ways < NSIM_ROUTE_MAX_PATHS
                                           ? (uint32_t)ways
                                           : NSIM_ROUTE_MAX_PATHS);
            for (uint32_t p = 0; p < r->npaths; p++) {
                const uint32_t *pl = &r->links[(size_t)p * r->hops];
                CU_ASSERT_EQUAL(nsim_topo_link(t, pl[0])->src, a);
                CU_ASSERT_EQUAL(nsim_topo_link(t, pl[r->hops - 1])->dst, b);
                for (uint32_t h = 0; h + 1 < r->hops; h++)
                    CU_ASSERT_EQUAL(nsim_topo_link(t, pl[h])->dst,
                                    nsim_topo_link(t, pl[h + 1])->src);
                for (uint32_t q = 0; q < p; q++)
                    CU_ASSERT(memcmp(pl, &r->links[(size_t)q * r->hops],
                                     r->hops * sizeof *pl) != 0);
            }
            checked++;
            multi += r->npaths > 1;
        }
    CU_ASSERT(checked >= 100);
    CU_ASSERT(multi > 0); /* some pairs cross the spines */
    CU_ASSERT(multi < checked); /* and some share a leaf */
    nsim_topo_destroy(t);
}

/* A built fat tree's shape: per leaf, the cables down (NIC ports) and up
 * (to spines), the spines' ports, and which leaves a host's NICs reach. */
static void fabric_shape(const nsim_topo *t, uint32_t radix, double oversub,
                         int whole_hosts)
{
    uint32_t nd = nsim_topo_ndevices(t), up0 = 0, leaves = 0;
    uint32_t *down = calloc(nd, sizeof *down), *up = calloc(nd, sizeof *up);
    int32_t *host_leaf = malloc(nd * sizeof *host_leaf);
    CU_ASSERT_FATAL(down != NULL && up != NULL && host_leaf != NULL);
    for (uint32_t d = 0; d < nd; d++)
        host_leaf[d] = -1;
    for (uint32_t i = 0; i < nsim_topo_nlinks(t); i++) {
        const nsim_link *l = nsim_topo_link(t, i);
        const nsim_device *a = nsim_topo_device(t, l->src);
        const nsim_device *b = nsim_topo_device(t, l->dst);
        if (a->type == NSIM_DEV_NIC && b->type == NSIM_DEV_SWITCH) {
            down[l->dst] += l->count;
            if (whole_hosts) {
                int32_t *hl = &host_leaf[a->host];
                CU_ASSERT(*hl < 0 || *hl == (int32_t)l->dst);
                *hl = (int32_t)l->dst;
            }
        } else if (a->type == NSIM_DEV_SWITCH &&
                   b->type == NSIM_DEV_SWITCH &&
                   strncmp(a->name, "leaf", 4) == 0) {
            up[l->src] += l->count; /* the leaf's uplinks */
            up[l->dst] += l->count; /* the spine's ports */
        }
    }
    uint32_t full = 0; /* the most ports a leaf uses down */
    for (uint32_t d = 0; d < nd; d++)
        full = down[d] > full ? down[d] : full;
    for (uint32_t d = 0; d < nd; d++) {
        const nsim_device *dv = nsim_topo_device(t, d);
        if (dv->type != NSIM_DEV_SWITCH)
            continue;
        if (strncmp(dv->name, "spine", 5) == 0) {
            CU_ASSERT(up[d] <= radix);
            continue;
        }
        leaves++;
        CU_ASSERT(down[d] + up[d] <= radix);
        if (up0 == 0)
            up0 = up[d];
        CU_ASSERT_EQUAL(up[d], up0); /* every leaf alike above */
        /* a full leaf: down to up as asked, within a port's rounding */
        if (down[d] == full && up[d] > 0)
            CU_ASSERT(fabs((double)down[d] / up[d] - oversub) <=
                      oversub / up[d] + 0.1);
    }
    CU_ASSERT(leaves > 1);
    free(down);
    free(up);
    free(host_leaf);
}

/* topo build's fat trees: a fat-tree's leaf takes whole hosts (all of a
 * host's NICs under one leaf; hosts split across leaves were neither how
 * clusters are cabled nor alike, so no run folded), a rail leaf whole
 * NVLink domains (an NVL72 rack's trays), each leaf has exactly
 * its uplinks (K - d of them, or that share of the ports a fat-tree leaf
 * uses down: the parallel cables to each spine were rounded up, so an
 * oversubscription of 2 built 1.56), spread evenly over the spines. */
static void test_fabric_sizes(void)
{
    static const struct {
        const char *preset;
        uint32_t nodes;
        nsim_fabric_kind kind;
        double oversub;
        uint32_t radix, leaves, uplinks;
    } c[] = {
        {"hgx-h200", 32, NSIM_FABRIC_FAT_TREE, 2, 64, 7, 21},
        {"hgx-h200", 256, NSIM_FABRIC_FAT_TREE, 2, 64, 52, 21},
        {"dgx-a100", 128, NSIM_FABRIC_FAT_TREE, 1, 64, 32, 32},
        {"pcie-8xl40s", 100, NSIM_FABRIC_FAT_TREE, 1.5, 64, 6, 26},
        {"dgx-h100", 40, NSIM_FABRIC_RAIL_FAT_TREE, 1, 64, 16, 32},
        {"dgx-h100", 256, NSIM_FABRIC_RAIL_FAT_TREE, 2, 64, 56, 22},
        {"hgx-h200", 64, NSIM_FABRIC_RAIL_FAT_TREE, 3, 64, 16, 16},
        /* eight NVL72 racks: a rail leaf takes one rack's 18 trays */
        {"gb200-nvl", 144, NSIM_FABRIC_RAIL_FAT_TREE, 1, 64, 32, 18},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        nsim_err err = {0};
        nsim_topo *t = NULL;
        nsim_fabric_cfg cfg = {c[i].kind, 0, c[i].oversub, 0, 0, 0};
        NSIM_ASSERT_OK(nsim_cluster_build(c[i].preset, c[i].nodes, &cfg, &t,
                                          &err));
        fabric_shape(t, c[i].radix, c[i].oversub,
                     c[i].kind == NSIM_FABRIC_FAT_TREE);
        uint32_t leaves = 0, l0 = 0, up = 0;
        for (uint32_t d = 0; d < nsim_topo_ndevices(t); d++)
            if (strncmp(nsim_topo_device(t, d)->name, "leaf", 4) == 0 &&
                leaves++ == 0)
                l0 = d;
        for (uint32_t k = 0; k < nsim_topo_nlinks(t); k++) {
            const nsim_link *l = nsim_topo_link(t, k);
            if (l->src == l0 &&
                nsim_topo_device(t, l->dst)->type == NSIM_DEV_SWITCH)
                up += l->count;
        }
        CU_ASSERT_EQUAL(leaves, c[i].leaves);
        CU_ASSERT_EQUAL(up, c[i].uplinks);
        if (strcmp(c[i].preset, "gb200-nvl") == 0) {
            /* a rack's first and last trays under one leaf, the next
             * rack's first under another */
            uint32_t d[3], leaf[3];
            const char *nic[3] = {"h0.nic0", "h17.nic0", "h18.nic0"};
            for (int j = 0; j < 3; j++) {
                NSIM_ASSERT_OK(nsim_topo_find(t, nic[j], &d[j]));
                leaf[j] = UINT32_MAX;
                for (uint32_t k = 0; k < nsim_topo_nout(t, d[j]); k++) {
                    const nsim_link *l =
                        nsim_topo_link(t, nsim_topo_out(t, d[j])[k]);
                    if (nsim_topo_device(t, l->dst)->type ==
                        NSIM_DEV_SWITCH)
                        leaf[j] = l->dst;
                }
            }
            CU_ASSERT_FATAL(leaf[0] != UINT32_MAX && leaf[2] != UINT32_MAX);
            CU_ASSERT_EQUAL(leaf[0], leaf[1]);
            CU_ASSERT_NOT_EQUAL(leaf[1], leaf[2]);
        }
        nsim_topo_destroy(t);
    }
}

/* Two spines between two leaves: both paths are kept for ECMP. */
static void test_routes_keep_equal_cost_paths(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_create("ecmp", &t, &err));
    const char *names[] = {"g0", "g1", "n0", "n1", "leaf0", "leaf1",
                           "spine0", "spine1", "spine2"};
    for (int i = 0; i < 9; i++) {
        nsim_device d = {0};
        snprintf(d.name, sizeof d.name, "%s", names[i]);
        d.rank = -1;
        d.host = i < 4 ? i % 2 : -1;
        d.type = i < 2 ? NSIM_DEV_GPU : i < 4 ? NSIM_DEV_NIC : NSIM_DEV_SWITCH;
        snprintf(d.gen, sizeof d.gen, "%s", i < 2 ? "h100" : "");
        d.nic_ports = 1;
        d.port_bw = 50e9;
        d.radix = 8;
        NSIM_ASSERT_OK(nsim_topo_add_device(t, &d, NULL, &err));
    }
    NSIM_ASSERT_OK(nsim_topo_add_link(t, 0, 2, NSIM_LINK_PCIE, 4e9, 0, 16, NULL, &err));
    NSIM_ASSERT_OK(nsim_topo_add_link(t, 1, 3, NSIM_LINK_PCIE, 4e9, 0, 16, NULL, &err));
    NSIM_ASSERT_OK(nsim_topo_add_link(t, 2, 4, NSIM_LINK_IB, 50e9, 0, 1, NULL, &err));
    NSIM_ASSERT_OK(nsim_topo_add_link(t, 3, 5, NSIM_LINK_IB, 50e9, 0, 1, NULL, &err));
    for (uint32_t s = 6; s < 9; s++) {
        /* spine2 is slower: not an equal-cost choice */
        double bw = s == 8 ? 25e9 : 50e9;
        NSIM_ASSERT_OK(nsim_topo_add_link(t, 4, s, NSIM_LINK_IB, bw, 0, 1, NULL, &err));
        NSIM_ASSERT_OK(nsim_topo_add_link(t, 5, s, NSIM_LINK_IB, bw, 0, 1, NULL, &err));
    }
    NSIM_ASSERT_OK(nsim_topo_finalize(t, "ecmp", &err));
    const nsim_route *r = route_ranks(t, 0, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NET);
    CU_ASSERT_EQUAL(r->hops, 6);
    CU_ASSERT_EQUAL(r->npaths, 2);
    /* the two paths differ only at the spine */
    CU_ASSERT_NOT_EQUAL(r->links[2], r->links[6 + 2]);
    nsim_topo_destroy(t);
}

static void test_bad_files(void)
{
    char path[2048], line[512];
    snprintf(path, sizeof path, "%s/bad_topo/expected.txt", NSIM_TEST_DATA);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = '\0';
        char *bar = strchr(line, '|');
        CU_ASSERT_PTR_NOT_NULL_FATAL(bar);
        *bar = '\0';
        snprintf(path, sizeof path, "%s/bad_topo/%s", NSIM_TEST_DATA, line);
        nsim_err err = {0};
        nsim_topo *t = NULL;
        int rc = nsim_topo_load(path, &t, &err);
        if (rc == NSIM_OK || strstr(err.msg, bar + 1) == NULL ||
            strstr(err.msg, line) == NULL)
            fprintf(stderr, "\n  %s: rc %d, message \"%s\", wanted \"%s\"\n",
                    line, rc, err.msg, bar + 1);
        CU_ASSERT_NOT_EQUAL(rc, NSIM_OK);
        CU_ASSERT_PTR_NULL(t);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bar + 1));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, line)); /* names the file */
        nsim_topo_destroy(t);
        n++;
    }
    fclose(f);
    CU_ASSERT(n >= 15);
}

static void test_units(void)
{
    double bw;
    nsim_time ps;
    uint64_t sz;
    const char *why;
    CU_ASSERT_EQUAL(nsim_units_parse_bw("400 Gb/s", &bw, &why), NSIM_OK);
    CU_ASSERT_DOUBLE_EQUAL(bw, 50e9, 1e-3);
    CU_ASSERT_EQUAL(nsim_units_parse_bw("25GB/s", &bw, &why), NSIM_OK);
    CU_ASSERT_DOUBLE_EQUAL(bw, 25e9, 1e-3);
    CU_ASSERT_NOT_EQUAL(nsim_units_parse_bw("25", &bw, &why), NSIM_OK);
    CU_ASSERT_NOT_EQUAL(nsim_units_parse_bw("0 GB/s", &bw, &why), NSIM_OK);
    CU_ASSERT_NOT_EQUAL(nsim_units_parse_bw("nan GB/s", &bw, &why), NSIM_OK);
    CU_ASSERT_EQUAL(nsim_units_parse_time("1.5 us", &ps, &why), NSIM_OK);
    CU_ASSERT_EQUAL(ps, 1500000);
    CU_ASSERT_NOT_EQUAL(nsim_units_parse_time("-1 ns", &ps, &why), NSIM_OK);
    CU_ASSERT_EQUAL(nsim_units_parse_size("4 MiB", &sz, &why), NSIM_OK);
    CU_ASSERT_EQUAL(sz, 4194304);
    CU_ASSERT_EQUAL(nsim_units_parse_size("1G", &sz, &why), NSIM_OK);
    CU_ASSERT_EQUAL(sz, 1073741824);
    CU_ASSERT_NOT_EQUAL(nsim_units_parse_size("1.5", &sz, &why), NSIM_OK);
    char buf[64];
    double vals[] = {3.938e9 * 16, 50e9, 1e9 / 3, 12.5e9};
    for (int i = 0; i < 4; i++) {
        nsim_units_format_bw(vals[i], buf, sizeof buf);
        CU_ASSERT_EQUAL(nsim_units_parse_bw(buf, &bw, &why), NSIM_OK);
        CU_ASSERT_EQUAL(bw, vals[i]);
    }
    CU_ASSERT_EQUAL(nsim_xfer_ps(4096, 50e9), 81920);
    CU_ASSERT_EQUAL(nsim_xfer_ps(1, 3e12), 1); /* rounds up */
}

/* Two hosts, each a CPU with two NICs; one switch per rail and no spine.
 * A NIC reaches the other host's NIC of its rail over the network; the
 * other rail only by entering a host and leaving it through its other
 * NIC, which no packet does: no route. A GPU-less host is still a valid
 * destination for host memory (the NIC writes it). */
static void test_routes_hosts_are_not_transit(void)
{
    const char *js =
        "{\"format\": \"ncclsim-topology\", \"version\": 1, \"name\": "
        "\"rails\", \"devices\": ["
        "{\"id\": \"h0.cpu\", \"type\": \"cpu\", \"host\": 0},"
        "{\"id\": \"h1.cpu\", \"type\": \"cpu\", \"host\": 1},"
        "{\"id\": \"h0.gpu\", \"type\": \"gpu\", \"gen\": \"h100\", \"host\": 0},"
        "{\"id\": \"h1.gpu\", \"type\": \"gpu\", \"gen\": \"h100\", \"host\": 1},"
        "{\"id\": \"h0.nic0\", \"type\": \"nic\", \"host\": 0, \"speed\": \"400 Gb/s\"},"
        "{\"id\": \"h0.nic1\", \"type\": \"nic\", \"host\": 0, \"speed\": \"400 Gb/s\"},"
        "{\"id\": \"h1.nic0\", \"type\": \"nic\", \"host\": 1, \"speed\": \"400 Gb/s\"},"
        "{\"id\": \"h1.nic1\", \"type\": \"nic\", \"host\": 1, \"speed\": \"400 Gb/s\"},"
        "{\"id\": \"rail0\", \"type\": \"switch\", \"radix\": 64},"
        "{\"id\": \"rail1\", \"type\": \"switch\", \"radix\": 64}],"
        "\"links\": ["
        "{\"a\": \"h0.gpu\", \"b\": \"h0.cpu\", \"type\": \"pcie\", \"bw\": \"32 GB/s\", \"latency\": \"100 ns\"},"
        "{\"a\": \"h1.gpu\", \"b\": \"h1.cpu\", \"type\": \"pcie\", \"bw\": \"32 GB/s\", \"latency\": \"100 ns\"},"
        "{\"a\": \"h0.nic0\", \"b\": \"h0.cpu\", \"type\": \"pcie\", \"bw\": \"32 GB/s\", \"latency\": \"100 ns\"},"
        "{\"a\": \"h0.nic1\", \"b\": \"h0.cpu\", \"type\": \"pcie\", \"bw\": \"32 GB/s\", \"latency\": \"100 ns\"},"
        "{\"a\": \"h1.nic0\", \"b\": \"h1.cpu\", \"type\": \"pcie\", \"bw\": \"32 GB/s\", \"latency\": \"100 ns\"},"
        "{\"a\": \"h1.nic1\", \"b\": \"h1.cpu\", \"type\": \"pcie\", \"bw\": \"32 GB/s\", \"latency\": \"100 ns\"},"
        "{\"a\": \"h0.nic0\", \"b\": \"rail0\", \"type\": \"ib\", \"bw\": \"400 Gb/s\", \"latency\": \"60 ns\"},"
        "{\"a\": \"h1.nic0\", \"b\": \"rail0\", \"type\": \"ib\", \"bw\": \"400 Gb/s\", \"latency\": \"60 ns\"},"
        "{\"a\": \"h0.nic1\", \"b\": \"rail1\", \"type\": \"ib\", \"bw\": \"400 Gb/s\", \"latency\": \"60 ns\"},"
        "{\"a\": \"h1.nic1\", \"b\": \"rail1\", \"type\": \"ib\", \"bw\": \"400 Gb/s\", \"latency\": \"60 ns\"}]}";
    nsim_err err = {0};
    nsim_topo *t = NULL;
    NSIM_ASSERT_OK(nsim_topo_parse(js, strlen(js), "rails", &t, &err));
    uint32_t a0, a1, b0, b1, g1;
    CU_ASSERT(nsim_topo_find(t, "h0.nic0", &a0) == NSIM_OK &&
              nsim_topo_find(t, "h0.nic1", &a1) == NSIM_OK &&
              nsim_topo_find(t, "h1.nic0", &b0) == NSIM_OK &&
              nsim_topo_find(t, "h1.nic1", &b1) == NSIM_OK &&
              nsim_topo_find(t, "h1.gpu", &g1) == NSIM_OK);
    const nsim_route *r = NULL;
    NSIM_ASSERT_OK(nsim_topo_route(t, a0, b0, &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NET);
    CU_ASSERT_EQUAL(r->hops, 2);
    CU_ASSERT_EQUAL(nsim_topo_route(t, a1, b0, &r, NULL), NSIM_ENOENT);
    CU_ASSERT_EQUAL(nsim_topo_route(t, a0, b1, &r, NULL), NSIM_ENOENT);
    /* into the other host's GPU through its NIC: a NET path */
    NSIM_ASSERT_OK(nsim_topo_route(t, a1, g1, &r, &err));
    CU_ASSERT_EQUAL(r->type, NSIM_PATH_NET);
    nsim_topo_destroy(t);
}

/* nsim_topo_group_ranks, which the planner and the NVLS model share:
 * one group per NCCL node (hosts, or the one NVLink domain of a GB200
 * NVL72), every rank once, the ranks of a group on its node and in
 * order, the groups in order of their first rank. */
static void test_group_ranks(void)
{
    static const struct {
        const char *file;
        uint32_t groups;
    } p[] = {{"seed-4gpu.topo.json", 2},
             {"dgx-h100-2node.topo.json", 2},
             {"gb200-nvl.topo.json", 1}};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        nsim_err err = {0};
        nsim_topo *t = NULL;
        char path[512];
        uint32_t *ranks = NULL, *start = NULL, ng = 0;
        snprintf(path, sizeof path, SCEN "%s", p[i].file);
        NSIM_ASSERT_OK(nsim_topo_load(path, &t, &err));
        NSIM_ASSERT_OK(nsim_topo_group_ranks(t, &ranks, &start, &ng));
        uint32_t n = nsim_topo_nranks(t);
        CU_ASSERT_EQUAL(ng, p[i].groups);
        CU_ASSERT_EQUAL(ng, nsim_topo_nnodes(t));
        CU_ASSERT_EQUAL(start[0], 0);
        CU_ASSERT_EQUAL_FATAL(start[ng], n);
        uint32_t *seen = calloc(n, sizeof *seen);
        CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
        for (uint32_t g = 0; g < ng; g++) {
            uint32_t first = ranks[start[g]];
            uint32_t node = nsim_topo_host_node(
                t, nsim_topo_device(t, nsim_topo_rank_device(t, first))->host);
            if (g > 0)
                CU_ASSERT(ranks[start[g]] > ranks[start[g - 1]]);
            for (uint32_t k = start[g]; k < start[g + 1]; k++) {
                uint32_t r = ranks[k];
                CU_ASSERT_FATAL(r < n);
                seen[r]++;
                CU_ASSERT_EQUAL(nsim_topo_host_node(
                                    t, nsim_topo_device(
                                           t, nsim_topo_rank_device(t, r))
                                           ->host),
                                node);
                if (k > start[g])
                    CU_ASSERT(r > ranks[k - 1]);
            }
        }
        for (uint32_t r = 0; r < n; r++)
            CU_ASSERT_EQUAL(seen[r], 1);
        free(seen);
        free(ranks);
        free(start);
        nsim_topo_destroy(t);
    }
}

/* InfiniBand's one path per NIC pair (nsim_topo_ib_pick) spreads the
 * pairs of one stride over the spines: 256 DGX H100 on a rail fat tree
 * (8 leaves a rail, 32 spines), each host's rail-1 NIC to the one of the
 * host d later, for the strides of a tree's levels and a ring (d = 1, 2,
 * ..., 128). Of the pairs that cross the spine, no leaf's uplink takes
 * more than 5 of one stride (a pick linear in the device ids sent all 32
 * of a leaf's pairs at d = 16, and at every other crossing stride, to
 * one spine: Tree AllReduce there lost 15 %). */
static void test_routes_ib_pick_spreads(void)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    nsim_fabric_cfg cfg = {NSIM_FABRIC_RAIL_FAT_TREE, 0, 1, 0, 0, 0};
    NSIM_ASSERT_OK(nsim_cluster_build("dgx-h100", 256, &cfg, &t, &err));
    uint32_t nic[256];
    for (uint32_t h = 0; h < 256; h++) {
        char nm[32];
        snprintf(nm, sizeof nm, "h%u.nic1", h);
        CU_ASSERT_FATAL(nsim_topo_find(t, nm, &nic[h]) == NSIM_OK);
    }
    uint32_t worst = 0, crossing = 0, spine0;
    CU_ASSERT_FATAL(nsim_topo_find(t, "spine.0", &spine0) == NSIM_OK);
    for (uint32_t d = 1; d < 256; d *= 2) {
        /* per (source leaf, spine): the pairs of stride d on that uplink */
        uint32_t up[8][64] = {{0}};
        for (uint32_t h = 0; h < 256; h++) {
            uint32_t a = nic[h], b = nic[(h + d) % 256];
            const nsim_route *r;
            NSIM_ASSERT_OK(nsim_topo_route(t, a, b, &r, &err));
            if (r->npaths < 2)
                continue; /* one leaf */
            const uint32_t *pl =
                nsim_topo_route_path(r, nsim_topo_ib_pick(a, b));
            uint32_t spine = nsim_topo_link(t, pl[1])->dst;
            CU_ASSERT_FATAL(nsim_topo_device(t, spine)->host < 0);
            CU_ASSERT_FATAL(spine >= spine0 && spine - spine0 < 64);
            uint32_t *n = &up[h / 32][spine - spine0];
            crossing++;
            if (++*n > worst)
                worst = *n;
        }
    }
    fprintf(stderr, "\n  %u crossing pairs, at most %u of a stride on a "
                    "leaf's uplink\n",
            crossing, worst);
    CU_ASSERT(crossing >= 256);
    CU_ASSERT(worst <= 5);
    nsim_topo_destroy(t);
}

CU_TestInfo nsim_test_topo[] = {
    {"ranks grouped by NCCL node", test_group_ranks},
    {"presets load", test_presets_load},
    {"write then load gives the same topology", test_round_trip},
    {"routes follow NCCL's preference", test_routes_preference},
    {"equal-cost paths are kept", test_routes_keep_equal_cost_paths},
    {"NVLink between every pair of a host's GPUs", test_hosts_nvlink_whole},
    {"cluster NIC routes: every fewest-hop path", test_routes_cluster_net},
    {"between NICs no host is a transit", test_routes_hosts_are_not_transit},
    {"InfiniBand paths: one stride spreads over the spines",
     test_routes_ib_pick_spreads},
    {"fat trees: whole hosts and racks a leaf, its uplinks as asked",
     test_fabric_sizes},
    {"bad files fail with their message", test_bad_files},
    {"units", test_units},
    CU_TEST_INFO_NULL,
};
