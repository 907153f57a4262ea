/* SPDX-License-Identifier: MIT
 *
 * plan_json.c - the plan as JSON ("ncclsim-plan" version 1): the request,
 * the rings, every connection with its transport and NICs, and per rank
 * and channel the ordered ops as [prim, step, slice, chunk, offset,
 * bytes], prim being the NSIM_PRIM_* bits (1 recv, 2 send, 4 reduce,
 * 8 copy out). Everything needed to replay the plan elsewhere.
 * Written as a stream (the plan of many hosts holds O(ranks^2) ops, far
 * too many for a document tree); the layout is cJSON's printed form.
 * Names are plain identifiers from our own tables, so nothing needs
 * escaping except device names, which are checked on load (ids).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "plan.h"
#include "sim/core/units.h"

static void key(FILE *f, int depth, const char *k)
{
    for (int i = 0; i < depth; i++)
        fputc('\t', f);
    fprintf(f, "\"%s\":\t", k);
}

static void str(FILE *f, int depth, const char *k, const char *v, int more)
{
    key(f, depth, k);
    fputc('"', f);
    for (const char *c = v; *c; c++) {
        if (*c == '"' || *c == '\\')
            fputc('\\', f);
        fputc(*c, f);
    }
    fprintf(f, "\"%s\n", more ? "," : "");
}

static void num(FILE *f, int depth, const char *k, uint64_t v, int more)
{
    key(f, depth, k);
    fprintf(f, "%" PRIu64 "%s\n", v, more ? "," : "");
}

static void uints(FILE *f, const uint32_t *v, uint32_t n)
{
    fputc('[', f);
    for (uint32_t i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu32, i ? ", " : "", v[i]);
    fputc(']', f);
}

/* "{" opening an array element at depth d (its members at d + 1) */
static void open_elem(FILE *f, uint32_t i)
{
    fputs(i ? ", {\n" : "{\n", f);
}

static void close_elem(FILE *f, int depth)
{
    for (int i = 0; i < depth; i++)
        fputc('\t', f);
    fputc('}', f);
}

static void conn_json(FILE *f, const nsim_plan_conn *c, const nsim_topo *t)
{
    int net = c->transport == NSIM_TRANSPORT_NET;
    num(f, 3, "channel", c->channel, 1);
    num(f, 3, "from", c->from, 1);
    num(f, 3, "to", c->to, 1);
    str(f, 3, "transport", nsim_transport_name(c->transport), 1);
    str(f, 3, "path", nsim_path_type_name(c->path), net);
    if (net) {
        str(f, 3, "send_nic", nsim_topo_device(t, c->send_nic)->name, 1);
        str(f, 3, "recv_nic", nsim_topo_device(t, c->recv_nic)->name, 1);
        num(f, 3, "qps", c->nqps, 0);
    }
}

static void lane_json(FILE *f, const nsim_plan_lane *l)
{
    num(f, 3, "channel", l->channel, 1);
    num(f, 3, "rank", l->rank, 1);
    /* UINT32_MAX (no connection) prints as cJSON printed it: a number */
    num(f, 3, "send_conn", l->send_conn, 1);
    num(f, 3, "recv_conn", l->recv_conn, 1);
    if (l->nrecv_more || l->nsend_more || l->shares_sm) {
        /* trees: further children, the shared thread block */
        key(f, 3, "recv_more");
        uints(f, l->recv_more, l->nrecv_more);
        fputs(",\n", f);
        key(f, 3, "send_more");
        uints(f, l->send_more, l->nsend_more);
        fputs(",\n", f);
        key(f, 3, "shares_sm");
        fprintf(f, "%s,\n", l->shares_sm ? "true" : "false");
    }
    if (l->per_step_conns) { /* PAT: op step k uses connection pair k */
        key(f, 3, "per_step_conns");
        fputs("true,\n", f);
    }
    key(f, 3, "ops");
    fputc('[', f);
    for (uint32_t i = 0; i < l->nops; i++) {
        const nsim_plan_op *op = nsim_plan_lane_op(l, i);
        fprintf(f, "%s[%u, %u, %u, %u, %" PRIu64 ", %" PRIu64 "]",
                i ? ", " : "", (unsigned)op->prim, (unsigned)op->step,
                (unsigned)op->slice, (unsigned)op->chunk,
                (uint64_t)op->offset, op->bytes);
    }
    fputs("]\n", f);
}

