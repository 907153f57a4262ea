# NCCL_CROSS_NIC reaches the planner's search: with 0 every ring enters
# and leaves a host on one NIC (NET/c in, NET/c out), and the GPU leaving
# the host reaches that NIC by PXN: over NVLink into the NIC's GPU, never
# across the CPUs' SYS link.
nsim_expect(cli.crossnic0.rings 0
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/crossnic0-2node.json --debug
            OUT "Channel 00/16 : 0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9\n[^\n]*Channel 01/16 : 1 0 7 6 5 4 3 2 9 8 15 14 13 12 11 10\n.*Channel 00/0 : 1\\[1\\] -> 8\\[0\\] \\[send\\] via NET/IB/0\\(0\\)/GDRDMA")
nsim_expect(cli.crossnic0.pxn 0
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/crossnic0-2node.json --stats
            OUT "# links [^\n]*\n#   h[01]\\.(gpu[0-7] +-> h[01]\\.nvs|nvs +-> h[01]\\.gpu[0-7]) +nvlink "
            NOT_OUT " sys ")
# hwdata 28's hosts (validate.sh): one H100 and one 400G RoCE NIC each,
# no GPUDirect RDMA.
nsim_expect(cli.topo.nogdr_pair 0
            CMD ${NCCLSIM} topo check ${NSIM_TESTS}/data/h100-2host-1gpu-roce-nogdr.topo.json
            OUT "ok: \"h100-2host-1gpu-roce-nogdr\", 9 devices, 8 links, 2 ranks on 2 host")
