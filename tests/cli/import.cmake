# ncclsim topo import/check on NCCL topology XML (the test bed in
# tests/data/xml, copied from ../shared/topologies), graph and log files,
# cluster builds and bad inputs.
set(X ${NSIM_TESTS}/data/xml)
set(G ${NSIM_TESTS}/data/graph)
set(L ${NSIM_TESTS}/data/log)
# file | options (comma-separated) | expected stdout regex (8 ranks ...)
set(xml_ok
  "alibaba-rtpllm-8xl20-cx8|--nic-speed,400 Gb/s|8 ranks on 1 host"
  "alibaba-simccl-8xa100||8 ranks on 1 host"
  "aws-p4d.24xlarge|--nic-speed,100 Gb/s|8 ranks on 1 host"
  "aws-p4de.24xlarge|--nic-speed,100 Gb/s|8 ranks on 1 host"
  "azure-ncv4||4 ranks on 1 host"
  "azure-ndv2|--gpu-gen,v100,--nic-speed,100 Gb/s,--gpu-nvlink,none|8 ranks on 1 host"
  "azure-ndv4|--gpu-gen,a100,--nic-speed,200 Gb/s|8 ranks on 1 host"
  "azure-ndv5|--gpu-gen,h100,--nic-speed,400 Gb/s|8 ranks on 1 host"
  "community-2xa100pcie-nccl2.30||2 ranks on 1 host"
  "community-2xa6000-nvlinkbridge||2 ranks on 1 host"
  "community-8xrtx3090-pcie||8 ranks on 1 host"
  "hpe-xl675d-8xa100||8 ranks on 1 host"
  "ibmcloud-gx3d-h100x8||8 ranks on 1 host"
  "modal-b200-vm||8 ranks on 1 host"
  "nebius-h100-vm||8 ranks on 1 host"
  "nvidia-dgxa100-mlperf|--gpu-gen,a100,--nic-speed,200 Gb/s|8 ranks on 1 host"
  "oci-bm.gpu.b4.8-a100-flattened|--gpu-gen,a100,--nic-speed,100 Gb/s|8 ranks on 1 host"
  "oci-bm.gpu.h100.8||8 ranks on 1 host"
  "oci-gb300-nvl72-2tray-fused||8 ranks on 2 host"
  "oci-hgx-b300||8 ranks on 1 host")
foreach(e ${xml_ok})
  string(REPLACE "|" ";" f "${e}")
  list(GET f 0 name)
  list(GET f 1 opts)
  list(GET f 2 re)
  string(REPLACE "," ";" opts "${opts}")
  nsim_expect(cli.xml.${name} 0
              CMD ${NCCLSIM} topo check ${opts} ${X}/${name}-topo.xml
              OUT "${re}")
endforeach()
set(xml_bad
  "amd-rccl-8xmi300x||:1: <system>: unknown version \"2\""
  "aws-g5.48xlarge||no GPU: the file lists no <gpu>"
  "aws-p5.48xlarge||no GPU: the file lists no <gpu>"
  "azure-ndv4||:4: <pci busid=\"0003:00:00.0\">: a GPU with no sm.*--gpu-gen GEN.*--nic-speed BW"
  "azure-ndv2|--gpu-gen,v100,--nic-speed,100 Gb/s|a v100 without <gpu>.*give --gpu-nvlink none"
  "alibaba-rtpllm-8xl20-cx8||:11: <net name=\"mlx5_bond_0\">: no speed"
  "community-hgx-h200-baremetal-partial||:53: malformed XML: Premature end"
  "dell-xe8545-4xa100-mlperf|--gpu-gen,a100,--nic-speed,200 Gb/s|<pci busid=\"0000:ba:00.0\">: bus id 0000:ba:00.0 already used at line")
# vendor skeletons: GPUs without <gpu> completed from the PCI id, said so
nsim_expect(cli.xml.nebius_completed 0
            CMD ${NCCLSIM} topo import ${X}/nebius-h100-vm-topo.xml
                -o import-nebius.topo.json
            ERR "note: .*nebius-h100-vm-topo.xml: 8 GPU.s. listed without <gpu> .NCCL fills them in from NVML.: assumed H100 SXM5 80GB .PCI device 0x2330.*18 NVLink4")
nsim_expect(cli.xml.gpu_nvlink_bad 2
            CMD ${NCCLSIM} topo check --gpu-nvlink some
                ${X}/nebius-h100-vm-topo.xml
            ERR "bad value 'some' for option --gpu-nvlink")
foreach(e ${xml_bad})
  string(REPLACE "|" ";" f "${e}")
  list(GET f 0 name)
  list(GET f 1 opts)
  list(GET f 2 re)
  string(REPLACE "," ";" opts "${opts}")
  nsim_expect(cli.xml_bad.${name} 1
              CMD ${NCCLSIM} topo check ${opts} ${X}/${name}-topo.xml
              ERR "${re}")
endforeach()
file(STRINGS ${NSIM_TESTS}/data/bad_xml/expected.txt bad_xml_lines)
foreach(line ${bad_xml_lines})
  string(REGEX MATCH "^[^:]+" f "${line}")
  string(REGEX REPLACE "[][().*+?^$]" "." re "${line}")
  nsim_expect(cli.bad_xml.${f} 1
              CMD ${NCCLSIM} topo check ${NSIM_TESTS}/data/bad_xml/${f}
              ERR "${re}")
