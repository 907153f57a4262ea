/* SPDX-License-Identifier: MIT
 *
 * scenario.c - the scenario file (see scenario.h).
 */
#include "scenario.h"

#include "sim/topo/nccl_graph.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/core/jread.h"
#include "sim/core/units.h"

static const char *const top_keys[] = {
    "format",   "version",   "name",       "comment",  "topology",
    "collective", "datatype", "op",        "min_bytes", "max_bytes",
    "step_factor", "step_bytes", "nchannels", "qps_per_connection",
    "buffsize", "protocol",  "algorithm",  "channel_mode", "env",
    "seed",     "params",    "root",      "faults",   "failover",
    "failover_channels", "gpus_per_thread", "fidelity", NULL};

static const char *const fault_keys[] = {"at", "kind", "channel", "from",
                                         "to", "qp", "nic", "a", "b", "bw",
                                         "probability", "comment", NULL};

uint32_t nsim_dtype_size(const char *name)
{
    static const struct {
        const char *n;
        uint32_t sz;
    } t[] = {{"int8", 1},    {"uint8", 1},   {"char", 1},   {"int32", 4},
             {"uint32", 4},  {"int", 4},     {"int64", 8},  {"uint64", 8},
             {"half", 2},    {"float16", 2}, {"bfloat16", 2}, {"float", 4},
             {"float32", 4}, {"double", 8},  {"float64", 8}, {"f8e4m3", 1},
             {"f8e5m2", 1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(name, t[i].n) == 0)
            return t[i].sz;
    return 0;
}

void nsim_scenario_destroy(nsim_scenario *s)
{
    if (s == NULL)
        return;
    nsim_ncclgraph_destroy(s->graph);
    free(s->faults);
    nsim_topo_destroy(s->topo);
    free(s);
}

static int load_topology(nsim_scenario *s, const nsim_jctx *c,
                         const cJSON *root)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "topology");
    if (t == NULL)
        return nsim_jfail(c, "", "topology", "missing (required)");
    if (cJSON_IsObject(t)) {
        char *text = cJSON_PrintUnformatted(t);
        if (text == NULL)
            return NSIM_ERR(c->err, NSIM_ENOMEM, "out of memory");
        char what[600];
        snprintf(what, sizeof what, "%s: topology", c->file);
        int rc = nsim_topo_parse(text, strlen(text), what, &s->topo, c->err);
        free(text);
        return rc;
    }
    if (!cJSON_IsString(t))
        return nsim_jfail(c, "", "topology",
                          "expected a file name or an inline topology");
    char path[1024], dir[512];
    snprintf(dir, sizeof dir, "%s", c->file);
    const char *name = t->valuestring;
    if (name[0] == '/')
        snprintf(path, sizeof path, "%s", name);
    else
        snprintf(path, sizeof path, "%s/%s", dirname(dir), name);
    return nsim_topo_load(path, &s->topo, c->err);
}

static int parse_u32_text(const char *text, uint32_t min, uint32_t max,
                          uint32_t *out)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (end == text || *end != '\0' || v < min || v > max)
        return NSIM_EINVAL;
    *out = (uint32_t)v;
    return NSIM_OK;
}

/* A chunk size: a multiple of 4 KiB from 4 KiB to 64 MiB. */
static int parse_chunk_text(const char *text, uint64_t *out, const char **why)
{
    uint64_t b = 0;
    int rc = nsim_units_parse_size(text, &b, why);
    if (rc != NSIM_OK)
        return rc;
    if (b < 4096 || b > (64u << 20) || b % 4096) {
        *why = "expected a multiple of 4 KiB from 4 KiB to 64 MiB";
        return NSIM_EINVAL;
    }
    *out = b;
    return NSIM_OK;
}

