/* SPDX-License-Identifier: MIT
 *
 * fold.c - symmetry folding of ring, tree, AllToAll and SendRecv plans
 * (see fold.h).
 */
#include "fold.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[] = {"auto", "off", "on"};

const char *nsim_fold_mode_name(nsim_fold_mode m)
{
    return (unsigned)m < sizeof mode_names / sizeof mode_names[0]
               ? mode_names[m]
               : "?";
}

int nsim_fold_mode_parse(const char *s, nsim_fold_mode *out)
{
    for (unsigned i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
        if (strcmp(s, mode_names[i]) == 0) {
            *out = (nsim_fold_mode)i;
            return NSIM_OK;
        }
    return NSIM_EINVAL;
}

int nsim_plan_req_is_chain(const nsim_plan_req *req)
{
    return req->algo == NSIM_ALGO_RING && nsim_coll_has_root(req->coll);
}

/* Device i of host h and device i of host h' are compared and mapped.
 * A "host" here is NCCL's node: a host, or the hosts one NVLink domain
 * joins (MNNVL, as a GB200 NVL72 rack): a ring's fold then plays whole
 * domains. Its devices are listed in id order. */
typedef struct hostmap {
    nsim_topo *t;
    uint32_t nhosts, ndev; /* hosts (nodes), devices per host */
    uint32_t per_host;     /* ranks per host */
    uint32_t *local;       /* per device: its index on its host, or
                            * UINT32_MAX (a fabric switch) */
    uint32_t *devs;        /* host h's devices at [h * ndev] */
} hostmap;

static void hostmap_free(hostmap *hm)
{
    free(hm->local);
    free(hm->devs);
}

/* Device i of host h. */
static uint32_t host_dev(const hostmap *hm, uint32_t h, uint32_t i)
{
    return hm->devs[(size_t)h * hm->ndev + i];
}

/* A fold of period m hosts (gm = per_host x m ranks): host h is played
 * by the host of its class (h mod m) among base, base + 1, ...,
 * base + m - 1 (mod the hosts). The hosts the run must play (the
 * request's fold_play) lie among need_len consecutive hosts from
 * need_start (need_len 0: none). */
typedef struct fold {
    nsim_topo *t;
    const hostmap *hm;
    uint32_t m, gm, base;
    uint32_t need_start, need_len;
    const uint32_t *links; /* links between switches that faults strike */
    uint32_t nlinks;
} fold;

NSIM_PRINTF(2, 3) static int refuse(nsim_fold_info *fi, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fi->why_not, sizeof fi->why_not, fmt, ap);
    va_end(ap);
    return 0;
}

/* Device d's host in the fold's sense (its NCCL node), -1 off hosts. */
static int32_t dev_host(nsim_topo *t, uint32_t d)
{
    int32_t h = nsim_topo_device(t, d)->host;
    return h < 0 ? -1 : (int32_t)nsim_topo_host_node(t, h);
}

/* Fills hm; 1 when the hosts (NCCL's nodes) each have the same number
 * of devices and ranks, ranks numbered host by host, 0 (with why)
 * otherwise, NSIM_ENOMEM. */
static int hostmap_build(nsim_topo *t, uint32_t nranks, hostmap *hm,
                         nsim_fold_info *fi)
{
    uint32_t nd = nsim_topo_ndevices(t), nh = nsim_topo_nnodes(t);
    hm->t = t;
    hm->nhosts = nh;
    hm->local = malloc((nd ? nd : 1) * sizeof *hm->local);
    uint32_t *count = calloc(nh ? nh : 1, sizeof *count);
    if (hm->local == NULL || count == NULL) {
        free(count);
        return NSIM_ENOMEM;
    }
    for (uint32_t d = 0; d < nd; d++) {
        int32_t h = dev_host(t, d);
        hm->local[d] = h < 0 ? UINT32_MAX : count[h]++;
    }
    hm->ndev = count[0];
    for (uint32_t h = 0; h < nh; h++)
        if (count[h] != hm->ndev || count[h] == 0) {
            free(count);
            return refuse(fi, "hosts have different numbers of devices");
        }
    free(count);
    hm->devs = malloc(((size_t)nh * hm->ndev + 1) * sizeof *hm->devs);
    if (hm->devs == NULL)
        return NSIM_ENOMEM;
    for (uint32_t d = 0; d < nd; d++)
        if (hm->local[d] != UINT32_MAX)
            hm->devs[(size_t)dev_host(t, d) * hm->ndev + hm->local[d]] = d;
    hm->per_host = nranks / nh;
    if (nranks % nh != 0)
        return refuse(fi, "hosts have different numbers of GPUs");
    for (uint32_t r = 0; r < nranks; r++)
        if ((uint32_t)dev_host(t, nsim_topo_rank_device(t, r)) !=
            r / hm->per_host)
            return refuse(fi, "ranks are not numbered host by host");
    return 1;
}

/* The played host of host h's class: the played host as far from base
 * (mod m) as h is (mod the hosts; where m divides the hosts, h's class
 * mod m; a chain's m need not). */
static uint32_t twin_host(const fold *f, uint32_t h)
{
    uint32_t nh = f->hm->nhosts;
    uint32_t d = (h + nh - f->base % nh) % nh % f->m;
    return (f->base + d) % nh;
}

/* Device d's twin on the played hosts (a fabric device is its own). */
static uint32_t twin(const fold *f, uint32_t d)
{
    if (d == UINT32_MAX || f->hm->local[d] == UINT32_MAX)
        return d;
    uint32_t h = twin_host(f, (uint32_t)dev_host(f->t, d));
    return host_dev(f->hm, h, f->hm->local[d]);
}

/* Rank r's twin on the played hosts. */
static uint32_t twin_rank(const fold *f, uint32_t r)
{
    uint32_t g = f->hm->per_host;
    return twin_host(f, r / g) * g + r % g;
}

/* The index of played rank r among the played ranks (0..gm-1). */
static uint32_t played_index(const fold *f, uint32_t r)
{
    uint32_t g = f->hm->per_host, nh = f->hm->nhosts;
    return (r / g + nh - f->base) % nh * g + r % g;
}

static int devices_alike(const nsim_device *a, const nsim_device *b)
{
    return a->type == b->type && strcmp(a->gen, b->gen) == 0 &&
           a->sm == b->sm && a->no_p2p == b->no_p2p && a->nvls == b->nvls &&
           a->nic_ports == b->nic_ports && a->port_bw == b->port_bw &&
           a->mtu_bytes == b->mtu_bytes && a->gdr == b->gdr &&
           a->link_layer == b->link_layer && a->rail == b->rail &&
           a->radix == b->radix && a->lat_ps == b->lat_ps;
}

/* d and e have the same links, in the same order, to the same kind of
 * device; with hm (e being d's twin), to twins on their hosts. */
static int links_alike_in(nsim_topo *t, const hostmap *hm, uint32_t d,
                          uint32_t e)
{
    uint32_t n = nsim_topo_nout(t, d);
    if (n != nsim_topo_nout(t, e))
        return 0;
    const uint32_t *od = nsim_topo_out(t, d), *oe = nsim_topo_out(t, e);
    for (uint32_t k = 0; k < n; k++) {
        const nsim_link *a = nsim_topo_link(t, od[k]);
        const nsim_link *b = nsim_topo_link(t, oe[k]);
        if (a->type != b->type || a->bw != b->bw || a->lane_bw != b->lane_bw ||
            a->lat_ps != b->lat_ps || a->count != b->count)
            return 0;
        int a_in = hm != NULL && dev_host(t, a->dst) == dev_host(t, d);
        int b_in = hm != NULL && dev_host(t, b->dst) == dev_host(t, e);
        if (a_in != b_in)
            return 0;
        if (a_in ? hm->local[a->dst] != hm->local[b->dst]
                 : nsim_topo_device(t, a->dst)->type !=
                       nsim_topo_device(t, b->dst)->type)
            return 0;
    }
    return 1;
}

/* d (on host h) and e (its twin) have the same links (above). */
static int links_alike(const fold *f, uint32_t d, uint32_t e)
{
    return links_alike_in(f->t, f->hm, d, e);
}

static int hosts_repeat(const fold *f, nsim_fold_info *fi)
{
    const hostmap *hm = f->hm;
    for (uint32_t h = f->m; h < hm->nhosts; h++)
        for (uint32_t i = 0; i < hm->ndev; i++) {
            uint32_t d = host_dev(hm, h, i);
            uint32_t e = twin(f, d);
            if (!devices_alike(nsim_topo_device(f->t, d),
                               nsim_topo_device(f->t, e)) ||
                !links_alike(f, d, e))
                return refuse(fi, "host %u differs from host %u (%s, %s)", h,
                              twin_host(f, h), nsim_topo_device(f->t, d)->name,
                              nsim_topo_device(f->t, e)->name);
        }
    for (uint32_t r = 0; r < nsim_topo_nranks(f->t); r++)
        if (twin(f, nsim_topo_rank_device(f->t, r)) !=
            nsim_topo_rank_device(f->t, twin_rank(f, r)))
            return refuse(fi, "rank %u is not on the twin of rank %u's GPU",
                          r, twin_rank(f, r));
    return 1;
}

/* Connection c of the whole plan and t of its twin lane are alike: same
 * transport and QPs, successors and NICs that are twins. */
