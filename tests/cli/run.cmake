# ncclsim run / plan / params: golden output, determinism, bad inputs.
set(S ${NSIM_SRC}/scenarios)

# golden: the DGX H100 preset, 8 B .. 256 MiB
string(REPLACE ";" "\\;" golden_cmd
       "${NCCLSIM};run;${S}/dgx-h100-allreduce.json;-b;8;-e;256M")
set(golden_args "-DCMD=${golden_cmd}")
add_test(NAME cli.run.golden_dgx_h100
         COMMAND ${CMAKE_COMMAND} ${golden_args}
                 -DGOLDEN=${NSIM_TESTS}/golden/dgx-h100-allreduce-8B-256M.txt
                 -DOUT=golden_dgx_h100.out -P ${NSIM_TESTS}/golden_run.cmake)

# determinism: the same scenario and seed give byte-identical JSON
foreach(i 1 2)
  add_test(NAME cli.run.determinism_${i}
           COMMAND ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 1M
                   -e 64M --qps 2 --quiet --json det_${i}.json)
  set_tests_properties(cli.run.determinism_${i} PROPERTIES
                       FIXTURES_SETUP det_${i})
endforeach()
add_test(NAME cli.run.determinism_compare
         COMMAND ${CMAKE_COMMAND} -E compare_files det_1.json det_2.json)
set_tests_properties(cli.run.determinism_compare PROPERTIES
                     FIXTURES_REQUIRED "det_1;det_2")

nsim_expect(cli.run.seed 0 CMD ${NCCLSIM} run ${S}/seed-allreduce.json -b 1M
            -e 4M OUT "1048576 +262144 +float +sum +-1")
nsim_expect(cli.run.nccl_tests_flags 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json -b 1K -e 4K -f 2
            --nchannels 4 OUT "4 channels.*\n +1024 .*\n +2048 .*\n +4096 ")
nsim_expect(cli.plan.stdout 0 CMD ${NCCLSIM} plan ${S}/seed-allreduce.json
            --size 1M OUT "\"format\":[ \t]*\"ncclsim-plan\"")
nsim_expect(cli.params 0 CMD ${NCCLSIM} params OUT "nvlink_header_bytes")
nsim_expect(cli.run.usage_no_file 2 CMD ${NCCLSIM} run ERR "scenario file")
nsim_expect(cli.run.usage_bad_opt 2 CMD ${NCCLSIM} run ${S}/seed-allreduce.json
            --bogus ERR "unknown option")
nsim_expect(cli.run.usage_bad_qps 2 CMD ${NCCLSIM} run ${S}/seed-allreduce.json
            --qps 0 ERR "--qps: expected 1..128")
nsim_expect(cli.run.bad_cli_range 1 CMD ${NCCLSIM} run ${S}/seed-allreduce.json
            -b 2M -e 1M --json cli_range.json ERR "is empty"
            NO_FILE cli_range.json)

nsim_bad_inputs(bad_scenario cli.bad_scenario)

# observability
nsim_expect(cli.run.stats 0 CMD ${NCCLSIM} run ${S}/seed-allreduce.json -b 1M
            -e 1M --stats --qps 2
            OUT "# QPs: .*conn +1 qp 1 send .*# CQs: .*conn +1 recv depth +1024")
nsim_expect(cli.run.debug 0 CMD ${NCCLSIM} run ${S}/seed-allreduce.json -b 1M
            -e 1M --debug
            OUT "NCCL INFO Channel 00/02 : 0 1 2 3\n.*\\[send\\] via NET/IB/0/GDRDMA.*CA 'h0.nic'.*QPN 0x")

# every nccl-tests collective end to end (4 GPUs over NVLink and IB)
foreach(c all_gather_perf reduce_scatter_perf broadcast_perf reduce_perf
          sendrecv_perf alltoall_perf)
  nsim_expect(cli.run.coll_${c} 0
              CMD ${NCCLSIM} run ${S}/seed-allreduce.json --collective ${c}
                  -b 1M -e 4M -f 4
              OUT "${c} on.*\n.*\n.*\n.*\n.*\n +1048576 .*\n +4194304 ")
