/* SPDX-License-Identifier: MIT
 *
 * plan_read.c - a plan from its JSON form (see plan_read.h).
 */
#include "plan_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/core/jread.h"

static int parse_name(const char *s, const char *(*name)(int), int n)
{
    for (int i = 0; i < n; i++)
        if (strcasecmp(s, name(i)) == 0)
            return i;
    return -1;
}

static const char *transport_n(int i)
{
    return nsim_transport_name((nsim_transport)i);
}
static const char *path_n(int i) { return nsim_path_type_name((nsim_path_type)i); }

static int get_u32(const nsim_jctx *c, const cJSON *o, const char *path,
                   const char *key, int64_t max, uint32_t *out)
{
    int64_t v = 0;
    NSIM_TRY(nsim_jget_int(c, o, path, key, 1, 0, max, &v));
    *out = (uint32_t)v;
    return NSIM_OK;
}

static int get_u64(const nsim_jctx *c, const cJSON *o, const char *path,
                   const char *key, uint64_t *out)
{
    int64_t v = 0;
    NSIM_TRY(nsim_jget_int(c, o, path, key, 1, 0, INT64_MAX, &v));
    *out = (uint64_t)v;
    return NSIM_OK;
}

static int read_u32_array(const nsim_jctx *c, const cJSON *a, const char *path,
                          const char *key, uint32_t *out, uint32_t want,
                          uint32_t max_value, uint32_t *n)
{
    if (!cJSON_IsArray(a))
        return nsim_jfail(c, path, key, "expected an array of numbers");
    uint32_t k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        if (k >= want || !cJSON_IsNumber(e) || e->valuedouble < 0 ||
            e->valuedouble > max_value ||
            e->valuedouble != (double)(uint32_t)e->valuedouble)
            return nsim_jfail(c, path, key,
                              "expected at most %u whole numbers 0..%u", want,
                              max_value);
        out[k++] = (uint32_t)e->valuedouble;
    }
    *n = k;
    return NSIM_OK;
}

static int read_header(const nsim_jctx *c, const cJSON *root,
                       const nsim_topo *t, nsim_plan *p)
{
    static const char *const keys[] = {
        "format", "version", "topology", "collective", "algorithm",
        "protocol", "bytes", "type_size", "nranks", "nchannels",
        "step_bytes", "slice_bytes", "chunk_bytes", "slots_per_connection",
        "channels", "connections", "lanes", NULL};
    const char *topo = NULL, *coll = NULL, *algo = NULL, *proto = NULL;
    uint32_t slots = 0;
    NSIM_TRY(nsim_jcheck_header(c, root, "ncclsim-plan", 1, keys));
    NSIM_TRY(nsim_jget_string(c, root, "", "topology", 1, &topo));
    if (strcmp(topo, nsim_topo_name(t)) != 0)
        return nsim_jfail(c, "", "topology",
                          "the plan is for topology \"%s\", the scenario's "
                          "is \"%s\"", topo, nsim_topo_name(t));
    NSIM_TRY(nsim_jget_string(c, root, "", "collective", 1, &coll));
    NSIM_TRY(nsim_jget_string(c, root, "", "algorithm", 1, &algo));
    NSIM_TRY(nsim_jget_string(c, root, "", "protocol", 1, &proto));
    if (nsim_coll_parse(coll, &p->req.coll) != NSIM_OK)
        return nsim_jfail(c, "", "collective", "unknown collective \"%s\"",
                          coll);
    if (nsim_algo_parse(algo, &p->req.algo) != NSIM_OK &&
        strcmp(algo, "P2P") != 0)
        return nsim_jfail(c, "", "algorithm", "unknown algorithm \"%s\"", algo);
    if (nsim_proto_parse(proto, &p->req.proto) != NSIM_OK)
        return nsim_jfail(c, "", "protocol", "unknown protocol \"%s\"", proto);
    NSIM_TRY(get_u64(c, root, "", "bytes", &p->req.bytes));
    NSIM_TRY(get_u32(c, root, "", "type_size", 8, &p->req.type_size));
    NSIM_TRY(get_u32(c, root, "", "nranks", 1 << 24, &p->nranks));
    if (p->nranks != nsim_topo_nranks(t))
        return nsim_jfail(c, "", "nranks",
                          "the plan has %u ranks, topology \"%s\" has %u",
                          p->nranks, nsim_topo_name(t), nsim_topo_nranks(t));
    NSIM_TRY(get_u32(c, root, "", "nchannels", NSIM_MAX_CHANNELS,
                     &p->nchannels));
    NSIM_TRY(get_u64(c, root, "", "step_bytes", &p->step_bytes));
    NSIM_TRY(get_u64(c, root, "", "slice_bytes", &p->slice_bytes));
    NSIM_TRY(get_u64(c, root, "", "chunk_bytes", &p->chunk_bytes));
    NSIM_TRY(get_u32(c, root, "", "slots_per_connection", 1 << 10, &slots));
    if (slots != NSIM_NCCL_STEPS)
        return nsim_jfail(c, "", "slots_per_connection",
                          "expected %d (NCCL_STEPS), got %u", NSIM_NCCL_STEPS,
                          slots);
    if (p->req.type_size == 0 || p->nchannels == 0 || p->step_bytes == 0 ||
        p->slice_bytes % p->step_bytes || p->chunk_bytes % p->step_bytes ||
        NSIM_NCCL_STEPS % (p->slice_bytes / p->step_bytes))
        return nsim_jfail(c, "", "slice_bytes",
                          "expected type_size, nchannels and step_bytes > 0 "
                          "and a slice of 1, 2, 4 or 8 steps");
    p->slice_steps = (uint32_t)(p->slice_bytes / p->step_bytes);
    p->chunk_steps = (uint32_t)(p->chunk_bytes / p->step_bytes);
    p->line_bytes = p->req.proto == NSIM_PROTO_LL      ? 16
                    : p->req.proto == NSIM_PROTO_LL128 ? 128
                                                       : 0;
    p->line_payload_bytes = p->req.proto == NSIM_PROTO_LL      ? 8
                            : p->req.proto == NSIM_PROTO_LL128 ? 120
                                                               : 0;
    p->nhosts = nsim_topo_nhosts(t);
    return NSIM_OK;
}