static int conns_alike(const fold *f, const nsim_plan_conn *c,
                       const nsim_plan_conn *t)
{
    if (c->transport != t->transport || c->path != t->path ||
        c->nqps != t->nqps || c->nvls_role != t->nvls_role ||
        twin_rank(f, c->to) != twin_rank(f, t->to))
        return 0;
    return twin(f, c->send_nic) == t->send_nic &&
           twin(f, c->recv_nic) == twin(f, t->recv_nic);
}

/* The ops of lane l and of its twin w: the same array, or the same
 * primitives on the same steps whose payloads differ by at most
 * NSIM_FOLD_BYTES_TOL of w's in all (a size that does not divide evenly
 * leaves a few more elements to some ranks); the largest such
 * difference goes to fi->bytes_diff, a larger one to *over. Lanes on
 * one array with patches (plan.h) differ at most where either has one:
 * those are compared, and the array's total (*memo, kept from lane to
 * lane) is summed once. */
typedef struct ops_total {
    const nsim_plan_op *ops;
    uint64_t bytes;
} ops_total;

static int op_alike(const nsim_plan_op *a, const nsim_plan_op *b,
                    uint64_t *diff)
{
    if (a->prim != b->prim || a->slice != b->slice || a->step != b->step)
        return 0;
    *diff += a->bytes > b->bytes ? a->bytes - b->bytes : b->bytes - a->bytes;
    return 1;
}

static int ops_alike(const nsim_plan_lane *l, const nsim_plan_lane *w,
                     ops_total *memo, double tol, nsim_fold_info *fi,
                     double *over)
{
    if (l->ops == w->ops && l->patch == w->patch && l->npatch == w->npatch)
        return 1;
    uint64_t diff = 0, total = 0;
    if (l->ops == w->ops) {
        if (memo->ops != w->ops) {
            memo->ops = w->ops;
            memo->bytes = 0;
            for (uint32_t i = 0; i < w->nops; i++)
                memo->bytes += w->ops[i].bytes;
        }
        total = memo->bytes;
        for (uint32_t i = 0; i < w->npatch; i++)
            total += w->patch[i].op.bytes - w->ops[w->patch[i].at].bytes;
        uint32_t a = 0, b = 0;
        while (a < l->npatch || b < w->npatch) {
            uint32_t la = a < l->npatch ? l->patch[a].at : UINT32_MAX;
            uint32_t wb = b < w->npatch ? w->patch[b].at : UINT32_MAX;
            uint32_t at = la < wb ? la : wb;
            const nsim_plan_op *x = la == at ? &l->patch[a++].op : &l->ops[at];
            const nsim_plan_op *y = wb == at ? &w->patch[b++].op : &w->ops[at];
            if (!op_alike(x, y, &diff))
                return 0;
        }
    } else {
        for (uint32_t i = 0; i < l->nops; i++) {
            const nsim_plan_op *y = nsim_plan_lane_op(w, i);
            if (!op_alike(nsim_plan_lane_op(l, i), y, &diff))
                return 0;
            total += y->bytes;
        }
    }
    double rel = total ? (double)diff / (double)total : (diff ? 1.0 : 0.0);
    if (rel > tol) {
        *over = rel;
        return 0;
    }
    fi->bytes_diff = rel > fi->bytes_diff ? rel : fi->bytes_diff;
    return 1;
}

/* How far twins' payloads may differ: NSIM_FOLD_BYTES_TOL of a lane's
 * without the size's predicted time; with it, any amount (what playing
 * every chunk at its largest adds is then weighed in time, after the
 * merge: merge_time). */
static double bytes_tol(const nsim_plan *p)
{
    return p->req.fold_row_ps > 0 ? HUGE_VAL : NSIM_FOLD_BYTES_TOL;
}

/* Every lane (and its send connection) matches its twin's; every played
 * lane receives from exactly one played lane. */
static int plan_repeats(const fold *f, const nsim_plan *p, nsim_fold_info *fi)
{
    uint32_t n = p->nranks;
    uint8_t *into = malloc(f->gm);
    if (into == NULL)
        return NSIM_ENOMEM;
    int ok = 1;
    ops_total memo = {NULL, 0};
    for (uint32_t c = 0; ok && c < p->nchannels; c++) {
        for (uint32_t r = 0; ok && r < n; r++) {
            uint32_t tr = twin_rank(f, r);
            const nsim_plan_lane *l = &p->lanes[(size_t)c * n + r];
            const nsim_plan_lane *w = &p->lanes[(size_t)c * n + tr];
            double over = 0;
            if (l->nops != w->nops || l->shares_sm != w->shares_sm ||
                !ops_alike(l, w, &memo, bytes_tol(p), fi, &over))
                ok = over > 0
                         ? refuse(fi, "channel %u: rank %u's payloads differ "
                                      "from rank %u's by %.2f %%, over %.1f "
                                      "%% (the size does not divide evenly "
                                      "over %u ranks)",
                                  c, r, tr, over * 100,
                                  NSIM_FOLD_BYTES_TOL * 100, n)
                         : refuse(fi, "channel %u: rank %u's ops differ "
                                      "from rank %u's", c, r, tr);
            else if (!conns_alike(f, &p->conns[l->send_conn],
                                  &p->conns[w->send_conn]))
                ok = refuse(fi, "channel %u: rank %u's connection differs "
                                "from rank %u's", c, r, tr);
        }
        /* the played ring: each played rank has one played predecessor */
        memset(into, 0, f->gm);
        for (uint32_t q = 0; ok && q < f->gm; q++) {
            uint32_t r = (f->base * f->hm->per_host + q) % n; /* played */
            uint32_t to = p->conns[p->lanes[(size_t)c * n + r].send_conn].to;
            if (into[played_index(f, twin_rank(f, to))]++ != 0)
                ok = refuse(fi, "channel %u: the ring does not close over "
                                "%u hosts", c, f->m);
        }
    }
    free(into);
    return ok;
}

/* The plan's shape: a ring lane per channel and rank at [c * n + r], one
 * send and one receive connection each. */
static int ring_shaped(const nsim_plan *p, nsim_fold_info *fi)
{
    uint32_t n = p->nranks;
    if (p->nlanes != p->nchannels * n || p->nconns != p->nchannels * n)
        return refuse(fi, "not a ring plan");
    for (uint32_t i = 0; i < p->nlanes; i++) {
        const nsim_plan_lane *l = &p->lanes[i];
        if (l->rank != i % n || l->channel != i / n || l->nrecv_more ||
            l->nsend_more || l->per_step_conns ||
            l->send_conn >= p->nconns || l->recv_conn >= p->nconns ||
            p->conns[l->send_conn].from != l->rank)
            return refuse(fi, "not a ring plan");
    }
    return 1;
}

/* The route of conn c as the fold plays it: from its NIC to the twin of
 * its peer's. */
static int played_route(const fold *f, const nsim_plan_conn *c,
                        const nsim_route **out)
{
    return nsim_topo_route(f->t, twin(f, c->send_nic), twin(f, c->recv_nic),
                           out, NULL);
}

/* Counts a route of the whole plan unlike the one that plays it (other
 * bandwidth, hops or latency) and the largest latency difference. */
static void count_unlike(const nsim_route *whole, const nsim_route *played,
                         nsim_fold_info *fi)
{
    if (whole->bw == played->bw && whole->hops == played->hops &&
        whole->lat_ps == played->lat_ps)
        return;
    fi->net_unlike++;
    nsim_time d = played->lat_ps > whole->lat_ps
                      ? played->lat_ps - whole->lat_ps
                      : whole->lat_ps - played->lat_ps;
    fi->lat_diff_ps = d > fi->lat_diff_ps ? d : fi->lat_diff_ps;
}

static int slower(const nsim_route *a, const nsim_route *b)
{
    return a->bw < b->bw || (a->bw == b->bw && a->lat_ps > b->lat_ps);
}

/* How many hosts on device b's host is from device a's (mod the hosts). */
static uint32_t host_gap(const fold *f, uint32_t a, uint32_t b)
{
    uint32_t nh = f->hm->nhosts;
    return ((uint32_t)dev_host(f->t, b) + nh - (uint32_t)dev_host(f->t, a)) %
           nh;
}

/* Whether a path of the InfiniBand QP pair between NICs a and b crosses
 * one of the links faults strike: each QP sends on the path of its own
 * pick (a's data, b's CTS) and takes its ACKs back on the same pick,
 * so both routes with both picks. */
static int path_struck(const fold *f, uint32_t a, uint32_t b)
{
    const nsim_route *r;
    for (int k = 0; k < 4; k++) {
        uint32_t pick =
            k & 1 ? nsim_topo_ib_pick(b, a) : nsim_topo_ib_pick(a, b);
        if (nsim_topo_route(f->t, k & 2 ? b : a, k & 2 ? a : b, &r, NULL) !=
            NSIM_OK)
            continue;
        const uint32_t *l = nsim_topo_route_path(r, pick);
        for (uint32_t i = 0; i < r->hops; i++)
            for (uint32_t j = 0; j < f->nlinks; j++)
                if (l[i] == f->links[j])
                    return 1;
    }
    return 0;
}

/* Every NET connection's route compared with its twin's as played from
 * f->base: a wider one refuses the fold (the played hop would be slower
 * than the ring's slowest), the others are counted with their latency
 * difference; *lap_added gets what the played routes add to one lap of
 * a channel's ring (the channel where they add most). */
