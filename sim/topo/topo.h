/* SPDX-License-Identifier: MIT
 *
 * topo.h - the topology: devices, directed links, hosts, GPU ranks, and the
 * routes between any two devices.
 *
 * Owns: the device and link tables (built through nsim_topo_add_* or loaded
 * from the JSON format "ncclsim-topology" version 1, see README), their
 * validation, the JSON writer, and a route cache.
 *
 * Every physical connection given as one link (a, b) becomes two directed
 * links, 2k (a -> b) and 2k + 1 (b -> a), each with the full per-direction
 * bandwidth (NCCL's convention, nccl-internals.md 1.1).
 *
 * Routes follow NCCL's order of preference (nccl-internals.md 1.4): NVLink
 * (through NVSwitches; NVB through one GPU), then C2C, then PCIe under
 * common switches (PIX/PXB), then through a CPU (PHB), across CPUs (SYS),
 * and last the network (NET). Within the best class every path of the
 * fewest hops and the highest bottleneck bandwidth is kept (up to
 * NSIM_ROUTE_MAX_PATHS), so the fabric can spread flows over them (ECMP).
 *
 * Units: bandwidth in bytes/s (double), time in ps, sizes in bytes.
 * Workload: built once per run; routes asked a few times per channel.
 */
#ifndef NSIM_TOPO_TOPO_H
#define NSIM_TOPO_TOPO_H

#include <stdint.h>

#include "../core/err.h"
#include "../core/sim.h"

#define NSIM_NAME_MAX 64
#define NSIM_ROUTE_MAX_PATHS 64
/* Input limits: they admit 16,384 DGX H100 nodes (131,072 GPUs, the
 * scale runs) with room, and refuse what no machine holds. */
#define NSIM_TOPO_MAX_DEVICES (1u << 23)
#define NSIM_TOPO_MAX_LINKS (1u << 26) /* directed: twice the links */
#define NSIM_TOPO_MAX_LINK_COUNT 1024u  /* lanes of one link */
#define NSIM_TOPO_MAX_LAT_PS 1000000000000ull /* 1 s */
#define NSIM_TOPO_FORMAT "ncclsim-topology"
#define NSIM_TOPO_VERSION 1

typedef enum nsim_dev_type {
    NSIM_DEV_GPU,
    NSIM_DEV_NVSWITCH,
    NSIM_DEV_PCIE_SWITCH,
    NSIM_DEV_CPU,
    NSIM_DEV_NIC,
    NSIM_DEV_SWITCH, /* network (IB / Ethernet) switch */
    NSIM_DEV__COUNT
} nsim_dev_type;

typedef enum nsim_link_type {
    NSIM_LINK_NVLINK,
    NSIM_LINK_PCIE,
    NSIM_LINK_C2C,
    NSIM_LINK_SYS, /* CPU to CPU: UPI, xGMI, ... */
    NSIM_LINK_IB,
    NSIM_LINK_ROCE,
    NSIM_LINK_ETH,
    NSIM_LINK__COUNT
} nsim_link_type;

/* NCCL 2.30 path types, same order (nccl-internals.md 1.4). */
typedef enum nsim_path_type {
    NSIM_PATH_LOC,
    NSIM_PATH_NVL,
    NSIM_PATH_NVB,
    NSIM_PATH_C2C,
    NSIM_PATH_PIX,
    NSIM_PATH_PXB,
    NSIM_PATH_P2C,
    NSIM_PATH_PXN,
    NSIM_PATH_PHB,
    NSIM_PATH_SYS,
    NSIM_PATH_NET,
    NSIM_PATH_DIS,
    NSIM_PATH__COUNT
} nsim_path_type;

typedef enum nsim_link_layer { NSIM_LL_IB, NSIM_LL_ROCE } nsim_link_layer;

/* Plain data describing one device; filled by the caller for
 * nsim_topo_add_device (copied in), read back with nsim_topo_device. */
