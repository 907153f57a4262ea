# --fidelity / "fidelity": flow runs say so; bad values are usage or input
# errors naming the option or field.
set(S ${NSIM_SRC}/scenarios)
nsim_expect(cli.flow.header 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 4M -e 4M
            --fidelity flow
            OUT "# fidelity flow \\(each WR and slice one flow[^\n]*\n.*\n +4194304 ")
nsim_expect(cli.flow.packet_default 0
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json -b 1M -e 1M
            --fidelity packet NOT_OUT "fidelity")
nsim_expect(cli.flow.auto_timing 0
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json -b 1M -e 1M
            --fidelity auto --timing
            OUT "# fidelity auto" ERR "# timing: 1048576 B: [^\n]*events/s\n")
nsim_expect(cli.flow.bad_option 2
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json --fidelity fluid
            ERR "--fidelity: expected packet, flow or auto, got 'fluid'")
nsim_expect(cli.flow.bad_key 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/flow-bad-fidelity.json
            ERR "fidelity[^\n]*expected packet, flow or auto, got \"fluid\"")
nsim_expect(cli.flow.trace_json 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 1M -e 1M
            --fidelity flow --stats --quiet --json flow_stats.json
            --trace flow_trace.json)

# --timing says what the flow solver did: flows, twins (a flow that took
# the place and rate of one ended in the same instant), recomputes
nsim_expect(cli.flow.timing_solver 0
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/cluster-2node.json
                --fidelity flow -b 16M -e 16M --timing
            ERR "fidelity flow \\([1-9][0-9]* flows, [1-9][0-9]* of them twins; [1-9][0-9]* recomputes visiting [1-9][0-9]* flows\\)")
# Packet fidelity (the default) where auto would pick flow says so before
# the run (which at thousands of GPUs takes minutes a size); auto and
# flow do not. --max-events stops each before its first event.
nsim_expect(cli.flow.packet_note 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 4G -e 4G
                --max-events 1000
            ERR "^# note: packet fidelity moves about 31 M packets at 4294967296 B, past the 30 M where --fidelity auto picks flow \\(far fewer events at this scale\\)\nncclsim: [^\n]*over the event budget")
nsim_expect(cli.flow.packet_note_small 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 1G -e 1G
                --quiet ERR "^$")
nsim_expect(cli.flow.packet_note_auto 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 4G -e 4G
                --max-events 1000 --fidelity auto
            ERR "^ncclsim: [^\n]*over the event budget")