static int check_base(const fold *f, const nsim_plan *p, nsim_fold_info *fi,
                      nsim_time *lap_added)
{
    const nsim_route *r, *played;
    nsim_time chan = 0;
    *lap_added = 0;
    fi->net_conns = fi->net_unlike = 0;
    fi->lat_diff_ps = 0;
    for (uint32_t i = 0; i < p->nlanes; i++) {
        const nsim_plan_conn *c = &p->conns[p->lanes[i].send_conn];
        if (i % p->nranks == 0)
            chan = 0; /* lanes are channel by channel (ring_shaped) */
        if (c->transport != NSIM_TRANSPORT_NET)
            continue;
        fi->net_conns++;
        if (nsim_topo_route(f->t, c->send_nic, c->recv_nic, &r, NULL) !=
                NSIM_OK ||
            played_route(f, c, &played) != NSIM_OK)
            return refuse(fi, "a NET connection has no route");
        count_unlike(r, played, fi);
        if (slower(r, played))
            return refuse(fi, "the route %s -> %s is slower than its twin's "
                              "as played",
                          nsim_topo_device(f->t, c->send_nic)->name,
                          nsim_topo_device(f->t, c->recv_nic)->name);
        /* a played route between other hosts than its connection's (the
         * last played host's, back to the first) must not cross a link
         * faults strike: no connection of the whole ring does there */
        uint32_t ts = twin(f, c->send_nic), tr = twin(f, c->recv_nic);
        if (f->nlinks > 0 &&
            host_gap(f, ts, tr) != host_gap(f, c->send_nic, c->recv_nic) &&
            path_struck(f, ts, tr))
            return refuse(fi, "the played route %s -> %s crosses a faulted "
                              "link, and no connection of the whole ring "
                              "runs between those hosts",
                          nsim_topo_device(f->t, ts)->name,
                          nsim_topo_device(f->t, tr)->name);
        /* what the played route adds to a lap of this channel's ring */
        if (played->lat_ps > r->lat_ps)
            chan += played->lat_ps - r->lat_ps;
        *lap_added = chan > *lap_added ? chan : *lap_added;
    }
    return 1;
}

/* Whether the m played hosts from b cover the hosts the run must play. */
static int covers(const fold *f, uint32_t b)
{
    uint32_t nh = f->hm->nhosts;
    return f->need_len == 0 ||
           (f->need_start + nh - b) % nh + f->need_len <= f->m;
}

/* The hosts from b to b + m - 1 that send a NET route as slow as the
 * slowest: slow[k] counts them among hosts 0 .. k - 1 over two laps of
 * the hosts (so that a window wrapping past the last is one difference). */
static uint32_t slow_in(const uint32_t *slow, uint32_t b, uint32_t m)
{
    return slow[b + m] - slow[b];
}

/* A ring runs at the pace of its slowest hop: the played hosts start at
 * the sender of the slowest NET route of the whole plan (the first
 * found), so that the played ring has it, and check_base weighs every
 * route against its twin's as played. Where the run must play some
 * hosts (the hosts its faults strike), the played hosts are the first
 * m consecutive ones that cover them and hold a sender of the slowest
 * route and whose routes check. 1, 0 (with why), NSIM_ENOMEM. */
static int choose_base(fold *f, const nsim_plan *p, nsim_fold_info *fi,
                       nsim_time *lap_added)
{
    const nsim_route *worst = NULL, *r;
    uint32_t nh = f->hm->nhosts;
    f->base = 0;
    for (uint32_t i = 0; i < p->nlanes; i++) {
        const nsim_plan_conn *c = &p->conns[p->lanes[i].send_conn];
        if (c->transport != NSIM_TRANSPORT_NET)
            continue;
        if (nsim_topo_route(f->t, c->send_nic, c->recv_nic, &r, NULL) !=
            NSIM_OK)
            return refuse(fi, "a NET connection has no route");
        if (worst == NULL || slower(r, worst)) {
            worst = r;
            f->base = p->lanes[i].rank / f->hm->per_host;
        }
    }
    if (f->need_len == 0)
        return check_base(f, p, fi, lap_added);
    if (f->need_len > f->m)
        return refuse(fi, "the hosts the faults strike span %u hosts, more "
                          "than the %u played",
                      f->need_len, f->m);
    fi->why_not[0] = '\0';
    if (covers(f, f->base) && check_base(f, p, fi, lap_added))
        return 1;
    /* slow[0..2 nh]: counts; mark[h]: host h sends a slowest route */
    uint32_t *slow = calloc(3 * (size_t)nh + 1, sizeof *slow);
    if (slow == NULL)
        return NSIM_ENOMEM;
    uint32_t *mark = slow + 2 * (size_t)nh + 1;
    for (uint32_t i = 0; worst != NULL && i < p->nlanes; i++) {
        const nsim_plan_conn *c = &p->conns[p->lanes[i].send_conn];
        if (c->transport == NSIM_TRANSPORT_NET &&
            nsim_topo_route(f->t, c->send_nic, c->recv_nic, &r, NULL) ==
                NSIM_OK &&
            !slower(worst, r))
            mark[p->lanes[i].rank / f->hm->per_host] = 1;
    }
    for (uint32_t k = 0; k < 2 * nh; k++)
        slow[k + 1] = slow[k] + mark[k % nh];
    int rc = 0;
    uint32_t wb = f->base;
    for (uint32_t d = 0; rc == 0 && d + f->need_len <= f->m; d++) {
        f->base = (f->need_start + nh - d) % nh;
        if (f->base != wb && (worst == NULL || slow_in(slow, f->base, f->m)))
            rc = check_base(f, p, fi, lap_added);
    }
    free(slow);
    if (rc == 0 && fi->why_not[0] == '\0')
        refuse(fi, "no %u consecutive hosts hold both the hosts the faults "
                   "strike and a sender of the ring's slowest route",
               f->m);
    return rc;
}

/* The fold of period m, or 0 (with why) when the hosts or the plan do
 * not repeat with it, NSIM_ENOMEM. */
static int try_period(fold *f, const nsim_plan *p, nsim_fold_info *fi,
                      uint32_t m)
{
    f->m = m;
    f->gm = m * f->hm->per_host;
    f->base = 0;
    fi->bytes_diff = 0;
    if (!hosts_repeat(f, fi))
        return 0;
    return plan_repeats(f, p, fi);
}

/* The hosts the ring must play, sorted, without repeats, in *out (*n;
 * the caller frees it): the request's, and the sender's and receiver's
 * of every NET connection whose path crosses a link faults strike. Such
 * a fault folds only where InfiniBand takes one path per pair of
 * single-port NICs (RoCE and multi-port NICs choose by QP number). 1, 0
 * with why, NSIM_ENOMEM. */
static int hosts_to_play(const fold *f, const nsim_plan *p,
                         nsim_fold_info *fi, uint32_t **out, uint32_t *n)
{
    uint32_t nh = f->hm->nhosts, g = f->hm->per_host;
    uint8_t *mark = calloc(nh, 1);
    *out = NULL;
    *n = 0;
    if (mark == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < p->req.nfold_play; i++)
        if (p->req.fold_play[i] < nh)
            mark[p->req.fold_play[i]] = 1;
    for (uint32_t i = 0; f->nlinks > 0 && i < p->nlanes; i++) {
        const nsim_plan_conn *c = &p->conns[p->lanes[i].send_conn];
        if (c->transport != NSIM_TRANSPORT_NET)
            continue;
        const nsim_device *d = nsim_topo_device(f->t, c->send_nic);
        if (d->link_layer != NSIM_LL_IB || d->nic_ports > 1) {
            free(mark);
            return refuse(fi, "a fault between switches strikes the paths "
                              "that RoCE and multi-port NICs choose by QP "
                              "number");
        }
        if (path_struck(f, c->send_nic, c->recv_nic)) {
            mark[p->lanes[i].rank / g] = mark[c->to / g] = 1;
            fi->fabric_conns++;
        }
    }
    uint32_t k = 0;
    for (uint32_t h = 0; h < nh; h++)
        k += mark[h];
    *out = malloc((k ? k : 1) * sizeof **out);
    if (*out == NULL) {
        free(mark);
        return NSIM_ENOMEM;
    }
    for (uint32_t h = 0; h < nh; h++)
        if (mark[h])
            (*out)[(*n)++] = h;
    free(mark);
    return 1;
}

/* The fewest consecutive hosts (mod the hosts) that hold the n hosts
 * h[] (sorted): those after the widest gap between two of them. */
static void need_window(fold *f, const uint32_t *h, uint32_t n)
{
    uint32_t nh = f->hm->nhosts, gap = 0;
    f->need_start = f->need_len = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t next = i + 1 < n ? h[i + 1] : h[0] + nh;
        if (next - h[i] > gap) {
            gap = next - h[i];
            f->need_start = (h[i] + gap) % nh;
        }
    }
    if (n > 0)
        f->need_len = nh - gap + 1;
}

/* Chooses the played hosts (a period of the hosts, m >= the smallest
 * that repeats, and its base: see choose_base): the smallest period
 * whose played routes add at most NSIM_FOLD_LAT_TOL of the size's
 * predicted time to a latency-bound ring. A run of m played hosts has
 * two hops that cross the spine (the leaf boundary inside it and the
 * hop back from its last host to its first) in m, where the whole ring
 * has one in a leaf's hosts: the longer the run, the nearer the
 * crossings come to their share. */