endforeach()
nsim_expect(cli.run.coll_columns 0
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json --collective reduce
                -r 2 -d double -o max -b 1M -e 1M
            OUT "1048576 +131072 +double +max +2 ")
nsim_expect(cli.run.allgather_16B_rounding 0
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json --collective allgather
                -b 1000 -e 1000
            OUT "\n +960 +60 +float +none +-1 ")
nsim_expect(cli.run.ignored_flags_note 0
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json -b 1M -e 1M -n 50
                -w 5 -c 0 -g 1 -t 1 -z 0
            ERR "note: -n 50 ignored.*note: -w 5.*-c 0.*-t 1.*-z 0")
nsim_expect(cli.run.bad_root 1
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json --collective reduce
                -r 9 -b 1M -e 1M --json bad_root.json
            ERR "root 9: expected a rank 0..3" NO_FILE bad_root.json)
nsim_expect(cli.run.bad_dtype 1
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json -d float7 -b 1M
                -e 1M --json bad_dtype.json
            ERR "-d: datatype: expected" NO_FILE bad_dtype.json)
nsim_expect(cli.run.bad_op 1
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json -o mean -b 1M -e 1M
            ERR "-o: op: expected sum")
nsim_expect(cli.run.bad_collective 2
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json --collective gather
            ERR "--collective: expected")
nsim_expect(cli.run.ll128_pcie_refused 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/pcie-2gpu-ll128.json
                --json ll128.json
            ERR "LL128 is not allowed on this topology: LL128 needs NVLink"
            NO_FILE ll128.json)
nsim_expect(cli.run.tree_allgather_refused 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --collective
                allgather --algo Tree -b 1M -e 1M --json tree_ag.json
            ERR "Tree: NCCL runs trees for allreduce only" NO_FILE tree_ag.json)
nsim_expect(cli.run.nvls_a100_refused 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/pcie-2gpu-ll128.json
                --algo NVLS --proto Simple
            ERR "NVLS needs sm >= 90")
nsim_expect(cli.run.tree 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json --algo Tree
                --proto LL128 -b 1M -e 1M
            OUT "algorithm Tree, protocol LL128.*\n +1048576 +262144 ")
nsim_expect(cli.run.auto_picks_tree 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json --algo auto
                --proto auto -b 1K -e 1K --tuning
            OUT "\n +1024 .* Tree/LL ")
nsim_expect(cli.run.nvls 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --algo NVLS
                -b 64M -e 64M
            OUT "algorithm NVLS, protocol Simple, 16 channels")
nsim_expect(cli.run.nvls_no_nvls_switch 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/hgx-h100-nvls.json
                --json nvls_hgx.json
            ERR "^ncclsim: [^\n]*NVLS needs sm >= 90 GPUs and an NVLS-capable NVSwitch[^\n]*\n$"
            NO_FILE nvls_hgx.json)
# point-to-point parts of at most 16 KiB run LL inside a node, as NCCL
# picks them (nccl-internals 2.7); larger ones, NET ones or a forced
# protocol run Simple
nsim_expect(cli.run.p2p_ll_small 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --collective
                sendrecv_perf -b 8 -e 8 --proto auto
            OUT "\n +8 +2 +float +sum +-1 [^\n]* P2P/LL +32\n")
nsim_expect(cli.run.p2p_ll_large 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --collective
                alltoall_perf -b 1M -e 1M --proto auto
            OUT "\n +1048576 [^\n]* P2P/Simple +32\n")
nsim_expect(cli.run.p2p_ll_net 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json --collective
                sendrecv_perf -b 8 -e 8 --proto auto
            OUT "\n +8 [^\n]* P2P/Simple +[0-9]+\n")
nsim_expect(cli.run.p2p_ll_forced 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --collective
                sendrecv_perf -b 8 -e 8 --proto LL --json p2p_ll.json
            ERR "protocol LL cannot be forced for sendrecv: NCCL picks LL for point-to-point parts of at most 16 KiB"
            NO_FILE p2p_ll.json)
