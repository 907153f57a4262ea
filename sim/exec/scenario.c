/* SPDX-License-Identifier: MIT
 *
 * scenario.c - the scenario file (see scenario.h).
 */
#include "scenario.h"

#include "sim/topo/cluster.h"
#include "sim/topo/nccl_graph.h"
#include "sim/topo/presets.h"

#include <libgen.h>
#include <stdarg.h>
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
    "failover_channels", "gpus_per_thread", "fidelity", "fold", NULL};

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

/* "topology": {"cluster": {...}}: nodes of a preset joined by a fabric,
 * built in memory as `ncclsim topo build` builds them (16,384 DGX H100 in
 * about a second, where their JSON is 154 MB and 8 s to read). */
static int build_cluster(nsim_scenario *s, const nsim_jctx *c,
                         const cJSON *cl)
{
    static const char *const keys[] = {"nodes",            "node_preset",
                                       "fabric",           "radix",
                                       "oversubscription", "roce", NULL};
    const char *path = "topology.cluster", *preset = NULL, *fabric = NULL;
    int64_t nodes = 0, radix = 0;
    nsim_fabric_cfg cfg = {0};
    cfg.oversub = 1;
    if (!cJSON_IsObject(cl))
        return nsim_jfail(c, "topology", "cluster",
                          "expected an object: {\"nodes\": N, "
                          "\"node_preset\": P, ...}");
    NSIM_TRY(nsim_jcheck_keys(c, cl, path, keys));
    NSIM_TRY(nsim_jget_int(c, cl, path, "nodes", 1, 1, 65536, &nodes));
    NSIM_TRY(nsim_jget_string(c, cl, path, "node_preset", 1, &preset));
    if (nsim_preset_find(preset) == NULL) {
        char names[256] = "";
        for (const char *const *n = nsim_preset_names(); *n != NULL; n++)
            snprintf(names + strlen(names), sizeof names - strlen(names),
                     "%s%s", names[0] ? ", " : "", *n);
        return nsim_jfail(c, path, "node_preset", "expected one of %s, "
                          "got \"%s\"", names, preset);
    }
    NSIM_TRY(nsim_jget_string(c, cl, path, "fabric", 0, &fabric));
    if (fabric != NULL && nsim_fabric_parse(fabric, &cfg.kind) != 0)
        return nsim_jfail(c, path, "fabric", "expected none, switch, "
                          "rail-fat-tree or fat-tree, got \"%s\"", fabric);
    if (fabric == NULL)
        cfg.kind = nsim_cluster_default_fabric(preset, (uint32_t)nodes);
    NSIM_TRY(nsim_jget_int(c, cl, path, "radix", 0, 2, 65536, &radix));
    cfg.radix = (uint32_t)radix;
    NSIM_TRY(nsim_jget_double(c, cl, path, "oversubscription", 0, 1, 64,
                              &cfg.oversub));
    NSIM_TRY(nsim_jget_bool(c, cl, path, "roce", 0, &cfg.roce));
    nsim_err berr = {0};
    if (nsim_cluster_build(preset, (uint32_t)nodes, &cfg, &s->topo, &berr) !=
        NSIM_OK)
        return NSIM_ERR(c->err, berr.code, "%s: %s: %s", c->file, path,
                        berr.msg);
    return NSIM_OK;
}

static int load_topology(nsim_scenario *s, const nsim_jctx *c,
                         const cJSON *root)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "topology");
    if (t == NULL)
        return nsim_jfail(c, "", "topology", "missing (required)");
    if (cJSON_IsObject(t) &&
        cJSON_GetObjectItemCaseSensitive(t, "cluster") != NULL) {
        if (cJSON_GetArraySize(t) != 1)
            return nsim_jfail(c, "", "topology", "a cluster is given "
                              "alone: {\"cluster\": {...}}");
        return build_cluster(s, c, cJSON_GetObjectItemCaseSensitive(t,
                                                                   "cluster"));
    }
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