static int choose_played(fold *f, const nsim_plan *p, nsim_fold_info *fi)
{
    uint32_t nh = f->hm->nhosts, m0 = f->m, best = 0;
    nsim_time row = p->req.fold_row_ps, lap, least = 0;
    uint32_t laps = p->req.coll == NSIM_COLL_ALLREDUCE ? 2 : 1;
    for (uint32_t m = m0; m <= nh / 2; m += m0) {
        int rc;
        if (nh % m != 0)
            continue;
        /* a multiple of a period is a period; its played hops must still
         * each be the slowest of the hops they stand for (choose_base):
         * where the whole ring's crossings are not m hosts apart, one
         * lands on a hop under a leaf, and a longer period is tried */
        if (m != m0 && (rc = try_period(f, p, fi, m)) != 1) {
            if (rc == NSIM_ENOMEM)
                return rc;
            continue;
        }
        if ((rc = choose_base(f, p, fi, &lap)) != 1) {
            if (rc == NSIM_ENOMEM)
                return rc;
            if (m == m0 && f->need_len == 0)
                return 0;
            continue;
        }
        fi->lat_added_ps = lap * laps;
        if (row == 0 || (double)fi->lat_added_ps <=
                            NSIM_FOLD_LAT_TOL * (double)row) {
            fi->why_not[0] = '\0';
            return 1;
        }
        if (best == 0 || fi->lat_added_ps < least) {
            best = m;
            least = fi->lat_added_ps;
        }
    }
    if (best == 0)
        return 0; /* the hosts to play fit in no period (choose_base) */
    if (p->req.fold_lat_any) {
        /* asked to fold whatever the latency: the best period again */
        int rc = try_period(f, p, fi, best);
        if (rc == 1)
            rc = choose_base(f, p, fi, &lap);
        if (rc != 1)
            return rc;
        fi->lat_added_ps = lap * laps;
        fi->why_not[0] = '\0';
        return 1;
    }
    return refuse(fi, "a latency-bound ring across leaves: the played "
                      "routes add %.2f us or more (%.1f %% of NCCL's "
                      "estimate), %u hosts played; --fold on folds it "
                      "all the same, erring long by about that",
                  (double)least / 1e6, 100.0 * (double)least / (double)row,
                  best);
}

/* ---- uneven payloads ------------------------------------------------
 * Where the size does not divide evenly, twins' ops differ in a few
 * payloads: the last loop's short and empty chunks sit at some ring
 * positions only. A played lane then plays, at every op, the largest
 * payload among its twins (the lanes it stands for). That is consistent
 * along the ring: the op a rank runs at a step handles the chunk its
 * predecessor handled the step before, so a played lane's twins and its
 * predecessor's twins handle the same set of chunks, and every chunk of
 * the played ring is the largest of those it stands for. The played
 * ring is then the whole ring of the size rounded up to whole chunks
 * (every short or empty chunk full): the same run, step for step, as
 * that size played on every host. */

typedef struct merge_scratch {
    uint64_t *val;   /* per op index: the largest payload seen */
    uint32_t *stamp; /* per op index: the lane it was seen for (+ 1) */
    uint32_t *touched;
    uint32_t ntouched, cur;
} merge_scratch;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Op i of twin l, for played lane w. */
static void merge_op(merge_scratch *m, const nsim_plan_lane *w,
                     const nsim_plan_lane *l, uint32_t i)
{
    uint64_t b = nsim_plan_lane_op(l, i)->bytes;
    if (m->stamp[i] != m->cur) {
        m->stamp[i] = m->cur;
        m->val[i] = nsim_plan_lane_op(w, i)->bytes;
        m->touched[m->ntouched++] = i;
    }
    if (b > m->val[i])
        m->val[i] = b;
}

static int same_op(const nsim_plan_op *a, const nsim_plan_op *b)
{
    return a->prim == b->prim && a->slice == b->slice && a->step == b->step &&
           a->chunk == b->chunk && a->offset == b->offset &&
           a->bytes == b->bytes;
}

/* Played lane w (rank pr of channel c): its patches with every payload
 * raised to the largest of its twins', in *out (NULL: none raised), and
 * the bytes that adds, in *more_out and as a fraction of w's in
 * *added. */
static int merged_lane(const fold *f, const nsim_plan *p, uint32_t c,
                       uint32_t pr, merge_scratch *m, nsim_plan_patch **out,
                       uint32_t *nout, double *added, uint64_t *more_out)
{
    uint32_t n = p->nranks, g = f->hm->per_host, hp = pr / g;
    const nsim_plan_lane *w = &p->lanes[(size_t)c * n + pr];
    *out = NULL;
    *nout = 0;
    m->cur++;
    m->ntouched = 0;
    for (uint32_t h = 0; h < f->hm->nhosts; h++) {
        if (h == hp || twin_host(f, h) != hp)
            continue;
        const nsim_plan_lane *l = &p->lanes[(size_t)c * n + h * g + pr % g];
        if (l->ops == w->ops) { /* they differ only where one has a patch */
            for (uint32_t i = 0; i < l->npatch; i++)
                merge_op(m, w, l, l->patch[i].at);
            for (uint32_t i = 0; i < w->npatch; i++)
                merge_op(m, w, l, w->patch[i].at);
        } else {
            for (uint32_t i = 0; i < l->nops; i++)
                merge_op(m, w, l, i);
        }
    }
    uint64_t more = 0, total = 0;
    for (uint32_t k = 0; k < m->ntouched; k++) {
        uint64_t b = nsim_plan_lane_op(w, m->touched[k])->bytes;
        more += m->val[m->touched[k]] > b ? m->val[m->touched[k]] - b : 0;
    }
    *added = 0;
    *more_out = more;
    if (more == 0)
        return NSIM_OK;
    for (uint32_t i = 0; i < w->nops; i++)
        total += nsim_plan_lane_op(w, i)->bytes;
    *added = total ? (double)more / (double)total : 1.0;
    qsort(m->touched, m->ntouched, sizeof *m->touched, cmp_u32);
    /* the new patches: w's own and the raised ops, where they differ
     * from the shared array (a short chunk raised to the majority's
     * length is the array's op again); counted, then written */
    nsim_plan_patch *a = NULL;
    uint32_t k = 0;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t pi = 0;
        k = 0;
        for (uint32_t t = 0; t < m->ntouched; t++) {
            uint32_t i = m->touched[t];
            int patched = pi < w->npatch && w->patch[pi].at == i;
            nsim_plan_op op = patched ? w->patch[pi++].op : w->ops[i];
            op.bytes = m->val[i] > op.bytes ? m->val[i] : op.bytes;
            if (same_op(&op, &w->ops[i]))
                continue;
            if (pass == 1)
                a[k] = (nsim_plan_patch){i, op};
            k++;
        }
        if (pass == 0 && (a = malloc((k ? k : 1) * sizeof *a)) == NULL)
            return NSIM_ENOMEM;
    }
    *out = a;
    *nout = k;
    return NSIM_OK;
}

/* The raised patches of every played lane, by played lane id
 * (c x gm + q), taken before the rewrite drops the twins; *added: the
 * most any lane's payload grows by, as a fraction of it, and *more: in
 * bytes. */
static int merge_payloads(const fold *f, const nsim_plan *p,
                          nsim_plan_patch ***out, uint32_t **nout,
                          double *added, uint64_t *more)
{
    uint32_t n = p->nranks, np = p->nchannels * f->gm, maxops = 1;
    uint32_t first = f->base * f->hm->per_host;
    for (uint32_t i = 0; i < p->nlanes; i++)
        maxops = p->lanes[i].nops > maxops ? p->lanes[i].nops : maxops;
    merge_scratch m = {malloc(maxops * sizeof *m.val),
                       calloc(maxops, sizeof *m.stamp),
                       malloc(maxops * sizeof *m.touched), 0, 0};
    *out = calloc(np ? np : 1, sizeof **out);
    *nout = calloc(np ? np : 1, sizeof **nout);
    *added = 0;
    *more = 0;
    int rc = m.val && m.stamp && m.touched && *out && *nout ? NSIM_OK
                                                            : NSIM_ENOMEM;
    for (uint32_t c = 0; rc == NSIM_OK && c < p->nchannels; c++)
        for (uint32_t q = 0; rc == NSIM_OK && q < f->gm; q++) {
            double a = 0;
            uint64_t b = 0;
            rc = merged_lane(f, p, c, (first + q) % n, &m,
                             &(*out)[c * f->gm + q], &(*nout)[c * f->gm + q],
                             &a, &b);
            *added = a > *added ? a : *added;
            *more = b > *more ? b : *more;
        }
    free(m.val);
    free(m.stamp);
    free(m.touched);
    return rc;
}

static void free_merged(nsim_plan_patch **a, uint32_t *na, uint32_t np)
{
    if (a != NULL)
        for (uint32_t i = 0; i < np; i++)
            free(a[i]);
    free(a);
    free(na);
}

/* What more bytes on a lane cost in time, at most: their wire bytes
 * (the protocol's lines) through the narrowest NET route of the plan,
 * shared by as many lanes as send on one NIC. A lane's ops follow one
 * another, and a step of the ring's chain runs one lane's op: the
 * chain's added bytes are at most one lane's. */