typedef struct nsim_device {
    char name[NSIM_NAME_MAX]; /* unique id, as in the JSON "id" */
    nsim_dev_type type;
    int32_t host;  /* host (node) index; -1 for fabric switches */
    int32_t rank;  /* GPU: its rank (>= 0); -1 elsewhere or "assign" */
    char gen[16];  /* GPU: "h100", "a100", ...; NIC: model, "cx7" */
    uint32_t sm;   /* GPU: compute capability x10 (derived from gen) */
    uint32_t no_p2p; /* GPU: peer-to-peer unsupported (GeForce-class):
                      * NCCL stages through host memory (SHM) */
    uint32_t nvls; /* NVSwitch: NVLink SHARP capable */
    /* NIC */
    uint32_t nic_ports;
    double port_bw; /* bytes/s per port */
    uint32_t mtu_bytes;
    uint32_t gdr;   /* GPUDirect RDMA capable */
    nsim_link_layer link_layer;
    int32_t rail;   /* rail index, -1 if unknown */
    /* network switch */
    uint32_t radix;
    nsim_time lat_ps; /* switch: port-to-port latency */
} nsim_device;

/* One directed link. */
typedef struct nsim_link {
    uint32_t src, dst;
    nsim_link_type type;
    double bw;          /* bytes/s per direction, all lanes together */
    double lane_bw;     /* bytes/s per direction of one lane or link */
    nsim_time lat_ps;   /* propagation + fixed per-hop latency */
    uint32_t count;     /* NVLinks or PCIe lanes aggregated */
    uint32_t reverse;   /* index of the opposite direction */
} nsim_link;

typedef struct nsim_route {
    nsim_path_type type;
    double bw;          /* bottleneck bandwidth, bytes/s */
    nsim_time lat_ps;   /* sum of link and switch latencies */
    uint32_t hops;      /* links per path */
    uint32_t npaths;    /* equal-cost paths kept */
    const uint32_t *links; /* npaths x hops directed link indices */
} nsim_route;

typedef struct nsim_topo nsim_topo;

NSIM_NODISCARD int nsim_topo_create(const char *name, nsim_topo **out,
                                    nsim_err *err);
void nsim_topo_destroy(nsim_topo *t); /* NULL-safe */

/* Adds a device (copied). GPUs get sm from gen when sm is 0. out may be
 * NULL. Fails on a duplicate or empty name. */
NSIM_NODISCARD int nsim_topo_add_device(nsim_topo *t, const nsim_device *d,
                                        uint32_t *out, nsim_err *err);
/* Adds a bidirectional link a <-> b of count lanes (NVLinks, PCIe lanes)
 * of lane_bw bytes/s each per direction (count 0 counts as 1).
 * Returns the index of the a -> b directed link in out (may be NULL). */
NSIM_NODISCARD int nsim_topo_add_link(nsim_topo *t, uint32_t a, uint32_t b,
                                      nsim_link_type type, double lane_bw,
                                      nsim_time lat_ps, uint32_t count,
                                      uint32_t *out, nsim_err *err);
/* Checks the whole topology (endpoint types per link type, NIC ports and
 * switch radix not exceeded, GPUs connected, ranks 0..n-1 unique, ranks
 * assigned in device order where none is given) and builds the adjacency.
 * Must be called before routes or writers; "what" prefixes messages. */
NSIM_NODISCARD int nsim_topo_finalize(nsim_topo *t, const char *what,
                                      nsim_err *err);

/* Loads a JSON topology file; errors read "FILE: FIELD: expected ...". */
NSIM_NODISCARD int nsim_topo_load(const char *path, nsim_topo **out,
                                  nsim_err *err);
/* Parses topology JSON text; source names it in messages. */
NSIM_NODISCARD int nsim_topo_parse(const char *text, size_t len,
                                   const char *source, nsim_topo **out,
                                   nsim_err *err);
/* Writes the JSON form atomically (temporary file, then rename). */
NSIM_NODISCARD int nsim_topo_save(const nsim_topo *t, const char *path,
                                  nsim_err *err);
/* The JSON text of the topology (malloc'd, caller frees). */
NSIM_NODISCARD int nsim_topo_to_json(const nsim_topo *t, char **out,
                                     nsim_err *err);
/* A 64-bit hash (FNV-1a) of the topology's name, devices and links:
 * equal topologies, equal hashes. Computed once and kept until a device
 * or link is added. Returns NSIM_OK. */
NSIM_NODISCARD int nsim_topo_content_hash(const nsim_topo *t, uint64_t *out);

const char *nsim_topo_name(const nsim_topo *t);
uint32_t nsim_topo_ndevices(const nsim_topo *t);
uint32_t nsim_topo_nlinks(const nsim_topo *t); /* directed */
const nsim_device *nsim_topo_device(const nsim_topo *t, uint32_t i);
const nsim_link *nsim_topo_link(const nsim_topo *t, uint32_t i);
/* Outgoing directed links of device i. */
uint32_t nsim_topo_nout(const nsim_topo *t, uint32_t dev);
const uint32_t *nsim_topo_out(const nsim_topo *t, uint32_t dev);
int nsim_topo_find(const nsim_topo *t, const char *name, uint32_t *out);

