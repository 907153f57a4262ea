# --fold / "fold" (README "Folding"): a flow ring on identical hosts is
# played by two of them and says so (header, --timing, --json); off plays
# every host, with the same table; bad values are usage or input errors
# naming the option or field.
set(D ${NSIM_TESTS}/data)
set(ROW "\n +4194304 +1048576 +float +sum +-1 +298\\.13 ")
nsim_expect(cli.fold.auto 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json --timing
            OUT "# folded: 2 of 4 hosts played [^\n]*\n#\n.*${ROW}"
            ERR "# timing: 4194304 B: [^\n]*fidelity flow \\([^)]*\\), folded: 2 of 4 hosts played from host 0\n")
nsim_expect(cli.fold.off 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json --fold off --timing
            OUT "${ROW}" NOT_OUT "folded"
            ERR "# timing: 4194304 B: [^\n]*fidelity flow \\([^)]*\\)\n")
nsim_expect(cli.fold.packet_auto 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json --fidelity packet -e 4M
            NOT_OUT "folded")
nsim_expect(cli.fold.packet_on 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json --fidelity packet -e 4M
            --fold on OUT "# folded: 2 of 4 hosts played")
nsim_expect(cli.fold.tree_why 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json --algo Tree -e 4M --timing
            NOT_OUT "folded"
            ERR "not folded: fewer than 8 hosts")
nsim_expect(cli.fold.nvlstree_why 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json --algo NVLSTree -e 4M --timing
            NOT_OUT "folded"
            ERR "not folded: fewer than 8 hosts")
nsim_expect(cli.fold.json 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json --quiet --json fold.json
            -e 4M)
add_test(NAME cli.fold.json_rows
         COMMAND ${CMAKE_COMMAND} -DFILE=fold.json
                 "-DRE=\"hosts_played\":[ \t]*2"
                 -P ${NSIM_TESTS}/file_matches.cmake)
set_tests_properties(cli.fold.json PROPERTIES FIXTURES_SETUP fold_json)
set_tests_properties(cli.fold.json_rows PROPERTIES FIXTURES_REQUIRED fold_json)
nsim_expect(cli.fold.bad_option 2
            CMD ${NCCLSIM} run ${D}/fold-4node.json --fold yes
            ERR "--fold: expected auto, on or off, got 'yes'")
nsim_expect(cli.fold.bad_key 1
            CMD ${NCCLSIM} run ${D}/fold-bad-mode.json --json fold_bad.json
            ERR "fold-bad-mode.json: fold: expected auto, on or off, got \"maybe\""
            NO_FILE fold_bad.json)
# a sweep over fold puts the folded row beside the whole one
nsim_expect(cli.fold.sweep 0
            CMD ${NCCLSIM} sweep ${D}/fold-4node.json --set fold=auto,off
            -o - -b 4M -e 4M --quiet
            OUT "\n0,auto,4194304,1048576,float,sum,Ring,Simple,16,298\\.135,[^\n]*\n1,off,4194304,1048576,float,sum,Ring,Simple,16,298\\.135,")
nsim_expect(cli.fold.sweep_bad 1
            CMD ${NCCLSIM} sweep ${D}/fold-4node.json --set fold=maybe -o -
            ERR "--set: fold: expected auto, on or off, got \"maybe\"")
# --stats folds as the run does: the played hosts' connections, said so;
# --fold off lists every host's (256 and 512 of them)
nsim_expect(cli.fold.stats 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json -b 16M -e 16M --stats
            OUT "336\\.09.*# folded: 2 of 4 hosts played, each doing its twins' work: the connections, links, NIC ports, QPs and CQs below are theirs.*# stats for 16777216 bytes: 336\\.09 us simulated.*#   ch  0   8 -> 0   NET")
nsim_expect(cli.fold.stats_off 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json -b 16M -e 16M --stats --fold off
            OUT "# stats for 16777216 bytes: 336\\.09 us simulated"
            NOT_OUT "folded")