int nsim_plan_to_json(const nsim_plan *p, const nsim_topo *t, char **out,
                      nsim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "plan writer: out of memory");
    fputs("{\n", f);
    str(f, 1, "format", "ncclsim-plan", 1);
    num(f, 1, "version", 1, 1);
    str(f, 1, "topology", nsim_topo_name(t), 1);
    str(f, 1, "collective", nsim_coll_name(p->req.coll), 1);
    str(f, 1, "algorithm", nsim_algo_name(p->req.algo), 1);
    str(f, 1, "protocol", nsim_proto_name(p->req.proto), 1);
    num(f, 1, "bytes", p->req.bytes, 1);
    num(f, 1, "type_size", p->req.type_size, 1);
    num(f, 1, "nranks", p->nranks, 1);
    num(f, 1, "nchannels", p->nchannels, 1);
    num(f, 1, "step_bytes", p->step_bytes, 1);
    num(f, 1, "slice_bytes", p->slice_bytes, 1);
    num(f, 1, "chunk_bytes", p->chunk_bytes, 1);
    num(f, 1, "slots_per_connection", NSIM_NCCL_STEPS, 1);
    key(f, 1, "channels");
    fputc('[', f);
    for (uint32_t c = 0; c < p->nchannels; c++) {
        open_elem(f, c);
        num(f, 3, "offset", p->chan_offset[c], 1);
        num(f, 3, "bytes", p->chan_bytes[c], 1);
        key(f, 3, "ring");
        uints(f, &p->ring[c * p->nranks], p->ring != NULL ? p->nranks : 0);
        fputc('\n', f);
        close_elem(f, 2);
    }
    fputs("],\n", f);
    key(f, 1, "connections");
    fputc('[', f);
    for (uint32_t i = 0; i < p->nconns; i++) {
        open_elem(f, i);
        conn_json(f, &p->conns[i], t);
        close_elem(f, 2);
    }
    fputs("],\n", f);
    key(f, 1, "lanes");
    fputc('[', f);
    /* the text is held in memory (the output is written whole): it
     * counts against the budget the plan was built under, with room for
     * the stream's buffer to double */
    uint64_t room = 0;
    if (p->req.max_plan_bytes != 0)
        room = p->req.max_plan_bytes > p->build.held
                   ? (p->req.max_plan_bytes - p->build.held) / 2
                   : 1;
    for (uint32_t i = 0; i < p->nlanes; i++) {
        open_elem(f, i);
        lane_json(f, &p->lanes[i]);
        close_elem(f, 2);
        long at = room != 0 && i % 64 == 63 ? ftell(f) : 0;
        if (at > 0 && (uint64_t)at > room) {
            char lim[32], got[32];
            (void)fclose(f);
            free(text);
            nsim_units_format_size(p->req.max_plan_bytes, lim, sizeof lim);
            nsim_units_format_size((uint64_t)at, got, sizeof got);
            return NSIM_ERR(err, NSIM_EBUDGET,
                            "over the memory budget (--max-memory %s): the "
                            "plan's JSON text passes %s after %u of %u "
                            "lanes, beside the plan's own; plan a smaller "
                            "size, or fewer ranks",
                            lim, got, i + 1, p->nlanes);
        }
    }
    fputs("]\n}", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(text);
        return NSIM_ERR(err, NSIM_ENOMEM, "plan writer: out of memory");
    }
    *out = text;
    return NSIM_OK;
}
