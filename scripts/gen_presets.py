#!/usr/bin/env python3
"""Writes the built-in topology files under scenarios/ from the figures
below. Each figure carries its source (../shared/reference/*.md sections).
The JSON files are committed; rerun this only to change a preset."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "scenarios")

# --- figures and their sources -----------------------------------------
NVLINK4_BW = "25 GB/s"    # per link per direction after FEC: 26.5625 raw x
                          # 256/257 x RS(544,514) -> 25.0 (hardware-facts 1.1)
NVLINK_HOP_LAT = "250 ns"  # GPU<->NVSwitch; 500 ns GPU-to-GPU as used by
                          # ASTRA-sim (hardware-facts 1.5; NVIDIA publishes none)
H100_NVLINKS = 18         # links per H100 SXM (hardware-facts 1.1, 6)
PCIE5_LANE = "3.938 GB/s"  # 32 GT/s, 128b/130b (hardware-facts 2.1)
PCIE_SW_LAT = "115 ns"    # Broadcom PEX89000 cut-through (hardware-facts 2.5)
PCIE_RC_LAT = "150 ns"    # host-side share of the 300-400 ns end-host
                          # PCIe latency (hardware-facts 2.5, L)
UPI_BW = "22 GB/s"        # NCCL's SRP inter-CPU bandwidth (nccl-internals 1.3)
UPI_LAT = "100 ns"
NDR_PORT = "400 Gb/s"     # NDR 4x100G data rate after FEC (hardware-facts 3.1)
CABLE_LAT = "60 ns"       # ~5 ns/m over a few metres plus PHY/FEC (hw-facts 3.4)
QM9700_LAT = "200 ns"     # Quantum-2: sources give 150-400 ns (hw-facts 3.5)
QM9700_RADIX = 64         # 64 x 400G ports (hardware-facts 3.5)


def dgx_h100_host(host, rank0, devs, links, gen="h100"):
    """One DGX H100 (hardware-facts 6): 8 GPUs x 18 NVLink4 into the
    NVSwitch fabric (one collapsed NVSwitch node, as NCCL does), each GPU
    beside one ConnectX-7 400G NIC under one PCIe Gen5 switch, 4 such
    switches per CPU socket, 2 sockets joined by UPI."""
    h = f"h{host}"
    devs.append({"id": f"{h}.nvs", "type": "nvswitch", "host": host,
                 "nvls": True, "latency": "0 ns"})
    for s in range(2):
        devs.append({"id": f"{h}.cpu{s}", "type": "cpu", "host": host})
    links.append({"a": f"{h}.cpu0", "b": f"{h}.cpu1", "type": "sys",
                  "bw": UPI_BW, "latency": UPI_LAT})
    for g in range(8):
        gpu, sw, nic = f"{h}.gpu{g}", f"{h}.pcisw{g}", f"{h}.nic{g}"
        devs.append({"id": gpu, "type": "gpu", "gen": gen, "host": host,
                     "rank": rank0 + g})
        devs.append({"id": sw, "type": "pcie_switch", "host": host})
        devs.append({"id": nic, "type": "nic", "host": host, "gen": "cx7",
                     "ports": 1, "speed": NDR_PORT, "mtu": 4096,
                     "link_layer": "ib", "rail": g})
        links.append({"a": gpu, "b": f"{h}.nvs", "type": "nvlink",
                      "bw": NVLINK4_BW, "count": H100_NVLINKS,
                      "latency": NVLINK_HOP_LAT})
        links.append({"a": gpu, "b": sw, "type": "pcie", "bw": PCIE5_LANE,
                      "count": 16, "latency": PCIE_SW_LAT})
        links.append({"a": nic, "b": sw, "type": "pcie", "bw": PCIE5_LANE,
                      "count": 16, "latency": PCIE_SW_LAT})
        links.append({"a": sw, "b": f"{h}.cpu{g // 4}", "type": "pcie",
                      "bw": PCIE5_LANE, "count": 16, "latency": PCIE_RC_LAT})


def write(name, topo):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump(topo, f, indent=2)
        f.write("\n")
    print("wrote", path)


def topo(name, comment, devs, links):
    return {"format": "ncclsim-topology", "version": 1, "name": name,
            "comment": comment, "devices": devs, "links": links}


def dgx_h100(nodes):
    devs, links = [], []
    for n in range(nodes):
        dgx_h100_host(n, 8 * n, devs, links)
    if nodes > 1:
        # rail-optimized: one Quantum-2 leaf per rail (NIC index), and a
        # spine joining the leaves so that traffic between rails has a
        # path (as a SuperPOD's spine layer), one uplink per downlink
        devs.append({"id": "ib.spine0", "type": "switch",
                     "radix": QM9700_RADIX, "latency": QM9700_LAT})
        for r in range(8):
            devs.append({"id": f"ib.rail{r}", "type": "switch",
                         "radix": QM9700_RADIX, "latency": QM9700_LAT})
            for n in range(nodes):
                links.append({"a": f"h{n}.nic{r}", "b": f"ib.rail{r}",
                              "type": "ib", "bw": NDR_PORT,
                              "latency": CABLE_LAT})
            links.append({"a": f"ib.rail{r}", "b": "ib.spine0",
                          "type": "ib", "bw": NDR_PORT, "count": nodes,
                          "latency": CABLE_LAT})
    return devs, links


def seed():
    """The seed document's example: four GPUs; GPU0-GPU1 over NVLink,
    GPU0-GPU2 over InfiniBand (GPU0/1 in one host, GPU2/3 in another)."""
    devs, links = [], []
    for host in range(2):
        h = f"h{host}"
        devs.append({"id": f"{h}.cpu", "type": "cpu", "host": host})
        devs.append({"id": f"{h}.pcisw", "type": "pcie_switch", "host": host})
        devs.append({"id": f"{h}.nic", "type": "nic", "host": host,
                     "gen": "cx7", "speed": NDR_PORT, "mtu": 4096})
        links.append({"a": f"{h}.pcisw", "b": f"{h}.cpu", "type": "pcie",
                      "bw": PCIE5_LANE, "count": 16, "latency": PCIE_RC_LAT})
        links.append({"a": f"{h}.nic", "b": f"{h}.pcisw", "type": "pcie",
                      "bw": PCIE5_LANE, "count": 16, "latency": PCIE_SW_LAT})
        for g in range(2):
            gpu = f"gpu{2 * host + g}"
            devs.append({"id": gpu, "type": "gpu", "gen": "h100",
                         "host": host, "rank": 2 * host + g})
            links.append({"a": gpu, "b": f"{h}.pcisw", "type": "pcie",
                          "bw": PCIE5_LANE, "count": 16,
                          "latency": PCIE_SW_LAT})
        # an NVLink bridge between the two GPUs of the host (4 NVLink4)
        links.append({"a": f"gpu{2 * host}", "b": f"gpu{2 * host + 1}",
                      "type": "nvlink", "bw": NVLINK4_BW, "count": 4,
                      "latency": NVLINK_HOP_LAT})
    devs.append({"id": "ib.sw", "type": "switch", "radix": QM9700_RADIX,
                 "latency": QM9700_LAT})
    for host in range(2):
        links.append({"a": f"h{host}.nic", "b": "ib.sw", "type": "ib",
                      "bw": NDR_PORT, "latency": CABLE_LAT})
    return devs, links


def main():
    write("seed-4gpu.topo.json", topo(
        "seed-4gpu", "Seed example: GPU0-GPU1 NVLink, GPU0-GPU2 InfiniBand "
        "(NDR 400G, ConnectX-7). Figures: hardware-facts 1.1, 2.1, 2.5, "
        "3.1, 3.5.", *seed()))
    write("dgx-h100.topo.json", topo(
        "dgx-h100", "DGX H100: 8 H100 SXM, 18 NVLink4 each (25 GB/s/dir "
        "post-FEC) into NVSwitch; 8 ConnectX-7 NDR 400G behind PCIe Gen5 "
        "switches. Figures: hardware-facts 1.1, 1.5, 2.1, 2.5, 3.1, 6; "
        "nccl-internals 1.3.", *dgx_h100(1)))
    write("dgx-h100-2node.topo.json", topo(
        "dgx-h100-2node", "Two DGX H100 nodes, rail-optimized NDR fabric: "
        "one Quantum-2 leaf per rail, joined by a spine (one uplink per "
        "host and rail) for traffic between rails. Figures as dgx-h100 plus "
        "hardware-facts 3.3, 3.5.", *dgx_h100(2)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
