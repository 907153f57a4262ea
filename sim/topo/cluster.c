/* SPDX-License-Identifier: MIT
 *
 * cluster.c - cluster builder and fabrics (see cluster.h).
 *
 * The fabric is sized from the NICs already in the topology: their hosts,
 * rails and port speed. Leaves and spines are added as network switches
 * ("leaf.rR.I", "spine.J", "sw0"), NIC ports as one link of count ports.
 */
#include "cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "presets.h"

#define DEF_SWITCH_LAT 200000ull /* Quantum-2 QM9700, hw 3.5 (L) */
#define DEF_CABLE_LAT 60000ull   /* ~5 ns/m plus PHY/FEC, hw 3.4 */

static const char *const fabric_names[] = {"none", "switch",
                                           "rail-fat-tree", "fat-tree"};

int nsim_fabric_parse(const char *s, nsim_fabric_kind *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, fabric_names[i]) == 0) {
            *out = (nsim_fabric_kind)i;
            return NSIM_OK;
        }
    return NSIM_EINVAL;
}

const char *nsim_fabric_name(nsim_fabric_kind k)
{
    return (unsigned)k < 4 ? fabric_names[k] : "?";
}

/* What the fabric attaches: every NIC with its host and rail. */
typedef struct nic_ref {
    uint32_t dev, host, rail, ports;
} nic_ref;

typedef struct fabric {
    const nsim_fabric_cfg *cfg;
    nsim_topo *t;
    nsim_err *err;
    nic_ref *nics;
    uint32_t nnics, nhosts, nrails, radix, down, up, leaves_per_group;
    uint32_t ngroups; /* rails (rail-fat-tree) or 1 */
    uint32_t host_nics;      /* the most NICs on one host */
    uint32_t domain_hosts;   /* hosts an NVLink domain joins (MNNVL: 18
                              * GB200 trays), or 1 */
    uint32_t hosts_per_leaf; /* whole hosts (and domains) a leaf takes, or
                              * 0 (a fat-tree host larger than a leaf's
                              * ports down: its NICs fill leaves one after
                              * another) */
    uint32_t cables, spines; /* each leaf to each spine: cables; spines x
                              * cables = up */
    double port_bw;
    nsim_link_type lt;
    nsim_time sw_lat, cable_lat;
} fabric;

static int collect_nics(fabric *f)
{
    nsim_topo *t = f->t;
    uint32_t n = nsim_topo_ndevices(t), last_host = UINT32_MAX, k = 0;
    f->nics = malloc(((size_t)n + 1) * sizeof *f->nics);
    if (f->nics == NULL)
        return NSIM_ERR(f->err, NSIM_ENOMEM, "fabric: out of memory");
    for (uint32_t i = 0; i < n; i++) {
        const nsim_device *d = nsim_topo_device(t, i);
        if (d->type != NSIM_DEV_NIC)
            continue;
        if (d->host < 0)
            return NSIM_ERR(f->err, NSIM_ECONFIG,
                            "fabric: nic \"%s\" belongs to no host",
                            d->name);
        k = (uint32_t)d->host == last_host ? k + 1 : 0;
        last_host = (uint32_t)d->host;
        if (k + 1 > f->host_nics)
            f->host_nics = k + 1;
        nic_ref *r = &f->nics[f->nnics++];
        *r = (nic_ref){i, (uint32_t)d->host,
                       d->rail >= 0 ? (uint32_t)d->rail : k, d->nic_ports};
        if (r->host + 1 > f->nhosts)
            f->nhosts = r->host + 1;
        if (r->rail + 1 > f->nrails)
            f->nrails = r->rail + 1;
        if (d->port_bw > f->port_bw)
            f->port_bw = d->port_bw;
    }
    if (f->nnics == 0)
        return NSIM_ERR(f->err, NSIM_ECONFIG,
                        "fabric %s: the topology has no NIC to join",
                        nsim_fabric_name(f->cfg->kind));
    return NSIM_OK;
}

