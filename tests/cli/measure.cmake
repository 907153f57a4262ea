# ncclsim measure import/show: the hwdata copies in data/measure import,
# bad inputs fail with the file and line and leave no output behind.
set(M ${NSIM_TESTS}/data/measure)
nsim_expect(cli.measure.import_nccl_tests 0
  CMD ${NCCLSIM} measure import ${M}/02_h100-1node-8gpu-allreduce-xxrjun.txt
      ${M}/43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt
      -o cli_measure_two.json
  OUT "cli_measure_two.json: 2 series")
nsim_expect(cli.measure.show_tags 0
  CMD ${NCCLSIM} measure show ${M}/21_excerpt_aws-p5-mpirun-tags.txt
  OUT "ranks 16, hosts 2, -g -1, float sum, NCCL 2.22.3[^\n]*\n[^\n]*4 channels.*NCCL_BUFFSIZE=8388608.*\n +8 +85.70 +0.00 +0.00 +74.97")
nsim_expect(cli.measure.show_vendor 0
  CMD ${NCCLSIM} measure show --ranks 8
      ${M}/12_azure-nd-a100-v4-1node-allreduce-vendor.txt
  OUT "vendor-table all_reduce_perf[^\n]*\n[^\n]*allreduce, ranks 8.*\n +65536 +- +- +- +[0-9.]+ +1.54 +2.70")
nsim_expect(cli.measure.show_perftest 0
  CMD ${NCCLSIM} measure show ${M}/perftest_write_bw_handmade.txt
      ${M}/perftest_write_lat_handmade.txt ${M}/P01_moc-roce400-h100host-perftest-cpu-sweep.txt
      ${M}/P03_h100-cx7-400g-roce-ib_write_bw-qp-sweep-nccl2409.txt
  OUT "perftest ib_write_bw\n[^\n]*2 QPs.*perftest ib_write_lat.*\n +8192 +2.20 .*ib_read_bw \\[ib_read_bw \\(MB/s\\)\\]")
nsim_expect(cli.measure.truncated 1
  CMD ${NCCLSIM} measure import
      ${M}/30_h100pcie-nvlinkbridge-2gpu-allreduce-issue194.txt -o cli_measure_30.json
  ERR "30_h100pcie-nvlinkbridge-2gpu-allreduce-issue194.txt:16: truncated table"
  NO_FILE cli_measure_30.json)
nsim_expect(cli.measure.partial 0
  CMD ${NCCLSIM} measure import --partial
      ${M}/30_h100pcie-nvlinkbridge-2gpu-allreduce-issue194.txt -o cli_measure_30p.json
  ERR "warning: [^\n]*:16: row cut short")
nsim_expect(cli.measure.reimport 0
  CMD ${NCCLSIM} measure show cli_measure_two.json
  OUT "nccl-tests all_reduce_perf.*nccl-tests \\?")
set_tests_properties(cli.measure.reimport PROPERTIES DEPENDS
                     cli.measure.import_nccl_tests)
nsim_expect(cli.measure.no_output 2
  CMD ${NCCLSIM} measure import ${M}/02_h100-1node-8gpu-allreduce-xxrjun.txt
  ERR "import needs -o")
file(STRINGS ${M}/bad/expected.txt lines REGEX "^[^#]")
foreach(line ${lines})
  string(REPLACE "|" ";" parts "${line}")
  list(GET parts 0 f)
  list(GET parts 1 msg)
  get_filename_component(n ${f} NAME_WE)
  string(REGEX REPLACE "([][.*+?()^$|\\\\])" "\\\\\\1" msg_re "${msg}")
  nsim_expect(cli.measure_bad.${n} 1
    CMD ${NCCLSIM} measure import ${M}/bad/${f} -o cli_measure_bad_${n}.json
    ERR "^ncclsim: [^\n]*${msg_re}[^\n]*\n$"
    NO_FILE cli_measure_bad_${n}.json)
endforeach()

# ncclsim compare: two A100 over NV4 against hwdata 43 (small sizes only,
# to stay fast), refusals that name both values, JSON and plot files.
set(NV4 ${M}/nv4-sendrecv.json)
nsim_expect(cli.compare.nv4 0
  CMD ${NCCLSIM} compare ${NV4} ${M}/43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt
      --max-size 4M --json cli_compare_nv4.json --plot cli_compare_nv4.png
  OUT "NCCL_BUFFSIZE=4194304 \\(measured\\).*\n +4194304 +oop +108.90 +[0-9.]+ +38.52 .*P2P/Simple/[0-9]+ .*summary: median \\|error\\| >= 1 MiB [0-9.]+% \\(3 sizes\\), < 1 MiB [0-9.]+% \\(17 sizes\\), bias")
# a size that ran flow says so beside what ncclsim ran (auto, the default,
# picks per size; here asked for), and in the JSON
nsim_expect_file(cli.compare.flow_rows
  CMD ${NCCLSIM} compare ${NV4} ${M}/43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt
      --max-size 4M --fidelity flow --json cli_compare_flow.json
  FILE cli_compare_flow.json
  OUT "\n +4194304 +oop +108.90 +[0-9.]+ +38.52 [^\n]*P2P/Simple/[0-9]+/flow "
  RE "\"channels\":[ \t]*[0-9]+,[ \t\n]*\"fidelity\":[ \t]*\"flow\"")
nsim_expect(cli.compare.other_collective 1
  CMD ${NCCLSIM} compare ${NV4} ${M}/02_h100-1node-8gpu-allreduce-xxrjun.txt
      --json cli_compare_refused.json
  ERR "02_h100-1node-8gpu-allreduce-xxrjun.txt:20: the measurement is allreduce, the scenario [^\n]*nv4-sendrecv.json runs sendrecv"
  NO_FILE cli_compare_refused.json)