const char *const nsim_scenario_env_names[] = {
    "NCCL_MIN_NCHANNELS", "NCCL_MIN_NRINGS", "NCCL_MAX_NCHANNELS",
    "NCCL_MAX_NRINGS", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_BUFFSIZE",
    "NCCL_PROTO", "NCCL_ALGO", "NCCL_NCHANNELS_PER_NET_PEER",
    "NCCL_CROSS_NIC", "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_AR_THRESHOLD", "NCCL_PAT_ENABLE", "NCCL_NVLS_ENABLE",
    "NCCL_NVLS_NCHANNELS", "NCCL_NVLS_CHUNKSIZE", "NCCL_NVLSTREE_MAX_CHUNKSIZE",
    "NCCL_NET_SHARED_COMMS", NULL};

static int env_index(const char *key)
{
    for (int i = 0; nsim_scenario_env_names[i] != NULL; i++)
        if (strcmp(nsim_scenario_env_names[i], key) == 0)
            return i;
    return -1;
}

static void mark_env(nsim_scenario *s, const char *key)
{
    int i = env_index(key);
    if (i >= 0)
        s->env_set |= 1u << i;
}

/* A list in NCCL's syntax over n names: *allowed gets the bits. */
static int parse_choice_list(const char *v, int (*parse1)(const char *, int *),
                             uint32_t n, uint32_t *allowed, char *bad,
                             size_t badcap)
{
    int exclude = v[0] == '^';
    uint32_t m = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v + exclude);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        size_t l = strlen(tok);
        while (l > 0 && tok[l - 1] == ' ')
            tok[--l] = '\0';
        int i = -1;
        if (parse1(tok, &i) != NSIM_OK) {
            snprintf(bad, badcap, "%s", tok);
            return NSIM_EINVAL;
        }
        if (i >= 0) /* -1: a name NCCL knows that is never available */
            m |= 1u << i;
    }
    uint32_t all = (1u << n) - 1;
    *allowed = exclude ? all & ~m : m;
    return NSIM_OK;
}

static int parse_algo1(const char *t, int *i)
{
    nsim_algo a;
    if (strcasecmp(t, "CollnetDirect") == 0 ||
        strcasecmp(t, "CollnetChain") == 0) {
        *i = -1; /* no CollNet (SHARP) network is modelled */
        return NSIM_OK;
    }
    if (nsim_algo_parse(t, &a) != NSIM_OK)
        return NSIM_EINVAL;
    *i = (int)a;
    return NSIM_OK;
}

static int parse_proto1(const char *t, int *i)
{
    nsim_proto p;
    if (nsim_proto_parse(t, &p) != NSIM_OK)
        return NSIM_EINVAL;
    *i = (int)p;
    return NSIM_OK;
}

static int popcount32(uint32_t v)
{
    int n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

static int lowest_bit(uint32_t v)
{
    int i = 0;
    while (!(v >> i & 1u))
        i++;
    return i;
}

int nsim_scenario_set_algo(nsim_scenario *s, const char *v, const char *what,
                           nsim_err *err)
{
    uint32_t allowed = 0;
    char bad[64] = "";
    if (parse_choice_list(v, parse_algo1, NSIM_ALGO__COUNT, &allowed, bad,
                          sizeof bad) != NSIM_OK || allowed == 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: algorithm: expected Ring, Tree, NVLS, NVLSTree "
                        "or PAT, a comma list of them, or ^ and the ones to "
                        "exclude (as NCCL_ALGO), got \"%s\"%s%s%s",
                        what, v, bad[0] ? " (\"" : " (none left)",
                        bad[0] ? bad : "", bad[0] ? "\")" : "");
    s->algo_off = 0;
    s->algo_list[0] = '\0';
    s->algo_set = popcount32(allowed) == 1;
    if (s->algo_set) {
        s->algo = (nsim_algo)lowest_bit(allowed);
    } else {
        s->algo_off = ((1u << NSIM_ALGO__COUNT) - 1) & ~allowed;
        snprintf(s->algo_list, sizeof s->algo_list, "%s", v);
        snprintf(s->algo_desc, sizeof s->algo_desc,
                 "auto (NCCL's tuner) of NCCL_ALGO=%s", v);
    }
    return NSIM_OK;
}

int nsim_scenario_set_proto(nsim_scenario *s, const char *v, const char *what,
                            nsim_err *err)
{
    uint32_t allowed = 0;
    char bad[64] = "";
    if (parse_choice_list(v, parse_proto1, NSIM_PROTO__COUNT, &allowed, bad,
                          sizeof bad) != NSIM_OK || allowed == 0)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: protocol: expected Simple, LL or LL128, a comma "
                        "list of them, or ^ and the ones to exclude (as "
                        "NCCL_PROTO), got \"%s\"%s%s%s",
                        what, v, bad[0] ? " (\"" : " (none left)",
                        bad[0] ? bad : "", bad[0] ? "\")" : "");
    s->proto_off = 0;
    s->proto_list[0] = '\0';
    s->proto_set = popcount32(allowed) == 1;
    if (s->proto_set) {
        s->proto = (nsim_proto)lowest_bit(allowed);
    } else {
        s->proto_off = ((1u << NSIM_PROTO__COUNT) - 1) & ~allowed;
        snprintf(s->proto_list, sizeof s->proto_list, "%s", v);
        snprintf(s->proto_desc, sizeof s->proto_desc,
                 "auto (NCCL's tuner) of NCCL_PROTO=%s", v);
    }
    return NSIM_OK;
}

