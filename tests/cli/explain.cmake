# ncclsim explain: what bounds a size, as text and JSON; bad input.
set(S ${NSIM_SRC}/scenarios)
nsim_expect(cli.explain.link_bound 0
            CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json -b 512M
            OUT "bound by: the ib link h0\\.nic[0-9] -> ib\\.rail[0-9], 9[0-9]% busy\nbusiest link: .*busiest NIC port: .*longest wait: channel [0-9]+ rank [0-9]+, .*thread blocks: .*NET waits.*phases: launch [0-9]+%, pipeline fill [0-9]+%, steady [0-9]+%, drain [0-9]+%\ntuner: NCCL would pick")
nsim_expect(cli.explain.latency_bound 0
            CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json -b 64K
            OUT "bound by: latency: .*tuner: NCCL would pick Tree/LL")
nsim_expect(cli.explain.copy_bound 0
            CMD ${NCCLSIM} explain ${S}/seed-allreduce.json -b 4M
            OUT "bound by: the thread blocks' copy rate")
# flow fidelity: a busiest link that had flows on it longer than it was
# busy says so (its flows were held below its rate by other servers);
# packet's links are busy whenever they hold work, and say nothing more
nsim_expect(cli.explain.flow_occupied 0
            CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json -b 64M
                --algo NVLSTree --fidelity flow
            OUT "busiest link: [^\n]*% busy, [0-9.]+ GB/s of payload; flows on it [0-9.]+% of the run, held below its rate elsewhere for [0-9.]+%\n")
nsim_expect(cli.explain.packet_busy_only 0
            CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json -b 64M
                --algo NVLSTree
            OUT "busiest link: [^\n]*% busy, [0-9.]+ GB/s of payload\n"
            NOT_OUT "flows on it")
nsim_expect(cli.explain.forced_qps 0
            CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json -b 16M
            --qps 4 --nchannels 8 OUT "8 channels, 4 QP\\(s\\) per connection")
nsim_expect_file(cli.explain.json
                 CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json
                     -b 16M --quiet --json explain.json
                 FILE explain.json
                 RE "\"format\":[ \t]*\"ncclsim-explain\".*\"bound\":.*\"busiest_link\":.*\"util\":.*\"longest_wait\":.*\"on\":.*\"phases\":.*\"steady\":.*\"tuner\":.*\"algo\":")
nsim_expect(cli.explain.bad_size 1
            CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json -b 3
            --json explain_bad.json ERR "multiples of the float size"
            NO_FILE explain_bad.json)
nsim_expect(cli.explain.run_option 2
            CMD ${NCCLSIM} explain ${S}/seed-allreduce.json --trace t.json
            ERR "options of 'ncclsim run'")
# Explain runs what run runs, folded where run folds (four hosts played by
# two): the same time and bound as every host played, in seconds at scale.
set(D ${NSIM_SRC}/tests/data)
nsim_expect(cli.explain.folded 0
            CMD ${NCCLSIM} explain ${D}/fold-4node.json -b 16M
            OUT "16777216 bytes: 336\\.09 us, busbw 96\\.72 GB/s.*bound by: waits: channel 15 rank [0-9]+ waits 74% of the run on data\nfolded: 2 of 4 hosts played, each doing its twins' work.*NET waits, all played connections: CTS 4178\\.7 us")
# a ring folded around the host its fault strikes says so
nsim_expect(cli.explain.folded_fault 0
            CMD ${NCCLSIM} explain ${D}/fold-4node-port-down.json -b 16M
            OUT "16777216 bytes: 1381\\.38 us.*\nfolded: 2 of 4 hosts played[^\n]*\nfaults: 1 of the played hosts struck, each standing for its twins")
nsim_expect(cli.explain.fold_off 0
            CMD ${NCCLSIM} explain ${D}/fold-4node.json -b 16M --fold off
            OUT "16777216 bytes: 336\\.09 us, busbw 96\\.72 GB/s.*bound by: waits: channel 15 rank [0-9]+ waits 74% of the run on data\n.*NET waits, all connections: CTS 8357\\.4 us"
            NOT_OUT "folded")
nsim_expect_file(cli.explain.fold_json
                 CMD ${NCCLSIM} explain ${D}/fold-4node.json -b 16M --quiet
                     --json explain_fold.json
                 FILE explain_fold.json
                 RE "\"fold\":[ \t]*{[ \t\n]*\"hosts\":[ \t]*4,[ \t\n]*\"played\":[ \t]*2")
# random loss: what it cost (packets lost, go-backs on a NAK and on the
# timer, packets resent), in packet and flow fidelity alike; where RC
# timeouts make the run, they are its bound; none, no loss line
set(F ${NSIM_SRC}/tests/data/faults)
nsim_expect(cli.explain.loss 0
            CMD ${NCCLSIM} explain ${F}/loss_retransmit.json
            OUT "\nloss: 8 packets lost \\(8 by h0\\.nic2\\); the QPs went back 8 times on a NAK and 0 on the timer \\(4\\.295 s each\\) and resent 249 packets, 0\\.38% of the 65657 they sent\nphases:")
nsim_expect(cli.explain.loss_flow 0
            CMD ${NCCLSIM} explain ${F}/loss_retransmit.json --fidelity flow
            OUT "\nloss: 8 packets lost \\(8 by h0\\.nic2\\); the QPs went back 7 times on a NAK and 0 on the timer \\(4\\.295 s each\\) and resent 225 packets")
nsim_expect(cli.explain.loss_timeouts 0
            CMD ${NCCLSIM} explain ${F}/loss_timeouts.json
            OUT "bound by: RC timeouts after lost packets: 7 of 4\\.295 s each \\(NCCL_IB_TIMEOUT\\) in a run of 12\\.885 s\n.*\nloss: 56 packets lost \\(56 by h0\\.nic2\\); the QPs went back 27 times on a NAK and 7 on the timer")
nsim_expect(cli.explain.no_loss 0
            CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json -b 16M
            NOT_OUT "\nloss:")
nsim_expect_file(cli.explain.loss_json
                 CMD ${NCCLSIM} explain ${F}/loss_retransmit.json --quiet
                     --json explain_loss.json
                 FILE explain_loss.json
                 RE "\"loss\":[ \t]*{[ \t\n]*\"packets_lost\":[ \t]*8,[ \t\n]*\"most_by\":[ \t]*\"h0\\.nic2\"")
# a size auto (the default) ran in flow says so, and why; text and JSON
nsim_expect_file(cli.explain.auto_flow
                 CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json
                     -b 32G -e 32G --json explain_auto.json
                 FILE explain_auto.json
                 OUT "busbw [^\n]*\nfidelity: flow \\(auto: the packet model would move about 45 M packets and stream pieces, past flow_auto_packets \\(30 M\\)\\)\nbound by: "
                 RE "\"fidelity\":[ \t]*\"flow\",[ \t\n]*\"fidelity_why\":[ \t]*\"auto: the packet model would move about 45 M")
nsim_expect(cli.explain.packet_no_fidelity 0
            CMD ${NCCLSIM} explain ${S}/dgx-h100-2node-allreduce.json -b 16M
            NOT_OUT "fidelity")
