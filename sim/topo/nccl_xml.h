/* SPDX-License-Identifier: MIT
 *
 * nccl_xml.h - import of NCCL topology XML files (NCCL_TOPO_DUMP_FILE,
 * NCCL_TOPO_FILE; nccl-internals.md 1.2) into an nsim_topo.
 *
 * Owns: reading one or several files with libxml2, checking them (the
 * system version, every attribute's type, dangling NVLink targets,
 * duplicate bus ids, NICs with no speed, truncated or malformed XML: each
 * error names the file, the line and the element), and mapping them onto
 * our devices and links:
 *
 *   cpu          -> cpu device "hH.cpuN"; every pair of CPUs of a host is
 *                   joined by a sys link of NCCL's inter-CPU bandwidth
 *                   (BDW 6, SKL 10, SRP 22, ERP 40 GB/s, AMD 16, ARM 6,
 *                   POWER 32, Zhaoxin 6/9, unknown 5000 = LOC_BW).
 *   pci (bridge) -> pcie_switch "hH.pciBUSID"; branches holding no GPU and
 *                   no NIC are trimmed, Broadcom PEX Gen4/Gen5 two-level
 *                   switches are flattened to one, as NCCL does.
 *   pci + gpu    -> gpu "hH.gpuK" (rank from the rank attribute; gen from
 *                   the PCI device id, else from sm, else the option).
 *   pci (GPU class, no <gpu>: vendor skeletons that NCCL completes from
 *                   NVML) -> the same GPU, completed with what NVML would
 *                   report for the part (PCI device id) or generation
 *                   (--gpu-gen): SXM parts their board's NVLinks into the
 *                   NVSwitch fabric (A100 12, H100/H200 18, B200/B300
 *                   18), PCIe cards none; V100 SXM2's mesh and parts of
 *                   unknown shape need nvlink = NONE. Each assumption is
 *                   a note (nsim_ncclxml_note, opts->warn).
 *   nvlink       -> to an NVSwitch (tclass 0x068000, an unknown bus id or
 *                   fffffff:ff:ff.0): one nvswitch "hH.nvs" per file, as
 *                   NCCL collapses all NVSwitches into one NVS node (for a
 *                   fused multi-node NVLink file this one switch spans the
 *                   trays); to a GPU: a direct GPU-GPU link; to a CPU
 *                   (0x068001): an NVLink to the GPU's CPU.
 *   c2c          -> c2c link GPU <-> its CPU, bw x count / 1000 GB/s.
 *   nic / net    -> nic "hH.netD" (D = the net's dev, its NCCL NET device
 *                   index; also its rail); nets of one <nic> with the same
 *                   speed form one NIC with that many ports.
 *   pcilink      -> a pcie link of LOC_BW between two switches.
 *
 * Bandwidths. A link in our format is count lanes of lane_bw each way.
 * Two mappings (NSIM_XML_BW_*), documented in README "Importing NCCL
 * topology files":
 *   PHYSICAL (default): what the hardware carries, as the presets use:
 *     NVLink per link 20/25/25/14.06/25/50 GB/s for sm60/70/80/86/90/100+,
 *     PCIe per lane 0.25/0.5/0.985/1.969/3.938/7.563 GB/s for Gen1..6.
 *   NCCL: exactly NCCL's figures (1.3): NVLink per link 18/20/20/12/20.6/
 *     40.1, PCIe per lane rate/80 (Gen5 x16 = 48 GB/s).
 *   Both: NET speed Mb/s / 8000 GB/s per port, C2C bw x count / 1000,
 *   inter-CPU from NCCL's table, CPU-attached NICs and pcilink LOC_BW.
 *
 * Ranks: kept when every GPU of every file has one and together they are
 * 0..N-1; otherwise each file's GPUs are renumbered in (rank, document)
 * order after the previous files' GPUs.
 * Not kept (no field in our format): net guid, port, maxconn, latency,
 * coll; CPU affinity. They are read and checked, and listed by
 * nsim_ncclxml_nets().
 * Workload: once per run; files of a few hundred elements.
 */