endforeach()

# Import: the hand-written DGX H100 pair as a 2-node cluster; NCCL's own
# figures on request (18 x 20.6 = 370.8 GB/s NVLink, Gen5 x16 = 48 GB/s).
nsim_expect(cli.import.dgx_h100_pair 0
            CMD ${NCCLSIM} topo import ${X}/dgx-h100-handmade-host0.xml
                ${X}/dgx-h100-handmade-host1.xml --fabric rail-fat-tree
                -o import-pair.topo.json
            OUT "16 ranks on 2 host\\(s\\).*16 NET devices")
nsim_expect(cli.import.no_fabric 1
            CMD ${NCCLSIM} topo import ${X}/dgx-h100-handmade-host0.xml
                ${X}/dgx-h100-handmade-host1.xml -o import-nofab.topo.json
            ERR "reaches no path")
nsim_expect(cli.import.usage 2 CMD ${NCCLSIM} topo import
            ${X}/dgx-h100-handmade-host0.xml ERR "-o OUT.json")
nsim_expect(cli.show.nccl_bw 0
            CMD ${NCCLSIM} topo show --bw nccl ${X}/dgx-h100-handmade-host0.xml
            OUT "gpu0 +X +PIX +NV18.*h0.gpu0 +h0.pci0000:15:00.0 +pcie +16 +48.00.*h0.gpu0 +h0.nvs +nvlink +18 +370.80")
nsim_expect(cli.show.flattened_bcm 0
            CMD ${NCCLSIM} topo show ${X}/oci-bm.gpu.h100.8-topo.xml
            OUT "gpu0 +X +PIX +NV18")
nsim_expect(cli.dot 0 CMD ${NCCLSIM} topo dot ${X}/azure-ncv4-topo.xml
            OUT "^graph \"azure-ncv4-topo\" {.*\"h0.gpu0\" -- \"h0.cpu0\"")

# Builder and presets.
nsim_expect(cli.build.1024 0
            CMD ${NCCLSIM} topo build --nodes 1024 --node-preset dgx-h100
                --fabric rail-fat-tree
            OUT "1024 nodes, 8192 ranks")
nsim_expect(cli.build.roce 0
            CMD ${NCCLSIM} topo build --nodes 64 --node-preset hgx-h200
                --fabric rail-fat-tree --roce --oversubscription 3
            OUT "64 nodes, 512 ranks")
nsim_expect(cli.build.small_radix 1
            CMD ${NCCLSIM} topo build --nodes 4096 --node-preset dgx-h100
                --radix 64
            ERR "radix 64 cannot hold")
nsim_expect(cli.build.unknown_preset 2
            CMD ${NCCLSIM} topo build --node-preset dgx-z9 ERR "one of dgx-a100")
foreach(p dgx-a100 hgx-h200 pcie-8xl40s pcie-2gpu-nop2p gb200-nvl)
  nsim_expect(cli.preset.${p} 0
              CMD ${NCCLSIM} topo check ${NSIM_SRC}/scenarios/${p}.topo.json
              OUT ": ok: ")
endforeach()

# Graph files.
nsim_expect(cli.graph.ncv4 0
            CMD ${NCCLSIM} topo graph ${G}/azure-ncv4-graph.xml
                --topo ${X}/azure-ncv4-topo.xml
            OUT "graph 0: pattern 4 \\(ring\\), 2 channel.*0 : 0 1 2 3")
nsim_expect(cli.graph.nets 0
            CMD ${NCCLSIM} topo graph ${G}/two_host_ring.xml
                --topo ${X}/dgx-h100-handmade-host0.xml
            OUT "0 : NET/0\\(h0.net0\\) 0 7 6 5 4 3 2 1 NET/1\\(h0.net1\\)")
nsim_expect(cli.graph.rank_out_of_range 1
            CMD ${NCCLSIM} topo graph ${G}/rank_out_of_range.xml
                --topo ${X}/azure-ncv4-topo.xml
            ERR "rank_out_of_range.xml:5: <gpu>: rank 9 does not fit")
nsim_expect(cli.graph.bad_type 1
            CMD ${NCCLSIM} topo graph ${G}/bad_type.xml
                --topo ${X}/azure-ncv4-topo.xml
            ERR "bad_type.xml:2: <graph>: typeintra=\"NVLINK\"")

# Logs and nccl-tests tables.
nsim_expect(cli.log.21 0 CMD ${NCCLSIM} log
            ${L}/21_aws-p5-h100-2node-efa-allreduce-nccl2.22.3.txt
            OUT "nRanks 16 nNodes 2 localRanks 8.*rings \\(16 channels\\).*00 : 0 7 6 5 4 3 2 1 9 10 11 12 13 14 15 8.*: 32 rows, 16 ranks listed")
nsim_expect(cli.log.43 0 CMD ${NCCLSIM} log
            ${L}/43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt
            OUT "NICs: \\[0\\]mlx5_0:1/IB.*rings \\(8 channels\\).*29 rows")
nsim_expect(cli.log.none 1 CMD ${NCCLSIM} log
            ${L}/12_azure-nd-a100-v4-1node-allreduce-vendor.txt
            ERR "no NCCL INFO lines and no nccl-tests table")