static int merge_time(const fold *f, const nsim_plan *p, uint64_t more,
                      nsim_time *out)
{
    double bw = 0;
    uint32_t per_nic = 1;
    uint32_t nd = nsim_topo_ndevices(f->t);
    uint32_t *count = calloc(nd ? nd : 1, sizeof *count);
    *out = 0;
    if (count == NULL)
        return NSIM_ENOMEM;
    for (uint32_t i = 0; i < p->nlanes; i++) {
        const nsim_plan_conn *c = &p->conns[p->lanes[i].send_conn];
        const nsim_route *r;
        if (c->transport != NSIM_TRANSPORT_NET ||
            nsim_topo_route(f->t, c->send_nic, c->recv_nic, &r, NULL) !=
                NSIM_OK)
            continue;
        bw = bw == 0 || r->bw < bw ? r->bw : bw;
        if (c->send_nic < nd && ++count[c->send_nic] > per_nic)
            per_nic = count[c->send_nic];
    }
    free(count);
    if (bw > 0)
        *out = (nsim_time)((double)nsim_plan_wire_bytes(p, more) * per_nic /
                               bw * (double)NSIM_PS_PER_S +
                           0.5);
    return NSIM_OK;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a;
    uintptr_t y = (uintptr_t)*(void *const *)b;
    return x < y ? -1 : x > y;
}

/* After the rewrite: the played lanes take their raised patches; a patch
 * array a raised lane owned goes to another played lane still on it, or
 * is freed. */
static int install_merged(nsim_plan *p, nsim_plan_patch **a, uint32_t *na)
{
    uint32_t nold = 0;
    void **old = malloc((p->nlanes ? p->nlanes : 1) * sizeof *old);
    uint8_t *kept = calloc(p->nlanes ? p->nlanes : 1, 1);
    if (old == NULL || kept == NULL) {
        free(old);
        free(kept);
        return NSIM_ENOMEM;
    }
    for (uint32_t i = 0; i < p->nlanes; i++) {
        nsim_plan_lane *l = &p->lanes[i];
        if (a[i] == NULL)
            continue;
        if (l->patch != NULL && !l->patch_shared)
            old[nold++] = l->patch;
        l->patch = a[i];
        l->npatch = na[i];
        l->patch_shared = 0;
        a[i] = NULL;
    }
    qsort(old, nold, sizeof *old, cmp_ptr);
    for (uint32_t i = 0; i < p->nlanes && nold > 0; i++) {
        nsim_plan_lane *l = &p->lanes[i];
        void *key = l->patch, **hit;
        if (key == NULL || !l->patch_shared ||
            (hit = bsearch(&key, old, nold, sizeof *old, cmp_ptr)) == NULL ||
            kept[hit - old])
            continue;
        l->patch_shared = 0; /* its new owner */
        kept[hit - old] = 1;
    }
    for (uint32_t i = 0; i < nold; i++)
        if (!kept[i])
            free(old[i]);
    free(kept);
    free(old);
    return NSIM_OK;
}

typedef struct ops_user {
    const void *ops;
    nsim_plan_lane *lane;
} ops_user;

static int cmp_user(const void *a, const void *b)
{
    const ops_user *x = a, *y = b;
    return x->ops < y->ops ? -1 : x->ops > y->ops;
}

/* Lane l's op array (patches: its patch array) and whether l owns it. */
static void *lane_array(nsim_plan_lane *l, int patches, uint32_t **shared)
{
    *shared = patches ? &l->patch_shared : &l->ops_shared;
    return patches ? (void *)l->patch : (void *)l->ops;
}

/* Every op (patches: patch) array owned by a lane that the fold drops
 * goes to a played lane that shares it, or is freed when none does. */
static int own_played_ops(const fold *f, nsim_plan *p, int patches)
{
    uint32_t n = p->nranks, np = p->nchannels * f->gm, k = 0, *shared;
    uint32_t first = f->base * f->hm->per_host;
    ops_user *u = malloc((np ? np : 1) * sizeof *u);
    if (u == NULL)
        return NSIM_ENOMEM;
    for (uint32_t c = 0; c < p->nchannels; c++)
        for (uint32_t q = 0; q < f->gm; q++) {
            nsim_plan_lane *l = &p->lanes[(size_t)c * n + (first + q) % n];
            u[k++] = (ops_user){lane_array(l, patches, &shared), l};
        }
    qsort(u, np, sizeof *u, cmp_user);
    for (uint32_t i = 0; i < p->nlanes; i++) {
        nsim_plan_lane *l = &p->lanes[i];
        void *a = lane_array(l, patches, &shared);
        if (*shared || a == NULL || twin_rank(f, i % n) == i % n)
            continue; /* not an owner, or played */
        ops_user key = {a, NULL};
        ops_user *hit = bsearch(&key, u, np, sizeof *u, cmp_user);
        if (hit != NULL) {
            (void)lane_array(hit->lane, patches, &shared);
            *shared = 0;
        } else {
            free(a);
        }
    }
    free(u);
    return NSIM_OK;
}

/* Keeps the lanes and connections of the played hosts; the connection
 * out of the last played host enters the first, on its NIC's twin. */
static int rewrite(const fold *f, nsim_plan *p)
{
    uint32_t n = p->nranks, gm = f->gm, nl = p->nchannels * gm;
    uint32_t first = f->base * f->hm->per_host;
    nsim_plan_lane *lanes = calloc(nl, sizeof *lanes);
    nsim_plan_conn *conns = calloc(nl, sizeof *conns);
    if (lanes == NULL || conns == NULL) {
        free(lanes);
        free(conns);
        return NSIM_ENOMEM;
    }
    /* the op arrays of dropped lanes: handed to a played lane that uses
     * them (it becomes their owner), freed otherwise */
    NSIM_TRY(own_played_ops(f, p, 0));
    NSIM_TRY(own_played_ops(f, p, 1));
    for (uint32_t c = 0; c < p->nchannels; c++)
        for (uint32_t q = 0; q < gm; q++) {
            uint32_t id = c * gm + q, r = (first + q) % n;
            lanes[id] = p->lanes[(size_t)c * n + r];
            conns[id] = p->conns[lanes[id].send_conn];
            conns[id].to = twin_rank(f, conns[id].to);
            conns[id].recv_nic = twin(f, conns[id].recv_nic);
            conns[id].send_lane = id;
            conns[id].recv_lane = c * gm + played_index(f, conns[id].to);
            lanes[id].send_conn = id;
        }
    for (uint32_t id = 0; id < nl; id++)
        lanes[conns[id].recv_lane].recv_conn = id;
    free(p->lanes);
    free(p->conns);
    p->lanes = lanes;
    p->conns = conns;
    p->nlanes = p->nconns = nl;
    return NSIM_OK;
}

/* ---- AllToAll and SendRecv --------------------------------------------
 * Every rank sends to every other (SendRecv: below). On identical hosts
 * every host sends and receives the same: two played hosts a and b
 * stand for all when each sends what its host sends (the planner plans
 * their senders alone, fold_senders) and every send that crosses the
 * network lands on the other played host, on the rank and NIC of the
 * receiver's local index. Each played host then sends, receives and
 * proxies what every host does, over the same NICs, PCIe and NVLink. b
 * is a host whose route from a has the number of hops most of a's peers
 * see; the other routes are counted (the fabric beyond a's and b's
 * switches carries nothing: a fold cannot see contention there, so
 * RoCE's ECMP refuses it). */

/* Hosts alike enough to fold an AllToAll, a SendRecv or a tree (at
 * least min_hosts of them): 1, or 0 with why, or NSIM_ENOMEM. The hosts
 * are NCCL's nodes: where NVLink domains span hosts (MNNVL) a tree
 * (tree.c chains a node's ranks) and an AllToAll (two domains' sends)
 * fold onto whole domains; faults name hosts, and SendRecv's pairs
 * cross between hosts inside a domain, so those do not. */
static int hosts_alike(nsim_topo *t, const nsim_plan_req *req,
                       uint32_t min_hosts, hostmap *hm, nsim_fold_info *fi)
{
    uint32_t nn = nsim_topo_nnodes(t);
    if (nn != fi->hosts &&
        (req->coll == NSIM_COLL_SENDRECV || req->nfold_play > 0))
        return refuse(fi, "NVLink domains span hosts");
    if (nn < min_hosts)
        return refuse(fi, nn != fi->hosts ? "fewer than %u NVLink domains"
                                          : "fewer than %u hosts",
                      min_hosts);
    int rc = hostmap_build(t, nsim_topo_nranks(t), hm, fi);
    if (rc != 1)
        return rc;
    fold f = {t, hm, 1, hm->per_host, 0};
    if (!hosts_repeat(&f, fi))
        return 0;
    for (uint32_t i = 0; i < hm->ndev; i++) {
        const nsim_device *d = nsim_topo_device(t, host_dev(hm, 0, i));
        if (d->type == NSIM_DEV_NIC && d->link_layer == NSIM_LL_ROCE)
            return refuse(fi, "RoCE spreads flows over the fabric by ECMP "
                              "hash: where they collide depends on every "
                              "host's flows");
    }
    return 1;
}

/* The other played host: the first whose route from a's first NIC has
 * the most common number of hops among a's peers. */
static uint32_t alltoall_partner(const hostmap *hm, nsim_topo *t, uint32_t a)
{
    uint32_t count[16] = {0}, hops_of_best = 0, nic = UINT32_MAX;
    for (uint32_t i = 0; i < hm->ndev && nic == UINT32_MAX; i++)
        if (nsim_topo_device(t, host_dev(hm, a, i))->type ==
            NSIM_DEV_NIC)
            nic = i;
    uint32_t from = nic == UINT32_MAX ? 0 : host_dev(hm, a, nic);
    for (uint32_t h = 0; nic != UINT32_MAX && h < hm->nhosts; h++) {
        const nsim_route *r;
        if (h != a &&
            nsim_topo_route(t, from, host_dev(hm, h, nic), &r,
                            NULL) == NSIM_OK &&
            r->hops < 16 && ++count[r->hops] > count[hops_of_best])
            hops_of_best = r->hops;
    }
    for (uint32_t k = 1; nic != UINT32_MAX && k < hm->nhosts; k++) {
        uint32_t h = (a + k) % hm->nhosts;
        const nsim_route *r;
        if (nsim_topo_route(t, from, host_dev(hm, h, nic), &r,
                            NULL) == NSIM_OK &&
            r->hops == hops_of_best)
            return h;
    }
    return (a + 1) % hm->nhosts;
}