int nsim_scenario_check_dtype(const nsim_scenario *s, nsim_err *err)
{
    if (strncmp(s->dtype, "f8", 2) != 0)
        return NSIM_OK;
    for (uint32_t r = 0; r < nsim_topo_nranks(s->topo); r++) {
        const nsim_device *d =
            nsim_topo_device(s->topo, nsim_topo_rank_device(s->topo, r));
        if (d->sm < 90)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: datatype: %s needs sm >= 90 GPUs (NCCL "
                            "has fp8 from Hopper); rank %u is sm%u",
                            s->source, s->dtype, r, d->sm);
    }
    return NSIM_OK;
}

/* NCCL's variables for the knobs (nccl-internals 9). */
int nsim_scenario_set_env(nsim_scenario *s, const char *key, const char *v,
                          const char *what, nsim_err *err)
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
    else if (strcmp(key, "NCCL_BUFFSIZE") == 0) {
        rc = nsim_units_parse_size(v, &s->buffsize, &why);
        if (rc == NSIM_OK && (s->buffsize < 4096 || s->buffsize % 4096 ||
                              s->buffsize > (1ull << 30))) {
            why = "expected a multiple of 4096 bytes from 4 KiB to 1 GiB";
            rc = NSIM_EINVAL;
        }
    } else if (strcmp(key, "NCCL_PROTO") == 0 ||
               strcmp(key, "NCCL_ALGO") == 0) {
        char w[600];
        snprintf(w, sizeof w, "%s: env.%s", what, key);
        return key[5] == 'P' ? nsim_scenario_set_proto(s, v, w, err)
                             : nsim_scenario_set_algo(s, v, w, err);
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
        s->net.shared_comms = (int)b;
    } else
        return NSIM_ENOENT;
    if (rc != NSIM_OK)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: env.%s: invalid value \"%s\"%s%s",
                        what, key, v, why ? ": " : "", why ? why : "");
    return NSIM_OK;
}

static int apply_env_var(nsim_scenario *s, const nsim_jctx *c,
                         const char *key, const char *v)
{
    int rc = nsim_scenario_set_env(s, key, v, c->file, c->err);
    if (rc == NSIM_ENOENT) {
        char known[768] = "";
        size_t n = 0;
        for (int i = 0; nsim_scenario_env_names[i] != NULL && n < sizeof known;
             i++)
            n += (size_t)snprintf(known + n, sizeof known - n, "%s%s",
                                  i ? ", " : "", nsim_scenario_env_names[i]);
        return nsim_jfail(c, "env", key,
                          "not a variable this ncclsim models (known: %s)",
                          known);
    }
    if (rc == NSIM_OK)
        mark_env(s, key);
    return rc;
}

static size_t note_add(char *note, size_t cap, size_t n, const char *fmt, ...)
    NSIM_PRINTF(4, 5);

