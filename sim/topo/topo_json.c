/* SPDX-License-Identifier: MIT
 *
 * topo_json.c - the JSON topology format "ncclsim-topology" version 1:
 * reader (every field checked, errors as "FILE: PATH: expected ...") and
 * writer (load, write, load gives the same topology). The format is
 * documented in README.md, section "Topology format".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/jread.h"
#include "../core/units.h"
#include "topo.h"

static const char *const top_keys[] = {"format", "version", "name",
                                       "comment", "devices", "links", NULL};
static const char *const dev_keys[] = {
    "id",   "type",  "host", "rank",   "gen",        "sm",   "nvls", "p2p",
    "ports", "speed", "mtu", "gdr",    "link_layer", "rail", "radix",
    "latency", "comment", NULL};
static const char *const link_keys[] = {"a",     "b",       "type",
                                        "bw",    "count",   "latency",
                                        "comment", NULL};

static int read_gpu(const nsim_jctx *c, const cJSON *o, const char *p,
                    nsim_device *d)
{
    const char *gen = NULL;
    int64_t v;
    NSIM_TRY(nsim_jget_string(c, o, p, "gen", 1, &gen));
    snprintf(d->gen, sizeof d->gen, "%s", gen);
    v = 0;
    NSIM_TRY(nsim_jget_int(c, o, p, "sm", 0, 30, 200, &v));
    d->sm = (uint32_t)v;
    if (d->sm == 0 && nsim_gpu_gen_sm(gen) == 0)
        return nsim_jfail(c, p, "gen",
                          "unknown GPU generation \"%s\" (known: v100, a100, "
                          "a10g, l40s, h100, h200, h20, gh200, b200, gb200, "
                          "b300, ...; or give \"sm\")",
                          gen);
    v = -1;
    NSIM_TRY(nsim_jget_int(c, o, p, "rank", 0, 0, 1 << 24, &v));
    d->rank = (int32_t)v;
    int p2p = 1;
    NSIM_TRY(nsim_jget_bool(c, o, p, "p2p", 0, &p2p));
    d->no_p2p = !p2p;
    return NSIM_OK;
}

static int read_nic(const nsim_jctx *c, const cJSON *o, const char *p,
                    nsim_device *d)
{
    int64_t v = 1;
    const char *s = NULL;
    NSIM_TRY(nsim_jget_int(c, o, p, "ports", 0, 1, 8, &v));
    d->nic_ports = (uint32_t)v;
    NSIM_TRY(nsim_jget_bw(c, o, p, "speed", 1, &d->port_bw));
    v = 4096;
    NSIM_TRY(nsim_jget_int(c, o, p, "mtu", 0, 256, 4096, &v));
    if (v != 256 && v != 512 && v != 1024 && v != 2048 && v != 4096)
        return nsim_jfail(c, p, "mtu",
                          "expected one of 256, 512, 1024, 2048, 4096 "
                          "(the IB path MTUs), got %lld",
                          (long long)v);
    d->mtu_bytes = (uint32_t)v;
    int gdr = 1;
    NSIM_TRY(nsim_jget_bool(c, o, p, "gdr", 0, &gdr));
    d->gdr = (uint32_t)gdr;
    NSIM_TRY(nsim_jget_string(c, o, p, "link_layer", 0, &s));
    if (s != NULL && strcmp(s, "ib") != 0 && strcmp(s, "roce") != 0)
        return nsim_jfail(c, p, "link_layer", "expected \"ib\" or \"roce\"");
    d->link_layer = s != NULL && strcmp(s, "roce") == 0 ? NSIM_LL_ROCE
                                                        : NSIM_LL_IB;
    const char *g = NULL;
    NSIM_TRY(nsim_jget_string(c, o, p, "gen", 0, &g));
    if (g != NULL)
        snprintf(d->gen, sizeof d->gen, "%s", g);
    v = -1;
    NSIM_TRY(nsim_jget_int(c, o, p, "rail", 0, 0, 1 << 20, &v));
    d->rail = (int32_t)v;
    return NSIM_OK;
}

/* Rejects fields that belong to another device type. */
static int check_type_fields(const nsim_jctx *c, const cJSON *o,
                             const char *p, nsim_dev_type t)
{
    static const struct {
        const char *key;
        uint32_t types; /* bit per nsim_dev_type */
    } owner[] = {
        {"rank", 1u << NSIM_DEV_GPU},       {"sm", 1u << NSIM_DEV_GPU},
        {"p2p", 1u << NSIM_DEV_GPU},
        {"nvls", 1u << NSIM_DEV_NVSWITCH},  {"ports", 1u << NSIM_DEV_NIC},
        {"speed", 1u << NSIM_DEV_NIC},      {"mtu", 1u << NSIM_DEV_NIC},
        {"gdr", 1u << NSIM_DEV_NIC},        {"link_layer", 1u << NSIM_DEV_NIC},
        {"rail", 1u << NSIM_DEV_NIC},       {"radix", 1u << NSIM_DEV_SWITCH},
        {"gen", (1u << NSIM_DEV_GPU) | (1u << NSIM_DEV_NIC)},
        {"latency", (1u << NSIM_DEV_SWITCH) | (1u << NSIM_DEV_NVSWITCH)},
    };
    for (size_t i = 0; i < sizeof owner / sizeof owner[0]; i++)
        if (cJSON_GetObjectItemCaseSensitive(o, owner[i].key) != NULL &&
            !(owner[i].types & (1u << t)))
            return nsim_jfail(c, p, owner[i].key,
                              "not a field of a %s device",
                              nsim_dev_type_name(t));
    return NSIM_OK;
}

