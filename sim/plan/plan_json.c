/* SPDX-License-Identifier: MIT
 *
 * plan_json.c - the plan as JSON ("ncclsim-plan" version 1): the request,
 * the rings, every connection with its transport and NICs, and per rank
 * and channel the ordered ops as [prim, step, slice, chunk, offset,
 * bytes], prim being the NSIM_PRIM_* bits (1 recv, 2 send, 4 reduce,
 * 8 copy out). Everything needed to replay the plan elsewhere.
 */
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "plan.h"

static cJSON *conn_json(const nsim_plan_conn *c, const nsim_topo *t)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddNumberToObject(o, "channel", c->channel);
    cJSON_AddNumberToObject(o, "from", c->from);
    cJSON_AddNumberToObject(o, "to", c->to);
    cJSON_AddStringToObject(o, "transport", nsim_transport_name(c->transport));
    cJSON_AddStringToObject(o, "path", nsim_path_type_name(c->path));
    if (c->transport == NSIM_TRANSPORT_NET) {
        cJSON_AddStringToObject(o, "send_nic",
                                nsim_topo_device(t, c->send_nic)->name);
        cJSON_AddStringToObject(o, "recv_nic",
                                nsim_topo_device(t, c->recv_nic)->name);
        cJSON_AddNumberToObject(o, "qps", c->nqps);
    }
    return o;
}

static cJSON *lane_json(const nsim_plan_lane *l)
{
    cJSON *o = cJSON_CreateObject(), *ops;
    if (o == NULL)
        return NULL;
    cJSON_AddNumberToObject(o, "channel", l->channel);
    cJSON_AddNumberToObject(o, "rank", l->rank);
    cJSON_AddNumberToObject(o, "send_conn", l->send_conn);
    cJSON_AddNumberToObject(o, "recv_conn", l->recv_conn);
    if (l->nrecv_more || l->nsend_more || l->shares_sm) {
        /* trees: further children, the shared thread block */
        int rm[NSIM_LANE_MORE_CONNS], sm[NSIM_LANE_MORE_CONNS];
        for (uint32_t k = 0; k < l->nrecv_more; k++)
            rm[k] = (int)l->recv_more[k];
        for (uint32_t k = 0; k < l->nsend_more; k++)
            sm[k] = (int)l->send_more[k];
        cJSON_AddItemToObject(o, "recv_more",
                              cJSON_CreateIntArray(rm, (int)l->nrecv_more));
        cJSON_AddItemToObject(o, "send_more",
                              cJSON_CreateIntArray(sm, (int)l->nsend_more));
        cJSON_AddBoolToObject(o, "shares_sm", l->shares_sm != 0);
    }
    if (l->per_step_conns) /* PAT: op step k uses connection pair k */
        cJSON_AddBoolToObject(o, "per_step_conns", 1);
    if ((ops = cJSON_AddArrayToObject(o, "ops")) == NULL)
        return o;
    for (uint32_t i = 0; i < l->nops; i++) {
        const nsim_plan_op *op = &l->ops[i];
        double v[6] = {op->prim, op->step, op->slice, op->chunk,
                       (double)op->offset, (double)op->bytes};
        cJSON_AddItemToArray(ops, cJSON_CreateDoubleArray(v, 6));
    }
    return o;
}

int nsim_plan_to_json(const nsim_plan *p, const nsim_topo *t, char **out,
                      nsim_err *err)
{
    cJSON *root = cJSON_CreateObject();
    if (root == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "plan writer: out of memory");
    cJSON_AddStringToObject(root, "format", "ncclsim-plan");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "topology", nsim_topo_name(t));
    cJSON_AddStringToObject(root, "collective", nsim_coll_name(p->req.coll));
    cJSON_AddStringToObject(root, "algorithm", nsim_algo_name(p->req.algo));
    cJSON_AddStringToObject(root, "protocol", nsim_proto_name(p->req.proto));
    cJSON_AddNumberToObject(root, "bytes", (double)p->req.bytes);
    cJSON_AddNumberToObject(root, "type_size", p->req.type_size);
    cJSON_AddNumberToObject(root, "nranks", p->nranks);
    cJSON_AddNumberToObject(root, "nchannels", p->nchannels);
    cJSON_AddNumberToObject(root, "step_bytes", (double)p->step_bytes);
    cJSON_AddNumberToObject(root, "slice_bytes", (double)p->slice_bytes);
    cJSON_AddNumberToObject(root, "chunk_bytes", (double)p->chunk_bytes);
    cJSON_AddNumberToObject(root, "slots_per_connection", NSIM_NCCL_STEPS);
    cJSON *chans = cJSON_AddArrayToObject(root, "channels");
    for (uint32_t c = 0; chans && c < p->nchannels; c++) {
        cJSON *o = cJSON_CreateObject();
        int ring[1024];
        uint32_t n = p->nranks < 1024 ? p->nranks : 1024;
        for (uint32_t i = 0; i < n; i++)
            ring[i] = (int)p->ring[c * p->nranks + i];
        cJSON_AddNumberToObject(o, "offset", (double)p->chan_offset[c]);
        cJSON_AddNumberToObject(o, "bytes", (double)p->chan_bytes[c]);
        cJSON_AddItemToObject(o, "ring", cJSON_CreateIntArray(ring, (int)n));
        cJSON_AddItemToArray(chans, o);
    }
    cJSON *conns = cJSON_AddArrayToObject(root, "connections");
    for (uint32_t i = 0; conns && i < p->nconns; i++)
        cJSON_AddItemToArray(conns, conn_json(&p->conns[i], t));
    cJSON *lanes = cJSON_AddArrayToObject(root, "lanes");
    for (uint32_t i = 0; lanes && i < p->nlanes; i++)
        cJSON_AddItemToArray(lanes, lane_json(&p->lanes[i]));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "plan writer: out of memory");
    *out = text;
    return NSIM_OK;
}
