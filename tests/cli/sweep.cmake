# ncclsim sweep: the same bytes whatever -j, --resume, --mpi; bad knobs.
set(S ${NSIM_SRC}/scenarios)
set(SW ${NCCLSIM} sweep ${S}/dgx-h100-2node-allreduce.json
       --set NCCL_IB_QPS_PER_CONNECTION=1,4 --set nchannels=4:16:x2
       -b 1M -e 16M -f 4)

function(nsim_sweep_same name)
  cmake_parse_arguments(W "" "FA;FB;KEEP;ERR" "A;B" ${ARGN})
  string(REPLACE ";" "\\;" a "${W_A}")
  string(REPLACE ";" "\\;" b "${W_B}")
  set(args "-DA=${a}" "-DB=${b}" -DFA=${W_FA} -DFB=${W_FB})
  if(W_KEEP)
    list(APPEND args -DKEEP_LINES=${W_KEEP})
  endif()
  if(W_ERR)
    list(APPEND args -DERR_RE=${W_ERR})
  endif()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${args}
           -P ${NSIM_TESTS}/sweep_same.cmake)
endfunction()

nsim_sweep_same(cli.sweep.jobs_same_bytes
                A ${SW} -j 1 -o sw_j1.csv FA sw_j1.csv
                B ${SW} -j 3 -o sw_j3.csv FB sw_j3.csv)
nsim_sweep_same(cli.sweep.jobs_same_bytes_json
                A ${SW} -o sw_j1.json FA sw_j1.json
                B ${SW} -j 2 -o sw_j2.json FB sw_j2.json)
# interrupted after 2 points (1 header + 2 x 3 sizes), then resumed
nsim_sweep_same(cli.sweep.resume
                A ${SW} -o sw_full.csv FA sw_full.csv
                B ${SW} -j 2 --resume -o sw_part.csv FB sw_part.csv KEEP 7
                ERR "resuming: 2 of 6 points")
# a point cut short (2 of its 3 sizes) is run again
nsim_sweep_same(cli.sweep.resume_partial_point
                A ${SW} -o sw_full2.csv FA sw_full2.csv
                B ${SW} --resume -o sw_part2.csv FB sw_part2.csv KEEP 6
                ERR "resuming: 1 of 6 points")
# (OpenMPI's own allocations outlive MPI_Finalize: no leak check there)
find_program(NSIM_MPIRUN mpirun)
if(NSIM_MPIRUN)
  nsim_sweep_same(cli.sweep.mpi_same_bytes
                  A ${SW} -o sw_np1.csv FA sw_np1.csv
                  B ${CMAKE_COMMAND} -E env OMPI_ALLOW_RUN_AS_ROOT=1
                    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
                    ASAN_OPTIONS=detect_leaks=0
                    ${NSIM_MPIRUN} --oversubscribe -np 2 ${SW} --mpi -o sw_np2.csv
                  FB sw_np2.csv)
  set_tests_properties(cli.sweep.mpi_same_bytes PROPERTIES TIMEOUT 120)
endif()

nsim_expect(cli.sweep.rows 0
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set nchannels=2,4
            --set protocol=Simple,LL -b 64K -e 256K -f 4 -o -
            OUT "^point,nchannels,protocol,size,.*\n0,2,Simple,65536,.*\n0,2,Simple,262144,.*\n1,2,LL,65536,[^\n]*,LL,2,.*\n3,4,LL,262144,")
# each row names its fidelity: auto (the default) runs flow where packet
# would be slow (two DGX H100 at 32 GiB: 45 M packets and stream pieces);
# the last table written (-o - is rewritten every 2 s while points finish)
nsim_expect(cli.sweep.fidelity_column 0
            CMD ${NCCLSIM} sweep ${S}/dgx-h100-2node-allreduce.json
            --set fidelity=auto,flow -b 1M -e 32G -f 32768 -o -
            OUT "point,fidelity,size,[^\n]*,events,fidelity\n0,auto,1048576,[^\n]*,packet\n0,auto,34359738368,[^\n]*,flow\n1,flow,1048576,[^\n]*,flow\n1,flow,34359738368,[^\n]*,flow\n$")
nsim_expect(cli.sweep.bad_knob 1
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set nchanels=2,4
            -o sw_bad.csv ERR "--set: nchanels: not a knob" NO_FILE sw_bad.csv)
nsim_expect(cli.sweep.bad_value 1
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set nchannels=2,99
            -o sw_bad.csv ERR "nchannels: expected an integer in \\[1, 64\\], got 99"
            NO_FILE sw_bad.csv)
nsim_expect(cli.sweep.bad_env 1
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json
            --set NCCL_IB_QPS_PER_CONNECTION=1,x -o sw_bad.csv
            ERR "NCCL_IB_QPS_PER_CONNECTION: invalid value \"x\"" NO_FILE sw_bad.csv)
nsim_expect(cli.sweep.bad_range 2
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set nchannels=8:2:x2
            -o sw_bad.csv ERR "range '8:2:x2'" NO_FILE sw_bad.csv)
nsim_expect(cli.sweep.no_set 2
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json -o sw_bad.csv
            ERR "at least one --set")
nsim_expect(cli.sweep.no_output 2
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set nchannels=2
            ERR "expected -o")