#ifndef NSIM_TOPO_NCCL_XML_H
#define NSIM_TOPO_NCCL_XML_H

#include <stddef.h>
#include <stdint.h>

#include "../core/err.h"
#include "topo.h"

typedef enum nsim_xml_bw {
    NSIM_XML_BW_PHYSICAL,
    NSIM_XML_BW_NCCL,
} nsim_xml_bw;

/* GPUs listed without <gpu> (vendor skeletons): NVLinks as NVML would
 * report them for the part or generation (AUTO), or none. */
typedef enum nsim_xml_nvl {
    NSIM_XML_NVL_AUTO,
    NSIM_XML_NVL_NONE,
} nsim_xml_nvl;

#define NSIM_XML_NOTE_MAX 512

typedef void nsim_xml_warn_fn(void *ud, const char *msg);

typedef struct nsim_xml_opts {
    nsim_xml_bw bw;
    const char *gpu_gen; /* for GPUs with no sm and no known PCI id */
    double nic_speed;    /* bytes/s for NICs with no speed; 0: an error */
    nsim_xml_nvl nvlink; /* for GPUs without <gpu> */
    nsim_xml_warn_fn *warn; /* optional: notes on odd but valid input and
                             * on what had to be assumed */
    void *warn_ud;
} nsim_xml_opts;

/* What the importer read for one NET device (one <net>). */
typedef struct nsim_xml_net {
    char name[48];
    int32_t host, dev, port, gdr, coll;
    int64_t maxconn;
    uint64_t guid;
    double speed;     /* bytes/s */
    double latency_us;
    uint32_t nic;     /* device index of its NIC in the topology */
} nsim_xml_net;

typedef struct nsim_ncclxml nsim_ncclxml;

/* Reads files[0..n-1] (one per host, or fused multi-host views) into a
 * new, NOT finalized topology *out (the caller may add a fabric, then
 * calls nsim_topo_finalize). opts may be NULL (defaults). The importer
 * object (nets read, for reports) goes to *xml when xml is not NULL;
 * destroy it with nsim_ncclxml_destroy. */
NSIM_NODISCARD int nsim_ncclxml_load(const char *const *files, size_t n,
                                     const nsim_xml_opts *opts,
                                     nsim_topo **out, nsim_ncclxml **xml,
                                     nsim_err *err);
/* One file in memory, finalized (used by the fuzzer and the tests). */
NSIM_NODISCARD int nsim_ncclxml_parse(const char *text, size_t len,
                                      const char *source,
                                      const nsim_xml_opts *opts,
                                      nsim_topo **out, nsim_err *err);
/* One file, finalized: what nsim_cli_load_topo uses for .xml files. */
NSIM_NODISCARD int nsim_ncclxml_load_file(const char *path,
                                          const nsim_xml_opts *opts,
                                          nsim_topo **out, nsim_err *err);

size_t nsim_ncclxml_nnets(const nsim_ncclxml *x);
/* What the files left to the live machine and the import assumed (one
 * line per file and kind of device; also given to opts->warn). */
size_t nsim_ncclxml_nnotes(const nsim_ncclxml *x);
const char *nsim_ncclxml_note(const nsim_ncclxml *x, size_t i);
const nsim_xml_net *nsim_ncclxml_net(const nsim_ncclxml *x, size_t i);
void nsim_ncclxml_destroy(nsim_ncclxml *x); /* NULL-safe */

/* NCCL's figures (nccl-internals.md 1.3), exposed for tests and tools. */
double nsim_ncclxml_nvlink_bw(uint32_t sm, nsim_xml_bw mode); /* bytes/s */
/* Per lane, bytes/s, from a link_speed string ("32.0 GT/s PCIe"). */
double nsim_ncclxml_pcie_lane_bw(const char *link_speed, nsim_xml_bw mode);

#endif
