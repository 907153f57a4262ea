# run --max-events / --max-memory: a size over a budget stops cleanly
# (exit 1, the budget named, what it would need, --fidelity flow
# suggested, no output file), before it starts when the estimate is over
# and while it runs when the count gets there.
set(S ${NSIM_SRC}/scenarios)
# packet fidelity: its budgets (auto, the default, would run flow instead:
# the auto_* tests below)
set(R ${NCCLSIM} run ${S}/dgx-h100-2node-allreduce.json --fidelity packet)

nsim_expect(cli.budget.events_estimate 1
            CMD ${R} -b 1G -e 1G --max-events 1e6 --json budget_ev.json
            ERR "over the event budget: this run needs about [0-9.]+ M events.*--max-events is 1.00 M.*--fidelity flow"
            NO_FILE budget_ev.json)
# the estimate (~7.5 M) passes 8e6; the run needs 8.5 M and stops at 8 M
nsim_expect(cli.budget.events_running 1
            CMD ${R} -b 1G -e 1G --max-events 8e6 --csv budget_run.csv
            ERR "over the event budget \\(--max-events 8.00 M\\): 8000000 events run by [0-9.]+ us simulated"
            NO_FILE budget_run.csv)
nsim_expect(cli.budget.memory_estimate 1
            CMD ${R} -b 1M -e 1M --max-memory 1M --json budget_mem.json
            ERR "over the memory budget: this run needs about [0-9.]+ MiB of simulation state \\(32 NET connections.*--max-memory is 1.0 MiB.*--fidelity flow"
            NO_FILE budget_mem.json)
# --debug keeps the whole plan: its op lists count against the budget
# while it is built, and the message says what made it whole; the plan
# it prints first stops the run (every row would meet the same budget)
nsim_expect(cli.budget.plan_stats 1
            CMD ${R} -b 1M -e 1G --debug --max-memory 512K --json budget_plan.json
            ERR "1073741824 bytes: over the memory budget \\(--max-memory 0.5 MiB\\): the plan alone needs more \\(16 ranks, 16 channels, 256 lanes with their ops\\); --debug keeps the whole plan"
            NO_FILE budget_plan.json)
# so does a trace where the run does not fold (packet, 2 hosts)
nsim_expect(cli.budget.plan_trace 1
            CMD ${R} -b 1G -e 1G --trace budget_trace.json --max-memory 512K
            ERR "over the memory budget \\(--max-memory 0.5 MiB\\): the plan alone needs more \\(16 ranks, 16 channels, 256 lanes with their ops\\); --debug \\(and --trace where the run does not fold\\) keeps the whole plan"
            NO_FILE budget_trace.json)
# --stats alone keeps the plan as the run builds it: compact, it fits
# where the whole plan does not, and the state estimate is what stops it
nsim_expect(cli.budget.stats_compact 1
            CMD ${R} -b 1G -e 1G --stats --max-memory 512K
            ERR "needs about [0-9.]+ MiB of simulation state \\(32 NET connections with their QPs and CQs, 224 local ones, the plan's 0.[0-9] MiB\\)")
# without it the compact plan fits; the state estimate then counts it
nsim_expect(cli.budget.plan_counted 1
            CMD ${R} -b 1G -e 1G --max-memory 512K
            ERR "needs about [0-9.]+ MiB of simulation state \\(32 NET connections with their QPs and CQs, 224 local ones, the plan's 0.[0-9] MiB\\)")
# smaller sizes fit: their rows print, the size over the budget stops
nsim_expect(cli.budget.sweep_stops 1
            CMD ${R} -b 1M -e 1G -f 32 --max-events 3e6
            OUT "1048576 .*\n +33554432 " ERR "1073741824 bytes: over the event budget")
nsim_expect(cli.budget.none 0
            CMD ${R} -b 1M -e 1M --max-events none --max-memory none
            OUT "1048576 ")
nsim_expect(cli.budget.bad_events 2 CMD ${R} --max-events 0
            ERR "--max-events: expected a count")
nsim_expect(cli.budget.bad_memory 2 CMD ${R} --max-memory lots
            ERR "--max-memory: expected a size")
# plan builds under the same budget
nsim_expect(cli.budget.plan_command 1
            CMD ${NCCLSIM} plan ${S}/dgx-h100-2node-allreduce.json --max-memory 512K -o budget_plan_cmd.json
            ERR "over the memory budget \\(--max-memory 0.5 MiB\\): the plan alone needs more"
            NO_FILE budget_plan_cmd.json)
# the plan fits, its JSON text (held whole until written) does not
nsim_expect(cli.budget.plan_json 1
            CMD ${NCCLSIM} plan ${S}/dgx-h100-2node-allreduce.json --max-memory 2M -o budget_plan_json.json
            ERR "over the memory budget \\(--max-memory 2.0 MiB\\): the plan's JSON text passes [0-9.]+ MiB after [0-9]+ of 256 lanes"
            NO_FILE budget_plan_json.json)
