# ncclsim validate: the host backend end to end (this machine described
# as a topology, plans executed on real data, measured and beside the
# simulated time), plans read back, and every bad input: a plan of another
# scenario or version, a rank lost mid-run, no GPU, no RDMA device.
set(V ${NCCLSIM} validate)

# this machine: 3 cores as ranks at a fixed rate (deterministic files)
add_test(NAME cli.validate.describe_host
         COMMAND ${V} --describe-host --ranks 3 --bw 4GB/s
                 -o vhost.topo.json --scenario-out vhost.json)
set_tests_properties(cli.validate.describe_host PROPERTIES
                     FIXTURES_SETUP vhost)
function(vtest name rc)
  nsim_expect(${name} ${rc} ${ARGN})
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED vhost)
endfunction()

vtest(cli.validate.host_allreduce 0
      CMD ${V} --backend host vhost.json -b 4K -e 256K -f 8 -n 3 -w 1
          --nchannels 2 -o vhost_m.json --trace vhost_t.json
      OUT "all_reduce_perf on \"host-3core\" \\(3 ranks\\), backend host.*\n +4096 +1024 +float +sum +[0-9.]+ +[0-9.]+ +[0-9.]+ +0 .*\n +32768 .*\n +262144 .*# Out of bounds values : 0 OK")
add_test(NAME cli.validate.host_files
         COMMAND ${CMAKE_COMMAND} -DFILE=vhost_m.json
                 "-DRE=\"format\":[ \t]*\"ncclsim-measurement\".*\"busbw\".*\"wrong\":[ \t]*0"
                 -P ${NSIM_TESTS}/file_matches.cmake)
add_test(NAME cli.validate.host_trace
         COMMAND ${CMAKE_COMMAND} -DFILE=vhost_t.json
                 "-DRE=\"name\": \"recvReduceSend\", \"cat\": \"op\", \"ph\": \"X\", \"pid\": 2"
                 -P ${NSIM_TESTS}/file_matches.cmake)
set_tests_properties(cli.validate.host_files cli.validate.host_trace
                     PROPERTIES DEPENDS cli.validate.host_allreduce)
foreach(c all_gather_perf reduce_scatter_perf broadcast_perf reduce_perf
          sendrecv_perf alltoall_perf)
  vtest(cli.validate.host_${c} 0
        CMD ${V} --backend host vhost.json --collective ${c} -d half
            --op max -b 48K -e 48K -n 2 -w 1
        OUT "Out of bounds values : 0 OK")
endforeach()
vtest(cli.validate.host_processes 0
      CMD ${V} --backend host --processes vhost.json -d int8 --op prod
          -b 96K -e 96K -n 2 -w 1
      OUT "a process per rank.*\n +98304 .* 0 .* 0 .*Out of bounds values : 0 OK")

# the plan `ncclsim plan` wrote, played as it is
vtest(cli.validate.plan_write 0
      CMD ${NCCLSIM} plan vhost.json --size 192K -o vhost_plan.json)
set_tests_properties(cli.validate.plan_write PROPERTIES
                     FIXTURES_SETUP vplan)
function(ptest name rc)
  vtest(${name} ${rc} ${ARGN})
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED "vhost;vplan")
endfunction()
ptest(cli.validate.plan_play 0
      CMD ${V} --backend host vhost.json --plan vhost_plan.json -n 2 -w 1
      OUT "\n +196608 +49152 .*Out of bounds values : 0 OK")
# bad input: another scenario's plan, another collective, another version
ptest(cli.validate.plan_other_topology 1
      CMD ${V} --backend host ${NSIM_SRC}/scenarios/seed-allreduce.json
          --plan vhost_plan.json -o vbad.json
      ERR "^ncclsim: [^\n]*vhost_plan.json: topology: the plan is for topology \"host-3core\", the scenario's is \"seed-4gpu\"\n$"
      NO_FILE vbad.json)
ptest(cli.validate.plan_other_collective 1
      CMD ${V} --backend host vhost.json --collective all_gather_perf
          --plan vhost_plan.json -o vbad.json
      ERR "collective: the plan is allreduce, scenario .* runs allgather"
      NO_FILE vbad.json)
add_test(NAME cli.validate.plan_v2_make
         COMMAND ${CMAKE_COMMAND} -DIN=vhost_plan.json -DOUT=vhost_plan_v2.json
                 -P ${NSIM_TESTS}/plan_version.cmake)
set_tests_properties(cli.validate.plan_v2_make PROPERTIES
                     FIXTURES_REQUIRED vplan FIXTURES_SETUP vplan2)
ptest(cli.validate.plan_other_version 1
      CMD ${V} --backend host vhost.json --plan vhost_plan_v2.json -o vbad.json
      ERR "vhost_plan_v2.json: version: this ncclsim reads version 1, got 2"
      NO_FILE vbad.json)
set_tests_properties(cli.validate.plan_other_version PROPERTIES
                     FIXTURES_REQUIRED "vhost;vplan2")

