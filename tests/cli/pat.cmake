# PAT AllGather / ReduceScatter (one GPU per host, peers at distance
# 2^s over NET): forced runs, the tuner's pick, refusals with reasons.
set(PAT_D ${NSIM_TESTS}/data)
set(PAT_S ${NSIM_SRC}/scenarios)
nsim_expect(cli.pat.allgather 0
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-allgather.json
                -b 64M -e 64M
            OUT "algorithm PAT, [^\n]* 4 channels.*\n +67108864 +4194304 +float +none [^\n]* PAT/Simple +4\n")
nsim_expect(cli.pat.reducescatter 0
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-allgather.json
                --collective reduce_scatter_perf -b 1M -e 1M
            OUT "\n +1048576 +65536 +float +sum [^\n]* PAT/Simple +4\n")
nsim_expect(cli.pat.tuner_picks 0
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-allgather.json
                --algo auto --proto auto -b 1M -e 1G -f 1024
            OUT "\n +1048576 [^\n]* PAT/Simple +4\n +1073741824 [^\n]* Ring/Simple +4\n")
nsim_expect(cli.pat.multi_gpu_host 1
            CMD ${NCCLSIM} run ${PAT_S}/dgx-h100-2node-allreduce.json
                --algo PAT --collective all_gather_perf -b 1M -e 1M
            ERR "^ncclsim: [^\n]*PAT needs exactly one GPU per host[^\n]*\n$")
nsim_expect(cli.pat.allreduce 1
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-allgather.json
                --collective all_reduce_perf -b 1M -e 1M
            ERR "^ncclsim: [^\n]*PAT runs allgather and reducescatter only, not allreduce[^\n]*\n$")
nsim_expect(cli.pat.broadcast 1
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-allgather.json
                --collective broadcast_perf -b 1M -e 1M
            ERR "^ncclsim: [^\n]*PAT runs allgather and reducescatter only, not broadcast[^\n]*\n$")
nsim_expect(cli.pat.ll 1
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-allgather.json
                --proto LL -b 1M -e 1M
            ERR "^ncclsim: [^\n]*PAT runs the Simple protocol only, not LL[^\n]*\n$")
nsim_expect(cli.pat.ll128 1
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-allgather.json
                --proto LL128 -b 1M -e 1M
            ERR "^ncclsim: [^\n]*PAT runs the Simple protocol only, not LL128[^\n]*\n$")
nsim_expect(cli.pat.one_host 1
            CMD ${NCCLSIM} run ${PAT_S}/dgx-h100-allreduce.json
                --algo PAT --collective all_gather_perf -b 1M -e 1M
            ERR "^ncclsim: [^\n]*PAT needs more than one host[^\n]*\n$")
nsim_expect(cli.pat.debug 0
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-allgather.json
                -b 1M -e 1M --debug
            OUT "Channel 00/04 : 0 1 2 3\n.*Channel 00/0 : 0\\[0\\] -> 2\\[0\\] \\[send\\] via NET/IB/0")
nsim_expect(cli.pat.plan 0
            CMD ${NCCLSIM} plan ${PAT_D}/pat-4host-allgather.json
            OUT "\"algorithm\":\t\"PAT\",\n.*\"per_step_conns\":\ttrue,")
nsim_expect(cli.pat.disabled_env 0
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-disabled.json
            OUT "\n +1048576 [^\n]* Ring/[A-Za-z0-9]+ +4\n")
nsim_expect(cli.pat.disabled_forced 1
            CMD ${NCCLSIM} run ${PAT_D}/pat-4host-disabled.json --algo PAT
            ERR "^ncclsim: [^\n]*algorithm PAT is disabled \\(NCCL_PAT_ENABLE=0\\)\n$")
