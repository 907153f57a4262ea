/* SPDX-License-Identifier: MIT
 *
 * pat.c - PAT (Parallel Aggregated Trees) AllGather and ReduceScatter,
 * one GPU per host (nccl-internals 3.3, 3.4, 4.3, 6.5): every rank
 * talks over NET to the ranks at distance 2^s, s < ceil(log2 n), and
 * forwards what it has gathered so far (AllGather: phases of doubling
 * distance, 2^s blocks in phase s, the last one n - 2^s) or the partial
 * sums it still holds (ReduceScatter: the same phases in reverse
 * order). Each rank sends and receives n - 1 blocks per chunk: (n-1)/n
 * of the buffer, as a ring. The chunk is one slot (chunkSteps =
 * sliceSteps = 1), halved while chunk x nCh x 32 (ReduceScatter 16)
 * exceeds the buffer and chunk > 64 KiB (3.3); 640 threads (3.4).
 *
 * Not modelled: NCCL's aggregation factor (several phases' pieces in
 * one slot when chunks are small) and its shifted trees' exact order;
 * the bytes per rank and the dependencies (a block is forwarded only
 * after it arrived) are the schedule's.
 */
#include <stdlib.h>

#include "plan_int.h"

/* Sends a rank posts ahead of its receives within a phase: as many as a
 * connection has slots (NCCL's primitives post into any free slot); no
 * more, so that no rank waits to receive what its peer cannot yet
 * send. */
#define PAT_WINDOW NSIM_NCCL_STEPS

static uint32_t pat_phases(uint32_t n)
{
    uint32_t l = 0;
    while ((1u << l) < n)
        l++;
    return l;
}

/* PAT's chunk (nccl-internals 3.3): one slot, halved while chunk x nCh
 * x 32 (AllGather) or 16 (ReduceScatter) exceeds the buffer and the
 * chunk is above 64 KiB. */
uint64_t nsim__plan_pat_chunk(const nsim_plan *p)
{
    uint64_t chunk = p->step_bytes;
    uint64_t f = p->req.coll == NSIM_COLL_ALLGATHER ? 32 : 16;
    while (chunk * p->nchannels * f > p->req.bytes && chunk > 65536)
        chunk /= 2;
    return chunk;
}

/* Connection (c, rank r, phase s): r to r + 2^s (AllGather) or r - 2^s
 * (ReduceScatter). */
static uint32_t pat_peer(const nsim_plan *p, uint32_t r, uint32_t s,
                         int to)
{
    uint32_t n = p->nranks, d = (1u << s) % n;
    int fwd = p->req.coll == NSIM_COLL_ALLGATHER ? to : !to;
    return fwd ? (r + d) % n : (r + n - d) % n;
}