nsim_expect(cli.budget.plan_json_fits 0
            CMD ${NCCLSIM} plan ${S}/dgx-h100-2node-allreduce.json --max-memory 8M -o budget_plan_fits.json)
# an AllToAll's NET connections are weighed before its plan (on 131,072
# GPUs, 2.1 M of them even folded: minutes of routing before the run's
# own estimate): every rank sends to every rank off its host
nsim_expect(cli.budget.alltoall_early 1
            CMD ${R} --collective alltoall -b 1M -e 1M --max-memory 1M --json budget_a2a.json
            ERR "1048576 bytes: over the memory budget: this AllToAll needs at least 128 NET connections \\(16 sending ranks, each to every rank off its host\\), about [0-9.]+ MiB of simulation state, before any plan; --max-memory is 1.0 MiB"
            NO_FILE budget_a2a.json)
# folded, the played hosts' ranks send (4 hosts alike: 2 played)
nsim_expect(cli.budget.alltoall_early_folded 1
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 1M -e 1M --max-memory 4M
            ERR "this AllToAll needs at least 384 NET connections \\(16 played sending ranks")
# a packet AllToAll whose every host's connections pass the budget
# cannot run whole: --fold auto folds it (12 MiB), or, folded and still
# over (4 MiB), it stops naming the played senders; --fold off says that
# it keeps every host
nsim_expect(cli.budget.alltoall_packet_folds 0
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 1M -e 1M --max-memory 12M --fidelity packet --timing
            OUT "# folded: 2 of 4 hosts played"
            ERR "# timing: 1048576 B: [^\n]*events/s, folded: 2 of 4 hosts played \\(hosts 0 and 1, each sending to the other\\)\n")
nsim_expect(cli.budget.alltoall_folded_over 1
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 1M -e 1M --max-memory 4M --fidelity packet
            ERR "384 NET connections \\(16 played sending ranks, each to every rank off its host\\)[^\n]*. raise it, or simulate an AllToAll group of fewer ranks\n$")
nsim_expect(cli.budget.alltoall_fold_off 1
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 1M -e 1M --max-memory 12M --fidelity packet --fold off
            ERR "768 NET connections \\(32 sending ranks[^\n]*fewer ranks. --fold off plays every host: folding plays a few\n$")
# Every host's AllToAll over the budget: --fidelity auto picks flow
# (which folds) for it whatever its packets (20 MiB: packet, every host)
nsim_expect(cli.budget.alltoall_auto_flow 0
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 1M -e 1M --max-memory 12M --fidelity auto --timing
            OUT "# folded: 2 of 4 hosts played"
            ERR "fidelity flow \\([^\n]*folded: 2 of 4 hosts played")
nsim_expect(cli.budget.alltoall_auto_packet 0
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 1M -e 1M --max-memory 20M --fidelity auto --timing
            NOT_OUT "folded" ERR "# timing: 1048576 B: [^\n]*events/s\n")
# auto takes packet by its packets; where the AllToAll's whole plan and
# state then pass --max-memory (its connections alone do not: 14.75 MB
# against 16 MiB), the size runs in flow, folded, and --timing and the
# JSON say why; played whole (--fold off) flow stops on the budget too,
# while its plan is built (its connections' state known before)
nsim_expect(cli.budget.auto_packet_to_flow 0
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 4M -e 4M --max-memory 16M --fidelity auto --timing
            OUT "# folded: 2 of 4 hosts played.*\n +4194304 +32768 +float +none +-1 +158\\.00 "
            ERR "fidelity flow \\(auto: packet would pass the run's budget, --max-memory or --max-events\\)")
nsim_expect(cli.budget.auto_packet_fits 0
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 4M -e 4M --max-memory 20M --fidelity auto --timing
            OUT "\n +4194304 +32768 +float +none +-1 +161\\.73 "
            NOT_OUT "folded" ERR "# timing: 4194304 B: [^\n]*events/s\n")
nsim_expect(cli.budget.auto_packet_to_flow_whole 1
            CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 4M -e 4M --max-memory 16M --fidelity auto --fold off --json auto_whole.json
            ERR "4194304 bytes: over the memory budget: this AllToAll's NET connections need about 14\\.3 MiB of simulation state, and its plan more than the 1\\.7 MiB that leaves of --max-memory 16\\.0 MiB. raise it, or simulate an AllToAll group of fewer ranks. --fold off plays every host: folding plays a few\n$"
            NO_FILE auto_whole.json)
nsim_expect_file(cli.budget.auto_packet_to_flow_json
                 CMD ${NCCLSIM} run ${NSIM_SRC}/tests/data/fold-4node.json --collective alltoall -b 4M -e 4M --max-memory 16M --fidelity auto --json auto_flow.json
                 FILE auto_flow.json
                 RE "\"fidelity\":[ \t]*\"flow\",[ \t\n]*\"fidelity_why\":[ \t]*\"packet past a budget\"")