/* NCCL's variables for the knobs (nccl-internals 9). */
static int apply_env_var(nsim_scenario *s, const nsim_jctx *c,
                         const char *key, const char *v)
{
    const char *why = NULL;
    int rc = NSIM_OK;
    if (strcmp(key, "NCCL_MIN_NCHANNELS") == 0 ||
        strcmp(key, "NCCL_MIN_NRINGS") == 0)
        rc = parse_u32_text(v, 1, NSIM_MAX_CHANNELS, &s->min_channels);
    else if (strcmp(key, "NCCL_MAX_NCHANNELS") == 0 ||
             strcmp(key, "NCCL_MAX_NRINGS") == 0)
        rc = parse_u32_text(v, 1, NSIM_MAX_CHANNELS, &s->max_channels);
    else if (strcmp(key, "NCCL_IB_QPS_PER_CONNECTION") == 0)
        rc = parse_u32_text(v, 1, 128, &s->qps_per_conn);
    else if (strcmp(key, "NCCL_BUFFSIZE") == 0)
        rc = nsim_units_parse_size(v, &s->buffsize, &why);
    else if (strcmp(key, "NCCL_PROTO") == 0) {
        rc = nsim_proto_parse(v, &s->proto);
        s->proto_set = 1;
    } else if (strcmp(key, "NCCL_ALGO") == 0) {
        rc = nsim_algo_parse(v, &s->algo);
        s->algo_set = 1;
    } else if (strcmp(key, "NCCL_NCHANNELS_PER_NET_PEER") == 0)
        rc = parse_u32_text(v, 1, NSIM_MAX_CHANNELS, &s->net_peer_channels);
    else if (strcmp(key, "NCCL_CROSS_NIC") == 0) {
        uint32_t b = 0;
        rc = parse_u32_text(v, 0, 2, &b);
        s->cross_nic = (int32_t)b;
    } else if (strcmp(key, "NCCL_IB_SPLIT_DATA_ON_QPS") == 0) {
        uint32_t b = 0;
        rc = parse_u32_text(v, 0, 1, &b);
        s->net.split_data_on_qps = (int)b;
    } else if (strcmp(key, "NCCL_IB_ADAPTIVE_ROUTING") == 0) {
        uint32_t b = 0;
        rc = parse_u32_text(v, 0, 1, &b);
        s->net.adaptive_routing = (int)b;
    } else if (strcmp(key, "NCCL_IB_AR_THRESHOLD") == 0)
        rc = nsim_units_parse_size(v, &s->net.ar_threshold, &why);
    else if (strcmp(key, "NCCL_PAT_ENABLE") == 0)
        rc = parse_u32_text(v, 0, 2, &s->pat_enable);
    else if (strcmp(key, "NCCL_NVLS_ENABLE") == 0)
        rc = parse_u32_text(v, 0, 2, &s->nvls_enable);
    else if (strcmp(key, "NCCL_NVLS_NCHANNELS") == 0)
        rc = parse_u32_text(v, 1, 32, &s->nvls_nchannels);
    else if (strcmp(key, "NCCL_NVLS_CHUNKSIZE") == 0)
        rc = parse_chunk_text(v, &s->nvls_chunk, &why);
    else if (strcmp(key, "NCCL_NVLSTREE_MAX_CHUNKSIZE") == 0)
        rc = parse_chunk_text(v, &s->nvlstree_max_chunk, &why);
    else if (strcmp(key, "NCCL_NET_SHARED_COMMS") == 0) {
        uint32_t b = 0;
        rc = parse_u32_text(v, 0, 1, &b);
        s->channel_mode = b ? NSIM_CHANNEL_SHARED : NSIM_CHANNEL_DEDICATED;
    } else
        return nsim_jfail(c, "env", key,
                          "not a variable this ncclsim models (known: "
                          "NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_CROSS_NIC, "
                          "NCCL_IB_QPS_PER_CONNECTION, NCCL_BUFFSIZE, "
                          "NCCL_PROTO, NCCL_ALGO, NCCL_NET_SHARED_COMMS, "
                          "NCCL_IB_SPLIT_DATA_ON_QPS, NCCL_IB_ADAPTIVE_ROUTING, "
                          "NCCL_IB_AR_THRESHOLD, NCCL_NCHANNELS_PER_NET_PEER, "
                          "NCCL_PAT_ENABLE, NCCL_NVLS_ENABLE, "
                          "NCCL_NVLS_NCHANNELS, NCCL_NVLS_CHUNKSIZE, "
                          "NCCL_NVLSTREE_MAX_CHUNKSIZE)");
    if (rc != NSIM_OK)
        return nsim_jfail(c, "env", key, "invalid value \"%s\"%s%s", v,
                          why ? ": " : "", why ? why : "");
    return NSIM_OK;
}

