/* SPDX-License-Identifier: MIT
 *
 * cli_log.c - "ncclsim log FILE": what an NCCL_DEBUG=INFO log says NCCL
 * built (ranks and hosts, ring orders, trees, transports and the NICs of
 * each channel) and the nccl-tests table it holds.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim/topo/ncclog.h"

static void print_info(const nsim_ncclog *l)
{
    const nsim_log_info *i = nsim_ncclog_info(l);
    printf("NCCL %s, network %s: nRanks %d nNodes %d localRanks %d\n",
           i->version[0] ? i->version : "?",
           i->network[0] ? i->network : "?", i->nranks, i->nnodes,
           i->local_ranks);
    if (i->coll_channels >= 0)
        printf("channels: %d coll, %d nvls, %d p2p, %d p2p per peer\n",
               i->coll_channels, i->nvls_channels, i->p2p_channels,
               i->p2p_per_peer);
    if (nsim_ncclog_nnics(l) > 0) {
        printf("NICs:");
        for (size_t k = 0; k < nsim_ncclog_nnics(l); k++) {
            const nsim_log_nic *n = nsim_ncclog_nic(l, k);
            printf(" [%d]%s:%d/%s", n->index, n->name, n->port,
                   n->link_layer);
        }
        printf("\n");
    }
}

/* The NET hops of ring channel ch: "a->b:netD" for each send. */
static void print_net_hops(const nsim_ncclog *l, uint32_t ch)
{
    int any = 0;
    for (size_t k = 0; k < nsim_ncclog_nconns(l); k++) {
        const nsim_log_conn *c = nsim_ncclog_conn(l, k);
        if (c->channel != ch || c->conn != 0 || c->dir != NSIM_LOG_SEND)
            continue;
        printf("%s%d->%d:net%d", any ? " " : "   NET ", c->from, c->to,
               c->net_dev);
        if (c->proxy >= 0)
            printf("(pxn %d)", c->proxy);
        any = 1;
    }
    if (any)
        printf("\n");
}

static void print_rings(const nsim_ncclog *l)
{
    size_t n = nsim_ncclog_nrings(l);
    if (n == 0)
        return;
    printf("rings (%zu channels):\n", n);
    for (size_t i = 0; i < n; i++) {
        const nsim_log_ring *r = nsim_ncclog_ring(l, i);
        printf("  %02u :", r->channel);
        for (uint32_t k = 0; k < r->nranks; k++)
            printf(" %u", r->ranks[k]);
        printf("%s\n", r->truncated ? " ..." : "");
        print_net_hops(l, r->channel);
    }
}

static void print_transports(const nsim_ncclog *l)
{
    static const char *const dirs[] = {"", " send", " recv"};
    char seen[32][160];
    size_t nseen = 0;
    for (size_t k = 0; k < nsim_ncclog_nconns(l); k++) {
        const nsim_log_conn *c = nsim_ncclog_conn(l, k);
        char key[160];
        snprintf(key, sizeof key, "%s/%s%s (conn %u)", c->transport,
                 c->detail, dirs[c->dir], c->conn);
        size_t j = 0;
        while (j < nseen && strcmp(seen[j], key) != 0)
            j++;
        if (j == nseen && nseen < 32)
            snprintf(seen[nseen++], sizeof seen[0], "%s", key);
    }
    if (nseen > 0)
        printf("transports (%zu connection lines):\n",
               nsim_ncclog_nconns(l));
    for (size_t j = 0; j < nseen; j++)
        printf("  %s\n", seen[j]);
}

static void print_table(const nsim_ncclog *l)
{
    const nsim_nt_info *t = nsim_ncclog_tests(l);
    size_t n = nsim_ncclog_nrows(l);
    if (n == 0)
        return;
    printf("nccl-tests %s: %zu rows, %u ranks listed", t->collective[0] ?
           t->collective : "(collective not named)", n, t->ranks_listed);
    if (t->avg_busbw >= 0)
        printf(", avg busbw %.3f GB/s", t->avg_busbw);
    printf("\n%14s %12s %8s %6s %5s %10s %8s %8s %10s %8s %8s\n", "size",
           "count", "type", "redop", "root", "oop us", "algbw", "busbw",
           "ip us", "algbw", "busbw");
    for (size_t i = 0; i < n; i++) {
        const nsim_nt_row *r = nsim_ncclog_row(l, i);
        printf("%14llu %12llu %8s %6s %5d %10.2f %8.2f %8.2f",
               (unsigned long long)r->size_bytes,
               (unsigned long long)r->count, r->type, r->redop, r->root,
               r->oop_time_us, r->oop_algbw, r->oop_busbw);
        if (r->has_inplace)
            printf(" %10.2f %8.2f %8.2f", r->ip_time_us, r->ip_algbw,
                   r->ip_busbw);
        printf("\n");
    }
}

int nsim_cmd_log(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_ncclog *l = NULL;
    if (argc != 2)
        return nsim_cli_usage("log", "expected: log FILE");
    if (nsim_ncclog_load(argv[1], &l, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    const nsim_log_info *i = nsim_ncclog_info(l);
    int any_log = i->nranks >= 0 || nsim_ncclog_nrings(l) > 0 ||
                  nsim_ncclog_nconns(l) > 0 || i->version[0];
    if (!any_log && nsim_ncclog_nrows(l) == 0) {
        nsim_ncclog_destroy(l);
        fprintf(stderr, "ncclsim: %s: no NCCL INFO lines and no nccl-tests "
                        "table found\n", argv[1]);
        return NSIM_EXIT_ERR;
    }
    if (any_log) {
        print_info(l);
        print_rings(l);
        if (nsim_ncclog_ntrees(l) > 0)
            printf("trees: %zu entries (rank x channel)\n",
                   nsim_ncclog_ntrees(l));
        print_transports(l);
    }
    print_table(l);
    nsim_ncclog_destroy(l);
    return NSIM_EXIT_OK;
}