static int read_device(const nsim_jctx *c, const cJSON *o, uint32_t i,
                       nsim_device *d)
{
    char p[48];
    const char *id = NULL, *type = NULL;
    snprintf(p, sizeof p, "devices[%u]", i);
    memset(d, 0, sizeof *d);
    d->rank = -1;
    d->rail = -1;
    NSIM_TRY(nsim_jcheck_keys(c, o, p, dev_keys));
    NSIM_TRY(nsim_jget_string(c, o, p, "id", 1, &id));
    if (id[0] == '\0' || strlen(id) >= NSIM_NAME_MAX)
        return nsim_jfail(c, p, "id", "expected 1 to %d characters",
                          NSIM_NAME_MAX - 1);
    snprintf(d->name, sizeof d->name, "%s", id);
    NSIM_TRY(nsim_jget_string(c, o, p, "type", 1, &type));
    if (nsim_dev_type_parse(type, &d->type) != NSIM_OK)
        return nsim_jfail(c, p, "type",
                          "expected gpu, nvswitch, pcie_switch, cpu, nic or "
                          "switch, got \"%s\"",
                          type);
    NSIM_TRY(check_type_fields(c, o, p, d->type));
    int64_t host = d->type == NSIM_DEV_SWITCH ? -1 : 0;
    NSIM_TRY(nsim_jget_int(c, o, p, "host", 0, -1, 1 << 24, &host));
    d->host = (int32_t)host;
    switch (d->type) {
    case NSIM_DEV_GPU:
        return read_gpu(c, o, p, d);
    case NSIM_DEV_NIC:
        return read_nic(c, o, p, d);
    case NSIM_DEV_SWITCH: {
        int64_t radix = 0;
        NSIM_TRY(nsim_jget_int(c, o, p, "radix", 1, 1, 1 << 16, &radix));
        d->radix = (uint32_t)radix;
        return nsim_jget_time(c, o, p, "latency", 0, &d->lat_ps);
    }
    case NSIM_DEV_NVSWITCH: {
        int nvls = 0;
        NSIM_TRY(nsim_jget_bool(c, o, p, "nvls", 0, &nvls));
        d->nvls = (uint32_t)nvls;
        return nsim_jget_time(c, o, p, "latency", 0, &d->lat_ps);
    }
    default:
        return NSIM_OK;
    }
}

