/* SPDX-License-Identifier: MIT
 *
 * nvls.c - NVLS (NVLink SHARP) AllReduce on one host (nccl-internals
 * 3.3, 6.3): the plan side. The switch does the reduction and the
 * multicast (models/nvlink/nvls.c); the GPUs only scatter their data to
 * it and gather the reduced result.
 *
 * Models: nvlsChannels thread blocks per GPU (16 sm90, 24 sm100), every
 * GPU a head (min(32, nGPUs) heads); per channel loops of nHeads chunks
 * (chunk 128 KiB, NCCL_NVLS_CHUNKSIZE, cut to 64/32/16 KiB when the size
 * is under 64/8/2 x channels x heads x chunk); chunk h of a loop is head
 * h's part. Per rank and channel a scatter lane (sends every chunk up to
 * the switch) and a gather lane (receives every reduced chunk and copies
 * it out) sharing one thread block, with an up and a down connection.
 * Does not model: NVLSTree (multi-host), user-buffer registration.
 * Units: bytes.
 */
#include <stdlib.h>

#include "plan_int.h"

uint32_t nsim_plan_nvls_channels(nsim_topo *t)
{
    nsim_plan_graph g;
    nsim_plan_graph_get(t, &g);
    return g.sm >= 100 ? 24 : 16;
}

/* NCCL's NVLS chunk (enqueue.cc computeCollDevWork, nccl 3.3). */
static uint64_t nvls_chunk(const nsim_plan *p)
{
    uint64_t ch = 131072, conc = (uint64_t)p->nchannels * p->nvls_heads;
    if (p->req.bytes < 64 * conc * ch && ch > 65536)
        ch = 65536;
    if (p->req.bytes < 8 * conc * ch && ch > 32768)
        ch = 32768;
    if (p->req.bytes < 2 * conc * ch && ch > 16384)
        ch = 16384;
    return ch;
}

static int nvls_ops(const nsim_plan *p, uint32_t c, uint8_t prim,
                    nsim_plan_lane *l)
{
    op_buf b = {0};
    uint32_t ts = p->req.type_size, H = p->nvls_heads;
    uint64_t count = p->chan_bytes[c] / ts, cc = p->chunk_bytes / ts;
    uint32_t k = 0;
    uint64_t off = 0;
    do {
        for (uint32_t h = 0; h < H; h++, k++) {
            uint64_t o = off + h * cc;
            int64_t ne = o >= count ? 0
                         : (int64_t)(count - o < cc ? count - o : cc);
            if (nsim__plan_push_chunk(p, &b, prim, (uint16_t)h, k, o, ne,
                                      p->chan_offset[c]) != NSIM_OK) {
                free(b.ops);
                return NSIM_ENOMEM;
            }
        }
        off += H * cc;
    } while (off < count);
    l->ops = b.ops;
    l->nops = b.n;
    return NSIM_OK;
}

int nsim__plan_build_nvls(nsim_topo *t, nsim_plan *p, nsim_err *err)
{
    uint32_t n = p->nranks, nc = p->nchannels;
    p->nhosts = 1;
    p->nvls_heads = n < 32 ? n : 32;
    p->nthreads = 640;
    p->chunk_bytes = p->slice_bytes = p->step_bytes = nvls_chunk(p);
    p->nconns = p->nlanes = 2 * nc * n;
    p->conns = calloc(p->nconns, sizeof *p->conns);
    p->lanes = calloc(p->nlanes, sizeof *p->lanes);
    p->ring = malloc((size_t)nc * n * sizeof *p->ring);
    if (p->conns == NULL || p->lanes == NULL || p->ring == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    (void)t;
    for (uint32_t c = 0; c < nc; c++)
        for (uint32_t r = 0; r < n; r++) {
            uint32_t i = (c * n + r) * 2; /* lanes and conns alike */
            p->ring[c * n + r] = r;
            p->conns[i] = (nsim_plan_conn){c, r, r, NSIM_TRANSPORT_NVLS,
                                           NSIM_PATH_NVL, UINT32_MAX,
                                           UINT32_MAX, 0, i, UINT32_MAX};
            p->conns[i + 1] = (nsim_plan_conn){
                c, r, r, NSIM_TRANSPORT_NVLS, NSIM_PATH_NVL, UINT32_MAX,
                UINT32_MAX, 0, UINT32_MAX, i + 1};
            p->lanes[i] = (nsim_plan_lane){c, r, i, UINT32_MAX, 0, NULL,
                                           0, 0, {0}, {0}, 0};
            p->lanes[i + 1] = (nsim_plan_lane){c, r, UINT32_MAX, i + 1, 0,
                                               NULL, 0, 0, {0}, {0}, 1};
            if (nvls_ops(p, c, NSIM_PRIM_SEND, &p->lanes[i]) != NSIM_OK ||
                nvls_ops(p, c, NSIM_PRIM_RECV | NSIM_PRIM_COPY_OUT,
                         &p->lanes[i + 1]) != NSIM_OK)
                return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
        }
    return NSIM_OK;
}