/* SendRecv (nccl-tests': rank r sends to r + 1, receives from r - 1):
 * every host sends its last rank's data to the next host and receives
 * from the one before, the rest on the host. Two played hosts a and
 * a + 1 stand for all as an AllToAll's do (a sends to a + 1; a + 1's
 * send to a + 2 lands on a): a is the host whose route to the next is
 * the slowest (least bandwidth, then most latency), since the whole
 * SendRecv ends with its slowest pair. */
/* The route from host h's first NIC to host h + 1's, or NULL. */
static const nsim_route *pair_route(const hostmap *hm, nsim_topo *t,
                                    uint32_t h)
{
    const nsim_route *r;
    for (uint32_t i = 0; i < hm->ndev; i++)
        if (nsim_topo_device(t, host_dev(hm, 0, i))->type == NSIM_DEV_NIC)
            return nsim_topo_route(t, host_dev(hm, h, i),
                                   host_dev(hm, (h + 1) % hm->nhosts, i), &r,
                                   NULL) == NSIM_OK
                       ? r
                       : NULL;
    return NULL;
}

static uint32_t sendrecv_first(const hostmap *hm, nsim_topo *t)
{
    uint32_t best = 0;
    const nsim_route *slowest = NULL, *r;
    for (uint32_t h = 0; h < hm->nhosts; h++)
        if ((r = pair_route(hm, t, h)) != NULL &&
            (slowest == NULL || slower(r, slowest))) {
            slowest = r;
            best = h;
        }
    return best;
}

/* SendRecv whose faults strike hosts (req fold_play): the pair they
 * strike, its first host in *a: one host (its sends and receives are
 * both played from it: the next host's send lands on it), or two that
 * follow each other. The whole run ends with its slowest pair, so the
 * struck pair's route must be as slow as the slowest route's pair's (a
 * fault only slows its pair). 1, or 0 with why. */
static int sendrecv_struck(const hostmap *hm, nsim_topo *t,
                           const nsim_plan_req *req, uint32_t *a,
                           nsim_fold_info *fi)
{
    const uint32_t *h = req->fold_play;
    uint32_t nh = hm->nhosts, w = sendrecv_first(hm, t);
    if (req->nfold_play == 1)
        *a = h[0];
    else if (req->nfold_play == 2 && h[1] == h[0] + 1)
        *a = h[0];
    else if (req->nfold_play == 2 && h[0] == 0 && h[1] == nh - 1)
        *a = nh - 1;
    else
        return refuse(fi, "the faults strike %u hosts, not one pair of "
                          "SendRecv's",
                      req->nfold_play);
    const nsim_route *rw = pair_route(hm, t, w), *ra = pair_route(hm, t, *a);
    if (rw != NULL && ra != NULL && slower(rw, ra))
        return refuse(fi, "the slowest pair (hosts %u and %u) is not the one "
                          "the faults strike (%u and %u): the run ends with "
                          "the slower of the two",
                      w, (w + 1) % nh, *a, (*a + 1) % nh);
    return 1;
}

/* ---- a Tree's chains on NVLink domains (fold.h NSIM_FOLD_TREE_CHAIN) --
 * A node's chain runs in the channel's order from a rotating first rank
 * (tree.c): the first two ranks join the tree across nodes, the rest
 * relay along NVLink. Where every GPU is like the first (the same kind,
 * links of the same kinds and figures to the same kinds of device), a
 * rank added to the chain adds the same delay wherever it sits. */

/* GPU devices d and e alike, and their links. */
static int gpus_alike(nsim_topo *t, uint32_t d, uint32_t e)
{
    return devices_alike(nsim_topo_device(t, d), nsim_topo_device(t, e)) &&
           links_alike_in(t, NULL, d, e);
}

int nsim_plan_tree_chain(nsim_topo *t, const nsim_plan_req *req,
                         uint32_t *played)
{
    uint32_t *ranks = NULL, *start = NULL, n = 0;
    *played = 0;
    if (req->coll != NSIM_COLL_ALLREDUCE || req->algo != NSIM_ALGO_TREE ||
        !req->compact_ops)
        return NSIM_OK;
    if (nsim_topo_group_ranks(t, &ranks, &start, &n) != NSIM_OK)
        return NSIM_ENOMEM;
    uint32_t m = n > 0 ? start[1] : 0, first = m > 0 ? ranks[0] : 0;
    int ok = n >= 2 && m >= NSIM_FOLD_TREE_CHAIN_NODE_MIN;
    for (uint32_t h = 0; ok && h < n; h++)
        ok = start[h + 1] - start[h] == m;
    for (uint32_t i = 0; ok && i < start[n]; i++)
        ok = gpus_alike(t, nsim_topo_rank_device(t, ranks[i]),
                        nsim_topo_rank_device(t, first));
    free(ranks);
    free(start);
    if (ok)
        *played = NSIM_FOLD_TREE_CHAIN;
    return NSIM_OK;
}

int nsim_plan_fold_prepare(nsim_topo *t, nsim_plan_req *req,
                           nsim_fold_info *info, nsim_err *err)
{
    memset(info, 0, sizeof *info);
    info->hosts = info->played = nsim_topo_nhosts(t);
    info->partner = UINT32_MAX;
    int tree = req->coll == NSIM_COLL_ALLREDUCE &&
               (req->algo == NSIM_ALGO_NVLSTREE ||
                req->algo == NSIM_ALGO_TREE);
    if ((!nsim_coll_is_p2p(req->coll) && !tree) || !req->compact_ops)
        return NSIM_OK;
    hostmap hm = {0};
    /* a tree of fewer than 8 hosts plays about all of them */
    int rc = hosts_alike(t, req, tree ? 8 : 4, &hm, info);
    if (rc == 1 && tree) {
        req->fold_tree = 1;
    } else if (rc == 1 && req->coll == NSIM_COLL_SENDRECV) {
        uint32_t a = sendrecv_first(&hm, t);
        if (req->nfold_play == 0 || sendrecv_struck(&hm, t, req, &a, info)) {
            req->fold_senders = 1;
            req->fold_host[0] = a;
            req->fold_host[1] = (a + 1) % hm.nhosts;
        }
    } else if (rc == 1 && req->nfold_play <= 1) {
        /* an AllToAll: host 0, or the host a run's faults strike */
        uint32_t a = req->nfold_play == 1 ? req->fold_play[0] : 0;
        req->fold_senders = 1;
        req->fold_host[0] = a;
        req->fold_host[1] = alltoall_partner(&hm, t, a);
    } else if (rc == 1) {
        refuse(info, "the faults strike %u hosts, and an AllToAll folds "
                     "around one",
               req->nfold_play);
    }
    hostmap_free(&hm);
    if (rc == NSIM_ENOMEM)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory (fold)");
    return NSIM_OK;
}

/* A point-to-point plan of two hosts' sends (AllToAll, SendRecv): every
 * NET send lands on the other played host. */
static int fold_p2p(nsim_topo *t, nsim_plan *p, nsim_fold_info *fi,
                    hostmap *hm)
{
    int rc = hostmap_build(t, p->nranks, hm, fi);
    if (rc != 1)
        return rc;
    uint32_t a = p->req.fold_host[0], b = p->req.fold_host[1];
    uint32_t g = hm->per_host;
    /* twins on b (of a's peers) and on a (of b's) */
    fold fb = {t, hm, 1, g, b}, fa = {t, hm, 1, g, a};
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < p->nconns; i++) {
            nsim_plan_conn *c = &p->conns[i];
            if (c->transport != NSIM_TRANSPORT_NET)
                continue;
            const fold *f =
                (uint32_t)dev_host(t, c->send_nic) == a ? &fb : &fa;
            uint32_t host = f->base, nic = twin(f, c->recv_nic);
            if (pass == 1) { /* rewrite */
                c->to = host * g + c->to % g;
                c->recv_nic = nic;
                p->lanes[c->recv_lane].rank = c->to;
                continue;
            }
            const nsim_route *whole, *played;
            fi->net_conns++;
            if (nsim_topo_route(t, c->send_nic, c->recv_nic, &whole, NULL) !=
                    NSIM_OK ||
                nsim_topo_route(t, c->send_nic, nic, &played, NULL) !=
                    NSIM_OK)
                return refuse(fi, "a NET connection has no route");
            if (whole->bw != played->bw)
                return refuse(fi, "the route %s -> %s is %s than the "
                                  "played one (%s)",
                              whole->bw < played->bw ? "narrower" : "wider",
                              nsim_topo_device(t, c->send_nic)->name,
                              nsim_topo_device(t, c->recv_nic)->name,
                              p->req.coll == NSIM_COLL_ALLTOALL
                                  ? "AllToAll crosses every route"
                                  : "SendRecv ends with its slowest pair");
            count_unlike(whole, played, fi);
        }
    /* in hosts: a played domain is its hosts */
    uint32_t per_node = fi->hosts / hm->nhosts;
    fi->played = 2 * per_node;
    fi->first_played = a * per_node;
    fi->partner = b * per_node;
    fi->struck = p->req.nfold_play;
    return 1;
}