static int pat_conns(nsim_topo *t, nsim_plan *p, uint32_t l, nsim_err *err)
{
    uint32_t n = p->nranks;
    p->nconns = p->nchannels * n * l;
    p->conns = nsim__plan_calloc(p, p->nconns, sizeof *p->conns);
    if (p->conns == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    for (uint32_t c = 0; c < p->nchannels; c++)
        for (uint32_t r = 0; r < n; r++)
            for (uint32_t s = 0; s < l; s++) {
                uint32_t to = pat_peer(p, r, s, 1), i = (c * n + r) * l + s;
                nsim_plan_conn *k = &p->conns[i];
                NSIM_TRY(nsim__plan_make_conn(t, &p->req, c, r, to, k, err));
                k->send_lane = c * n + r;
                k->recv_lane = c * n + to;
            }
    return NSIM_OK;
}

/* The j-th block rank r sends (snd) or receives in the phase at
 * distance d: AllGather sends r-j, receives r-d-j; ReduceScatter sends
 * the partial sums of r-d-j, receives those of r-j. */
static uint32_t pat_block(int ag, int snd, uint32_t r, uint32_t n,
                          uint32_t d, uint32_t j)
{
    return ag == snd ? (r + n - j) % n : (r + 2 * n - d - j) % n;
}

/* The ops of rank r on channel c: per chunk, every phase in order
 * (ReduceScatter: reversed), the phase's sends up to PAT_WINDOW ahead of
 * its receives, so that no rank waits to receive before it has sent. */
static int pat_ops(const nsim_plan *p, uint32_t c, uint32_t r, uint32_t l,
                   op_buf *b)
{
    uint32_t n = p->nranks;
    int ag = p->req.coll == NSIM_COLL_ALLGATHER;
    uint64_t blk = p->req.bytes / n, cb = p->chan_bytes[c];
    uint8_t rprim = NSIM_PRIM_RECV |
                    (ag ? NSIM_PRIM_COPY_OUT : NSIM_PRIM_REDUCE);
    for (uint64_t off = 0; off < cb; off += p->chunk_bytes) {
        uint64_t piece = cb - off < p->chunk_bytes ? cb - off : p->chunk_bytes;
        for (uint32_t i = 0; i < l; i++) {
            uint32_t s = ag ? i : l - 1 - i, d = 1u << s;
            uint32_t m = d < n - d ? d : n - d;
            /* AllGather: r holds r, r-1, ..., r-(2^s - 1) and sends the
             * first m on; ReduceScatter: the partial sums of r-2^s-j
             * go to r-2^s, those of r-j come from r+2^s */
            uint64_t base = p->chan_offset[c] + off;
            uint32_t w = m < PAT_WINDOW ? m : PAT_WINDOW;
            for (uint32_t j = 0; j < m + w; j++) {
                if (j >= w) { /* receive block j - w */
                    uint32_t k = j - w;
                    uint32_t rb = pat_block(ag, 0, r, n, d, k);
                    nsim_plan_op ro = {rprim, 0, (uint16_t)s, rb,
                                       rb * blk + base, piece};
                    NSIM_TRY(nsim__plan_push_op(b, ro));
                }
                if (j < m) {
                    uint32_t sb = pat_block(ag, 1, r, n, d, j);
                    nsim_plan_op so = {NSIM_PRIM_SEND, 0, (uint16_t)s, sb,
                                       sb * blk + base, piece};
                    NSIM_TRY(nsim__plan_push_op(b, so));
                }
            }
        }
    }
    return NSIM_OK;
}

int nsim__plan_build_pat(nsim_topo *t, nsim_plan *p, nsim_err *err)
{
    uint32_t n = p->nranks, l = pat_phases(n);
    p->nhosts = nsim_topo_nnodes(t);
    p->nthreads = 640; /* PAT always runs NCCL_MAX_NTHREADS (3.4) */
    p->chunk_bytes = p->slice_bytes = nsim__plan_pat_chunk(p);
    /* no ring: the channel lists (JSON, --debug) show the rank order the
     * distances count in */
    p->ring = malloc((size_t)p->nchannels * n * sizeof *p->ring);
    if (p->ring == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    for (uint32_t i = 0; i < p->nchannels * n; i++)
        p->ring[i] = i % n;
    NSIM_TRY(pat_conns(t, p, l, err));
    p->nlanes = p->nchannels * n;
    p->lanes = nsim__plan_calloc(p, p->nlanes, sizeof *p->lanes);
    if (p->lanes == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
    for (uint32_t c = 0; c < p->nchannels; c++)
        for (uint32_t r = 0; r < n; r++) {
            nsim_plan_lane *ln = &p->lanes[c * n + r];
            *ln = (nsim_plan_lane){.channel = c, .rank = r,
                                   .send_conn = UINT32_MAX,
                                   .recv_conn = UINT32_MAX,
                                   .per_step_conns = 1};
            for (uint32_t s = 0; s < l; s++) {
                uint32_t snd = (c * n + r) * l + s;
                uint32_t from = pat_peer(p, r, s, 0);
                uint32_t rcv = (c * n + from) * l + s;
                if (s == 0) {
                    ln->send_conn = snd;
                    ln->recv_conn = rcv;
                } else {
                    ln->send_more[ln->nsend_more++] = snd;
                    ln->recv_more[ln->nrecv_more++] = rcv;
                }
            }
            op_buf b = nsim__plan_ops(p);
            if (pat_ops(p, c, r, l, &b) != NSIM_OK) {
                free(b.ops);
                return NSIM_ERR(err, NSIM_ENOMEM, "planner: out of memory");
            }
            ln->ops = b.ops;
            ln->nops = b.n;
        }
    return NSIM_OK;
}