static int read_channels(const nsim_jctx *c, const cJSON *root, nsim_plan *p)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "channels");
    static const char *const keys[] = {"offset", "bytes", "ring", NULL};
    if (!cJSON_IsArray(a) || (uint32_t)cJSON_GetArraySize(a) != p->nchannels)
        return nsim_jfail(c, "", "channels", "expected an array of %u channels",
                          p->nchannels);
    p->chan_offset = calloc(p->nchannels, sizeof *p->chan_offset);
    p->chan_bytes = calloc(p->nchannels, sizeof *p->chan_bytes);
    p->ring = calloc((size_t)p->nchannels * p->nranks, sizeof *p->ring);
    if (!p->chan_offset || !p->chan_bytes || !p->ring)
        return NSIM_ERR(c->err, NSIM_ENOMEM, "%s: out of memory", c->file);
    uint32_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        char path[32];
        uint32_t n = 0;
        snprintf(path, sizeof path, "channels[%u]", i);
        NSIM_TRY(nsim_jcheck_keys(c, e, path, keys));
        NSIM_TRY(get_u64(c, e, path, "offset", &p->chan_offset[i]));
        NSIM_TRY(get_u64(c, e, path, "bytes", &p->chan_bytes[i]));
        NSIM_TRY(read_u32_array(c, cJSON_GetObjectItemCaseSensitive(e, "ring"),
                                path, "ring", &p->ring[i * p->nranks],
                                p->nranks, p->nranks - 1, &n));
        if (n != 0 && n != p->nranks)
            return nsim_jfail(c, path, "ring", "expected %u ranks, got %u",
                              p->nranks, n);
        i++;
    }
    return NSIM_OK;
}