static size_t note_add(char *note, size_t cap, size_t n, const char *fmt, ...)
{
    if (n >= cap)
        return n;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(note + n, cap - n, fmt, ap);
    va_end(ap);
    return w < 0 ? n : n + (size_t)w;
}

int nsim_scenario_apply_shell_env(nsim_scenario *s, char *const *envp,
                                  char *note, size_t cap, nsim_err *err)
{
    char took[1024] = "", ign[1024] = "";
    size_t nt = 0, ni = 0;
    note[0] = '\0';
    for (char *const *e = envp; e != NULL && *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "NCCL_", 5) != 0 || eq == NULL)
            continue;
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
        int i = env_index(key);
        if (i >= 0 && (s->env_set >> i & 1u)) {
            ni = note_add(ign, sizeof ign, ni, "%s%s (the scenario sets it)",
                          ni ? ", " : "", key);
            continue;
        }
        int rc = nsim_scenario_set_env(s, key, eq + 1, "the shell", err);
        if (rc == NSIM_ENOENT)
            ni = note_add(ign, sizeof ign, ni, "%s%s (not modelled)",
                          ni ? ", " : "", key);
        else if (rc != NSIM_OK)
            return rc;
        else
            nt = note_add(took, sizeof took, nt, "%s%s", nt ? " " : "", *e);
    }
    if (nt || ni)
        snprintf(note, cap, "shell NCCL_* variables: %s%s%s%s%s",
                 nt ? "took effect: " : "", took, nt && ni ? "; " : "",
                 ni ? "ignored: " : "", ign);
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
static int parse_fidelity(const char *v, void *out)
{
    return nsim_fidelity_parse(v, out);
}
static int parse_fold(const char *v, void *out)
{
    return nsim_fold_mode_parse(v, out);
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
    int has_factor = cJSON_GetObjectItemCaseSensitive(root, "step_factor") != NULL;
    int has_bytes = cJSON_GetObjectItemCaseSensitive(root, "step_bytes") != NULL;
    NSIM_TRY(nsim_jget_size(c, root, "", "min_bytes", 1, &s->min_bytes));
    NSIM_TRY(nsim_jget_size(c, root, "", "max_bytes", 1, &s->max_bytes));
    /* nccl-tests: a fixed step (-i) or a factor (-f, default 2) */
    s->step_factor = has_bytes && !has_factor ? 1 : 2;
    NSIM_TRY(nsim_jget_double(c, root, "", "step_factor", 0, 1, 1e6,
                              &s->step_factor));
    NSIM_TRY(nsim_jget_size(c, root, "", "step_bytes", 0, &s->step_bytes));
    if (has_bytes && s->step_bytes == 0)
        return nsim_jfail(c, "", "step_bytes",
                          "expected a step > 0 bytes, got 0");
    if (has_bytes && s->step_factor > 1)
        return nsim_jfail(c, "", "step_bytes",
                          "give step_bytes (a fixed step) or a step_factor "
                          "above 1, not both");
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
    if (s->max_bytes > NSIM_SCENARIO_MAX_BYTES)
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: max_bytes: %llu is over the limit of 1 TiB per "
                        "rank buffer",
                        s->source, (unsigned long long)s->max_bytes);
    if (!(s->step_factor >= 1 && s->step_factor <= 1e6))
        return NSIM_ERR(err, NSIM_ECONFIG,
                        "%s: step_factor: expected 1 .. 1e6, got %g",
                        s->source, s->step_factor);
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
    const char *pr = NULL, *al = NULL;
    NSIM_TRY(nsim_jget_string(c, root, "", "protocol", 0, &pr));
    if (pr != NULL)
        NSIM_TRY(nsim_scenario_set_proto(s, pr, c->file, c->err));
    NSIM_TRY(nsim_jget_string(c, root, "", "algorithm", 0, &al));
    if (al != NULL)
        NSIM_TRY(nsim_scenario_set_algo(s, al, c->file, c->err));
    /* the fields are the scenario's NCCL_* knobs too (the shell's yield) */
    static const struct {
        const char *field, *env[2];
    } knob_env[] = {
        {"protocol", {"NCCL_PROTO", NULL}},
        {"algorithm", {"NCCL_ALGO", NULL}},
        {"nchannels", {"NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"}},
        {"qps_per_connection", {"NCCL_IB_QPS_PER_CONNECTION", NULL}},
        {"buffsize", {"NCCL_BUFFSIZE", NULL}},
        {"channel_mode", {"NCCL_NET_SHARED_COMMS", NULL}},
    };
    for (size_t k = 0; k < sizeof knob_env / sizeof knob_env[0]; k++)
        if (cJSON_GetObjectItemCaseSensitive(root, knob_env[k].field))
            for (int e = 0; e < 2 && knob_env[k].env[e]; e++)
                mark_env(s, knob_env[k].env[e]);
    NSIM_TRY(read_enum(c, root, "channel_mode", parse_mode, &s->channel_mode,
                       "dedicated or shared"));
    NSIM_TRY(read_enum(c, root, "fidelity", parse_fidelity, &s->fidelity,
                       "packet, flow or auto"));
    NSIM_TRY(read_enum(c, root, "fold", parse_fold, &s->fold,
                       "auto, on or off"));
    v = 1;
    NSIM_TRY(nsim_jget_int(c, root, "", "seed", 0, 0, INT64_MAX / 2, &v));
    s->seed = (uint64_t)v;
    v = 1;
    NSIM_TRY(nsim_jget_int(c, root, "", "gpus_per_thread", 0, 1, 1024, &v));
    s->gpus_per_thread = (uint32_t)v;
    NSIM_TRY(read_env(s, c, root));
    if (s->buffsize < 4096 || s->buffsize % 4096 != 0 ||
        s->buffsize > (1ull << 30))
        return nsim_jfail(c, "", "buffsize",
                          "expected a multiple of 4096 bytes from 4 KiB to "
                          "1 GiB (NCCL_BUFFSIZE), got %llu",
                          (unsigned long long)s->buffsize);
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