# NVLS AllGather/ReduceScatter is NCCL's on one node but not modelled:
# refused by name, never silent numbers
nsim_expect(cli.run.nvls_allgather 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --collective
                all_gather_perf --algo NVLS -b 64M -e 64M --json nvls_ag.json
            ERR "algorithm NVLS for allgather: NCCL has it on one node [^\n]*models NVLS for allreduce only"
            NO_FILE nvls_ag.json)
# a forced algorithm does not apply to point-to-point (as NCCL_ALGO):
# AllToAll with --algo NVLS is the same p2p plan, 32 channels
nsim_expect(cli.run.p2p_algo_ignored 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --collective
                alltoall_perf --algo NVLS --proto auto -b 64M -e 64M
            OUT "\n +67108864 [^\n]* P2P/Simple +32\n")
# PXN for point-to-point (nccl-internals 2.6): GPU 7 sends to the other
# host's GPU 0 through GPU 0's NIC (rail 0), proxied by rank 0; the rails'
# spine carries nothing, the NIC is the limit (~49 GB/s)
nsim_expect(cli.run.p2p_pxn_debug 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json --collective
                sendrecv_perf -b 64M -e 64M --debug
            OUT "Channel 08/0 : 7\\[7\\] -> 8\\[0\\] \\[send\\] via NET/IB/0\\(0\\)/GDRDMA \\(h0.nic0")
nsim_expect(cli.run.p2p_pxn_rail 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json --collective
                sendrecv_perf -b 64M -e 64M --stats
            OUT "\n +67108864 [^\n]* 4[0-9]\\.[0-9][0-9] +N/A"
            NOT_OUT "spine")
# NCCL_NVLS_ENABLE=0: the tuner falls back to the ring; forcing NVLS
# names the variable
nsim_expect(cli.run.nvls_env_off 0
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/nvls-env-off.json
            OUT "\n +1073741824 [^\n]* Ring/Simple +24\n")
nsim_expect(cli.run.nvls_env_off_forced 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/nvls-env-off.json --algo NVLS
                --json nvls_off.json
            ERR "^ncclsim: [^\n]*algorithm NVLS is disabled \\(NCCL_NVLS_ENABLE=0\\)\n$"
            NO_FILE nvls_off.json)
# NCCL_NVLS_NCHANNELS=8: eight NVLS thread blocks
nsim_expect(cli.run.nvls_env_nchannels 0
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/nvls-env-ch8.json
            OUT "\n +1073741824 [^\n]* NVLS/Simple +8\n")
# NCCL_NVLS_CHUNKSIZE=512K reaches the plan
nsim_expect(cli.run.nvls_env_chunk 0
            CMD ${NCCLSIM} plan ${NSIM_TESTS}/data/nvls-env-chunk.json
            OUT "\"algorithm\":\t\"NVLS\",.*\"chunk_bytes\":\t524288,")
nsim_expect(cli.run.nvls_env_bad_chunk 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/nvls-env-badchunk.json
                --json nvls_badchunk.json
            ERR "nvls-env-badchunk.json: env.NCCL_NVLS_CHUNKSIZE: invalid value \"5000\": expected a multiple of 4 KiB"
            NO_FILE nvls_badchunk.json)
nsim_expect(cli.run.nvls_env_bad_nchannels 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/nvls-env-badch.json
            ERR "nvls-env-badch.json: env.NCCL_NVLS_NCHANNELS: invalid value \"33\"")
nsim_expect(cli.run.nvls_multi_host 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json --algo NVLS
                -b 1M -e 1M
            ERR "NVLS across 2 hosts is NVLSTree")
nsim_expect(cli.run.nvls_ll_refused 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --algo NVLS
                --proto LL -b 1M -e 1M
            ERR "NVLS runs the Simple protocol only")
nsim_expect(cli.run.tuning 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --proto LL -b 8
                -e 8 --tuning
            OUT "\n +8 +2 +float +sum .* Ring/LL +1  nccl +15.00\n")
nsim_expect(cli.run.analytic 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --mode analytic
                -b 1G -e 1G
            OUT "\n +1073741824 +268435456 +float +sum +-1 +5275.58 ")