static int read_link(const nsim_jctx *c, nsim_topo *t, const cJSON *o,
                     uint32_t i)
{
    char p[48];
    const char *a = NULL, *b = NULL, *type = NULL;
    uint32_t ia, ib;
    nsim_link_type lt;
    double bw = 0;
    nsim_time lat = 0;
    int64_t count = 1;
    snprintf(p, sizeof p, "links[%u]", i);
    NSIM_TRY(nsim_jcheck_keys(c, o, p, link_keys));
    NSIM_TRY(nsim_jget_string(c, o, p, "a", 1, &a));
    NSIM_TRY(nsim_jget_string(c, o, p, "b", 1, &b));
    if (nsim_topo_find(t, a, &ia) != NSIM_OK)
        return nsim_jfail(c, p, "a", "unknown device id \"%s\"", a);
    if (nsim_topo_find(t, b, &ib) != NSIM_OK)
        return nsim_jfail(c, p, "b", "unknown device id \"%s\"", b);
    if (ia == ib)
        return nsim_jfail(c, p, "b", "a link from \"%s\" to itself", a);
    NSIM_TRY(nsim_jget_string(c, o, p, "type", 1, &type));
    if (nsim_link_type_parse(type, &lt) != NSIM_OK)
        return nsim_jfail(c, p, "type",
                          "expected nvlink, pcie, c2c, sys, ib, roce or eth, "
                          "got \"%s\"",
                          type);
    NSIM_TRY(nsim_jget_bw(c, o, p, "bw", 1, &bw));
    NSIM_TRY(nsim_jget_time(c, o, p, "latency", 1, &lat));
    NSIM_TRY(nsim_jget_int(c, o, p, "count", 0, 1, 1024, &count));
    return nsim_topo_add_link(t, ia, ib, lt, bw, lat,
                              (uint32_t)count, NULL, c->err);
}

static int read_array(const nsim_jctx *c, const cJSON *root, const char *key,
                      const cJSON **out)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, key);
    if (a == NULL)
        return nsim_jfail(c, "", key, "missing (required)");
    if (!cJSON_IsArray(a))
        return nsim_jfail(c, "", key, "expected an array");
    if (cJSON_GetArraySize(a) == 0)
        return nsim_jfail(c, "", key, "expected at least one entry");
    *out = a;
    return NSIM_OK;
}

static int read_header(const nsim_jctx *c, const cJSON *root,
                       const char **name)
{
    NSIM_TRY(nsim_jcheck_header(c, root, NSIM_TOPO_FORMAT, NSIM_TOPO_VERSION,
                                top_keys));
    return nsim_jget_string(c, root, "", "name", 0, name);
}

static int topo_from_json(const cJSON *root, const char *source,
                          nsim_topo **out, nsim_err *err)
{
    nsim_jctx c = {source, err};
    const char *name = NULL;
    const cJSON *devs, *links, *it;
    nsim_topo *t = NULL;
    uint32_t i = 0;
    NSIM_TRY(read_header(&c, root, &name));
    NSIM_TRY(read_array(&c, root, "devices", &devs));
    NSIM_TRY(read_array(&c, root, "links", &links));
    NSIM_TRY(nsim_topo_create(name ? name : "", &t, err));
    int rc = NSIM_OK;
    cJSON_ArrayForEach(it, devs)
    {
        nsim_device d;
        uint32_t dup;
        if ((rc = read_device(&c, it, i, &d)) != NSIM_OK)
            goto fail;
        if (nsim_topo_find(t, d.name, &dup) == NSIM_OK) {
            char p[48];
            snprintf(p, sizeof p, "devices[%u]", i);
            rc = nsim_jfail(&c, p, "id", "duplicate id \"%s\"", d.name);
            goto fail;
        }
        if ((rc = nsim_topo_add_device(t, &d, NULL, err)) != NSIM_OK)
            goto fail;
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(it, links)
    {
        if ((rc = read_link(&c, t, it, i++)) != NSIM_OK)
            goto fail;
    }
    if ((rc = nsim_topo_finalize(t, source, err)) != NSIM_OK)
        goto fail;
    *out = t;
    return NSIM_OK;
fail:
    nsim_topo_destroy(t);
    return rc;
}

int nsim_topo_parse(const char *text, size_t len, const char *source,
                    nsim_topo **out, nsim_err *err)
{
    cJSON *root = NULL;
    NSIM_TRY(nsim_json_parse(text, len, source, &root, err));
    int rc = topo_from_json(root, source, out, err);
    cJSON_Delete(root);
    return rc;
}

int nsim_topo_load(const char *path, nsim_topo **out, nsim_err *err)
{
    cJSON *root = NULL;
    NSIM_TRY(nsim_json_load(path, &root, err));
    int rc = topo_from_json(root, path, out, err);
    cJSON_Delete(root);
    return rc;
}

/* ---- writer ---------------------------------------------------------- */

static int add_str(cJSON *o, const char *k, const char *v)
{
    return cJSON_AddStringToObject(o, k, v) != NULL;
}
static int add_num(cJSON *o, const char *k, double v)
{
    return cJSON_AddNumberToObject(o, k, v) != NULL;
}

static int write_device(cJSON *arr, const nsim_device *d)
{
    char buf[64];
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddItemToArray(arr, o))
        return 0;
    int ok = add_str(o, "id", d->name) &&
             add_str(o, "type", nsim_dev_type_name(d->type)) &&
             add_num(o, "host", d->host);
    switch (d->type) {
    case NSIM_DEV_GPU:
        ok = ok && add_str(o, "gen", d->gen) && add_num(o, "sm", d->sm) &&
             add_num(o, "rank", d->rank);
        if (ok && d->no_p2p)
            ok = cJSON_AddBoolToObject(o, "p2p", 0) != NULL;
        break;
    case NSIM_DEV_NIC:
        nsim_units_format_bw(d->port_bw, buf, sizeof buf);
        ok = ok && add_num(o, "ports", d->nic_ports) &&
             add_str(o, "speed", buf) && add_num(o, "mtu", d->mtu_bytes) &&
             cJSON_AddBoolToObject(o, "gdr", d->gdr) != NULL &&
             add_str(o, "link_layer",
                     d->link_layer == NSIM_LL_ROCE ? "roce" : "ib");
        if (ok && d->gen[0])
            ok = add_str(o, "gen", d->gen);
        if (ok && d->rail >= 0)
            ok = add_num(o, "rail", d->rail);
        break;
    case NSIM_DEV_SWITCH:
        nsim_units_format_time(d->lat_ps, buf, sizeof buf);
        ok = ok && add_num(o, "radix", d->radix) &&
             add_str(o, "latency", buf);
        break;
    case NSIM_DEV_NVSWITCH:
        nsim_units_format_time(d->lat_ps, buf, sizeof buf);
        ok = ok && cJSON_AddBoolToObject(o, "nvls", d->nvls) != NULL &&
             add_str(o, "latency", buf);
        break;
    default:
        break;
    }
    return ok;
}

