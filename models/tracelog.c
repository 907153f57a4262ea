/* SPDX-License-Identifier: MIT
 *
 * tracelog.c - the trace record log (see tracelog.h).
 */
#include "tracelog.h"

#include <stdlib.h>

#include "sim/core/err.h"

#define DEFAULT_MAX (1u << 20)

int nsim_tlog_create(size_t max, nsim_tlog **out)
{
    nsim_tlog *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NSIM_ENOMEM;
    l->max = max ? max : DEFAULT_MAX;
    l->stride = 1;
    *out = l;
    return NSIM_OK;
}

void nsim_tlog_destroy(nsim_tlog *l)
{
    if (l == NULL)
        return;
    free(l->r);
    free(l);
}

/* Full: keep one kept slice in two. */
static void thin(nsim_tlog *l)
{
    size_t m = 0;
    l->stride *= 2;
    for (size_t i = 0; i < l->n; i++)
        if (l->r[i].slice % l->stride == 0)
            l->r[m++] = l->r[i];
        else
            l->dropped++;
    l->n = m;
}

void nsim_tlog_add(nsim_tlog *l, const nsim_trec *r)
{
    if (l->oom || r->slice % l->stride != 0) {
        l->dropped++;
        return;
    }
    if (l->n == l->cap) {
        if (l->cap >= l->max) {
            thin(l);
            if (l->n == l->cap || r->slice % l->stride != 0) {
                l->dropped++;
                return;
            }
        } else {
            size_t c = l->cap ? l->cap * 2 : 4096;
            c = c > l->max ? l->max : c;
            nsim_trec *g = realloc(l->r, c * sizeof *g);
            if (g == NULL) {
                l->oom = 1;
                return;
            }
            l->r = g;
            l->cap = c;
        }
    }
    l->r[l->n++] = *r;
}