# its rows say they are NCCL's model, not a fidelity auto chose
nsim_expect_file(cli.run.analytic_rows
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json --mode analytic
                -b 1M -e 4M --json analytic_rows.json
            FILE analytic_rows.json
            NOT_OUT "# fidelity"
            RE "\"size\":[ \t]*4194304,[^}]*\"fidelity\":[ \t]*\"tuner\"")

# fault plans and failover
nsim_expect(cli.run.seed_failover 0
            CMD ${NCCLSIM} run ${S}/seed-failover.json --stats --debug
            OUT "Channel 01/0 : 1\\[1\\] -> 2\\[0\\] \\[send\\] via NET/IB/0/GDRDMA \\(h0.nic, 2 QPs\\).*failover at 300.675 us: channel 1, rank 1 -> 2: rebind_qp: QP 0x2104 dead; its work moved to QP 0x2105.*QPN 0x02104 state ERR")
nsim_expect(cli.run.failover_policy_fail 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/faults/policy_fail.json
                --json policy_fail.json
            ERR "QP 0x2104 \\(h0.nic -> h1.nic\\) completed with WR_FLUSH_ERR at 300.675 us; failover policy: fail"
            NO_FILE policy_fail.json)
nsim_bad_inputs(faults cli.fault)

# replaying NCCL's graph dump, and comparing the planner with it
nsim_expect(cli.run.graph_replay 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json --graph
                ${NSIM_TESTS}/data/graph/two_host_ring.xml -b 64M -e 64M --debug
            OUT "4 coll channels.*Channel 00/04 : 0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9\n.*Channel 00/0 : 1\\[1\\] -> 8\\[0\\] \\[send\\] via NET/IB/1/GDRDMA")
nsim_expect(cli.plan.compare_graph 0
            CMD ${NCCLSIM} plan ${S}/dgx-h100-2node-allreduce.json
                --compare-graph ${NSIM_TESTS}/data/graph/two_host_ring.xml
            OUT "channels: planner 16, graph 2 .*channel 00: search same, planner same.*channel 01: search same, planner same.*2 difference")
nsim_expect(cli.run.graph_bad_ranks 1
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json --graph
                ${NSIM_TESTS}/data/graph/two_host_ring.xml --json graph_bad.json
            ERR "two_host_ring.xml" NO_FILE graph_bad.json)
# -g: one host thread spends a launch (5 us) per GPU on every op, and
# nccl-tests' back-to-back loop hides the kernels behind it: 8 B with -g 8
# is host-bound (8 x 5 us; 13.41 us with one GPU per thread), 256 MiB is
# the kernels' time either way
nsim_expect(cli.run.gpus_per_thread 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json -b 8 -e 8 --proto LL
                -g 8
            OUT "\n +8 +2 +float +sum +-1 +40\\.00 ")
nsim_expect(cli.run.gpus_per_thread_one 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json -b 8 -e 8 --proto LL
            OUT "\n +8 +2 +float +sum +-1 +13\\.41 ")
nsim_expect(cli.run.gpus_per_thread_large 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json -b 256M -e 256M
                -g 8
            OUT "\n +268435456 +67108864 +float +sum +-1 +1343\\.20 ")

# CSV, gnuplot files and the Chrome trace
add_test(NAME cli.run.exports
         COMMAND ${NCCLSIM} run ${S}/seed-allreduce.json -b 1M -e 4M -f 4
                 --csv exp.csv --plot exp.png --trace exp.trace.json --quiet)