static int write_link(cJSON *arr, const nsim_topo *t, const nsim_link *l)
{
    char bw[64], lat[64];
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddItemToArray(arr, o))
        return 0;
    nsim_units_format_bw(l->lane_bw, bw, sizeof bw);
    nsim_units_format_time(l->lat_ps, lat, sizeof lat);
    int ok = add_str(o, "a", nsim_topo_device(t, l->src)->name) &&
             add_str(o, "b", nsim_topo_device(t, l->dst)->name) &&
             add_str(o, "type", nsim_link_type_name(l->type)) &&
             add_str(o, "bw", bw) && add_str(o, "latency", lat);
    if (ok && l->count != 1)
        ok = add_num(o, "count", l->count);
    return ok;
}

int nsim_topo_to_json(const nsim_topo *t, char **out, nsim_err *err)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *devs = cJSON_CreateArray(), *links = cJSON_CreateArray();
    int ok = root && devs && links && add_str(root, "format", NSIM_TOPO_FORMAT) &&
             add_num(root, "version", NSIM_TOPO_VERSION) &&
             add_str(root, "name", nsim_topo_name(t));
    if (ok) {
        cJSON_AddItemToObject(root, "devices", devs);
        cJSON_AddItemToObject(root, "links", links);
        devs = links = NULL;
    }
    for (uint32_t i = 0; ok && i < nsim_topo_ndevices(t); i++)
        ok = write_device(cJSON_GetObjectItem(root, "devices"),
                          nsim_topo_device(t, i));
    for (uint32_t i = 0; ok && i < nsim_topo_nlinks(t); i += 2)
        ok = write_link(cJSON_GetObjectItem(root, "links"), t,
                        nsim_topo_link(t, i));
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    cJSON_Delete(devs);
    cJSON_Delete(links);
    if (text == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "topology writer: out of memory");
    *out = text;
    return NSIM_OK;
}

int nsim_topo_save(const nsim_topo *t, const char *path, nsim_err *err)
{
    char *text = NULL;
    NSIM_TRY(nsim_topo_to_json(t, &text, err));
    size_t len = strlen(text);
    text[len] = '\0';
    char *withnl = realloc(text, len + 2);
    if (withnl == NULL) {
        free(text);
        return NSIM_ERR(err, NSIM_ENOMEM, "topology writer: out of memory");
    }
    withnl[len] = '\n';
    withnl[len + 1] = '\0';
    int rc = nsim_write_file_atomic(path, withnl, len + 1, err);
    free(withnl);
    return rc;
}