static int read_env(nsim_scenario *s, const nsim_jctx *c, const cJSON *root)
{
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "env");
    if (env == NULL)
        return NSIM_OK;
    if (!cJSON_IsObject(env))
        return nsim_jfail(c, "", "env", "expected an object of NCCL_* "
                                        "variables");
    for (const cJSON *it = env->child; it != NULL; it = it->next) {
        char num[32];
        const char *v = NULL;
        if (cJSON_IsString(it))
            v = it->valuestring;
        else if (cJSON_IsNumber(it)) {
            snprintf(num, sizeof num, "%.17g", it->valuedouble);
            v = num;
        } else
            return nsim_jfail(c, "env", it->string,
                              "expected a string or a number");
        NSIM_TRY(apply_env_var(s, c, it->string, v));
    }
    return NSIM_OK;
}

static int read_enum(const nsim_jctx *c, const cJSON *root, const char *key,
                     int (*parse)(const char *, void *), void *out,
                     const char *expected)
{
    const char *v = NULL;
    NSIM_TRY(nsim_jget_string(c, root, "", key, 0, &v));
    if (v != NULL && parse(v, out) != NSIM_OK)
        return nsim_jfail(c, "", key, "expected %s, got \"%s\"", expected, v);
    return NSIM_OK;
}

static int parse_coll(const char *v, void *out) { return nsim_coll_parse(v, out); }
static int parse_proto(const char *v, void *out) { return nsim_proto_parse(v, out); }
static int parse_algo(const char *v, void *out) { return nsim_algo_parse(v, out); }
static int parse_fidelity(const char *v, void *out)
{
    return nsim_fidelity_parse(v, out);
}
static int parse_mode(const char *v, void *out)
{
    nsim_channel_mode *m = out;
    if (strcmp(v, "dedicated") == 0)
        *m = NSIM_CHANNEL_DEDICATED;
    else if (strcmp(v, "shared") == 0)
        *m = NSIM_CHANNEL_SHARED;
    else
        return NSIM_EINVAL;
    return NSIM_OK;
}

int nsim_scenario_set_dtype(nsim_scenario *s, const char *dt,
                            const char *what, nsim_err *err)
{
    if ((s->type_size = nsim_dtype_size(dt)) == 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: datatype: expected int8, uint8, int32, uint32, "
                        "int64, uint64, half, float, double or bfloat16, "
                        "got \"%s\"",
                        what, dt);
    snprintf(s->dtype, sizeof s->dtype, "%s", dt);
    return NSIM_OK;
}

int nsim_scenario_set_op(nsim_scenario *s, const char *op, const char *what,
                         nsim_err *err)
{
    if (strcmp(op, "sum") && strcmp(op, "prod") && strcmp(op, "max") &&
        strcmp(op, "min") && strcmp(op, "avg"))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: op: expected sum, prod, max, min or avg, got "
                        "\"%s\"",
                        what, op);
    snprintf(s->redop, sizeof s->redop, "%s", op);
    return NSIM_OK;
}

