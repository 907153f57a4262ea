/* SPDX-License-Identifier: MIT
 *
 * nsim_test.h - helpers shared by the unit suites: paths to the source tree
 * and test data, and a scratch directory per process.
 */
#ifndef NSIM_TEST_H
#define NSIM_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "sim/exec/exec.h"
#include "sim/topo/topo.h"

#define NSIM_ASSERT_OK(call)                                                 \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != 0)                                                        \
            fprintf(stderr, "\n  %s -> %d: %s\n", #call, rc_, err.msg);      \
        CU_ASSERT_EQUAL_FATAL(rc_, 0);                                       \
    } while (0)

/* Adds a device of two-host IB rigs: an H100, a one-port 50 GB/s IB NIC
 * (4 KiB MTU, GPUDirect RDMA) or a 64-port switch with 200 ns between
 * ports. */
static inline int nsim_test_ib_device(nsim_topo *t, nsim_dev_type type,
                                      const char *name, int host,
                                      uint32_t *out, nsim_err *err)
{
    nsim_device d = {.type = type, .host = host, .rank = -1, .rail = -1};
    snprintf(d.name, sizeof d.name, "%s", name);
    if (type == NSIM_DEV_GPU)
        snprintf(d.gen, sizeof d.gen, "h100");
    if (type == NSIM_DEV_NIC) {
        d.nic_ports = 1;
        d.port_bw = 50e9;
        d.mtu_bytes = 4096;
        d.gdr = 1;
        d.link_layer = NSIM_LL_IB;
    }
    if (type == NSIM_DEV_SWITCH) {
        d.radix = 64;
        d.lat_ps = 200000;
    }
    return nsim_topo_add_device(t, &d, out, err);
}

/* A copy of t whose NVSwitches lack NVLink SHARP ("nvls": false), for
 * tests of choices made where NVLS is not available; t is destroyed. */
static inline nsim_topo *nsim_test_without_nvls(nsim_topo *t)
{
    nsim_err err = {0};
    nsim_topo *out = NULL;
    char *js = NULL, *s;
    NSIM_ASSERT_OK(nsim_topo_to_json(t, &js, &err));
    while ((s = strstr(js, "\"nvls\":\ttrue")) != NULL)
        memcpy(s + 7, "false", 5); /* the tab goes */
    NSIM_ASSERT_OK(nsim_topo_parse(js, strlen(js), "no-nvls", &out, &err));
    free(js);
    nsim_topo_destroy(t);
    return out;
}

/* Exactly once: every connection's receiver consumed every slice and byte
 * its sender handed over, and (NET) the transport accepted each piece
 * once, for the slice it belongs to. Else 0 and why. */
static inline int nsim_test_delivered_once(const nsim_exec_result *res,
                                           char *why, size_t len)
{
    for (uint32_t i = 0; i < res->nconns; i++) {
        const nsim_conn_stats *c = &res->conns[i];
        const nsim_xport_conn_counters *x = &c->xport;
        if (c->bytes != c->recv_bytes || c->slices != c->recv_slices) {
            snprintf(why, len,
                     "connection %u: %llu slices / %llu bytes sent, %llu / "
                     "%llu consumed",
                     i, (unsigned long long)c->slices,
                     (unsigned long long)c->bytes,
                     (unsigned long long)c->recv_slices,
                     (unsigned long long)c->recv_bytes);
            return 0;
        }
        if (c->has_xport && (x->tx_bytes != x->rx_bytes ||
                             x->tx_slices != x->rx_slices)) {
            snprintf(why, len,
                     "connection %u: NET sent %llu slices / %llu bytes, the "
                     "receiver accepted %llu / %llu",
                     i, (unsigned long long)x->tx_slices,
                     (unsigned long long)x->tx_bytes,
                     (unsigned long long)x->rx_slices,
                     (unsigned long long)x->rx_bytes);
            return 0;
        }
    }
    return 1;
}

#endif