static int read_conn(const nsim_jctx *c, const cJSON *e, const char *path,
                     const nsim_topo *t, nsim_plan *p, nsim_plan_conn *pc)
{
    static const char *const keys[] = {"channel", "from", "to", "transport",
                                       "path", "send_nic", "recv_nic", "qps",
                                       NULL};
    const char *tr = NULL, *pa = NULL, *nic = NULL;
    int k;
    NSIM_TRY(nsim_jcheck_keys(c, e, path, keys));
    NSIM_TRY(get_u32(c, e, path, "channel", NSIM_MAX_CHANNELS - 1, &pc->channel));
    NSIM_TRY(get_u32(c, e, path, "from", p->nranks - 1, &pc->from));
    NSIM_TRY(get_u32(c, e, path, "to", p->nranks - 1, &pc->to));
    NSIM_TRY(nsim_jget_string(c, e, path, "transport", 1, &tr));
    NSIM_TRY(nsim_jget_string(c, e, path, "path", 1, &pa));
    if ((k = parse_name(tr, transport_n, 4)) < 0)
        return nsim_jfail(c, path, "transport",
                          "expected P2P, NET, NVLS or SHM, got \"%s\"", tr);
    pc->transport = (nsim_transport)k;
    if ((k = parse_name(pa, path_n, NSIM_PATH__COUNT)) < 0)
        return nsim_jfail(c, path, "path", "unknown path type \"%s\"", pa);
    pc->path = (nsim_path_type)k;
    pc->send_nic = pc->recv_nic = UINT32_MAX;
    pc->send_lane = pc->recv_lane = UINT32_MAX;
    pc->nqps = 1;
    if (pc->transport == NSIM_TRANSPORT_NET) {
        NSIM_TRY(get_u32(c, e, path, "qps", 128, &pc->nqps));
        NSIM_TRY(nsim_jget_string(c, e, path, "send_nic", 1, &nic));
        if (nsim_topo_find(t, nic, &pc->send_nic) != NSIM_OK)
            return nsim_jfail(c, path, "send_nic", "no device \"%s\" in "
                              "topology \"%s\"", nic, nsim_topo_name(t));
        NSIM_TRY(nsim_jget_string(c, e, path, "recv_nic", 1, &nic));
        if (nsim_topo_find(t, nic, &pc->recv_nic) != NSIM_OK)
            return nsim_jfail(c, path, "recv_nic", "no device \"%s\" in "
                              "topology \"%s\"", nic, nsim_topo_name(t));
    }
    return NSIM_OK;
}

static int read_conns(const nsim_jctx *c, const cJSON *root, const nsim_topo *t,
                      nsim_plan *p)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "connections");
    if (!cJSON_IsArray(a))
        return nsim_jfail(c, "", "connections", "expected an array");
    p->nconns = (uint32_t)cJSON_GetArraySize(a);
    p->conns = calloc(p->nconns ? p->nconns : 1, sizeof *p->conns);
    if (p->conns == NULL)
        return NSIM_ERR(c->err, NSIM_ENOMEM, "%s: out of memory", c->file);
    uint32_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        char path[32];
        snprintf(path, sizeof path, "connections[%u]", i);
        NSIM_TRY(read_conn(c, e, path, t, p, &p->conns[i]));
        i++;
    }
    return NSIM_OK;
}

static int read_ops(const nsim_jctx *c, const cJSON *a, const char *path,
                    nsim_plan_lane *l)
{
    if (!cJSON_IsArray(a))
        return nsim_jfail(c, path, "ops", "expected an array of ops");
    l->nops = (uint32_t)cJSON_GetArraySize(a);
    l->ops = calloc(l->nops ? l->nops : 1, sizeof *l->ops);
    if (l->ops == NULL)
        return NSIM_ERR(c->err, NSIM_ENOMEM, "%s: out of memory", c->file);
    uint32_t k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        double v[6];
        int n = 0;
        const cJSON *f;
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 6)
            goto bad;
        cJSON_ArrayForEach(f, e)
        {
            if (!cJSON_IsNumber(f) || f->valuedouble < 0 ||
                f->valuedouble > 9007199254740992.0 ||
                f->valuedouble != (double)(uint64_t)f->valuedouble)
                goto bad;
            v[n++] = f->valuedouble;
        }
        if (v[0] > 15 || v[0] == 0 || v[1] > 65535 || v[2] > 255 ||
            v[3] > 4294967295.0)
            goto bad;
        l->ops[k] = (nsim_plan_op){(uint8_t)v[0], (uint8_t)v[2],
                                   (uint16_t)v[1], (uint32_t)v[3],
                                   (uint64_t)v[4], (uint64_t)v[5]};
        k++;
        continue;
    bad:
        return nsim_jfail(c, path, "ops",
                          "op %u: expected [prim 1..15, step, slice, chunk, "
                          "offset, bytes] of whole numbers", k);
    }
    return NSIM_OK;
}