/* ---- Broadcast and Reduce: a chain along the ring --------------------
 * NCCL's Broadcast runs, on each channel, a chain along the ring from the
 * root (send, then recvCopySend on every rank but the last, which
 * receives); Reduce one to it (nccl 3.3). Past the root's host every
 * host does the same: its ranks forward what the host before sent, a
 * little later than that host did. The chain is a pipeline of alike
 * stages, and its time grows with each host it passes, by a delay that
 * settles along the chain (fold.h; docs/fold.md). A chain does not
 * close, so no shorter chain takes the whole one's time: it is played
 * on m hosts, the root's, the one before it (where the chain ends on a
 * channel whose ring enters the root's host at the root) and m - 2
 * after it, then again on m / 2, and the run's time is the first run's
 * plus, for every host not played, what the first run's last m / 2
 * hosts added per host (nsim_run_size). The played chain is the whole
 * one's, cut: the connection out of the last played host enters the
 * host before the root's, on its NIC's twin, and the ranks keep the
 * whole chain's ops. The check: hosts alike, every channel's ring
 * visiting the hosts in order, each once, and every host but the root's
 * and its two neighbours running what the host two (or, where the hosts
 * alternate, three) after the root's does; every NET route of one
 * bandwidth (the pipeline's pace is its slowest hop's). What the
 * chain's routes add, where their latencies differ from the played
 * ones' (a hop across the spine), goes to chain_lat_ps. */

/* Whether channel c's ring visits the hosts in order (h, h + 1, ...),
 * each once: every connection stays on its host or goes to the next, and
 * the ring moves to another host as many times as there are hosts. */
static int chain_in_order(const hostmap *hm, const nsim_plan *p, uint32_t c)
{
    uint32_t n = p->nranks, g = hm->per_host, nh = hm->nhosts, moves = 0;
    for (uint32_t r = 0; r < n; r++) {
        uint32_t a = r / g;
        uint32_t b = p->conns[p->lanes[(size_t)c * n + r].send_conn].to / g;
        if (b == a)
            continue;
        if (b != (a + 1) % nh)
            return 0;
        moves++;
    }
    return moves == nh;
}

/* Device d (of a lane on host h) and e (of its like on host ref) are in
 * the same place: the same device of a host as far from theirs, or the
 * same device off the hosts (or none). */
static int same_place(const hostmap *hm, uint32_t d, uint32_t h, uint32_t e,
                      uint32_t ref)
{
    if (d == UINT32_MAX || e == UINT32_MAX || hm->local[d] == UINT32_MAX ||
        hm->local[e] == UINT32_MAX)
        return d == e;
    uint32_t nh = hm->nhosts;
    return hm->local[d] == hm->local[e] &&
           ((uint32_t)dev_host(hm->t, d) + nh - h) % nh ==
               ((uint32_t)dev_host(hm->t, e) + nh - ref) % nh;
}

/* Lane l (on host h) and w (the same channel and local rank on host ref)
 * do the same: the same ops, and a connection of the same kind to the
 * rank as far along the ring, between NICs in the same places. */
static int chain_lanes_alike(const hostmap *hm, const nsim_plan *p,
                             const nsim_plan_lane *l, uint32_t h,
                             const nsim_plan_lane *w, uint32_t ref,
                             ops_total *memo, nsim_fold_info *fi)
{
    double over = 0;
    uint32_t nh = hm->nhosts, g = hm->per_host;
    const nsim_plan_conn *a = &p->conns[l->send_conn];
    const nsim_plan_conn *b = &p->conns[w->send_conn];
    return l->nops == w->nops && l->shares_sm == w->shares_sm &&
           ops_alike(l, w, memo, 0, fi, &over) &&
           a->transport == b->transport && a->path == b->path &&
           a->nqps == b->nqps && a->nvls_role == b->nvls_role &&
           a->to % g == b->to % g &&
           (a->to / g + nh - h) % nh == (b->to / g + nh - ref) % nh &&
           same_place(hm, a->send_nic, h, b->send_nic, ref) &&
           same_place(hm, a->recv_nic, h, b->recv_nic, ref);
}

/* Channel c's chain over its NET hops, as the m hosts from f->base play
 * it (m 0: the whole chain): the sum of their routes' latencies in *lat.
 * The connection out of the chain's last rank carries nothing (no op of
 * its lane sends). Every route must have the bandwidth *bw (0: the first
 * one's). 1, or 0 with why. */
static int chain_lat(fold *f, const nsim_plan *p, uint32_t c, uint32_t m,
                     double *bw, nsim_time *lat, nsim_fold_info *fi)
{
    uint32_t n = p->nranks, g = f->hm->per_host;
    uint32_t count = m == 0 ? n : m * g;
    f->m = m == 0 ? 1 : m;
    *lat = 0;
    for (uint32_t q = 0; q < count; q++) {
        uint32_t r = m == 0 ? q : (f->base * g + q) % n;
        const nsim_plan_lane *l = &p->lanes[(size_t)c * n + r];
        const nsim_plan_conn *cn = &p->conns[l->send_conn];
        const nsim_route *rt;
        if (cn->transport != NSIM_TRANSPORT_NET || l->nops == 0 ||
            !(nsim_plan_lane_op(l, 0)->prim & NSIM_PRIM_SEND))
            continue;
        uint32_t to = m == 0 ? cn->recv_nic : twin(f, cn->recv_nic);
        if (nsim_topo_route(f->t, cn->send_nic, to, &rt, NULL) != NSIM_OK)
            return refuse(fi, "a NET connection has no route");
        if (*bw == 0)
            *bw = rt->bw;
        if (rt->bw != *bw)
            return refuse(fi, "NET routes of different bandwidths (%s -> "
                              "%s): a chain runs at its slowest hop's pace, "
                              "which the played hosts may not hold",
                          nsim_topo_device(f->t, cn->send_nic)->name,
                          nsim_topo_device(f->t, to)->name);
        *lat += rt->lat_ps;
    }
    return 1;
}

/* Folds a Broadcast or Reduce chain (above) onto req.fold_chain_hosts
 * hosts (0: NSIM_FOLD_CHAIN_HOSTS). 1, 0 with why, NSIM_ENOMEM. */
static int fold_chain(nsim_topo *t, nsim_plan *p, nsim_fold_info *fi,
                      hostmap *hm)
{
    uint32_t nh = fi->hosts, n = p->nranks;
    uint32_t m = p->req.fold_chain_hosts ? p->req.fold_chain_hosts
                                         : NSIM_FOLD_CHAIN_HOSTS;
    if (nh < 3 * NSIM_FOLD_CHAIN_HOSTS)
        return refuse(fi, "%u hosts: a chain is played on %u and on %u, "
                          "and folds from %u",
                      nh, NSIM_FOLD_CHAIN_HOSTS, NSIM_FOLD_CHAIN_HOSTS / 2,
                      3 * NSIM_FOLD_CHAIN_HOSTS);
    if (m < 8 || m % 4 != 0 || m >= nh)
        return refuse(fi, "a chain plays a multiple of 4 hosts, at least 8 "
                          "and fewer than the %u",
                      nh);
    int rc = hostmap_build(t, n, hm, fi);
    if (rc != 1)
        return rc;
    if (!ring_shaped(p, fi))
        return 0;
    uint32_t g = hm->per_host, r0 = p->req.root / g;
    fold f = {t, hm, 1, g, 0};
    if (!hosts_repeat(&f, fi))
        return 0;
    for (uint32_t c = 0; c < p->nchannels; c++)
        if (!chain_in_order(hm, p, c))
            return refuse(fi, "channel %u's ring does not visit the hosts "
                              "in order, each once",
                          c);
    /* the hosts past the root's neighbours repeat with a period of one
     * host, or of two (NCCL's rings enter and leave alternate hosts on
     * alternate NICs): both runs play a whole number of periods */
    char first[sizeof fi->why_not] = "";
    uint32_t period = 0;
    for (uint32_t per = 1; per <= 2 && period == 0; per++) {
        if (per == 2 && nh % 2 != 0)
            break;
        period = per;
        for (uint32_t c = 0; period != 0 && c < p->nchannels; c++) {
            ops_total memo = {NULL, 0};
            for (uint32_t k = 2 + per; period != 0 && k < nh - 1; k++) {
                uint32_t h = (r0 + k) % nh, ref = (r0 + 2 + (k - 2) % per) % nh;
                for (uint32_t i = 0; period != 0 && i < g; i++)
                    if (!chain_lanes_alike(
                            hm, p, &p->lanes[(size_t)c * n + h * g + i], h,
                            &p->lanes[(size_t)c * n + ref * g + i], ref,
                            &memo, fi)) {
                        refuse(fi, "channel %u: rank %u's ops or connection "
                                   "differ from rank %u's",
                               c, h * g + i, ref * g + i);
                        period = 0;
                    }
            }
        }
        if (period == 0 && first[0] == '\0')
            memcpy(first, fi->why_not, sizeof first);
    }
    if (period == 0) {
        memcpy(fi->why_not, first, sizeof first);
        return 0;
    }
    fi->why_not[0] = '\0';
    /* what the whole chain's routes add, per channel, to the played
     * ones and to the hosts added at the delay the two runs give: that
     * delay holds what the hops between them add, per host. The first
     * run's fold checks the second's routes and closure too, so that
     * the second (req.fold_chain_hosts, m / 2), checking only its own,
     * folds wherever the first did */
    int lead = p->req.fold_chain_hosts == 0;
    f.base = (r0 + nh - 1) % nh;
    double bw = 0;
    int64_t worst = 0;
    for (uint32_t c = 0; c < p->nchannels; c++) {
        nsim_time whole, a, b;
        if (!chain_lat(&f, p, c, 0, &bw, &whole, fi) ||
            !chain_lat(&f, p, c, m, &bw, &a, fi))
            return 0;
        if (!lead) /* the second run: its routes' sum is the first's */
            continue;
        if (!chain_lat(&f, p, c, m / 2, &bw, &b, fi))
            return 0;
        int64_t add = (int64_t)whole - (int64_t)a -
                      (int64_t)(nh - m) * ((int64_t)a - (int64_t)b) /
                          (int64_t)(m - m / 2);
        worst = c == 0 || add > worst ? add : worst;
    }
    /* the played chain closes (the first run's: on m hosts and on the
     * second's m / 2): the connection out of the last played host enters
     * the host before the root's where the whole ring does */
    for (uint32_t k = lead ? m / 2 : m; k <= m; k += m - m / 2) {
        f.m = k;
        for (uint32_t c = 0; c < p->nchannels; c++)
            for (uint32_t q = 0; q < g; q++) {
                uint32_t r = ((f.base + k - 1) % nh) * g + q;
                uint32_t to =
                    p->conns[p->lanes[(size_t)c * n + r].send_conn].to;
                if (to / g == r / g)
                    continue;
                uint32_t in = twin_rank(&f, to);
                uint32_t from =
                    p->conns[p->lanes[(size_t)c * n + in].recv_conn].from;
                if (from / g != (f.base + nh - 1) % nh)
                    return refuse(fi, "channel %u: the chain played on %u "
                                      "hosts does not close (rank %u's twin "
                                      "%u is not where its host's ring "
                                      "enters)",
                                  c, k, to, in);
            }
    }
    f.m = m;
    f.gm = m * g;
    fi->net_conns = 0;
    for (uint32_t i = 0; i < p->nconns; i++)
        fi->net_conns += p->conns[i].transport == NSIM_TRANSPORT_NET;
    if (rewrite(&f, p) != NSIM_OK)
        return NSIM_ENOMEM;
    fi->played = m;
    fi->first_played = f.base;
    fi->chain_hosts = m;
    fi->chain_lat_ps = worst;
    return 1;
}