nsim_expect(cli.sweep.bad_jobs 2
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set nchannels=2
            -j 0 -o sw_bad.csv ERR "-j: expected 1..256")
nsim_expect(cli.sweep.run_only_option 2
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set nchannels=2
            --json x.json -o sw_bad.csv ERR "options of 'ncclsim run'")
# a point that fails: without -k the sweep stops (exit 1, naming the
# point); with -k it is reported and the others run
nsim_expect(cli.sweep.point_fails 1
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set algorithm=NVLS,Ring
            -b 1M -e 4M -o -
            ERR "point 0 \\(algorithm=NVLS\\): .*algorithm NVLS needs"
            NOT_OUT "Ring,1048576")
nsim_expect(cli.sweep.keep_going 1
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set algorithm=NVLS,Ring
            -b 1M -e 4M -k -j 2 -o -
            OUT "^point,algorithm,.*\n1,Ring,1048576,.*\n1,Ring,4194304,"
            ERR "point 0 \\(algorithm=NVLS\\).*1 of 2 point\\(s\\) failed")
# shards (a Slurm array) merged with --from: the single-machine bytes
foreach(i 0 1)
  add_test(NAME cli.sweep.shard_${i} COMMAND ${SW} --shard ${i}/2 -o sw_shard${i}.csv)
  set_tests_properties(cli.sweep.shard_${i} PROPERTIES FIXTURES_SETUP sw_shard${i})
endforeach()
nsim_sweep_same(cli.sweep.shards_merged
                A ${SW} -o sw_single.csv FA sw_single.csv
                B ${SW} --from sw_shard0.csv --from sw_shard1.csv -o sw_merged.csv
                FB sw_merged.csv ERR "resuming: 6 of 6 points")
set_tests_properties(cli.sweep.shards_merged PROPERTIES
                     FIXTURES_REQUIRED "sw_shard0;sw_shard1")
nsim_expect(cli.sweep.bad_shard 2
            CMD ${NCCLSIM} sweep ${S}/seed-allreduce.json --set nchannels=2
            --shard 2/2 -o sw_bad.csv ERR "--shard: expected I/N")
# a fault's fields are knobs (faults[K].FIELD): which NIC goes down, and
# when (at 5 ms, after the 16 MiB run has ended, it strikes nothing: the
# fault-free time); bad fault knobs are refused before anything runs
nsim_expect(cli.sweep.fault_knobs 0
            CMD ${NCCLSIM} sweep ${NSIM_TESTS}/data/fold-4node-port-down.json
            --set faults[0].nic=h1.nic3,h2.nic0 --set faults[0].at=50us,5ms
            -o -
            OUT "^point,faults\\[0\\]\\.nic,faults\\[0\\]\\.at,size,[^\n]*\n0,h1\\.nic3,50us,16777216,[^\n]*,1381\\.382,[^\n]*\n1,h1\\.nic3,5ms,16777216,[^\n]*,349\\.283,[^\n]*\n2,h2\\.nic0,50us,16777216,[^\n]*,1385\\.821,[^\n]*\n3,h2\\.nic0,5ms,[^\n]*,349\\.283,")
nsim_expect(cli.sweep.fault_knob_index 1
            CMD ${NCCLSIM} sweep ${NSIM_TESTS}/data/fold-4node-port-down.json
            --set faults[3].at=1us -o sw_bad.csv
            ERR "--set: faults\\[3\\]\\.at: the scenario has 1 fault\\(s\\)"
            NO_FILE sw_bad.csv)
nsim_expect(cli.sweep.fault_knob_field 1
            CMD ${NCCLSIM} sweep ${NSIM_TESTS}/data/fold-4node-port-down.json
            --set faults[0].bw=1Gb/s -o sw_bad.csv
            ERR "--set: faults\\[0\\]\\.bw: a port_down fault has no bw"
            NO_FILE sw_bad.csv)
nsim_expect(cli.sweep.fault_knob_unknown 1
            CMD ${NCCLSIM} sweep ${NSIM_TESTS}/data/fold-4node-port-down.json
            --set faults[0].colour=1 -o sw_bad.csv
            ERR "faults\\[0\\]\\.colour: not a knob \\(a fault's is faults\\[K\\]\\.FIELD"
            NO_FILE sw_bad.csv)
nsim_expect(cli.sweep.fault_knob_device 1
            CMD ${NCCLSIM} sweep ${NSIM_TESTS}/data/fold-4node-port-down.json
            --set faults[0].nic=h1.nic3,h9.nic0 -o sw_bad.csv
            ERR "--set: faults\\[0\\]\\.nic: unknown device \"h9\\.nic0\""
            NO_FILE sw_bad.csv)
# "any" channel: QP 0 of every channel's connections fails at once
# (each channel rebinds to QP 1 alike), against channel 1 alone (which
# the others then wait for)
nsim_expect(cli.sweep.fault_knob_any 0
            CMD ${NCCLSIM} sweep ${NSIM_TESTS}/data/fold-4node-faults.json
            --set faults[0].channel=any,1 -o -
            OUT "\n0,any,16777216,[^\n]*,344\\.042,[^\n]*\n1,1,16777216,[^\n]*,359\\.546,")