# --trace folds where the run folds: the played hosts' tracks, said so in
# otherData and a note; its ops name no chunk (the folded plan places
# none). --fold off traces every host, chunks named.
nsim_expect_file(cli.fold.trace
                 CMD ${NCCLSIM} run ${D}/fold-4node.json -b 4M -e 4M --quiet
                     --trace fold_trace.json
                 FILE fold_trace.json
                 RE "\"hosts_played\": 2, \"hosts\": 4, .*\"name\": \"rank 15\".*\"name\": \"folded: 2 of 4 hosts played, each doing its twins' work[^\n]*\n.*\"cat\": \"op\", [^\n]*\"args\": {\"bytes\": [0-9]+, \"step\": [0-9]+, \"op\": [0-9]+}"
                 NOT_RE "\"chunk\"|\"name\": \"rank 16\"")
nsim_expect_file(cli.fold.trace_off
                 CMD ${NCCLSIM} run ${D}/fold-4node.json -b 4M -e 4M --quiet
                     --fold off --trace fold_trace_off.json
                 FILE fold_trace_off.json
                 RE "\"name\": \"rank 31\".*\"args\": {\"bytes\": [0-9]+, \"step\": [0-9]+, \"chunk\": [0-9]+, \"op\": [0-9]+}"
                 NOT_RE "hosts_played|folded:")
# a size that does not divide evenly folds, every chunk played at its
# largest (--timing, JSON say how much that adds, in bytes and in time
# at a lane's share of the narrowest route); refused where that time
# would pass 1 % of NCCL's prediction (unit test "uneven size")
nsim_expect_file(cli.fold.uneven
                 CMD ${NCCLSIM} run ${D}/fold-4node.json -b 4194368
                     -e 4194368 --timing --json fold_uneven.json
                 OUT "# folded: 2 of 4 hosts played"
                 ERR "folded: 2 of 4 hosts played from host 0 \\(the size does not divide evenly: every chunk played at its largest, as the size rounded up to whole chunks, \\+0\\.192 % of a lane's payload at most, 0\\.04 us at its share of the narrowest route\\)"
                 FILE fold_uneven.json
                 RE "\"fold_bytes_added\":[ \t]*0\\.00192")
# twins 2.97 % apart at a latency-bound size: the merge adds 1.49 %
# of a lane's payload, 0.02 us; folded within 0.02 % of every host
# played (251.11 us)
nsim_expect(cli.fold.uneven_small 0
            CMD ${NCCLSIM} run ${D}/fold-4node.json -b 65600 -e 65600 --timing
            OUT "\n +65600 +16400 +float +sum +-1 +251\\.16 "
            ERR "folded: 2 of 4 hosts played from host 0 \\(the size does not divide evenly: [^)]*\\+1\\.487 % of a lane's payload at most, 0\\.02 us")
# where routes differ (two leaves: 2 of 16 host hops cross the spine) a
# latency-bound ring plays a longer run of hosts, the fewest that keep
# what the played routes add under 1 % of NCCL's predicted time (8 at
# 1 MiB, 4 at 16 MiB); where it is bandwidth-bound, two (256 MiB)
nsim_expect_file(cli.fold.latency
                 CMD ${NCCLSIM} run ${D}/fold-2leaf.json --timing
                     --json fold_latency.json
                 OUT "# folded: 8 of 16 hosts played"
                 ERR "# timing: 1048576 B: [^\n]*folded: 8 of 16 hosts played from host 7 \\(4 of 32 NET connections have a faster route than the played, by up to 0\\.52 us: 2\\.08 us over the ring's laps, where it is latency-bound\\)\n# timing: 16777216 B: [^\n]*folded: 4 of 16 hosts played from host 7 [^\n]*: 6\\.24 us over[^\n]*\n# timing: 268435456 B: [^\n]*folded: 2 of 16 hosts played from host 7 [^\n]*: 14\\.56 us over"
                 FILE fold_latency.json
                 RE "\"size\":[ \t]*1048576,.*\"hosts_played\":[ \t]*8,[ \t\n]*\"fold_latency_added_us\":[ \t]*2\\.08")
