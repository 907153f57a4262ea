/* SPDX-License-Identifier: MIT
 *
 * params.c - the model constants table (see params.h).
 */
#include "params.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/core/jread.h"
#include "sim/core/units.h"
#include "sim/topo/topo.h"

#define P(name, kind, value, source)                                         \
    {#name, NSIM_PK_##kind, offsetof(nsim_params, name), value, source}

const nsim_param_info nsim_param_table[] = {
    P(nvlink_payload_bytes, BYTES, "128",
      "hw 1.2: SM load/store payload per NVLink packet is 128 B"),
    P(nvlink_header_bytes, BYTES, "16",
      "hw 1.2: 16 B header per 128 B payload (P/(P+16) = 88.9 %)"),
    P(nvlink_response_bytes, BYTES, "16",
      "hw 1.2-1.3: each write draws a response on the reverse direction; "
      "with both directions loaded this gives NVIDIA's ~80 % of peak "
      "(128/(128+16+16)) and NCCL's 20.6 of 25.8 GB/s per link"),
    P(nvlink_efficiency_pct, COUNT, "100",
      "calibration knob (100: none): the share of an NVLink's rate left "
      "after losses no mechanism here carries (headers and responses are "
      "modelled); `ncclsim calibrate --try nvlink_efficiency_pct` fits it "
      "from large NVLink-bound sizes"),
    P(pcie_efficiency_pct, COUNT, "100",
      "calibration knob (100: none): the share of a PCIe link's rate left "
      "after losses no mechanism here carries (TLP framing, MPS and read "
      "completions are modelled); fitted from large PCIe-bound sizes"),
    P(net_efficiency_pct, COUNT, "100",
      "calibration knob (100: none): the share of an IB/RoCE/Ethernet "
      "link's rate (NIC ports and switch links) left after losses no "
      "mechanism here carries (headers and ACKs are modelled; fabric "
      "congestion, link-level credits and adaptive routing are not); "
      "fitted from large multi-host sizes"),
    P(nvls_multimem_pct_sm90, COUNT, "85",
      "nccl 4.2: NCCL's nvlsEfficiency for Hopper (0.85): multimem "
      "reductions, loads and stores through the NVSwitch move bytes at 85 % "
      "of the P2P store rate of the same NVLink; every NVLS byte holds the "
      "port 100/85 as long. NCCL issue #1455 (5-8 H100s, NVLS forced): "
      "algbw 258/265/270/273 GB/s, a constant 0.86 of 370 x n/(n+1), the "
      "NVLS bytes per port; range 1-100"),
    P(nvls_multimem_pct_sm100, COUNT, "74",
      "nccl 4.2: NCCL's nvlsEfficiency for Blackwell (0.74); as above"),
    P(pcie_mps_bytes, BYTES, "256",
      "hw 2.2: servers use MPS 128/256/512; 256 matches the measured H100 "
      "52.8 GB/s Gen5 write rate (hw 2.4)"),
    P(pcie_tlp_overhead_bytes, BYTES, "24",
      "hw 2.2: MWr64 framing+sequence+LCRC 8 + header 16 bytes per TLP"),
    P(pcie_cpl_overhead_bytes, BYTES, "20",
      "hw 2.2: CplD overhead 20 bytes per completion"),
    P(pcie_read_completion_bytes, BYTES, "64",
      "hw 2.2: reads complete in read-completion-boundary pieces (RCB 64 B "
      "observed on several chipsets); hw 2.3: 64-B completions give 10.8 "
      "of 15.75 GB/s on Gen3 x16"),
    P(stream_chunk_bytes, BYTES, "65536",
      "simulation granularity (not physical): NVLink and PCIe streams move "
      "in pieces of this size; smaller is slower to simulate"),
    P(stream_min_pieces, COUNT, "4",
      "simulation granularity (not physical): a stream of fewer than this "
      "many stream_chunk_bytes pieces is cut into this many (none below 4 "
      "KiB), so that a slice smaller than a few pieces still streams "
      "through its hops as the hardware's 256-B packets do; each hop "
      "stores and forwards a whole piece, an error of at most 1/N of the "
      "slice's time per hop. 1: pieces of stream_chunk_bytes only (before "
      "2026-12-06); docs/fidelity.md"),
    P(nvlink_fair_share, COUNT, "0",
      "model choice, packet fidelity: hw 1.2: an NVLink packet carries at "
      "most 256 B and a port or NVSwitch output interleaves the packets of "
      "its inputs; the stream pieces (stream_chunk_bytes, not physical) "
      "pass a FIFO port whole, in turns. 1: the inputs with pieces waiting "
      "share the port (FIFO within an input); a piece still passes each "
      "hop whole before the next, which at a shared port delays it. 0 "
      "(default): FIFO. Measured against hwdata and the flow model: "
      "docs/fidelity.md"),
    P(pcie_fair_share, COUNT, "0",
      "model choice, packet fidelity: hw 2.2: PCIe moves TLPs of at most "
      "MPS bytes, interleaved at a switch port; as nvlink_fair_share, for "
      "PCIe links. 0 (default): FIFO"),
    P(h100_hbm_bw, BW, "3350 GB/s", "hw 5: H100 SXM HBM3 3.35 TB/s"),
    P(a100_hbm_bw, BW, "2039 GB/s", "hw 5: A100 80 GB 2.039 TB/s"),
    P(b200_hbm_bw, BW, "8000 GB/s", "hw 5: B200 ~8.0 TB/s"),
    P(other_hbm_bw, BW, "1555 GB/s",
      "hw 5: A100 40 GB 1.555 TB/s, used for generations with no entry"),
    P(h100_sm_count, COUNT, "132", "hw 5: H100 SXM 132 SMs"),
    P(a100_sm_count, COUNT, "108", "hw 5: A100 108 SMs"),
    P(b200_sm_count, COUNT, "148", "B200: 148 SMs (NVIDIA spec; M)"),
    P(other_sm_count, COUNT, "108", "as A100 (hw 5)"),
    P(kernel_launch_ps, TIME, "5 us",
      "hw 5: kernel launch, host submit + GPU start, 4-6 us"),
    P(p2p_step_sync_ps, TIME, "2.9 us",
      "per Simple slice: the sender's fence and tail store, the "
      "receiver's poll. nccl 4.1 hwLat NVLINK Ring Simple: 3.4 us per "
      "ring step incl. flag polling (hw 1.5); a small-message step is one "
      "slice, which on a DGX H100 also spends 2 x 250 ns on the NVLink "
      "path: 3.4 - 0.5 = 2.9 us, so an 8-byte 8-rank ring takes 5 + 14 x "
      "3.4 us as NCCL's own model (8.4 + 14 x 3.4)"),
    P(ll_step_sync_ps, TIME, "100 ns",
      "per LL step: no fence and no tail store, the receiver polls the "
      "flag in every 8-byte word (nccl 3.1); nccl 4.1 hwLat NVLINK Ring "
      "LL 0.6 us per step less the 0.5 us NVLink path, as for Simple"),
    P(ll128_step_sync_ps, TIME, "1.4 us",
      "per LL128 step: one flag per 128-byte line, polled by the "
      "receiver's warps (nccl 3.1); nccl 4.1 hwLat NVLINK Ring LL128 "
      "1.9 us per step less the 0.5 us NVLink path, as for Simple"),
    P(ib_header_bytes, BYTES, "26",
      "hw 3.3: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 per IB packet"),
    P(ib_reth_bytes, BYTES, "16", "hw 3.3: RETH on the first packet"),
    P(ib_immdt_bytes, BYTES, "4", "hw 3.3: ImmDt on the last packet"),
    P(ib_ack_bytes, BYTES, "30", "hw 3.3: IB ACK packet 30 B"),
    P(roce_header_bytes, BYTES, "82",
      "hw 3.3: RoCEv2/IPv4 per packet incl. preamble and IFG"),
    P(ib_ack_every_packets, COUNT, "16",
      "hw 3.3: ACKs are cumulative; ConnectX coalescing is not published "
      "(L); one ACK per 16 packets and one for every message's last"),
    P(cts_entry_bytes, BYTES, "64",
      "nccl 5.3: one 64-byte CTS FIFO entry per posted receive"),
    P(hca_doorbell_ps, TIME, "200 ns",
      "hw 4.2: MMIO doorbell write (posted); hw 2.5 end-host PCIe latency"),
    P(hca_wqe_fetch_ps, TIME, "800 ns",
      "hw 4.2: one PCIe read round trip per WQE fetch; hw 2.5: 0.5-1 us"),
    P(hca_cqe_write_ps, TIME, "300 ns",
      "hw 4.2 / 2.5: 64-byte CQE DMA write to host memory"),
    P(hca_dma_read_outstanding, COUNT, "16",
      "hw 2.4: read throughput is bounded by bytes in flight / RTT; 16 MTU "
      "reads (64 KiB) cover 50 GB/s at ~1.3 us"),
    P(ib_timeout_unit_ps, TIME, "4096 ns",
      "nccl 5.2: the local ACK timeout is 4.096 us x 2^timeout (IBTA "
      "vol. 1 9.7.6.1.3)"),
    P(ib_timeout_exp, COUNT, "20",
      "nccl 5.2: NCCL_IB_TIMEOUT default 20, 4.096 us x 2^20 = 4.3 s per "
      "try"),
    P(ib_retry_cnt, COUNT, "7",
      "nccl 5.2: NCCL_IB_RETRY_CNT default 7 retries (timeouts and NAK "
      "sequence errors) before the QP goes to ERR"),
    P(ib_max_rd_atomic, COUNT, "16",
      "hw 4.2: mlx5 max_qp_rd_atom 16 outstanding RDMA READs per QP (NCCL "
      "itself sets max_rd_atomic 1 on its QPs, nccl 5.2)"),
    P(qp_rate_limit_mbps, COUNT, "0",
      "per-QP rate limit in Mb/s (ibv_qp_attr.rate_limit, which is in "
      "kb/s); 0 = none, NCCL sets none"),
    P(proxy_action_ps, TIME, "375 ns",
      "nccl 4.1: NCCL models 1.0 us of network overhead per step (Intel "
      "hosts), x3 for Simple: 3 us per ring step; a Simple ring step is "
      "2 slices with ~4 proxy actions each (isend, poll send, poll recv, "
      "repost): 3 us / 8 = 375 ns per action"),
    P(net_reconnect_ps, TIME, "1 ms",
      "nccl 5.2: a new NET connection is set up over a TCP socket (device "
      "lists, QP metadata, a ready flag: several round trips) plus QP "
      "creation and RTR/RTS transitions; order of a millisecond (L)"),
    P(gpu_memory_latency_ps, TIME, "600 ns",
      "hw 2.5: DMA read round trip device->memory ~0.5-1 us; also one GPU "
      "poll of the tail word a NET proxy stores after a Simple receive"),
    /* RC receiver-not-ready (harden-faults) */
    P(ib_min_rnr_timer, COUNT, "12",
      "nccl 5.2: NCCL's QPs have min_rnr_timer 12; IBTA vol. 1 9.7.5.2.8 / "
      "ibv_modify_qp(3) code 12 = 0.64 ms, the wait an RNR NAK asks for "
      "(range 0..31)"),
    P(ib_rnr_retry, COUNT, "7",
      "nccl 5.2: NCCL's QPs have rnr_retry 7, which verbs takes as retry "
      "for ever (ibv_modify_qp(3); range 0..7)"),
    /* flow fidelity (scale-flow) */
    P(flow_control_bytes, BYTES, "256",
      "solver setting, not hardware: a piece with at most this many wire "
      "bytes on every hop (IB ACK 30 B, CTS 64 B, a zero-byte "
      "WRITE_WITH_IMM) is a delay in flow fidelity and shares no "
      "bandwidth; its bytes are < 1 % of a 64 KiB slice's"),
    P(flow_passes, COUNT, "2",
      "solver setting: recompute passes after a change; a flow whose rate "
      "falls passes the room it leaves to the flows of its other servers "
      "in the next pass (2: the agreement grid is the same with 1, 2, 4 "
      "and 8; 1,024-GPU NVLSTree 1 GiB within 0.02 % of 4, 64 hosts "
      "256 MiB within 0.4 %, for about a quarter less CPU; "
      "docs/fidelity.md)"),
    P(flow_check, COUNT, "0",
      "diagnostic, not a model: 1 checks after every recompute that each "
      "flow has a saturated server (within 0.1 %), as max-min requires, "
      "and counts those that have none (`run --timing`: \"below "
      "max-min\"); it reads every flow each time, so runs take longer"),
    P(flow_auto_packets, COUNT, "30000000",
      "solver setting: --fidelity auto (the default) runs flow, before "
      "any plan, where the packet model would move more than this many "
      "packets (NET bytes in MTU packets) and stream pieces (NVLink, "
      "PCIe): a packet or piece costs 4 to 27 events (docs/fidelity.md, "
      "\"auto\"), so past this a packet run passes flow_auto_events"),
    P(flow_auto_events, COUNT, "100000000",
      "solver setting: --fidelity auto (the default) runs flow where the "
      "packet plan's events, estimated before the run, pass this: the "
      "packet model runs 4 to 29 M events a CPU second on this machine "
      "(docs/fidelity.md, \"auto\"), so about 4-25 s a size"),
    /* ---- validate (issue 11): the host backend's CPU cores as ranks ---- */
    P(host_core_copy_bw, BW, "6 GB/s",
      "calibration: one thread's memcpy rate on the dev machine (2 cores, "
      "64 MiB buffers, best of 5), `ncclsim validate --describe-host` "
      "reruns it; the streaming rate of a rank of gen \"host\" (a core "
      "plays a channel's thread block)"),
    /* ---- host memory: staging without GPUDirect RDMA, SHM ---- */
    P(host_mem_bw, BW, "307.2 GB/s",
      "hw 6 (DGX H100 CPU: Xeon Platinum 8480C, Sapphire Rapids): 8 DDR5-4800 "
      "channels per socket x 8 B = 307.2 GB/s (Intel's part spec; M). Every "
      "copy that stages in host memory passes this server of its CPU: the "
      "GPU's or NIC's write and the NIC's or GPU's read of the same bytes; "
      "`ncclsim calibrate --try host_mem_bw` fits it from large host-staged "
      "sizes (no GPUDirect RDMA, SHM)"),
    {NULL, 0, 0, NULL, NULL},
};

/* ---- ranges --------------------------------------------------------------
 * Every param has a range (in its unit: bytes, a count, bytes/s, ps): its
 * kind's, unless the table below narrows it. A value outside is refused
 * with the file, the param, the range and the value: 0 where a model
 * divides, or absurd work (1-byte stream pieces), never reaches a model.
 * New params get their kind's range; add a line here for a tighter one. */

typedef struct param_range {
    const char *name;
    double lo, hi;
    const char *why;
} param_range;

static const param_range kind_range[] = {
    [NSIM_PK_BYTES] = {NULL, 0, 1073741824.0, "0 .. 1 GiB"},
    [NSIM_PK_COUNT] = {NULL, 0, 1e6, "0 .. 1000000"},
    /* a physical floor (1 Mb/s) and ceiling (100 TB/s, over any HBM) */
    [NSIM_PK_BW] = {NULL, 125e3, 1e14, "1 Mb/s .. 100 TB/s"},
    [NSIM_PK_TIME] = {NULL, 0, 100e12, "0 .. 100 s"},
};

static const param_range range_overrides[] = {
    /* a packet carries at least one 16-byte flit; fabric.c divides */
    {"nvlink_payload_bytes", 16, 4096, "16 B .. 4 KiB"},
    {"nvlink_efficiency_pct", 1, 100, "a percentage, 1 .. 100"},
    {"pcie_efficiency_pct", 1, 100, "a percentage, 1 .. 100"},
    {"net_efficiency_pct", 1, 100, "a percentage, 1 .. 100"},
    {"nvls_multimem_pct_sm90", 1, 100, "a percentage, 1 .. 100"},
    {"nvls_multimem_pct_sm100", 1, 100, "a percentage, 1 .. 100"},
    /* PCIe base spec: Max_Payload_Size 128 .. 4096 bytes */
    {"pcie_mps_bytes", 128, 4096, "128 B .. 4 KiB (PCIe MPS)"},
    /* the read completion boundary is 64 or 128 bytes, a completion at
     * most MPS */
    {"pcie_read_completion_bytes", 64, 4096, "64 B .. 4 KiB"},
    /* simulation work grows as bytes / chunk: at 4 KiB a stream takes 16x
     * the default's pieces (a 1-byte piece made one 1 GiB transfer 10^9
     * events); above 64 MiB a chunk is larger than any step */
    {"stream_chunk_bytes", 4096, 67108864.0, "4 KiB .. 64 MiB"},
    /* at least one piece; 64 keeps 4 KiB pieces to slices of 256 KiB */
    {"stream_min_pieces", 1, 64, "1 .. 64 pieces"},
    {"nvlink_fair_share", 0, 1, "0 .. 1 (0: FIFO, 1: shared)"},
    {"pcie_fair_share", 0, 1, "0 .. 1 (0: FIFO, 1: shared)"},
    {"h100_sm_count", 1, 1024, "1 .. 1024 SMs"},
    {"a100_sm_count", 1, 1024, "1 .. 1024 SMs"},
    {"b200_sm_count", 1, 1024, "1 .. 1024 SMs"},
    {"other_sm_count", 1, 1024, "1 .. 1024 SMs"},
    {"ib_ack_every_packets", 1, 65536, "1 .. 65536 packets"},
    {"hca_dma_read_outstanding", 1, 1024, "1 .. 1024 reads"},
    /* IBTA: the local ACK timeout is a 5-bit field, 0 meaning infinite
     * (not modelled); NCCL_IB_TIMEOUT 1 .. 31 */
    {"ib_timeout_exp", 1, 31, "1 .. 31"},
    /* IBTA: retry_cnt is a 3-bit field */
    {"ib_retry_cnt", 0, 7, "0 .. 7"},
    /* max_rd_atomic is an 8-bit field; 0 would never issue a READ */
    {"ib_max_rd_atomic", 1, 255, "1 .. 255"},
    {"cts_entry_bytes", 1, 4096, "1 B .. 4 KiB"},
    {"ib_timeout_unit_ps", 1e3, 1e12, "1 ns .. 1 s"},
    {"qp_rate_limit_mbps", 0, 1e7, "0 .. 10000000 Mb/s (0: none)"},
    /* flow fidelity: at least one pass; auto from one packet to 10^15 */
    {"flow_control_bytes", 0, 65536, "0 .. 64 KiB"},
    {"flow_passes", 1, 64, "1 .. 64 passes"},
    {"flow_check", 0, 1, "0 .. 1 (off, on)"},
    {"flow_auto_packets", 1, 1e15, "1 .. 10^15 packets"},
    {"flow_auto_events", 1, 1e15, "1 .. 10^15 events"},
    {NULL, 0, 0, NULL},
};

static const param_range *range_of(const nsim_param_info *pi)
{
    for (const param_range *r = range_overrides; r->name; r++)
        if (strcmp(r->name, pi->name) == 0)
            return r;
    return &kind_range[pi->kind];
}

const char *nsim_param_range_text(const nsim_param_info *pi)
{
    return range_of(pi)->why;
}

static double value_of(const nsim_params *p, const nsim_param_info *pi)
{
    const char *base = (const char *)p + pi->offset;
    switch (pi->kind) {
    case NSIM_PK_BW:
        return *(const double *)base;
    case NSIM_PK_TIME:
        return (double)*(const nsim_time *)base;
    default:
        return (double)*(const uint64_t *)base;
    }
}

static int check_range(const nsim_params *p, const nsim_param_info *pi,
                       const char *text, const char *what, nsim_err *err)
{
    const param_range *r = range_of(pi);
    double v = value_of(p, pi);
    if (v >= r->lo && v <= r->hi)
        return NSIM_OK;
    return NSIM_ERR(err, NSIM_ECONFIG,
                    "%s: params.%s: \"%s\" is outside its range %s", what,
                    pi->name, text, r->why);
}

static int set_value(nsim_params *p, const nsim_param_info *pi,
                     const char *text, const char *what, nsim_err *err)
{
    char *base = (char *)p + pi->offset;
    const char *why = NULL;
    int rc = NSIM_OK;
    switch (pi->kind) {
    case NSIM_PK_BYTES:
    case NSIM_PK_COUNT:
        rc = nsim_units_parse_size(text, (uint64_t *)base, &why);
        break;
    case NSIM_PK_BW:
        rc = nsim_units_parse_bw(text, (double *)base, &why);
        break;
    case NSIM_PK_TIME:
        rc = nsim_units_parse_time(text, (nsim_time *)base, &why);
        break;
    }
    if (rc != NSIM_OK)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: params.%s: \"%s\": %s", what,
                        pi->name, text, why);
    return NSIM_OK;
}