static int read_collective(nsim_scenario *s, const nsim_jctx *c,
                           const cJSON *root)
{
    const char *dt = "float", *op = "sum";
    int64_t r = 0;
    if (cJSON_GetObjectItemCaseSensitive(root, "collective") == NULL)
        return nsim_jfail(c, "", "collective", "missing (required)");
    NSIM_TRY(read_enum(c, root, "collective", parse_coll, &s->coll,
                       "allreduce, allgather, reducescatter, broadcast, "
                       "reduce, sendrecv or alltoall (or nccl-tests' "
                       "all_reduce_perf, ...)"));
    NSIM_TRY(nsim_jget_string(c, root, "", "datatype", 0, &dt));
    NSIM_TRY(nsim_scenario_set_dtype(s, dt, c->file, c->err));
    NSIM_TRY(nsim_jget_string(c, root, "", "op", 0, &op));
    NSIM_TRY(nsim_scenario_set_op(s, op, c->file, c->err));
    NSIM_TRY(nsim_jget_int(c, root, "", "root", 0, 0, 1 << 20, &r));
    s->root = (uint32_t)r;
    return NSIM_OK;
}

static int read_sizes(nsim_scenario *s, const nsim_jctx *c, const cJSON *root)
{
    NSIM_TRY(nsim_jget_size(c, root, "", "min_bytes", 1, &s->min_bytes));
    NSIM_TRY(nsim_jget_size(c, root, "", "max_bytes", 1, &s->max_bytes));
    s->step_factor = 2;
    NSIM_TRY(nsim_jget_double(c, root, "", "step_factor", 0, 1, 1e6,
                              &s->step_factor));
    NSIM_TRY(nsim_jget_size(c, root, "", "step_bytes", 0, &s->step_bytes));
    if (s->step_factor <= 1 && s->step_bytes == 0)
        return nsim_jfail(c, "", "step_bytes",
                          "expected > 0 when step_factor is 1");
    return nsim_scenario_check_sizes(s, c->err);
}

int nsim_scenario_check_sizes(const nsim_scenario *s, nsim_err *err)
{
    if (s->min_bytes == 0 || s->min_bytes > s->max_bytes)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: sizes: the range %llu..%llu bytes is empty",
                        s->source, (unsigned long long)s->min_bytes,
                        (unsigned long long)s->max_bytes);
    if (s->min_bytes % s->type_size != 0 || s->max_bytes % s->type_size != 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: sizes: %llu and %llu must be multiples of the "
                        "%s size (%u bytes)",
                        s->source, (unsigned long long)s->min_bytes,
                        (unsigned long long)s->max_bytes, s->dtype,
                        s->type_size);
    return NSIM_OK;
}

static int read_knobs(nsim_scenario *s, const nsim_jctx *c, const cJSON *root)
{
    int64_t v = 0;
    NSIM_TRY(nsim_jget_int(c, root, "", "nchannels", 0, 1, NSIM_MAX_CHANNELS,
                           &v));
    s->nchannels = (uint32_t)v;
    v = 1;
    NSIM_TRY(nsim_jget_int(c, root, "", "qps_per_connection", 0, 1, 128, &v));
    s->qps_per_conn = (uint32_t)v;
    s->buffsize = 4u << 20; /* NCCL_BUFFSIZE default, nccl 3.2 */
    NSIM_TRY(nsim_jget_size(c, root, "", "buffsize", 0, &s->buffsize));
    NSIM_TRY(read_enum(c, root, "protocol", parse_proto, &s->proto,
                       "Simple, LL or LL128"));
    NSIM_TRY(read_enum(c, root, "algorithm", parse_algo, &s->algo,
                       "Ring, Tree, NVLS, NVLSTree or PAT"));
    s->proto_set = cJSON_GetObjectItemCaseSensitive(root, "protocol") != NULL;
    s->algo_set = cJSON_GetObjectItemCaseSensitive(root, "algorithm") != NULL;
    NSIM_TRY(read_enum(c, root, "channel_mode", parse_mode, &s->channel_mode,
                       "dedicated or shared"));
    NSIM_TRY(read_enum(c, root, "fidelity", parse_fidelity, &s->fidelity,
                       "packet, flow or auto"));
    v = 1;
    NSIM_TRY(nsim_jget_int(c, root, "", "seed", 0, 0, INT64_MAX / 2, &v));
    s->seed = (uint64_t)v;
    v = 1;
    NSIM_TRY(nsim_jget_int(c, root, "", "gpus_per_thread", 0, 1, 1024, &v));
    s->gpus_per_thread = (uint32_t)v;
    NSIM_TRY(read_env(s, c, root));
    if (s->buffsize < 4096 || s->buffsize % 4096 != 0)
        return nsim_jfail(c, "", "buffsize",
                          "expected a positive multiple of 4096 bytes");
    if (s->min_channels && s->max_channels && s->min_channels > s->max_channels)
        return nsim_jfail(c, "env", "NCCL_MIN_NCHANNELS",
                          "greater than NCCL_MAX_NCHANNELS");
    return NSIM_OK;
}

