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
# auto, the default, where every size runs packet: the table as packet's
nsim_expect(cli.flow.auto_timing 0
            CMD ${NCCLSIM} run ${S}/seed-allreduce.json -b 1M -e 1M
            --fidelity auto --timing
            NOT_OUT "fidelity" ERR "# timing: 1048576 B: [^\n]*events/s\n")
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
# Packet fidelity, asked for, where auto (the default) would pick flow
# says so before the run (which at thousands of GPUs takes minutes a
# size); auto and flow do not. --max-events stops each before its first
# event.
nsim_expect(cli.flow.packet_note 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 32G -e 32G
                --max-events 1000 --fidelity packet
            ERR "^# note: packet fidelity moves about 45 M packets and stream pieces at 34359738368 B, past the 30 M where auto, the default, picks flow \\(far fewer events at this scale\\)\nncclsim: [^\n]*over the event budget")
nsim_expect(cli.flow.packet_note_small 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 1G -e 1G
                --fidelity packet --quiet ERR "^$")
nsim_expect(cli.flow.packet_note_auto 1
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 32G -e 32G
                --max-events 1000
            ERR "^ncclsim: [^\n]*over the event budget[^\n]*already at flow fidelity")

# auto, the default: packet where its run is short; flow where the packet
# model would move over flow_auto_packets packets and stream pieces
# (known before any plan) or, planned, would run over flow_auto_events
# events. The table says from which size, and why; --timing and --json
# too. At 4 GiB two DGX H100 run 34 M packet events (1.7 s), at 16 GiB
# the estimate is 121 M (about 6 s), at 32 GiB 45 M packets and pieces.
nsim_expect_file(cli.flow.auto_default
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 4G -e 16G
                -f 4 --timing --json auto_default.json
            FILE auto_default.json
            OUT "^# ncclsim[^\n]*\n# algorithm[^\n]*\n#\n(#[^\n]*\n)* +4294967296 [^\n]*\n# fidelity flow from 17179869184 B \\(auto: the packet model would run about 121 M events, past flow_auto_events \\(100 M\\); README \"Fidelity\"\\)\n +17179869184 "
            ERR "# timing: 4294967296 B: [^\n]*events/s\n# timing: 17179869184 B: [^\n]*fidelity flow \\(auto: the packet model would run about 121 M events, past flow_auto_events \\(100 M\\)\\)"
            RE "\"fidelity\":[ \t]*\"auto\".*\"size\":[ \t]*4294967296,[^}]*\"events\":[ \t]*34028001,[ \t\n]*\"algorithm\"[^}]*\"nccl_predicted_us\":[^,}]*}.*\"fidelity\":[ \t]*\"flow\",[ \t\n]*\"fidelity_why\":[ \t]*\"packet events past flow_auto_events\",[ \t\n]*\"packet_events_estimate\":[ \t]*120762368")
nsim_expect_file(cli.flow.auto_default_packets
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 32G -e 32G
                --timing --json auto_packets.json
            FILE auto_packets.json
            OUT "\n# fidelity flow from 34359738368 B \\(auto: the packet model would move about 45 M packets and stream pieces, past flow_auto_packets \\(30 M\\); README \"Fidelity\"\\)\n +34359738368 "
            ERR "# timing: 34359738368 B: [^\n]*fidelity flow \\(auto: the packet model would move about 45 M packets and stream pieces, past flow_auto_packets \\(30 M\\)\\)"
            RE "\"fidelity\":[ \t]*\"flow\",[ \t\n]*\"fidelity_why\":[ \t]*\"packets past flow_auto_packets\",[ \t\n]*\"packets_estimate\":[ \t]*45219840")
# so does the CSV, size by size
nsim_expect_file(cli.flow.auto_csv
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 1M -e 32G
                -f 32768 --quiet --csv auto_rows.csv
            FILE auto_rows.csv
            RE "^size,[^\n]*,nchannels,fidelity\n1048576,[^\n]*,16,packet\n34359738368,[^\n]*,16,flow\n$")
# packet, asked for, keeps packet (the limits are auto's)
nsim_expect(cli.flow.auto_packet_asked 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 4G -e 4G
                --fidelity packet --params ${NSIM_TESTS}/data/auto-low.params.json
            NOT_OUT "fidelity")
# the limit is a param (a params file, "params" in the scenario)
nsim_expect(cli.flow.auto_events_param 0
            CMD ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json -b 4G -e 4G
                --params ${NSIM_TESTS}/data/auto-low.params.json
            OUT "# fidelity flow from 4294967296 B \\(auto: the packet model would run about 30 M events, past flow_auto_events \\(10 M\\)")