void nsim_params_defaults(nsim_params *p)
{
    memset(p, 0, sizeof *p);
    for (const nsim_param_info *pi = nsim_param_table; pi->name; pi++)
        if (set_value(p, pi, pi->value, "defaults", NULL) != NSIM_OK ||
            check_range(p, pi, pi->value, "defaults", NULL) != NSIM_OK)
            NSIM_PANIC("bad default for %s", pi->name);
}

static const nsim_param_info *find(const char *name)
{
    for (const nsim_param_info *pi = nsim_param_table; pi->name; pi++)
        if (strcmp(pi->name, name) == 0)
            return pi;
    return NULL;
}

int nsim_params_apply(nsim_params *p, const cJSON *obj, const char *what,
                      nsim_err *err)
{
    if (!cJSON_IsObject(obj))
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: params: expected an object",
                        what);
    for (const cJSON *it = obj->child; it != NULL; it = it->next) {
        const nsim_param_info *pi = find(it->string);
        if (pi == NULL)
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: params.%s: unknown parameter (see "
                            "`ncclsim params`)",
                            what, it->string);
        const cJSON *v = it;
        if (cJSON_IsObject(v))
            v = cJSON_GetObjectItemCaseSensitive(v, "value");
        char num[64];
        const char *text = NULL;
        if (cJSON_IsString(v)) {
            text = v->valuestring;
        } else if (cJSON_IsNumber(v) && pi->kind != NSIM_PK_BW &&
                   pi->kind != NSIM_PK_TIME) {
            snprintf(num, sizeof num, "%.17g", v->valuedouble);
            text = num;
        } else {
            return NSIM_ERR(err, NSIM_ECONFIG,
                            "%s: params.%s: expected %s", what, pi->name,
                            pi->kind == NSIM_PK_BW     ? "a bandwidth string "
                                                         "such as \"25 GB/s\""
                            : pi->kind == NSIM_PK_TIME ? "a time string such "
                                                         "as \"1 us\""
                                                       : "a whole number");
        }
        NSIM_TRY(set_value(p, pi, text, what, err));
        NSIM_TRY(check_range(p, pi, text, what, err));
    }
    return NSIM_OK;
}