static int read_params(nsim_scenario *s, const nsim_jctx *c, const cJSON *root)
{
    nsim_params_defaults(&s->params);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (p == NULL)
        return NSIM_OK;
    if (cJSON_IsString(p)) {
        char path[1024], dir[512];
        snprintf(dir, sizeof dir, "%s", c->file);
        if (p->valuestring[0] == '/')
            snprintf(path, sizeof path, "%s", p->valuestring);
        else
            snprintf(path, sizeof path, "%s/%s", dirname(dir), p->valuestring);
        return nsim_params_load(&s->params, path, c->err);
    }
    return nsim_params_apply(&s->params, p, c->file, c->err);
}

static int read_header(nsim_scenario *s, const nsim_jctx *c, const cJSON *root)
{
    const char *name = NULL;
    NSIM_TRY(nsim_jcheck_header(c, root, NSIM_SCENARIO_FORMAT,
                                NSIM_SCENARIO_VERSION, top_keys));
    NSIM_TRY(nsim_jget_string(c, root, "", "name", 0, &name));
    snprintf(s->name, sizeof s->name, "%s", name ? name : "");
    return NSIM_OK;
}

void nsim_scenario_resolve_channels(nsim_scenario *s)
{
    /* the second call (after the command line) sees the first's result */
    if ((s->nchannels != 0 && !s->channels_resolved) || s->min_channels ||
        s->max_channels)
        s->nchannels_given = 1;
    s->channels_resolved = 1;
    uint32_t n = s->nchannels ? s->nchannels
                              : nsim_plan_default_channels(s->topo);
    if (s->max_channels && n > s->max_channels)
        n = s->max_channels;
    if (s->min_channels && n < s->min_channels)
        n = s->min_channels;
    s->nchannels = n;
}

static int parse_policy(const char *v, nsim_failover *out)
{
    static const char *const names[] = {"rebind_qp", "rebind_nic", "fail"};
    for (int i = 0; i < 3; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = (nsim_failover)i;
            return NSIM_OK;
        }
    return NSIM_EINVAL;
}

static int fault_kind(const nsim_jctx *c, const char *p, const char *v,
                      nsim_fault_kind *out)
{
    static const char *const names[] = {"qp_error", "port_down", "link_down",
                                        "link_degraded", "loss"};
    for (int i = 0; i < 5; i++)
        if (strcmp(v, names[i]) == 0) {
            *out = (nsim_fault_kind)i;
            return NSIM_OK;
        }
    return nsim_jfail(c, p, "kind",
                      "expected qp_error, port_down, link_down, "
                      "link_degraded or loss, got \"%s\"",
                      v);
}