# a fault plan folds where it strikes every host alike (QP errors on a
# whole channel): the same row as every host played; a ring folds around
# one that strikes one place (a NIC's port: host 1 played, standing for
# its twins), within 0.1 % of every host played here; SendRecv folds
# onto the struck host and the next; where a fault keeps every host
# played (a link between switches under a tree, below), the run says so
# before it starts (it may then take minutes) and in --timing
# nsim_fold_whole(NAME SCENARIO ROW [run's args]): SCENARIO with every
# host played (--fold off) prints ROW and says nothing of folding
function(nsim_fold_whole name scen row)
  nsim_expect(${name} 0 CMD ${NCCLSIM} run ${scen} ${ARGN} --fold off
              OUT "${row}" NOT_OUT "folded")
endfunction()
set(FROW "\n +16777216 +4194304 +float +sum +-1 +359\\.55 ")
nsim_expect(cli.fold.faults_alike 0
            CMD ${NCCLSIM} run ${D}/fold-4node-faults.json --timing
            OUT "# folded: 2 of 4 hosts played [^\n]*\n#\n.*${FROW}"
            ERR "folded: 2 of 4 hosts played from host 0")
nsim_fold_whole(cli.fold.faults_alike_off ${D}/fold-4node-faults.json
                "${FROW}")
# random loss on one NIC folds as a fault on that NIC does: the played
# host draws its own losses (360.75 us; every host played, 359.48;
# without the loss 349.28 either way)
nsim_expect(cli.fold.fault_loss 0
            CMD ${NCCLSIM} run ${D}/fold-4node-loss.json --timing
            OUT "# faults: the ring folds around the host\\(s\\) they strike, 1 of the 2 played[^\n]*\n#\n.*\n +16777216 +4194304 +float +sum +-1 +360\\.75 "
            ERR "^# timing: 16777216 B: [^\n]*folded: 2 of 4 hosts played from host 0 \\(around the 1 host\\(s\\) the faults strike")
nsim_fold_whole(cli.fold.fault_loss_off ${D}/fold-4node-loss.json
                "\n +16777216 +4194304 +float +sum +-1 +359\\.48 ")
nsim_expect(cli.fold.fault_one_place 0
            CMD ${NCCLSIM} run ${D}/fold-4node-port-down.json --timing
            OUT "# folded: 2 of 4 hosts played [^\n]*\n# faults: the ring folds around the host\\(s\\) they strike, 1 of the 2 played, each standing for its twins: 2 of 4 hosts struck where the scenario strikes 1 [^\n]*\n#\n.*\n +16777216 +4194304 +float +sum +-1 +1381\\.38 "
            ERR "^# timing: 16777216 B: [^\n]*folded: 2 of 4 hosts played from host 0 \\(around the 1 host\\(s\\) the faults strike")
nsim_expect_file(cli.fold.fault_one_place_json
                 CMD ${NCCLSIM} run ${D}/fold-4node-port-down.json
                     --json fold_struck.json
                 FILE fold_struck.json
                 RE "\"hosts_played\":[ \t]*2,[ \t\n]*\"hosts_struck_played\":[ \t]*1")
nsim_fold_whole(cli.fold.fault_one_place_off ${D}/fold-4node-port-down.json
                "\n +16777216 +4194304 +float +sum +-1 +1382\\.43 ")
nsim_expect(cli.fold.fault_one_place_sendrecv 0
            CMD ${NCCLSIM} run ${D}/fold-4node-port-down.json --coll sendrecv
                -b 64M -e 64M --timing
            OUT "# faults: the fold plays the host\\(s\\) they strike \\(1\\) with a partner[^\n]*\n#\n.*\n +67108864 +16777216 +float +sum +-1 +1373\\.42 "
            ERR "folded: 2 of 4 hosts played \\(hosts 1 and 2, each sending to the other\\) \\(host 1 the one the faults strike")