int nsim_params_load(nsim_params *p, const char *path, nsim_err *err)
{
    cJSON *root = NULL;
    NSIM_TRY(nsim_json_load(path, &root, err));
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(root, "params");
    int rc = nsim_params_apply(p, obj ? obj : root, path, err);
    cJSON_Delete(root);
    return rc;
}

static void format_value(const nsim_params *p, const nsim_param_info *pi,
                         char *buf, size_t len)
{
    const char *base = (const char *)p + pi->offset;
    switch (pi->kind) {
    case NSIM_PK_BYTES:
    case NSIM_PK_COUNT:
        snprintf(buf, len, "%llu",
                 (unsigned long long)*(const uint64_t *)base);
        break;
    case NSIM_PK_BW:
        nsim_units_format_bw(*(const double *)base, buf, len);
        break;
    case NSIM_PK_TIME:
        nsim_units_format_time(*(const nsim_time *)base, buf, len);
        break;
    }
}

int nsim_params_to_json(const nsim_params *p, char **out, nsim_err *err)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *ps = cJSON_AddObjectToObject(root, "params");
    int ok = root != NULL && ps != NULL;
    for (const nsim_param_info *pi = nsim_param_table; ok && pi->name; pi++) {
        char buf[64];
        format_value(p, pi, buf, sizeof buf);
        cJSON *e = cJSON_AddObjectToObject(ps, pi->name);
        ok = e && cJSON_AddStringToObject(e, "value", buf) &&
             cJSON_AddStringToObject(e, "range", range_of(pi)->why) &&
             cJSON_AddStringToObject(e, "source", pi->source);
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "params: out of memory");
    *out = text;
    return NSIM_OK;
}