static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

static uint32_t uf_root(uint32_t *up, uint32_t x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

/* Hosts an NVLink domain joins (NVLinks between hosts' devices: MNNVL),
 * where every domain is that many consecutive hosts; else 1. */
static int find_domains(fabric *f)
{
    nsim_topo *t = f->t;
    uint32_t nh = f->nhosts, nl = nsim_topo_nlinks(t);
    f->domain_hosts = 1;
    uint32_t *up = malloc((nh ? nh : 1) * sizeof *up);
    if (up == NULL)
        return NSIM_ERR(f->err, NSIM_ENOMEM, "fabric: out of memory");
    for (uint32_t h = 0; h < nh; h++)
        up[h] = h;
    for (uint32_t i = 0; i < nl; i++) {
        const nsim_link *l = nsim_topo_link(t, i);
        int32_t a = nsim_topo_device(t, l->src)->host;
        int32_t b = nsim_topo_device(t, l->dst)->host;
        if (l->type == NSIM_LINK_NVLINK && a >= 0 && b >= 0 && a != b &&
            (uint32_t)a < nh && (uint32_t)b < nh)
            up[uf_root(up, (uint32_t)a)] = uf_root(up, (uint32_t)b);
    }
    uint32_t size = 1;
    while (size < nh && uf_root(up, size) == uf_root(up, 0))
        size++;
    int even = size > 1 && nh % size == 0;
    for (uint32_t h = 0; even && h < nh; h++)
        even = uf_root(up, h) == uf_root(up, h - h % size) &&
               (h % size != 0 || h == 0 ||
                uf_root(up, h) != uf_root(up, h - 1));
    if (even)
        f->domain_hosts = size;
    free(up);
    return NSIM_OK;
}

/* The largest divisor of n that is at most cap (cap >= 1). */
static uint32_t divisor_at_most(uint32_t n, uint32_t cap)
{
    for (uint32_t c = cap < n ? cap : n; c > 1; c--)
        if (n % c == 0)
            return c;
    return 1;
}

/* Sizes the tree for radix k: ports down and up a leaf, leaves per group,
 * spines and the cables from each leaf to each spine; 0 if two levels
 * cannot hold them. A leaf takes whole hosts, and whole NVLink domains
 * where they span hosts (a rack's trays under one leaf, as clusters are
 * cabled): a rail leaf one NIC of each, a fat-tree leaf all of them; its
 * uplinks are then the same share of the ports it uses down as K - d is
 * of d. The uplinks are exactly up cables, spread evenly over the spines
 * (the largest number of cables per leaf and spine that divides up and
 * keeps a spine's ports within k). */
static int size_tree(fabric *f, uint32_t k)
{
    double r = f->cfg->oversub >= 1 ? f->cfg->oversub : 1;
    f->radix = k;
    f->down = (uint32_t)floor(k * r / (r + 1));
    if (f->down == 0 || f->down >= k)
        return 0;
    f->up = k - f->down;
    int rail = f->cfg->kind == NSIM_FABRIC_RAIL_FAT_TREE;
    uint32_t nics = rail ? 1 : f->host_nics; /* a host's ports on a leaf */
    uint32_t block = f->domain_hosts * nics; /* a domain's */
    f->ngroups = rail ? f->nrails : 1;
    f->hosts_per_leaf = 0;
    if (block <= f->down)
        f->hosts_per_leaf = f->down / block * f->domain_hosts;
    else if (nics <= f->down)
        f->hosts_per_leaf = f->down / nics; /* domains straddle leaves */
    uint32_t units = f->nnics, per_leaf = f->down;
    if (f->hosts_per_leaf != 0) {
        uint32_t used = f->hosts_per_leaf * nics;
        f->up = (uint32_t)(((uint64_t)used * f->up + f->down - 1) / f->down);
        f->down = used;
        units = f->nhosts;
        per_leaf = f->hosts_per_leaf;
    }
    f->leaves_per_group = ceil_div(units, per_leaf);
    uint64_t leaves = (uint64_t)f->leaves_per_group * f->ngroups;
    if (leaves > k && leaves != 1)
        return 0;
    f->cables = divisor_at_most(f->up, leaves ? k / (uint32_t)leaves : 1);
    f->spines = f->up / f->cables;
    return 1;
}

static int pick_radix(fabric *f)
{
    if (f->cfg->radix != 0) {
        if (f->cfg->radix < 2 || !size_tree(f, f->cfg->radix))
            return NSIM_ERR(f->err, NSIM_ECONFIG,
                            "fabric %s: radix %u cannot hold %u NICs of %u "
                            "hosts in two levels (leaves must not outnumber "
                            "the radix); raise --radix or lower "
                            "--oversubscription",
                            nsim_fabric_name(f->cfg->kind), f->cfg->radix,
                            f->nnics, f->nhosts);
        return NSIM_OK;
    }
    for (uint32_t k = 64; k <= 65536; k *= 2)
        if (size_tree(f, k))
            return NSIM_OK;
    return NSIM_ERR(f->err, NSIM_ECONFIG,
                    "fabric: %u NICs do not fit a two-level fat tree of "
                    "radix <= 65536", f->nnics);
}

static int add_switch(fabric *f, const char *name, uint32_t radix,
                      uint32_t *out)
{
    nsim_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.type = NSIM_DEV_SWITCH;
    d.host = d.rank = d.rail = -1;
    d.radix = radix;
    d.lat_ps = f->sw_lat;
    return nsim_topo_add_device(f->t, &d, out, f->err);
}

static int build_single(fabric *f)
{
    uint32_t sw, ports = 0;
    for (uint32_t i = 0; i < f->nnics; i++)
        ports += 1;
    uint32_t radix = f->cfg->radix ? f->cfg->radix : ports;
    if (radix < ports)
        return NSIM_ERR(f->err, NSIM_ECONFIG,
                        "fabric switch: %u NICs exceed radix %u", ports,
                        radix);
    NSIM_TRY(add_switch(f, "sw0", radix, &sw));
    for (uint32_t i = 0; i < f->nnics; i++)
        NSIM_TRY(nsim_topo_add_link(f->t, f->nics[i].dev, sw, f->lt,
                                    f->port_bw, f->cable_lat,
                                    f->nics[i].ports, NULL, f->err));
    return NSIM_OK;
}

/* Leaf of NIC i: its rail's group (rail-fat-tree) and its host's slot,
 * its host's (fat-tree), or the i-th NIC's slot (a fat-tree whose hosts
 * are larger than a leaf). */
static uint32_t leaf_of(const fabric *f, uint32_t i)
{
    const nic_ref *r = &f->nics[i];
    if (f->cfg->kind == NSIM_FABRIC_RAIL_FAT_TREE)
        return r->rail * f->leaves_per_group + r->host / f->hosts_per_leaf;
    if (f->hosts_per_leaf != 0)
        return r->host / f->hosts_per_leaf;
    return i / f->down;
}

static int build_tree(fabric *f, uint32_t *leaf)
{
    char name[NSIM_NAME_MAX];
    uint32_t nleaves = f->leaves_per_group * f->ngroups;
    for (uint32_t l = 0; l < nleaves; l++) {
        if (f->cfg->kind == NSIM_FABRIC_RAIL_FAT_TREE)
            snprintf(name, sizeof name, "leaf.r%u.%u",
                     l / f->leaves_per_group, l % f->leaves_per_group);
        else
            snprintf(name, sizeof name, "leaf.%u", l);
        NSIM_TRY(add_switch(f, name, f->radix, &leaf[l]));
    }
    for (uint32_t i = 0; i < f->nnics; i++)
        NSIM_TRY(nsim_topo_add_link(f->t, f->nics[i].dev,
                                    leaf[leaf_of(f, i)], f->lt, f->port_bw,
                                    f->cable_lat, f->nics[i].ports, NULL,
                                    f->err));
    if (nleaves == 1)
        return NSIM_OK;
    /* every leaf joins every spine with the same parallel cables */
    uint32_t c = f->cables;
    for (uint32_t s = 0; s < f->spines; s++) {
        uint32_t sp;
        snprintf(name, sizeof name, "spine.%u", s);
        NSIM_TRY(add_switch(f, name, f->radix, &sp));
        for (uint32_t l = 0; l < nleaves; l++)
            NSIM_TRY(nsim_topo_add_link(f->t, leaf[l], sp, f->lt,
                                        f->port_bw, f->cable_lat, c, NULL,
                                        f->err));
    }
    return NSIM_OK;
}

int nsim_cluster_add_fabric(nsim_topo *t, const nsim_fabric_cfg *cfg,
                            nsim_err *err)
{
    if (cfg->kind == NSIM_FABRIC_NONE)
        return NSIM_OK;
    fabric f = {.cfg = cfg, .t = t, .err = err};
    f.lt = cfg->roce ? NSIM_LINK_ROCE : NSIM_LINK_IB;
    f.sw_lat = cfg->switch_lat_ps ? cfg->switch_lat_ps : DEF_SWITCH_LAT;
    f.cable_lat = cfg->cable_lat_ps ? cfg->cable_lat_ps : DEF_CABLE_LAT;
    int rc = collect_nics(&f);
    if (rc == NSIM_OK)
        rc = find_domains(&f);
    if (rc == NSIM_OK && cfg->kind == NSIM_FABRIC_SWITCH)
        rc = build_single(&f);
    else if (rc == NSIM_OK && (rc = pick_radix(&f)) == NSIM_OK) {
        uint32_t *leaf = malloc(((size_t)f.leaves_per_group * f.ngroups + 1)
                                * sizeof *leaf);
        rc = leaf ? build_tree(&f, leaf)
                  : NSIM_ERR(err, NSIM_ENOMEM, "fabric: out of memory");
        free(leaf);
    }
    free(f.nics);
    return rc;
}

nsim_fabric_kind nsim_cluster_default_fabric(const char *preset,
                                             uint32_t nodes)
{
    const nsim_preset *p = nsim_preset_find(preset);
    return p != NULL && nodes > 1 && nsim_preset_nvl_hosts(p) < nodes
               ? NSIM_FABRIC_RAIL_FAT_TREE
               : NSIM_FABRIC_NONE;
}

int nsim_cluster_build(const char *preset, uint32_t nodes,
                       const nsim_fabric_cfg *cfg, nsim_topo **out,
                       nsim_err *err)
{
    const nsim_preset *p = nsim_preset_find(preset);
    char name[NSIM_NAME_MAX];
    nsim_topo *t = NULL;
    if (p == NULL)
        return NSIM_ERR(err, NSIM_EINVAL, "unknown node preset \"%s\"",
                        preset);
    if (nodes == 0 || nodes > (1u << 20))
        return NSIM_ERR(err, NSIM_EINVAL, "nodes: expected 1..%u", 1u << 20);
    if (nodes == 1)
        snprintf(name, sizeof name, "%s", preset);
    else
        snprintf(name, sizeof name, "%s-%unode-%s", preset, nodes,
                 nsim_fabric_name(cfg->kind));
    NSIM_TRY(nsim_topo_create(name, &t, err));
    int rc = NSIM_OK;
    uint32_t g = nsim_preset_gpus(p);
    for (uint32_t h = 0; h < nodes && rc == NSIM_OK; h++)
        rc = nsim_preset_add_node(p, t, (int32_t)h, h * g, cfg->roce, err);
    if (rc == NSIM_OK && nodes > 1)
        rc = nsim_cluster_add_fabric(t, cfg, err);
    if (rc == NSIM_OK)
        rc = nsim_topo_finalize(t, name, err);
    if (rc != NSIM_OK) {
        nsim_topo_destroy(t);
        return rc;
    }
    *out = t;
    return NSIM_OK;
}
