/* SPDX-License-Identifier: MIT
 *
 * transport.c - the record lists transports report into (transport.h).
 */
#include <stdlib.h>

#include "transport.h"

static int grow(void **arr, uint32_t *cap, uint32_t n, size_t elem)
{
    if (n < *cap)
        return NSIM_OK;
    uint32_t c = *cap ? *cap * 2 : 64;
    void *a = realloc(*arr, c * elem);
    if (a == NULL)
        return NSIM_ENOMEM;
    *arr = a;
    *cap = c;
    return NSIM_OK;
}

int nsim_xport_stats_add_qp(nsim_xport_stats *s, const nsim_qp_record *r)
{
    NSIM_TRY(grow((void **)&s->qps, &s->qps_cap, s->nqps, sizeof *r));
    s->qps[s->nqps++] = *r;
    return NSIM_OK;
}

int nsim_xport_stats_add_cq(nsim_xport_stats *s, const nsim_cq_record *r)
{
    NSIM_TRY(grow((void **)&s->cqs, &s->cqs_cap, s->ncqs, sizeof *r));
    s->cqs[s->ncqs++] = *r;
    return NSIM_OK;
}

int nsim_xport_stats_add_port(nsim_xport_stats *s, const nsim_port_record *r)
{
    NSIM_TRY(grow((void **)&s->ports, &s->ports_cap, s->nports, sizeof *r));
    s->ports[s->nports++] = *r;
    return NSIM_OK;
}

int nsim_xport_stats_add_failover(nsim_xport_stats *s,
                                  const nsim_failover_record *r)
{
    NSIM_TRY(grow((void **)&s->failovers, &s->failovers_cap, s->nfailovers,
                  sizeof *r));
    s->failovers[s->nfailovers++] = *r;
    return NSIM_OK;
}

int nsim_xport_stats_add_wait(nsim_xport_stats *s, const nsim_wait_record *r)
{
    NSIM_TRY(grow((void **)&s->waits, &s->waits_cap, s->nwaits, sizeof *r));
    s->waits[s->nwaits++] = *r;
    return NSIM_OK;
}

const char *nsim_failover_name(nsim_failover f)
{
    switch (f) {
    case NSIM_FAILOVER_REBIND_QP:
        return "rebind_qp";
    case NSIM_FAILOVER_REBIND_NIC:
        return "rebind_nic";
    default:
        return "fail";
    }
}

void nsim_xport_stats_free(nsim_xport_stats *s)
{
    free(s->failovers);
    free(s->qps);
    free(s->cqs);
    free(s->ports);
    free(s->waits);
    *s = (nsim_xport_stats){0};
}