double nsim_params_multimem_factor(const nsim_params *p, uint32_t sm)
{
    uint64_t pct = sm >= 100 ? p->nvls_multimem_pct_sm100
                   : sm >= 90 ? p->nvls_multimem_pct_sm90
                              : 100;
    return 100.0 / (double)pct;
}

double nsim_params_link_efficiency(const nsim_params *p, int link_type)
{
    switch (link_type) {
    case NSIM_LINK_NVLINK: return (double)p->nvlink_efficiency_pct / 100.0;
    case NSIM_LINK_PCIE: return (double)p->pcie_efficiency_pct / 100.0;
    case NSIM_LINK_IB:
    case NSIM_LINK_ROCE:
    case NSIM_LINK_ETH: return (double)p->net_efficiency_pct / 100.0;
    default: return 1.0;
    }
}

double nsim_params_sm_stream_bw(const nsim_params *p, const char *gen)
{
    if (strcmp(gen, "h100") == 0 || strcmp(gen, "h200") == 0 ||
        strcmp(gen, "h800") == 0 || strcmp(gen, "h20") == 0 ||
        strcmp(gen, "gh200") == 0)
        return p->h100_hbm_bw / (double)p->h100_sm_count;
    if (strcmp(gen, "a100") == 0 || strcmp(gen, "a30") == 0)
        return p->a100_hbm_bw / (double)p->a100_sm_count;
    if (strncmp(gen, "b2", 2) == 0 || strncmp(gen, "gb", 2) == 0 ||
        strncmp(gen, "b3", 2) == 0)
        return p->b200_hbm_bw / (double)p->b200_sm_count;
    if (strcmp(gen, "host") == 0) /* validate's host backend: a CPU core */
        return p->host_core_copy_bw;
    return p->other_hbm_bw / (double)p->other_sm_count;
}

nsim_time nsim_params_step_sync_ps(const nsim_params *p, int proto,
                                   int over_net)
{
    /* over NET a Simple slice's tail is the proxy's store, seen at the
     * thread block's next poll of that word: one GPU read round trip */
    if (over_net && proto == 0 /* NSIM_PROTO_SIMPLE */)
        return p->gpu_memory_latency_ps;
    switch (proto) {
    case 1: /* NSIM_PROTO_LL */
        return p->ll_step_sync_ps;
    case 2: /* NSIM_PROTO_LL128 */
        return p->ll128_step_sync_ps;
    default:
        return p->p2p_step_sync_ps;
    }
}
