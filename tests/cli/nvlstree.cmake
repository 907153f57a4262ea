# NVLSTree AllReduce (NVLS inside hosts, double binary tree between
# them): a forced run, the tuner's pick, refusals with their reasons.
set(NT_S ${NSIM_SRC}/scenarios)
nsim_expect(cli.nvlstree.run 0
            CMD ${NCCLSIM} run ${NT_S}/dgx-h100-2node-allreduce.json
                --algo NVLSTree -b 16M -e 16M
            OUT "algorithm NVLSTree, protocol Simple, 16 channels.*\n +16777216 +4194304 +float +sum ")
nsim_expect(cli.nvlstree.tuner_picks 0
            CMD ${NCCLSIM} run ${NT_S}/dgx-h100-2node-allreduce.json
                --algo auto --proto auto -b 1K -e 64M -f 65536
            OUT "\n +1024 [^\n]* Tree/LL [^\n]*\n +67108864 [^\n]* NVLSTree/Simple +16\n")
nsim_expect(cli.nvlstree.one_host 1
            CMD ${NCCLSIM} run ${NT_S}/dgx-h100-allreduce.json
                --algo NVLSTree -b 1M -e 1M
            ERR "^ncclsim: [^\n]*NVLSTree needs more than one host[^\n]*\n$")
nsim_expect(cli.nvlstree.ll_refused 1
            CMD ${NCCLSIM} run ${NT_S}/dgx-h100-2node-allreduce.json
                --algo NVLSTree --proto LL -b 1M -e 1M
            ERR "^ncclsim: [^\n]*NVLSTree runs the Simple protocol only[^\n]*\n$")
nsim_expect(cli.nvlstree.allgather_refused 1
            CMD ${NCCLSIM} run ${NT_S}/dgx-h100-2node-allreduce.json
                --algo NVLSTree --collective all_gather_perf -b 1M -e 1M
            ERR "^ncclsim: [^\n]*NVLSTree: modelled for allreduce only[^\n]*\n$")
nsim_expect(cli.nvlstree.sm80_refused 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/nvlstree-a100-2node.json
                --json nvlstree_a100.json
            ERR "^ncclsim: [^\n]*NVLSTree needs sm >= 90 GPUs[^\n]*\n$"
            NO_FILE nvlstree_a100.json)
nsim_expect(cli.nvlstree.debug 0
            CMD ${NCCLSIM} run ${NT_S}/dgx-h100-2node-allreduce.json
                --algo NVLSTree -b 1M -e 1M --debug
            OUT "Channel 08/0 : 0\\[0\\] <- NVLS reduced \\(h0.gpu0\\)\n")