static int read_lane(const nsim_jctx *c, const cJSON *e, const char *path,
                     nsim_plan *p, nsim_plan_lane *l)
{
    static const char *const keys[] = {"channel", "rank", "send_conn",
                                       "recv_conn", "recv_more", "send_more",
                                       "shares_sm", "per_step_conns", "ops",
                                       NULL};
    int64_t v;
    int b = 0;
    const cJSON *m;
    NSIM_TRY(nsim_jcheck_keys(c, e, path, keys));
    NSIM_TRY(get_u32(c, e, path, "channel", NSIM_MAX_CHANNELS - 1, &l->channel));
    NSIM_TRY(get_u32(c, e, path, "rank", p->nranks - 1, &l->rank));
    const char *ck[2] = {"send_conn", "recv_conn"};
    for (int i = 0; i < 2; i++) {
        v = 0;
        NSIM_TRY(nsim_jget_int(c, e, path, ck[i], 1, 0, UINT32_MAX, &v));
        if (v != UINT32_MAX && v >= p->nconns)
            return nsim_jfail(c, path, ck[i],
                              "expected a connection 0..%u or %u (none), got "
                              "%lld", p->nconns - 1, UINT32_MAX, (long long)v);
        *(i ? &l->recv_conn : &l->send_conn) = (uint32_t)v;
    }
    if ((m = cJSON_GetObjectItemCaseSensitive(e, "recv_more")) != NULL)
        NSIM_TRY(read_u32_array(c, m, path, "recv_more", l->recv_more,
                                NSIM_LANE_MORE_CONNS, p->nconns - 1,
                                &l->nrecv_more));
    if ((m = cJSON_GetObjectItemCaseSensitive(e, "send_more")) != NULL)
        NSIM_TRY(read_u32_array(c, m, path, "send_more", l->send_more,
                                NSIM_LANE_MORE_CONNS, p->nconns - 1,
                                &l->nsend_more));
    NSIM_TRY(nsim_jget_bool(c, e, path, "shares_sm", 0, &b));
    l->shares_sm = (uint32_t)b;
    b = 0;
    NSIM_TRY(nsim_jget_bool(c, e, path, "per_step_conns", 0, &b));
    l->per_step_conns = (uint32_t)b;
    return read_ops(c, cJSON_GetObjectItemCaseSensitive(e, "ops"), path, l);
}

static int read_lanes(const nsim_jctx *c, const cJSON *root, nsim_plan *p)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "lanes");
    if (!cJSON_IsArray(a))
        return nsim_jfail(c, "", "lanes", "expected an array");
    p->nlanes = (uint32_t)cJSON_GetArraySize(a);
    p->lanes = calloc(p->nlanes ? p->nlanes : 1, sizeof *p->lanes);
    if (p->lanes == NULL)
        return NSIM_ERR(c->err, NSIM_ENOMEM, "%s: out of memory", c->file);
    uint32_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
    {
        char path[32];
        snprintf(path, sizeof path, "lanes[%u]", i);
        NSIM_TRY(read_lane(c, e, path, p, &p->lanes[i]));
        nsim_plan_lane *l = &p->lanes[i];
        /* each connection has one sending and one receiving lane */
        if (l->send_conn != UINT32_MAX) {
            nsim_plan_conn *pc = &p->conns[l->send_conn];
            if (pc->send_lane != UINT32_MAX || pc->from != l->rank)
                return nsim_jfail(c, path, "send_conn",
                                  "connection %u is rank %u's to send on "
                                  "and has one sending lane", l->send_conn,
                                  pc->from);
            pc->send_lane = i;
        }
        if (l->recv_conn != UINT32_MAX) {
            nsim_plan_conn *pc = &p->conns[l->recv_conn];
            if (pc->recv_lane != UINT32_MAX || pc->to != l->rank)
                return nsim_jfail(c, path, "recv_conn",
                                  "connection %u is rank %u's to receive on "
                                  "and has one receiving lane", l->recv_conn,
                                  pc->to);
            pc->recv_lane = i;
        }
        i++;
    }
    return NSIM_OK;
}

int nsim_plan_load(const char *path, const nsim_topo *t, nsim_plan **out,
                   nsim_err *err)
{
    cJSON *root = NULL;
    nsim_jctx c = {path, err};
    NSIM_TRY(nsim_json_load(path, &root, err));
    nsim_plan *p = calloc(1, sizeof *p);
    if (p == NULL) {
        cJSON_Delete(root);
        return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
    }
    int rc = read_header(&c, root, t, p);
    if (rc == NSIM_OK)
        rc = read_channels(&c, root, p);
    if (rc == NSIM_OK)
        rc = read_conns(&c, root, t, p);
    if (rc == NSIM_OK)
        rc = read_lanes(&c, root, p);
    cJSON_Delete(root);
    if (rc != NSIM_OK) {
        nsim_plan_destroy(p);
        return rc;
    }
    p->req.qps_per_conn = p->nconns ? p->conns[0].nqps : 1;
    *out = p;
    return NSIM_OK;
}