static int try_fold(nsim_topo *t, nsim_plan *p, nsim_fold_info *fi,
                    hostmap *hm)
{
    uint32_t nh = fi->hosts;
    if (!p->req.compact_ops)
        return refuse(fi, "the plan keeps its placement (--stats, traces "
                          "and explain play every host)");
    int chain = nsim_plan_req_is_chain(&p->req);
    if (!chain &&
        (nsim_coll_is_p2p(p->req.coll) || p->req.algo != NSIM_ALGO_RING ||
         (p->req.coll != NSIM_COLL_ALLREDUCE &&
          p->req.coll != NSIM_COLL_ALLGATHER &&
          p->req.coll != NSIM_COLL_REDUCESCATTER)))
        return refuse(fi, "only ring AllReduce, AllGather, ReduceScatter, "
                          "Broadcast and Reduce, Tree and NVLSTree "
                          "AllReduce, AllToAll and SendRecv fold");
    /* a ring plays whole NVLink domains where they span hosts (MNNVL):
     * the fold's hosts are NCCL's nodes; faults name hosts, and a chain
     * adds a host's delay, so those fold on plain hosts only */
    uint32_t per_node = 1;
    if (nsim_topo_nnodes(t) != nh) {
        if (chain || p->req.nfold_play > 0 || p->req.nfold_links > 0)
            return refuse(fi, "NVLink domains span hosts");
        per_node = nh / nsim_topo_nnodes(t);
        nh = nsim_topo_nnodes(t);
        if (nh * per_node != fi->hosts)
            return refuse(fi, "NVLink domains of different sizes");
    }
    if (chain)
        return fold_chain(t, p, fi, hm);
    if (nh < 4)
        return refuse(fi, per_node > 1 ? "fewer than 4 NVLink domains"
                                       : "fewer than 4 hosts");
    int rc = hostmap_build(t, p->nranks, hm, fi);
    if (rc != 1)
        return rc;
    if (!ring_shaped(p, fi))
        return 0;
    fold f = {t, hm, 0, 0, 0};
    char first[sizeof fi->why_not] = "";
    for (uint32_t m = 2; m <= nh / 2; m++) {
        if (nh % m != 0)
            continue;
        f = (fold){t, hm, m, m * hm->per_host, 0};
        if (!hosts_repeat(&f, fi))
            rc = 0;
        else if ((rc = plan_repeats(&f, p, fi)) == NSIM_ENOMEM)
            return rc;
        if (rc == 1)
            break;
        if (first[0] == '\0')
            memcpy(first, fi->why_not, sizeof first);
        f.m = 0;
    }
    if (f.m == 0) {
        memcpy(fi->why_not, first, sizeof first);
        return 0;
    }
    fi->why_not[0] = '\0';
    f.links = p->req.fold_links;
    f.nlinks = p->req.nfold_links;
    fi->fabric_links = f.nlinks;
    fi->fabric_conns = 0;
    uint32_t *play, nplay;
    if ((rc = hosts_to_play(&f, p, fi, &play, &nplay)) != 1)
        return rc;
    need_window(&f, play, nplay);
    free(play);
    if ((rc = choose_played(&f, p, fi)) != 1)
        return rc;
    fi->struck = nplay;
    nsim_plan_patch **merged = NULL;
    uint32_t *nmerged = NULL, np = p->nchannels * f.gm;
    uint64_t more = 0;
    nsim_time row = p->req.fold_row_ps;
    rc = fi->bytes_diff > 0 ? merge_payloads(&f, p, &merged, &nmerged,
                                             &fi->bytes_added, &more)
                            : NSIM_OK;
    fi->bytes_time_ps = 0;
    if (rc == NSIM_OK && more > 0)
        rc = merge_time(&f, p, more, &fi->bytes_time_ps);
    if (rc == NSIM_OK && row == 0 && fi->bytes_added > NSIM_FOLD_BYTES_TOL) {
        free_merged(merged, nmerged, np);
        return refuse(fi, "the size does not divide evenly over %u ranks: "
                          "every chunk at its largest would add %.2f %% to "
                          "a lane's payload, over %.1f %%",
                      p->nranks, fi->bytes_added * 100,
                      NSIM_FOLD_BYTES_TOL * 100);
    }
    if (rc == NSIM_OK && row > 0 &&
        (double)fi->bytes_time_ps > NSIM_FOLD_LAT_TOL * (double)row) {
        free_merged(merged, nmerged, np);
        return refuse(fi, "the size does not divide evenly over %u ranks: "
                          "every chunk at its largest adds %.2f %% to a "
                          "lane's payload, %.2f us, %.1f %% of NCCL's "
                          "estimate",
                      p->nranks, fi->bytes_added * 100,
                      (double)fi->bytes_time_ps / 1e6,
                      100.0 * (double)fi->bytes_time_ps / (double)row);
    }
    if (rc != NSIM_OK || rewrite(&f, p) != NSIM_OK ||
        (merged != NULL && install_merged(p, merged, nmerged) != NSIM_OK)) {
        free_merged(merged, nmerged, np);
        return NSIM_ENOMEM;
    }
    free_merged(merged, nmerged, np);
    /* in hosts: a played domain is its hosts */
    fi->played = f.m * per_node;
    fi->first_played = f.base * per_node;
    return 1;
}

int nsim_plan_fold(nsim_topo *t, nsim_plan *p, nsim_fold_info *info,
                   nsim_err *err)
{
    memset(info, 0, sizeof *info);
    info->hosts = info->played = nsim_topo_nhosts(t);
    info->partner = UINT32_MAX;
    hostmap hm = {0};
    int rc;
    if (p->req.fold_tree) {
        /* the plan's hosts are NCCL's nodes; a played domain is its
         * hosts */
        uint32_t per_node = info->hosts / p->nhosts;
        rc = p->played_hosts < p->nhosts
                 ? 1
                 : refuse(info, "every role in the trees needs its own host");
        info->played = p->played_hosts * per_node;
        info->phantom_conns = p->phantom_conns;
        info->slow_roles = p->slow_roles;
        info->struck = p->req.nfold_play;
        for (uint32_t i = 0; i < p->nconns; i++)
            info->net_conns += p->conns[i].transport == NSIM_TRANSPORT_NET;
    } else {
        rc = p->req.fold_senders ? fold_p2p(t, p, info, &hm)
                                 : try_fold(t, p, info, &hm);
    }
    hostmap_free(&hm);
    if (rc == NSIM_ENOMEM)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory (fold)");
    if (rc != 1) {
        info->played = info->hosts;
        info->first_played = 0;
        info->partner = UINT32_MAX;
        info->net_conns = info->net_unlike = 0;
        info->lat_diff_ps = info->lat_added_ps = 0;
        info->bytes_time_ps = 0;
        info->phantom_conns = 0;
        info->slow_roles = 0;
        info->struck = 0;
        info->fabric_links = info->fabric_conns = 0;
        info->chain_hosts = 0;
        info->chain_lat_ps = 0;
    }
    return NSIM_OK;
}