static int fault_device(const nsim_jctx *c, const nsim_topo *t, const cJSON *o,
                        const char *p, const char *key, nsim_dev_type want,
                        uint32_t *out)
{
    const char *name = NULL;
    NSIM_TRY(nsim_jget_string(c, o, p, key, 1, &name));
    if (nsim_topo_find(t, name, out) != NSIM_OK)
        return nsim_jfail(c, p, key, "unknown device \"%s\"", name);
    if (want != NSIM_DEV__COUNT && nsim_topo_device(t, *out)->type != want)
        return nsim_jfail(c, p, key, "\"%s\" is not a %s", name,
                          nsim_dev_type_name(want));
    return NSIM_OK;
}

/* The directed link a -> b, which must be a network link. */
static int fault_link(const nsim_jctx *c, const nsim_topo *t, const cJSON *o,
                      const char *p, uint32_t *out)
{
    uint32_t a, b;
    NSIM_TRY(fault_device(c, t, o, p, "a", NSIM_DEV__COUNT, &a));
    NSIM_TRY(fault_device(c, t, o, p, "b", NSIM_DEV__COUNT, &b));
    const uint32_t *lk = nsim_topo_out(t, a);
    for (uint32_t k = 0; k < nsim_topo_nout(t, a); k++) {
        const nsim_link *l = nsim_topo_link(t, lk[k]);
        if (l->dst != b)
            continue;
        if (l->type != NSIM_LINK_IB && l->type != NSIM_LINK_ROCE &&
            l->type != NSIM_LINK_ETH)
            return nsim_jfail(c, p, "a",
                              "%s -> %s is a %s link; link faults apply to "
                              "network links (ib, roce, eth)",
                              nsim_topo_device(t, a)->name,
                              nsim_topo_device(t, b)->name,
                              nsim_link_type_name(l->type));
        *out = lk[k];
        return NSIM_OK;
    }
    return nsim_jfail(c, p, "b", "no link between \"%s\" and \"%s\"",
                      nsim_topo_device(t, a)->name,
                      nsim_topo_device(t, b)->name);
}

static int read_fault(const nsim_jctx *c, const nsim_topo *t, const cJSON *o,
                      uint32_t i, nsim_fault *f)
{
    char p[32];
    const char *kind = NULL;
    int64_t v;
    snprintf(p, sizeof p, "faults[%u]", i);
    NSIM_TRY(nsim_jcheck_keys(c, o, p, fault_keys));
    *f = (nsim_fault){.channel = -1, .from = -1, .to = -1};
    NSIM_TRY(nsim_jget_time(c, o, p, "at", 1, &f->at_ps));
    NSIM_TRY(nsim_jget_string(c, o, p, "kind", 1, &kind));
    NSIM_TRY(fault_kind(c, p, kind, &f->kind));
    v = -1;
    NSIM_TRY(nsim_jget_int(c, o, p, "channel", 0, 0, NSIM_MAX_CHANNELS - 1, &v));
    f->channel = (int32_t)v;
    v = -1;
    NSIM_TRY(nsim_jget_int(c, o, p, "from", 0, 0, nsim_topo_nranks(t) - 1, &v));
    f->from = (int32_t)v;
    v = -1;
    NSIM_TRY(nsim_jget_int(c, o, p, "to", 0, 0, nsim_topo_nranks(t) - 1, &v));
    f->to = (int32_t)v;
    switch (f->kind) {
    case NSIM_FAULT_QP_ERROR:
        v = 0;
        NSIM_TRY(nsim_jget_int(c, o, p, "qp", 1, 0, 127, &v));
        f->qp = (uint32_t)v;
        return NSIM_OK;
    case NSIM_FAULT_PORT_DOWN:
        return fault_device(c, t, o, p, "nic", NSIM_DEV_NIC, &f->dev);
    case NSIM_FAULT_LOSS:
        NSIM_TRY(nsim_jget_double(c, o, p, "probability", 1, 0, 1, &f->prob));
        return fault_device(c, t, o, p, "nic", NSIM_DEV_NIC, &f->dev);
    case NSIM_FAULT_LINK_DEGRADED:
        NSIM_TRY(nsim_jget_bw(c, o, p, "bw", 1, &f->bw));
        return fault_link(c, t, o, p, &f->link);
    default:
        return fault_link(c, t, o, p, &f->link);
    }
}