nsim_fold_whole(cli.fold.fault_one_place_sendrecv_off
                ${D}/fold-4node-port-down.json
                "\n +67108864 +16777216 +float +sum +-1 +1373\\.42 "
                --coll sendrecv -b 64M -e 64M)
# on two leaves a ring folds around host 3 with a hop across the spine
# (8 hosts from host 3); SendRecv does not: its slowest pair crosses the
# spine, and the struck pair does not (said before the run, as a fault
# that keeps every host played is)
nsim_expect(cli.fold.fault_two_leaves 0
            CMD ${NCCLSIM} run ${D}/fold-2leaf-port-down.json --timing
            OUT "# folded: 8 of 16 hosts played"
            ERR "folded: 8 of 16 hosts played from host 3 \\(around the 1 host")
nsim_expect(cli.fold.fault_two_leaves_sendrecv 0
            CMD ${NCCLSIM} run ${D}/fold-2leaf-port-down.json --coll sendrecv
                --timing
            NOT_OUT "folded"
            ERR "^# note: every host of 16 played: the slowest pair \\(hosts 7 and 8\\) is not the one the faults strike \\(3 and 4\\)[^\n]*\n.*not folded: the slowest pair")
# a link between switches: a ring's fold finds the connections whose
# paths cross it (InfiniBand: one path per NIC pair), here none, so the
# same row as without the fault (379.59 us, fold-2leaf's); a tree plays
# every host and says so
nsim_expect(cli.fold.fault_fabric 0
            CMD ${NCCLSIM} run ${D}/fold-2leaf-spine.json --timing
            OUT "# folded: 8 of 16 hosts played[^\n]*\n# faults: no connection's path crosses the faulted link\\(s\\) between switches[^\n]*\n.*\n +1048576 +262144 +float +sum +-1 +379\\.59 "
            ERR "folded: 8 of 16 hosts played from host 7 \\(0 of 32 NET connections cross the 1 faulted link\\(s\\) between switches")
nsim_expect(cli.fold.fault_fabric_tree 0
            CMD ${NCCLSIM} run ${D}/fold-2leaf-spine.json --algo Tree --timing
            NOT_OUT "folded"
            ERR "^# note: every host of 16 played: faults\\[0\\] \\(link degraded leaf\\.r0\\.0 -> spine\\.0\\) strikes the fabric between hosts, where only a ring's fold finds the connections it strikes\n")
# a tree on two leaves: hosts of one role reach their parents on their
# leaf or across the spine, and the role is played by the slowest (2
# roles here); folded 331.77 us against 330.77 with every host played
nsim_expect(cli.fold.tree_slow_roles 0
            CMD ${NCCLSIM} run ${D}/fold-2leaf.json --algo Tree -b 16M -e 16M
                --timing
            OUT "\n +16777216 +4194304 +float +sum +-1 +331\\.77 "
            ERR "folded: 8 of 16 hosts played \\(one per role in the two trees, for 2 role\\(s\\) whose hosts reach their parents by different routes the host of the slowest; [0-9]+ of [0-9]+ NET connections to or from a phantom host\\)")