uint32_t nsim_topo_nranks(const nsim_topo *t);
uint32_t nsim_topo_nhosts(const nsim_topo *t);
/* NCCL's nodes: a host, or hosts whose devices NVLink joins into one
 * domain (MNNVL, GB200 NVL72 trays); numbered by their lowest host, so
 * without MNNVL node == host. nsim_topo_host_node: UINT32_MAX for -1. */
uint32_t nsim_topo_nnodes(const nsim_topo *t);
uint32_t nsim_topo_host_node(const nsim_topo *t, int32_t host);
/* The ranks grouped by NCCL node, the nodes in order of their first
 * rank and the ranks in order within each: node group g holds
 * (*ranks)[(*start)[g] .. (*start)[g + 1]), *ngroups groups (a rank on
 * no host is a group of its own kind, after the others' order). The
 * caller frees *ranks and *start. NSIM_ENOMEM, nothing to free, if out
 * of memory. */
NSIM_NODISCARD int nsim_topo_group_ranks(const nsim_topo *t, uint32_t **ranks,
                                         uint32_t **start,
                                         uint32_t *ngroups);
/* Device index of the GPU with this rank. */
uint32_t nsim_topo_rank_device(const nsim_topo *t, uint32_t rank);
/* The devices of a host, in id order (*n of them); host -1: the devices
 * of no host (fabric switches); none for a host out of range. */
const uint32_t *nsim_topo_host_devices(const nsim_topo *t, int32_t host,
                                       uint32_t *n);

/* The device of type `type` on dev's host with the fewest-hop route from
 * dev (ties: the lowest index). NSIM_ENOENT if there is none. */
int nsim_topo_nearest(nsim_topo *t, uint32_t dev, nsim_dev_type type,
                      uint32_t *out);

/* PXN (nccl-internals 1.4): the GPU of gpu's host through which gpu
 * sends on nic (its own path to nic is worse than PXN; the other GPU is
 * one NVLink hop away and <= PXB from nic), or UINT32_MAX. */
uint32_t nsim_topo_pxn_gpu(nsim_topo *t, uint32_t gpu, uint32_t nic);
/* 1 when every rank's GPU reaches every GPU of its host over NVLink
 * (the route's type NVL or NVB), else 0 (also before finalize); kept
 * until a device or link is added. */
int nsim_topo_hosts_nvlink_whole(nsim_topo *t);
/* The route src -> dst (cached; valid until the topology is destroyed).
 * NSIM_ENOENT with a message when dst cannot be reached. */
NSIM_NODISCARD int nsim_topo_route(nsim_topo *t, uint32_t src, uint32_t dst,
                                   const nsim_route **out, nsim_err *err);

/* The equal-cost path of route r an InfiniBand QP pair between the
 * single-port NICs a and b takes: one LID route per pair of ports, the
 * same for every QP (models/ib/hca.c; RoCE and multi-port NICs choose by
 * QP number instead). Its r->hops links start at the returned pointer.
 * The pair's ids are mixed (a multiplicative hash, the high bits): a
 * pick linear in the ids (it was a x 31 + b) aliases with the stride of
 * a cluster's device ids, so that every pair of hosts at one distance
 * (a tree's level, a ring's neighbours) took the same spine from every
 * leaf: Tree AllReduce on 256 DGX H100 hosts lost 15 % to it. */
static inline uint32_t nsim_topo_ib_pick(uint32_t a, uint32_t b)
{
    uint64_t v = ((uint64_t)a << 32 | b) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(v >> 32);
}
static inline const uint32_t *nsim_topo_route_path(const nsim_route *r,
                                                   uint32_t pick)
{
    return &r->links[(pick % r->npaths) * r->hops];
}

const char *nsim_dev_type_name(nsim_dev_type t);
const char *nsim_link_type_name(nsim_link_type t);
const char *nsim_path_type_name(nsim_path_type t);
int nsim_dev_type_parse(const char *s, nsim_dev_type *out);
int nsim_link_type_parse(const char *s, nsim_link_type *out);
/* Compute capability x10 for a GPU generation name; 0 if unknown. */
uint32_t nsim_gpu_gen_sm(const char *gen);

#endif