static const char *const fault_kind_names[] = {
    "qp_error", "port_down", "link_down", "link_degraded", "loss"};

static const char *fault_kind_name(nsim_fault_kind k)
{
    return fault_kind_names[k];
}

static int fault_kind(const nsim_jctx *c, const char *p, const char *v,
                      nsim_fault_kind *out)
{
    const char *const *names = fault_kind_names;
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
    s->fidelity = NSIM_FIDELITY_AUTO;
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

/* --- one knob by name (sweep, and anything else that varies a loaded
 * scenario): the same readers and checks as the file's fields --- */

static int is_param_name(const char *name)
{
    for (const nsim_param_info *pi = nsim_param_table; pi->name; pi++)
        if (strcmp(pi->name, name) == 0)
            return 1;
    return 0;
}

/* The value as the scenario file would hold it: a number when all of it
 * reads as one, else a string. */
static cJSON *knob_object(const char *name, const char *value)
{
    char *end;
    cJSON *o = cJSON_CreateObject();
    double d = strtod(value, &end);
    cJSON *v = (end != value && *end == '\0') ? cJSON_CreateNumber(d)
                                               : cJSON_CreateString(value);
    if (o == NULL || v == NULL || !cJSON_AddItemToObject(o, name, v)) {
        cJSON_Delete(o);
        cJSON_Delete(v);
        return NULL;
    }
    return o;
}

static int set_scenario_key(nsim_scenario *s, const nsim_jctx *c,
                            const cJSON *o, const char *name,
                            const char *value)
{
    int64_t v = 0;
    if (strcmp(name, "nchannels") == 0) {
        NSIM_TRY(nsim_jget_int(c, o, "", name, 1, 1, NSIM_MAX_CHANNELS, &v));
        s->nchannels = (uint32_t)v;
        s->min_channels = s->max_channels = 0;
        s->nchannels_given = s->channels_resolved = 1;
    } else if (strcmp(name, "qps_per_connection") == 0) {
        NSIM_TRY(nsim_jget_int(c, o, "", name, 1, 1, 128, &v));
        s->qps_per_conn = (uint32_t)v;
    } else if (strcmp(name, "buffsize") == 0) {
        NSIM_TRY(nsim_jget_size(c, o, "", name, 1, &s->buffsize));
        if (s->buffsize < 4096 || s->buffsize % 4096 != 0 ||
            s->buffsize > (1ull << 30))
            return nsim_jfail(c, "", name,
                              "expected a multiple of 4096 bytes from 4 KiB "
                              "to 1 GiB (NCCL_BUFFSIZE), got %llu",
                              (unsigned long long)s->buffsize);
    } else if (strcmp(name, "protocol") == 0) {
        s->proto_set = 0;
        s->proto_off = 0;
        s->proto_list[0] = '\0';
        if (strcasecmp(value, "auto") != 0)
            return nsim_scenario_set_proto(s, value, c->file, c->err);
    } else if (strcmp(name, "algorithm") == 0) {
        s->algo_set = 0;
        s->algo_off = 0;
        s->algo_list[0] = '\0';
        if (strcasecmp(value, "auto") != 0)
            return nsim_scenario_set_algo(s, value, c->file, c->err);
    } else if (strcmp(name, "channel_mode") == 0) {
        NSIM_TRY(read_enum(c, o, name, parse_mode, &s->channel_mode,
                           "dedicated or shared"));
    } else if (strcmp(name, "collective") == 0) {
        NSIM_TRY(read_enum(c, o, name, parse_coll, &s->coll,
                           "a collective (allreduce, ...) or a nccl-tests "
                           "binary name"));
    } else if (strcmp(name, "seed") == 0) {
        NSIM_TRY(nsim_jget_int(c, o, "", name, 1, 0, INT64_MAX / 2, &v));
        s->seed = (uint64_t)v;
    } else if (strcmp(name, "gpus_per_thread") == 0) {
        NSIM_TRY(nsim_jget_int(c, o, "", name, 1, 1, 1024, &v));
        s->gpus_per_thread = (uint32_t)v;
    } else if (strcmp(name, "root") == 0) {
        NSIM_TRY(nsim_jget_int(c, o, "", name, 1, 0,
                               nsim_topo_nranks(s->topo) - 1, &v));
        s->root = (uint32_t)v;
    } else if (strcmp(name, "fidelity") == 0) {
        NSIM_TRY(read_enum(c, o, name, parse_fidelity, &s->fidelity,
                           "packet, flow or auto"));
    } else if (strcmp(name, "fold") == 0) {
        NSIM_TRY(read_enum(c, o, name, parse_fold, &s->fold,
                           "auto, on or off"));
    } else if (strcmp(name, "datatype") == 0) {
        return nsim_scenario_set_dtype(s, value, c->file, c->err);
    } else if (strcmp(name, "op") == 0) {
        return nsim_scenario_set_op(s, value, c->file, c->err);
    } else {
        return nsim_jfail(c, "", name,
                          "not a knob (expected a scenario field: nchannels, "
                          "qps_per_connection, buffsize, protocol, algorithm, "
                          "channel_mode, collective, datatype, op, root, seed, "
                          "gpus_per_thread, fidelity, fold; a fault's "
                          "field, faults[K].at, ...; an NCCL_* variable; or "
                          "a model parameter of `ncclsim params`)");
    }
    return NSIM_OK;
}

/* A fault's field as a knob, "faults[K].FIELD" (a sweep over where or
 * when a fault strikes, or how hard): at, channel, from, to, qp, nic, bw
 * or probability, read as the file's reader reads it, for a field the
 * fault's kind has; channel, from and to also "any". */
static int set_fault_knob(nsim_scenario *s, const nsim_jctx *c,
                          const char *name, const char *value)
{
    static const char *const fields[] = {"at", "channel", "from", "to", "qp",
                                         "nic", "bw", "probability", NULL};
    char p[32], *end;
    unsigned long k = strtoul(name + 7, &end, 10);
    const char *field = end[0] == ']' && end[1] == '.' ? end + 2 : NULL;
    int known = 0;
    for (int i = 0; field != NULL && fields[i] != NULL; i++)
        known |= strcmp(field, fields[i]) == 0;
    if (end == name + 7 || !known)
        return nsim_jfail(c, "", name,
                          "not a knob (a fault's is faults[K].FIELD, FIELD "
                          "one of at, channel, from, to, qp, nic, bw, "
                          "probability)");
    if (k >= s->nfaults)
        return nsim_jfail(c, "", name, "the scenario has %u fault(s)",
                          s->nfaults);
    nsim_fault *f = &s->faults[k];
    snprintf(p, sizeof p, "faults[%lu]", k);
    int has = strcmp(field, "at") == 0 || strcmp(field, "channel") == 0 ||
              strcmp(field, "from") == 0 || strcmp(field, "to") == 0 ||
              (strcmp(field, "qp") == 0 && f->kind == NSIM_FAULT_QP_ERROR) ||
              (strcmp(field, "nic") == 0 &&
               (f->kind == NSIM_FAULT_PORT_DOWN ||
                f->kind == NSIM_FAULT_LOSS)) ||
              (strcmp(field, "bw") == 0 &&
               f->kind == NSIM_FAULT_LINK_DEGRADED) ||
              (strcmp(field, "probability") == 0 &&
               f->kind == NSIM_FAULT_LOSS);
    if (!has)
        return nsim_jfail(c, p, field, "a %s fault has no %s",
                          fault_kind_name(f->kind), field);
    cJSON *o = knob_object(field, value);
    if (o == NULL)
        return NSIM_ERR(c->err, NSIM_ENOMEM, "out of memory");
    int64_t v = -1;
    int rc = NSIM_OK;
    uint32_t n = nsim_topo_nranks(s->topo);
    if (strcmp(field, "at") == 0)
        rc = nsim_jget_time(c, o, p, field, 1, &f->at_ps);
    else if (strcmp(field, "nic") == 0)
        rc = fault_device(c, s->topo, o, p, field, NSIM_DEV_NIC, &f->dev);
    else if (strcmp(field, "bw") == 0)
        rc = nsim_jget_bw(c, o, p, field, 1, &f->bw);
    else if (strcmp(field, "probability") == 0)
        rc = nsim_jget_double(c, o, p, field, 1, 0, 1, &f->prob);
    else if (strcmp(field, "qp") != 0 && strcmp(value, "any") == 0)
        *(strcmp(field, "channel") == 0 ? &f->channel
          : strcmp(field, "from") == 0  ? &f->from
                                        : &f->to) = -1;
    else if ((rc = nsim_jget_int(c, o, p, field, 1, 0,
                                 strcmp(field, "channel") == 0
                                     ? NSIM_MAX_CHANNELS - 1
                                 : strcmp(field, "qp") == 0 ? 127
                                                            : n - 1,
                                 &v)) == NSIM_OK) {
        if (strcmp(field, "channel") == 0)
            f->channel = (int32_t)v;
        else if (strcmp(field, "from") == 0)
            f->from = (int32_t)v;
        else if (strcmp(field, "to") == 0)
            f->to = (int32_t)v;
        else
            f->qp = (uint32_t)v;
    }
    cJSON_Delete(o);
    return rc;
}

int nsim_scenario_set_knob(nsim_scenario *s, const char *name,
                           const char *value, const char *what,
                           nsim_err *err)
{
    nsim_jctx c = {what, err};
    int rc;
    if (strncmp(name, "env.", 4) == 0)
        name += 4;
    if (strncmp(name, "params.", 7) == 0)
        name += 7;
    if (strncmp(name, "NCCL_", 5) == 0) {
        rc = apply_env_var(s, &c, name, value);
    } else if (strncmp(name, "faults[", 7) == 0) {
        rc = set_fault_knob(s, &c, name, value);
    } else {
        cJSON *o = knob_object(name, value);
        if (o == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
        rc = is_param_name(name) ? nsim_params_apply(&s->params, o, what, err)
                                 : set_scenario_key(s, &c, o, name, value);
        cJSON_Delete(o);
    }
    if (rc != NSIM_OK)
        return rc;
    if (s->min_channels && s->max_channels && s->min_channels > s->max_channels)
        return nsim_jfail(&c, "env", "NCCL_MIN_NCHANNELS",
                          "greater than NCCL_MAX_NCHANNELS");
    s->net.shared_comms = s->channel_mode == NSIM_CHANNEL_SHARED;
    nsim_scenario_resolve_channels(s);
    return NSIM_OK;
}