set_tests_properties(cli.run.exports PROPERTIES FIXTURES_SETUP exports)
foreach(check "exp.csv|^size,count,type,redop,root,time_us,.*\n1048576,262144,float,sum,-1,.*\n4194304,"
              "exp.png.gp|set logscale x 2.*plot 'exp.png.dat'"
              "exp.png.dat|\n1048576 [0-9.]+ "
              "exp.trace.json|^\\{\"displayTimeUnit\".*\"name\": \"process_name\".*\"name\": \"send\", \"cat\": \"op\", \"ph\": \"X\", \"pid\": [0-9]+, \"tid\": [0-9]+, .*\\]\\}\n$")
  string(REPLACE "|" ";" parts "${check}")
  list(GET parts 0 f)
  list(GET parts 1 re)
  add_test(NAME cli.run.exports.${f}
           COMMAND ${CMAKE_COMMAND} -DFILE=${f} "-DRE=${re}"
                   -P ${NSIM_TESTS}/file_matches.cmake)
  set_tests_properties(cli.run.exports.${f} PROPERTIES
                       FIXTURES_REQUIRED exports)
endforeach()
nsim_expect(cli.plan.graph_dump_1host 0
            CMD ${NCCLSIM} plan ${S}/dgx-h100-allreduce.json --graph-dump
            OUT "Pattern 4, crossNic [0-9], nChannels 12, bw 30.000000/30.000000, type NVL/")
nsim_expect(cli.plan.graph_dump_2host 0
            CMD ${NCCLSIM} plan ${S}/dgx-h100-2node-allreduce.json --graph-dump
            OUT "nChannels 8, .*\n +0 : NET/")
# GPUs without P2P talk through host memory (SHM)
nsim_expect(cli.run.shm 0
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/nop2p-allreduce.json --debug
                --stats
            OUT "Channel 00/0 : 0\\[0\\] -> 1\\[1\\] via SHM/direct.*ch +0 +0 -> 1 +SHM ")
# An MNNVL domain (GB200 NVL72): 18 trays on one NVLink fabric are one
# NCCL node; their GPUs connect by P2P/MNNVL and NVLS spans the domain.
nsim_expect(cli.run.mnnvl_one_node 0
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/gb200-nvl-allreduce.json --debug
            OUT "nRanks 72 nNodes 1 localRanks 72 localRank 0 MNNVL 1\n.*Channel 00/0 : 3\\[3\\] -> 4\\[4\\] via P2P/MNNVL \\(NVL, h0.gpu3\\)\n")
nsim_expect(cli.run.mnnvl_nvls 0
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/gb200-nvl-allreduce.json
                --algo auto -b 64M -e 64M
            OUT "\n +67108864 [^\n]* NVLS/Simple +[0-9]+\n")

# flow_check counts, in --timing, the flows left with no saturated server
# after a recompute: none in NVLS AllReduce 256 MiB without NVLink
# responses (before the fix of docs/fidelity.md, 2026-12-06 tenth
# session, 38 % of them from 1 GiB on)
nsim_expect(cli.run.flow_check 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json -b 256M -e 256M
                --algo NVLS --fidelity flow --timing
                --params ${NSIM_TESTS}/data/flow-check.params.json
            ERR "flow_check: 0 of [1-9][0-9]* flows looked at after a recompute below max-min")
# flow fidelity's --stats give each link the time it had a flow on it
# beside its busy time (a link with work, held below its rate by its
# flows' other servers, shows the difference); packet's give busy only
nsim_expect(cli.run.flow_stats_occupied 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json -b 64M -e 64M
                --algo NVLS --fidelity flow --stats
            OUT "busy % of the run, % of the run with a flow on it\n#   h0\\.gpu0 +-> h0\\.nvs +nvlink +[0-9]+ B +[0-9]+ B wire +[0-9.]+%  flows +[0-9.]+%\n")
nsim_expect(cli.run.packet_stats_busy_only 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json -b 64M -e 64M
                --algo NVLS --stats
            OUT "busy % of the run\n#   h0\\.gpu0 +-> h0\\.nvs +nvlink +[0-9]+ B +[0-9]+ B wire +[0-9.]+%\n")
# ports that share (params nvlink_fair_share, off by default): the one-host
# ring at 16 MiB, 311.68 GB/s with FIFO ports (the golden file), is slower
# with its 24 channels sharing each NVLink port
nsim_expect(cli.run.nvlink_fair_share 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json -b 16M -e 16M
                --params ${NSIM_TESTS}/data/nvlink-fair.params.json
            OUT "16777216 .* 302\\.36 ")