static int read_faults(nsim_scenario *s, const nsim_jctx *c, const cJSON *root)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "faults"), *it;
    const char *pol = NULL;
    for (uint32_t i = 0; i < NSIM_MAX_CHANNELS; i++)
        s->failover_channel[i] = -1;
    s->failover_default = NSIM_FAILOVER_REBIND_QP;
    NSIM_TRY(nsim_jget_string(c, root, "", "failover", 0, &pol));
    s->failover_explicit = pol != NULL;
    if (pol != NULL && parse_policy(pol, &s->failover_default) != NSIM_OK)
        return nsim_jfail(c, "", "failover",
                          "expected rebind_qp, rebind_nic or fail, got \"%s\"",
                          pol);
    const cJSON *pc = cJSON_GetObjectItemCaseSensitive(root, "failover_channels");
    if (pc != NULL && !cJSON_IsObject(pc))
        return nsim_jfail(c, "", "failover_channels",
                          "expected an object {\"CHANNEL\": POLICY}");
    for (const cJSON *e = pc ? pc->child : NULL; e != NULL; e = e->next) {
        char *end;
        long ch = strtol(e->string, &end, 10);
        nsim_failover f;
        if (*end != '\0' || end == e->string || ch < 0 ||
            ch >= NSIM_MAX_CHANNELS)
            return nsim_jfail(c, "failover_channels", e->string,
                              "expected a channel number 0..%d",
                              NSIM_MAX_CHANNELS - 1);
        if (!cJSON_IsString(e) || parse_policy(e->valuestring, &f) != NSIM_OK)
            return nsim_jfail(c, "failover_channels", e->string,
                              "expected rebind_qp, rebind_nic or fail");
        s->failover_channel[ch] = (int32_t)f;
    }
    if (a == NULL)
        return NSIM_OK;
    if (!cJSON_IsArray(a))
        return nsim_jfail(c, "", "faults", "expected an array");
    s->nfaults = (uint32_t)cJSON_GetArraySize(a);
    s->faults = calloc(s->nfaults ? s->nfaults : 1, sizeof *s->faults);
    if (s->faults == NULL)
        return NSIM_ERR(c->err, NSIM_ENOMEM, "out of memory");
    uint32_t i = 0;
    cJSON_ArrayForEach(it, a)
    {
        NSIM_TRY(read_fault(c, s->topo, it, i, &s->faults[i]));
        i++;
    }
    return NSIM_OK;
}

/* Does every host have a second NIC (rebind_nic needs one)? */
static int hosts_have_two_nics(const nsim_topo *t, int32_t *bad_host)
{
    for (uint32_t r = 0; r < nsim_topo_nranks(t); r++) {
        int32_t h = nsim_topo_device(t, nsim_topo_rank_device(t, r))->host;
        uint32_t n = 0;
        for (uint32_t d = 0; d < nsim_topo_ndevices(t); d++)
            n += nsim_topo_device(t, d)->type == NSIM_DEV_NIC &&
                 nsim_topo_device(t, d)->host == h;
        if (n < 2) {
            *bad_host = h;
            return 0;
        }
    }
    return 1;
}