# Broadcast and Reduce: a chain along the ring, played on 64 hosts and
# on 32 (192 hosts, six leaves); each of the other 128 adds what one of
# the 64-host run's last 32 added (43.98 us at 1 MiB), and the whole
# chain's routes what theirs add beyond the played ones' (-0.52 us):
# within 0.002 % of every host played (8447.70 against 8447.53 us), said
# in the header, --timing, --json and explain; a fault plan plays every
# host, and says so before the run
nsim_expect(cli.fold.chain 0
            CMD ${NCCLSIM} run ${D}/fold-chain.json --timing
            OUT "# folded: 64 of 192 hosts played[^\n]*\n# folded chain: Broadcast and Reduce run a chain along the ring, played on 64 hosts and again on 32; each host not played adds what one of the last 32 added[^\n]*\n#\n.*\n +1048576 +262144 +float +none +0 +8447\\.70 "
            ERR "folded: 64 of 192 hosts played from host 191, then 32 \\(a chain: each of the other 128 hosts adds 43\\.98 us, and their routes -0\\.52 us in all\\)\n")
nsim_fold_whole(cli.fold.chain_off ${D}/fold-chain.json
                "\n +1048576 +262144 +float +none +0 +8447\\.53 ")
nsim_expect_file(cli.fold.chain_json
                 CMD ${NCCLSIM} run ${D}/fold-chain.json --coll reduce
                     --json fold_chain.json
                 FILE fold_chain.json
                 RE "\"hosts_played\":[ \t]*64,[ \t\n]*\"fold_chain_host_us\":[ \t]*43\\.98[0-9]*,[ \t\n]*\"fold_chain_latency_us\":[ \t]*-0\\.52")
nsim_expect(cli.fold.chain_explain 0
            CMD ${NCCLSIM} explain ${D}/fold-chain.json -b 1M
            OUT "1048576 bytes: 8447\\.70 us.*\nfolded: a chain \\(Broadcast, Reduce\\) played on 64 of 192 hosts \\(2818\\.66 us\\) and on 32; each of the other 128 adds 43\\.98 us; the links, waits, thread blocks and phases below are the 64 hosts' run")
nsim_expect_file(cli.fold.chain_explain_json
                 CMD ${NCCLSIM} explain ${D}/fold-chain.json -b 1M --quiet
                     --json explain_chain.json
                 FILE explain_chain.json
                 RE "\"fold\":[ \t]*{[ \t\n]*\"hosts\":[ \t]*192,[ \t\n]*\"played\":[ \t]*64,[ \t\n]*\"struck\":[ \t]*0,[ \t\n]*\"chain_played_us\":[ \t]*2818\\.66[0-9]*,[ \t\n]*\"chain_host_us\":[ \t]*43\\.98")
# fewer than three times the played hosts: every host plays, --timing
# says why
nsim_expect(cli.fold.chain_few 0
            CMD ${NCCLSIM} run ${D}/fold-2leaf.json --coll broadcast -b 1M
                -e 1M --timing
            NOT_OUT "folded"
            ERR "not folded: 16 hosts: a chain is played on 64 and on 32, and folds from 192")
nsim_expect(cli.fold.chain_fault 0
            CMD ${NCCLSIM} run ${D}/fold-2leaf-port-down.json --coll broadcast
                -b 1M -e 1M --timing
            NOT_OUT "folded"
            ERR "^# note: every host of 16 played: faults\\[0\\] \\(a port down on h3\\.nic0\\) strikes a chain \\(Broadcast, Reduce\\), whose fold adds the hosts it does not play at a healthy host's delay\n.*not folded: faults\\[0\\]")
# in packet fidelity (--fold on) a chain plays every host: the delay a
# host adds there settles only past 100 hosts (64 MiB: 215.7 us a host
# over hosts 32-64, 206.6 over 96-192)
nsim_expect(cli.fold.chain_packet 0
            CMD ${NCCLSIM} run ${D}/fold-chain.json --fidelity packet --fold on
                --timing
            NOT_OUT "folded"
            ERR "not folded: a Broadcast or Reduce chain folds in flow fidelity only")
# A fat tree without rails: a leaf takes whole hosts (five HGX H200 at
# 2:1), so hosts are alike and the ring folds, from a host whose played
# hops both cross the spine (before, hosts straddled leaves: never).
set(FT_ROW "\n +268435456 +524288 +float +none +-1 +1117\\.49 ")
nsim_expect(cli.fold.fat_tree 0
            CMD ${NCCLSIM} run ${D}/fold-fattree.json --timing
            OUT "# folded: 2 of 16 hosts played.*${FT_ROW}"
            ERR "folded: 2 of 16 hosts played from host 4 \\(192 of 256 NET connections have a faster route")