# a rank lost mid-run: a clear error at once, no measurement file
vtest(cli.validate.lost_rank 1
      CMD ${V} --backend host --processes --test-lose-rank 2 vhost.json
          -b 64K -e 64K -n 2 -w 1 -o vlost.json
      ERR "rank 2's process \\(pid [0-9]+\\) was lost mid-run: killed by signal 9"
      NO_FILE vlost.json)
set_tests_properties(cli.validate.lost_rank PROPERTIES TIMEOUT 20)

# no device here (or a build without the library): exit 1, named
vtest(cli.validate.cuda_no_device 1
      CMD ${V} --backend cuda vhost.json -o vcuda.json
      ERR "^ncclsim: cuda backend: (no GPU: cudaGetDeviceCount returned 0 device\\(s\\): [^\n]+|not built: [^\n]+)\n$"
      NO_FILE vcuda.json)
nsim_expect(cli.validate.cuda_microbench_no_device 1
            CMD ${V} --backend cuda --microbench -o vmb.json
            ERR "cuda backend: (no GPU|not built)" NO_FILE vmb.json)
vtest(cli.validate.nccl_no_device 1
      CMD ${V} --backend nccl vhost.json -o vnccl.json
      ERR "^ncclsim: nccl backend: (no GPU: cudaGetDeviceCount[^\n]+|no CUDA runtime: [^\n]+|cannot load NCCL[^\n]+)\n$"
      NO_FILE vnccl.json)
vtest(cli.validate.nccl_bad_lib 1
      CMD ${V} --backend nccl vhost.json --nccl-lib /nonexistent/libnccl.so
      ERR "nccl backend: (no GPU|no CUDA runtime|cannot load NCCL)")
vtest(cli.validate.verbs_no_device 1
      CMD ${V} --backend verbs vhost.json --rank 0 --hosts 127.0.0.1:1
          --token t -o vverbs.json
      ERR "^ncclsim: verbs backend: (no RDMA device: ibv_get_device_list\\(\\) returned [^\n]+|not built: [^\n]+)\n$"
      NO_FILE vverbs.json)

# usage
nsim_expect(cli.validate.usage_backend 2 CMD ${V} vhost.json
            ERR "--backend host\\|cuda\\|nccl\\|verbs is required")
nsim_expect(cli.validate.usage_bad_backend 2
            CMD ${V} --backend fpga vhost.json ERR "expected host, cuda")
nsim_expect(cli.validate.usage_lose_rank 2
            CMD ${V} --backend host --test-lose-rank 1 vhost.json
            ERR "needs --processes")

# the rest of the path: the live measurement compared with the simulation
# of the same scenario; calibration on a measurement of this machine kept
# in tests/data/validate (calibrating a live run on a shared CI machine
# would make the fitted value, and whether it is identified, noise)
vtest(cli.validate.compare_live 0
      CMD ${NCCLSIM} compare vhost.json vhost_m.json
      OUT "ncclsim-validate host all_reduce_perf.*\n +4096 +oop .*summary: median")
set_tests_properties(cli.validate.compare_live PROPERTIES
                     DEPENDS cli.validate.host_allreduce)
set(VD ${NSIM_TESTS}/data/validate)
nsim_expect(cli.validate.calibrate_host 0
            CMD ${NCCLSIM} calibrate ${VD}/host-2core.json
                ${VD}/host-2core-measured.json --fit host_core_copy_bw
                -o vcal.json
            OUT "host_core_copy_bw +1\\.15 GB/s +\\[0\\.13 GB/s, 30\\.05 GB/s\\] +0\\.74 GB/s")
set_tests_properties(cli.validate.calibrate_host PROPERTIES
                     FIXTURES_SETUP vcal)
nsim_expect(cli.validate.compare_calibrated 0
            CMD ${NCCLSIM} compare ${VD}/host-2core.json
                ${VD}/host-2core-measured.json --params vcal.json
            OUT "summary: median")
set_tests_properties(cli.validate.compare_calibrated PROPERTIES
                     FIXTURES_REQUIRED vcal)

# What validate's cuda and nccl backends measured on one H200
# (scripts/gpu_validate.sh; docs/validate.md): the microbenchmark is a
# params file, the executor's runs and NCCL's one-rank run are
# measurements that measure show and compare read.
nsim_expect(cli.validate.h200_microbench_params 0
            CMD ${NCCLSIM} params ${VD}/h200-microbench.json
            OUT "\"kernel_launch_ps\":[^}]*\"4902 ns\"[^}]*NVIDIA H200")
nsim_expect(cli.validate.h200_nccl_show 0
            CMD ${NCCLSIM} measure show ${VD}/h200-nccl-1gpu.json
            OUT "ranks 1, hosts 1, -g 1, float sum, NCCL 2\\.28\\.9\\+cuda13\\.0.*\n +1073741824 +504\\.20")
nsim_expect(cli.validate.h200_cuda_compare 0
            CMD ${NCCLSIM} compare ${VD}/h200-8rank-ring.json
                ${VD}/h200-cuda-allreduce.json
            OUT "268435456 +oop +40121\\.05 +9921\\.09 .*summary: median")
