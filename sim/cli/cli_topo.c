/* SPDX-License-Identifier: MIT
 *
 * cli_topo.c - "ncclsim topo": check and show a topology.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sim/core/units.h"
#include "sim/topo/topo.h"

int nsim_cli_load_topo(const char *path, nsim_topo **out, nsim_err *err)
{
    return nsim_topo_load(path, out, err);
}

static void show_devices(const nsim_topo *t)
{
    char bw[48];
    printf("Devices (%u):\n", nsim_topo_ndevices(t));
    printf("  %-4s %-16s %-12s %5s %5s  %s\n", "#", "id", "type", "host",
           "rank", "details");
    for (uint32_t i = 0; i < nsim_topo_ndevices(t); i++) {
        const nsim_device *d = nsim_topo_device(t, i);
        char detail[160] = "";
        switch (d->type) {
        case NSIM_DEV_GPU:
            snprintf(detail, sizeof detail, "%s sm%u", d->gen, d->sm);
            break;
        case NSIM_DEV_NIC:
            nsim_units_format_bw(d->port_bw * 8, bw, sizeof bw);
            snprintf(detail, sizeof detail, "%u port(s) x %.0f Gb/s, MTU %u, "
                     "%s%s", d->nic_ports, d->port_bw * 8 / 1e9, d->mtu_bytes,
                     d->link_layer == NSIM_LL_ROCE ? "RoCE" : "IB",
                     d->gdr ? ", GDR" : "");
            break;
        case NSIM_DEV_SWITCH:
            snprintf(detail, sizeof detail, "radix %u, %.0f ns", d->radix,
                     (double)d->lat_ps / 1e3);
            break;
        case NSIM_DEV_NVSWITCH:
            snprintf(detail, sizeof detail, "%s", d->nvls ? "NVLS" : "");
            break;
        default:
            break;
        }
        char rank[16] = "-";
        if (d->type == NSIM_DEV_GPU)
            snprintf(rank, sizeof rank, "%d", d->rank);
        printf("  %-4u %-16s %-12s %5d %5s  %s\n", i, d->name,
               nsim_dev_type_name(d->type), d->host, rank, detail);
    }
}

static void show_links(const nsim_topo *t)
{
    printf("\nLinks (%u, each both ways):\n", nsim_topo_nlinks(t) / 2);
    printf("  %-16s %-16s %-7s %5s %12s %10s\n", "a", "b", "type", "count",
           "GB/s/dir", "latency");
    for (uint32_t i = 0; i < nsim_topo_nlinks(t); i += 2) {
        const nsim_link *l = nsim_topo_link(t, i);
        char lat[32];
        nsim_units_format_time(l->lat_ps, lat, sizeof lat);
        printf("  %-16s %-16s %-7s %5u %12.2f %10s\n",
               nsim_topo_device(t, l->src)->name,
               nsim_topo_device(t, l->dst)->name,
               nsim_link_type_name(l->type), l->count, l->bw / 1e9, lat);
    }
}

static void print_path(const nsim_topo *t, const nsim_route *r)
{
    if (r->hops == 0)
        return;
    printf("%s", nsim_topo_device(t, nsim_topo_link(t, r->links[0])->src)->name);
    for (uint32_t h = 0; h < r->hops; h++)
        printf(" > %s", nsim_topo_device(t, nsim_topo_link(t, r->links[h])->dst)->name);
}

static int show_routes(nsim_topo *t, nsim_err *err)
{
    uint32_t n = nsim_topo_nranks(t);
    printf("\nRoutes between GPUs (by rank):\n");
    printf("  %4s %4s  %-4s %4s %10s %9s %6s  %s\n", "from", "to", "type",
           "hops", "GB/s", "lat(ns)", "paths", "first path");
    for (uint32_t a = 0; a < n; a++)
        for (uint32_t b = 0; b < n; b++) {
            if (a == b)
                continue;
            const nsim_route *r;
            NSIM_TRY(nsim_topo_route(t, nsim_topo_rank_device(t, a),
                                     nsim_topo_rank_device(t, b), &r, err));
            printf("  %4u %4u  %-4s %4u %10.2f %9.1f %6u  ", a, b,
                   nsim_path_type_name(r->type), r->hops, r->bw / 1e9,
                   (double)r->lat_ps / 1e3, r->npaths);
            print_path(t, r);
            printf("\n");
        }
    return NSIM_OK;
}

int nsim_cmd_topo(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_topo *t = NULL;
    if (argc != 3)
        return nsim_cli_usage("topo", "expected: topo check|show FILE");
    int show = strcmp(argv[1], "show") == 0;
    if (!show && strcmp(argv[1], "check") != 0)
        return nsim_cli_usage("topo", "unknown action '%s' (check, show)",
                              argv[1]);
    if (nsim_cli_load_topo(argv[2], &t, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    int rc = NSIM_OK;
    if (show) {
        printf("Topology \"%s\": %u ranks on %u host(s)\n\n",
               nsim_topo_name(t), nsim_topo_nranks(t), nsim_topo_nhosts(t));
        show_devices(t);
        show_links(t);
        rc = show_routes(t, &err);
    } else {
        printf("%s: ok: \"%s\", %u devices, %u links, %u ranks on %u "
               "host(s)\n",
               argv[2], nsim_topo_name(t), nsim_topo_ndevices(t),
               nsim_topo_nlinks(t) / 2, nsim_topo_nranks(t),
               nsim_topo_nhosts(t));
    }
    nsim_topo_destroy(t);
    return rc == NSIM_OK ? NSIM_EXIT_OK : nsim_cli_fail(&err);
}