nsim_expect(cli.fold.fat_tree_off 0
            CMD ${NCCLSIM} run ${D}/fold-fattree.json --fold off
            OUT "\n +268435456 +524288 +float +none +-1 +1115\\.75 ")
# Latency-bound there (4 MiB): the played hops' spine crossings would add
# 2.1 % of NCCL's estimate, so auto plays every host and says why; on
# folds all the same and says the row errs long.
nsim_expect(cli.fold.fat_tree_latency 0
            CMD ${NCCLSIM} run ${D}/fold-fattree.json --timing -b 4M -e 4M
            OUT "\n +4194304 +8192 +float +none +-1 +339\\.59 " NOT_OUT "folded"
            ERR "not folded: a latency-bound ring across leaves: the played routes add 6\\.24 us or more \\(2\\.1 % of NCCL's estimate\\), 2 hosts played; --fold on folds it all the same, erring long by about that\n")
nsim_expect(cli.fold.fat_tree_latency_on 0
            CMD ${NCCLSIM} run ${D}/fold-fattree.json --timing -b 4M -e 4M
                --fold on
            OUT "# folded: 2 of 16 hosts played.*\n +4194304 +8192 +float +none +-1 +340\\.95 "
            ERR "6\\.24 us over the ring's laps, where it is latency-bound; past the 1 % of NCCL's estimate a fold may add, folded as --fold on asks: the row errs long by about that")
# NVLink domains spanning hosts (MNNVL: four NVL72 racks of 18 GB200
# trays, a rail leaf a rack): a ring folds onto two whole domains, flow
# as exact as on plain hosts (packet: 594.27 us whole); trees still play
# every host and say why.
set(MN_ROW "\n +16773120 +14560 +float +none +-1 +594\\.50 ")
nsim_expect(cli.fold.mnnvl 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --timing
            OUT "# folded: 36 of 72 hosts played.*${MN_ROW}"
            ERR "folded: 36 of 72 hosts played from host 0")
nsim_expect(cli.fold.mnnvl_off 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --fold off
            OUT "${MN_ROW}" NOT_OUT "folded")
nsim_expect(cli.fold.mnnvl_packet 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --fidelity packet --fold on
            OUT "# folded: 36 of 72 hosts played.*\n +16773120 +14560 +float +none +-1 +593\\.44 ")
# An AllToAll on NVLink domains folds onto two whole domains' sends
# (916.62 us. every host played, 918.87, -0.24 %). Past the memory
# budget (its whole connections 830 MB against 700 MiB) --fidelity auto
# keeps packet there and folds it (flow re-solves a domain's NVLink
# shares as each flow ends: far slower). SendRecv still plays every host.
set(MA_ROW "\n +4193280 +3640 +float +none +-1 +916\\.62 ")
nsim_expect(cli.fold.mnnvl_alltoall 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --collective alltoall
                --fidelity packet --fold on -b 4M -e 4M --timing
            OUT "# folded: 36 of 72 hosts played.*${MA_ROW}"
            ERR "folded: 36 of 72 hosts played \\(the NVLink domains of hosts 0-17 and 18-35, each sending to the other\\)")
nsim_fold_whole(cli.fold.mnnvl_alltoall_off ${D}/fold-mnnvl.json
                "\n +4193280 +3640 +float +none +-1 +918\\.87 "
                --collective alltoall --fidelity packet -b 4M -e 4M)
nsim_expect(cli.fold.mnnvl_alltoall_auto 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --collective alltoall
                --fidelity auto --max-memory 700M -b 4M -e 4M --timing
            OUT "# folded: 36 of 72 hosts played.*${MA_ROW}"
            ERR "# timing: 4193280 B: [^\n]*events/s, folded: 36 of 72")