nsim_expect(cli.compare.other_ranks 1
  CMD ${NCCLSIM} compare ${NV4} --collective all_reduce_perf
      ${M}/02_h100-1node-8gpu-allreduce-xxrjun.txt
  ERR "the measurement has 8 ranks, the scenario [^\n]*nv4-sendrecv.json has 2")
nsim_expect(cli.compare.perftest 1
  CMD ${NCCLSIM} compare ${NV4} ${M}/perftest_write_bw_handmade.txt
  ERR "ib_write_bw is a perftest measurement of one NIC pair")
nsim_expect(cli.compare.no_measurement 2
  CMD ${NCCLSIM} compare ${NV4}
  ERR "expected one or more measurements")

# ncclsim calibrate: hwdata 43 up to 4 MiB pins the launch latency and the
# A100 per-block copy rate; the params file feeds run --params and params;
# constants the data do not move are refused by name; no convergence is an
# error; nothing is written on error.
set(CAL43 ${NCCLSIM} calibrate ${NV4}
    ${M}/43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt --max-size 4M)
nsim_expect(cli.calibrate.nv4 0
  CMD ${CAL43} -o cli_calibrate_nv4.json
  OUT "kernel_launch_ps +[0-9.]+ ns +\\[[0-9.]+ ns, [0-9.]+ ns\\] +5000.000 ns \\(hw 5.*error on the fitted sizes: median \\|busbw error\\| [0-9.]+% -> [0-9.]+%.*not fitted: proxy_action_ps: the measurements do not move with it")
nsim_expect(cli.calibrate.params_show 0
  CMD ${NCCLSIM} params cli_calibrate_nv4.json
  OUT "\"kernel_launch_ps\":[^}]*calibrated by ncclsim calibrate on [^}]*43_a100")
set_tests_properties(cli.calibrate.params_show PROPERTIES DEPENDS cli.calibrate.nv4)
nsim_expect(cli.calibrate.run_params 0
  CMD ${NCCLSIM} run ${NV4} -b 8 -e 8 --params cli_calibrate_nv4.json
  OUT "\n +8 +2 +float +sum +-1 +(9|10)\\.[0-9][0-9] ")
nsim_expect(cli.calibrate.run_default 0
  CMD ${NCCLSIM} run ${NV4} -b 8 -e 8
  OUT "\n +8 +2 +float +sum +-1 +5\\.35 ")
set_tests_properties(cli.calibrate.run_params PROPERTIES DEPENDS cli.calibrate.nv4)
nsim_expect(cli.calibrate.refused 1
  CMD ${CAL43} --fit kernel_launch_ps,proxy_action_ps -o cli_calibrate_refused.json
  ERR "refused: proxy_action_ps: the measurements do not move with it[^\n]*multi-host sizes"
  NO_FILE cli_calibrate_refused.json)
nsim_expect(cli.calibrate.no_convergence 1
  CMD ${CAL43} --max-iter 1 -o cli_calibrate_stuck.json
  ERR "did not converge after 1 iterations"
  NO_FILE cli_calibrate_stuck.json)
nsim_expect(cli.calibrate.unknown_fit 1
  CMD ${CAL43} --fit warp_speed -o cli_calibrate_unknown.json
  ERR "--fit warp_speed: not a constant calibrate fits"
  NO_FILE cli_calibrate_unknown.json)
# --min-size keeps the large sizes (3 of 512 MiB - 2 GiB, not 6), where a
# link efficiency shows; the fit starts inside the efficiency's bound (100 %)
nsim_expect(cli.calibrate.min_size 0
  CMD ${NCCLSIM} calibrate ${NV4}
      ${M}/43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt
      --min-size 512M --max-size 4G --sizes 6 --fit nvlink_efficiency_pct
      -o cli_calibrate_min.json
  OUT "fitted on 3 measured sizes.*nvlink_efficiency_pct +[0-9]+ +\\[[0-9]+, [0-9]+\\] +100 \\(calibration knob")
nsim_expect(cli.calibrate.bad_min_size 2
  CMD ${CAL43} --min-size 1Q -o cli_calibrate_badmin.json
  ERR "--min-size 1Q: expected a size"
  NO_FILE cli_calibrate_badmin.json)
nsim_expect(cli.calibrate.no_output 2
  CMD ${CAL43}
  ERR "needs -o PARAMS.json")
nsim_expect(cli.measure.import_options 0
  CMD ${NCCLSIM} measure show --env NCCL_ALGO=Ring --gpus-per-thread 8 --ranks 8
      ${M}/12_azure-nd-a100-v4-1node-allreduce-vendor.txt
  OUT "ranks 8, hosts -1, -g 8, [^\n]*\n   NCCL_ALGO=Ring\n")
nsim_expect(cli.measure.import_conflict 1
  CMD ${NCCLSIM} measure import --env NCCL_ALGO=Tree
      ${M}/40_h100-2node-ndr-allreduce-ring-underperf-issue290.txt -o cli_measure_conflict.json
  ERR "the file says NCCL_ALGO=RING, --env says Tree"
  NO_FILE cli_measure_conflict.json)
nsim_expect(cli.calibrate.nothing_pinned 1
  CMD ${NCCLSIM} calibrate ${NV4} ${M}/43_a100-nv4-2gpu-p2p-sendrecv-ncclinfo-issue331.txt
      --max-size 4M --sizes 2 --try proxy_action_ps,p2p_step_sync_ps -o cli_calibrate_none.json
  ERR "^ncclsim: calibrate: the measurements pin none of the constants tried: proxy_action_ps \\(no effect\\), p2p_step_sync_ps \\(95% interval covers its bounds\\)[^\n]*\n$"
  NO_FILE cli_calibrate_none.json)