int nsim_scenario_fault_plan(const nsim_scenario *s, uint32_t nchannels,
                             nsim_fault_plan *out, nsim_err *err)
{
    int32_t bad_host = -1;
    out->faults = s->faults;
    out->nfaults = s->nfaults;
    for (uint32_t i = 0; i < s->nfaults; i++) {
        const nsim_fault *f = &s->faults[i];
        if (f->channel >= 0 && (uint32_t)f->channel >= nchannels)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: faults[%u].channel: %d, but the run has %u "
                            "channels",
                            s->source, i, f->channel, nchannels);
        if (f->kind == NSIM_FAULT_QP_ERROR && f->qp >= s->qps_per_conn)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: faults[%u].qp: %u, but connections have %u "
                            "QP(s) (0..%u)",
                            s->source, i, f->qp, s->qps_per_conn,
                            s->qps_per_conn - 1);
    }
    for (uint32_t c = 0; c < NSIM_MAX_CHANNELS; c++) {
        int32_t pc = c < nchannels ? s->failover_channel[c] : -1;
        nsim_failover p = pc >= 0 ? (nsim_failover)pc : s->failover_default;
        if (c >= nchannels) {
            out->policy[c] = p;
            continue;
        }
        /* rebind_qp needs a second QP: impossible when asked for
         * explicitly, or when faults may strike */
        int asked = pc >= 0 || s->nfaults > 0;
        if (p == NSIM_FAILOVER_REBIND_QP && s->qps_per_conn < 2 && asked &&
            (pc >= 0 || s->failover_explicit))
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: failover: rebind_qp on channel %u needs at "
                            "least 2 QPs per connection, the run has 1 "
                            "(set qps_per_connection, or choose rebind_nic "
                            "or fail)",
                            s->source, c);
        if (p == NSIM_FAILOVER_REBIND_NIC && !hosts_have_two_nics(s->topo, &bad_host))
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: failover: rebind_nic on channel %u, but host "
                            "%d has only one NIC",
                            s->source, c, bad_host);
        out->policy[c] = p;
    }
    return NSIM_OK;
}

int nsim_scenario_load(const char *path, nsim_scenario **out, nsim_err *err)
{
    cJSON *root = NULL;
    nsim_jctx c = {path, err};
    nsim_scenario *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    snprintf(s->source, sizeof s->source, "%s", path);
    s->net = (nsim_net_knobs)NSIM_NET_KNOBS_DEFAULT;
    s->cross_nic = -1;
    s->pat_enable = 2;
    s->nvls_enable = 2;
    int rc = nsim_json_load(path, &root, err);
    if (rc == NSIM_OK)
        rc = read_header(s, &c, root);
    if (rc == NSIM_OK)
        rc = read_collective(s, &c, root);
    if (rc == NSIM_OK)
        rc = read_sizes(s, &c, root);
    if (rc == NSIM_OK)
        rc = read_knobs(s, &c, root);
    if (rc == NSIM_OK)
        rc = read_params(s, &c, root);
    if (rc == NSIM_OK)
        rc = load_topology(s, &c, root);
    if (rc == NSIM_OK)
        rc = read_faults(s, &c, root);
    cJSON_Delete(root);
    if (rc != NSIM_OK) {
        nsim_scenario_destroy(s);
        return rc;
    }
    nsim_scenario_resolve_channels(s);
    s->net.shared_comms = s->channel_mode == NSIM_CHANNEL_SHARED;
    *out = s;
    return NSIM_OK;
}

nsim_plan_req nsim_scenario_request(const nsim_scenario *s, uint64_t bytes)
{
    nsim_plan_req r = {s->coll,      s->algo,         s->proto,
                       bytes,        s->type_size,    s->nchannels,
                       s->qps_per_conn, s->buffsize,  s->channel_mode,
                       s->root,      s->net_peer_channels, s->graph,
                       s->cross_nic >= 0, s->cross_nic >= 0 ? (uint32_t)s->cross_nic : 2,
                       s->nvls_nchannels, s->nvls_chunk, s->nvlstree_max_chunk,
                       !s->proto_set};
    return r;
}

void nsim_scenario_fit_request(const nsim_scenario *s, nsim_plan_req *r)
{
    /* NVLS runs its own channel count (nvlsChannels) unless one is set */
    if ((r->algo == NSIM_ALGO_NVLS || r->algo == NSIM_ALGO_NVLSTREE) &&
        !s->nchannels_given)
        r->nchannels = 0;
}