nsim_expect(cli.fold.mnnvl_sendrecv_why 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --collective sendrecv
                -b 4M -e 4M --timing
            NOT_OUT "folded" ERR "not folded: NVLink domains span hosts")
# A Tree chains each NVLink domain's 72 ranks: in flow each rack's chain
# is played with 26 ranks and with 10 (16 channels: 8 ranks a chain may
# start at, its head, then 17 and 1), the 46 others added at the delay
# per rank between the two (597.69 us. every rank played, 599.21, -0.25
# %). Too few racks to fold the roles: every host is played, and
# --timing says so. Packet plays the chains whole. (No semicolons in the
# patterns: CMake splits arguments there.)
set(MT_ROW "\n +16777216 +4194304 +float +sum +-1 +597\\.69 ")
nsim_expect(cli.fold.mnnvl_tree_chain 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --collective allreduce
                --algo Tree --timing
            OUT "\n# folded chains: a Tree chains each node's 72 ranks \\(an NVLink domain\\), played with 26 and again with 10. each rank not played adds what one of the 16 between added[^\n]*\n#\n.*${MT_ROW}"
            NOT_OUT "# folded: "
            ERR "every host played: fewer than 8 NVLink domains. each node's chain of 72 ranks played with 26 and with 10 \\(each rank more adds 6\\.71 us\\)\n")
nsim_fold_whole(cli.fold.mnnvl_tree_chain_off ${D}/fold-mnnvl.json
                "\n +16777216 +4194304 +float +sum +-1 +599\\.21 "
                --collective allreduce --algo Tree)
nsim_expect(cli.fold.mnnvl_tree_chain_packet 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --collective allreduce
                --algo Tree --fidelity packet --fold on
            NOT_OUT "folded")
nsim_expect_file(cli.fold.mnnvl_tree_chain_json
                 CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --collective allreduce
                     --algo Tree --json fold_tree_chain.json
                 FILE fold_tree_chain.json
                 RE "\"fold_tree_chain_ranks\":[ \t]*26,[ \t\n]*\"fold_tree_chain_rank_us\":[ \t]*6\\.71")
# eight racks: one rack per role of the two trees (6 of 8), each rack's
# chain played short (630.67 us. every rank of every rack, 628.56)
nsim_expect(cli.fold.mnnvl_tree_roles 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl-tree.json --timing
            OUT "# folded: 108 of 144 hosts played[^\n]*\n# folded chains: [^\n]*\n#\n.*\n +16777216 +4194304 +float +sum +-1 +630\\.67 "
            ERR "folded: 108 of 144 hosts played \\(one per role in the two trees. [^)]*\\). each node's chain of 72 ranks played with 26 and with 10")
nsim_fold_whole(cli.fold.mnnvl_tree_roles_off ${D}/fold-mnnvl-tree.json
                "\n +16777216 +4194304 +float +sum +-1 +628\\.56 ")
nsim_expect(cli.fold.mnnvl_tree_explain 0
            CMD ${NCCLSIM} explain ${D}/fold-mnnvl-tree.json -b 16M
            OUT "16777216 bytes: 630\\.67 us.*\nfolded: each node's Tree chain of 72 ranks played with 26 \\(320\\.32 us\\) and with 10. each of the other 46 adds 6\\.75 us. the links, waits, thread blocks and phases below are the 26-rank chains' run")
nsim_expect(cli.fold.mnnvl_tree_stats 0
            CMD ${NCCLSIM} run ${D}/fold-mnnvl.json --collective allreduce
                --algo Tree --stats
            OUT "# folded: each node's Tree chain of 72 ranks played with 26 and with 10, each rank not played adding 6\\.71 us to the row's time: the connections, links, NIC ports, QPs and CQs below are the 26-rank run's")
