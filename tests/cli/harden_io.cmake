# Output safety, odd inputs, limits and NCCL / nccl-tests habits (issue 14
# items 1, 2, 4, 5, 8): each bad case must fail cleanly, naming the field.
set(S ${NSIM_SRC}/scenarios)
set(SEED ${S}/seed-allreduce.json)
set(IO ${CMAKE_CURRENT_BINARY_DIR}/io)

# copies of the seed scenario and its topology, so that a regression can
# only overwrite a copy; a link to the copy; a 16-node cluster
add_test(NAME cli.io.setup COMMAND ${CMAKE_COMMAND} -E make_directory ${IO})
add_test(NAME cli.io.setup_copy
         COMMAND ${CMAKE_COMMAND} -E copy ${SEED} ${S}/seed-4gpu.topo.json ${IO})
add_test(NAME cli.io.setup_link
         COMMAND ${CMAKE_COMMAND} -E create_symlink seed-allreduce.json
                 ${IO}/alias.json)
add_test(NAME cli.io.setup_t16
         COMMAND ${NCCLSIM} topo build --nodes 16 --node-preset dgx-h100 -q
                 -o ${IO}/t16.json)
set_tests_properties(cli.io.setup PROPERTIES FIXTURES_SETUP io_dir)
set_tests_properties(cli.io.setup_copy cli.io.setup_link cli.io.setup_t16
                     PROPERTIES FIXTURES_SETUP io FIXTURES_REQUIRED io_dir)
set_tests_properties(cli.io.setup_link PROPERTIES DEPENDS cli.io.setup_copy)
set(C ${IO}/seed-allreduce.json)
set(R -b 1M -e 1M --quiet)

function(io_expect name rc)
  nsim_expect(cli.io.${name} ${rc} ${ARGN})
  set_tests_properties(cli.io.${name} PROPERTIES FIXTURES_REQUIRED io)
endfunction()

# item 1: outputs
io_expect(output_is_scenario 1 CMD ${NCCLSIM} run ${C} ${R} --json ${C}
          ERR "seed-allreduce.json: refusing to overwrite an input of this command")
io_expect(output_is_topology 1 CMD ${NCCLSIM} run ${C} ${R}
          --json ${IO}/seed-4gpu.topo.json ERR "refusing to overwrite an input")
io_expect(output_links_to_input 1 CMD ${NCCLSIM} run ${C} ${R}
          --csv ${IO}/alias.json ERR "alias.json: refusing to overwrite an input of this command \\(read as [^)]*seed-allreduce.json\\)")
io_expect(output_twice 1 CMD ${NCCLSIM} run ${C} ${R} --json ${IO}/twice.x
          --csv ${IO}/twice.x ERR "is also the output" NO_FILE ${IO}/twice.x)
io_expect(output_dir 1 CMD ${NCCLSIM} run ${C} ${R} --json ${IO}
          ERR "is a directory")
io_expect(full_disk 1 CMD ${NCCLSIM} run ${C} ${R} --json /dev/full
          ERR "^ncclsim: /dev/full: cannot write: No space left on device\n$")
io_expect(none_on_failure 1 CMD ${NCCLSIM} run ${C} ${R} --json ${IO}/good.json
          --csv ${IO}/no/such/x.csv ERR "x.csv: cannot write"
          NO_FILE ${IO}/good.json)
io_expect(full_disk_drops_others 1 CMD ${NCCLSIM} run ${C} ${R}
          --json ${IO}/good2.json --csv /dev/full ERR "No space left"
          NO_FILE ${IO}/good2.json)
io_expect(csv_stdout 0 CMD ${NCCLSIM} run ${C} ${R} --csv -
          OUT "^size,count,type,redop,root,time_us.*\n1048576,262144,float,")
io_expect(json_dev_stdout 0 CMD ${NCCLSIM} run ${C} ${R} --json /dev/stdout
          OUT "\"format\":[ \t]*\"ncclsim-result\"")
io_expect(dev_null 0 CMD ${NCCLSIM} run ${C} ${R} --json /dev/null)
io_expect(plan_stdout 0 CMD ${NCCLSIM} plan ${C} --size 1M -o -
          OUT "\"format\":[ \t]*\"ncclsim-plan\"")
io_expect(dot_full 1 CMD ${NCCLSIM} topo dot ${IO}/seed-4gpu.topo.json
          -o /dev/full ERR "No space left")
io_expect(build_stdout 0 CMD ${NCCLSIM} topo build --nodes 1
          --node-preset dgx-h100 -o - OUT "\"format\":[ \t]*\"ncclsim-topology\"")

# items 4, 5: odd inputs and limits
nsim_expect(cli.io.input_directory 1 CMD ${NCCLSIM} run ${NSIM_TESTS}/data
            ERR "not a regular file \\(a directory\\)")
nsim_expect(cli.io.input_dev_zero 1 CMD ${NCCLSIM} run /dev/zero
            ERR "not a regular file \\(a character device\\)")
nsim_expect(cli.io.topo_dev_zero 1 CMD ${NCCLSIM} topo check /dev/zero
            ERR "not a regular file")
foreach(bad "nan" "1" "inf" "0.5")
  nsim_expect(cli.io.stepfactor_${bad} 2 CMD ${NCCLSIM} run ${SEED} -f ${bad}
              ERR "-f: expected a factor above 1")
endforeach()
nsim_expect(cli.io.stepbytes_0 2 CMD ${NCCLSIM} run ${SEED} -i 0
            ERR "-i: expected a step > 0 bytes")
nsim_expect(cli.io.max_bytes_limit 1 CMD ${NCCLSIM} run ${SEED} -e 2T
            ERR "over the limit of 1 TiB")
nsim_expect(cli.io.too_many_sizes 1 CMD ${NCCLSIM} run ${SEED} -b 4 -e 1G -i 4
            ERR "over 4096 sizes")
nsim_expect(cli.io.nvlstree_a100_refused 1
            CMD ${NCCLSIM} run ${NSIM_TESTS}/data/nvlstree-a100-2node.json
            ERR "NVLSTree needs sm >= 90")
nsim_expect(cli.io.big_cluster_admitted 0 CMD ${NCCLSIM} topo build
            --nodes 16384 --node-preset dgx-h100
            OUT "131072 ranks")

# item 8: NCCL and nccl-tests habits
nsim_expect(cli.io.shell_env 0 CMD ${CMAKE_COMMAND} -E env
            NCCL_IB_QPS_PER_CONNECTION=2 ${NCCLSIM} run ${SEED} -b 1M -e 1M
            OUT "2 QP\\(s\\) per connection"
            ERR "note: shell NCCL_\\* variables: took effect: NCCL_IB_QPS_PER_CONNECTION=2")
nsim_expect(cli.io.shell_env_ignored 0 CMD ${CMAKE_COMMAND} -E env
            NCCL_DEBUG=INFO NCCL_ALGO=tree ${NCCLSIM} run ${SEED} -b 1M -e 1M
            OUT "algorithm Ring,"
            ERR "NCCL_DEBUG \\(not modelled\\)")
nsim_expect(cli.io.shell_env_scenario_wins 0 CMD ${CMAKE_COMMAND} -E env
            NCCL_ALGO=tree ${NCCLSIM} run ${SEED} -b 1M -e 1M
            OUT "algorithm Ring," ERR "NCCL_ALGO \\(the scenario sets it\\)")
nsim_expect(cli.io.shell_env_bad 1 CMD ${CMAKE_COMMAND} -E env
            NCCL_BUFFSIZE=3 ${NCCLSIM} run ${SEED} -b 1M -e 1M
            ERR "NCCL_BUFFSIZE: invalid value \"3\"")
nsim_expect(cli.io.algo_list 0 CMD ${NCCLSIM} run
            ${S}/dgx-h100-2node-allreduce.json --algo ring,tree -b 4M -e 4M
            --tuning OUT "NCCL_ALGO=ring,tree.*\n.*\n.*\n.*\n.*  (Ring|Tree)/")
nsim_expect(cli.io.algo_exclude 0 CMD ${NCCLSIM} run
            ${S}/dgx-h100-2node-allreduce.json --algo ^tree,nvls,nvlstree
            -b 4M -e 4M --tuning OUT "  Ring/")
nsim_expect(cli.io.proto_exclude 0 CMD ${NCCLSIM} run
            ${S}/dgx-h100-allreduce.json --proto ^simple,ll128 -b 4M -e 4M
            --algo auto --tuning OUT "/LL  ")
nsim_expect(cli.io.algo_none_left 1 CMD ${NCCLSIM} run ${SEED}
            --algo ^ring,tree,nvls,nvlstree,pat ERR "\\(none left\\)")
nsim_expect(cli.io.algo_unknown 1 CMD ${NCCLSIM} run ${SEED} --algo ring,bogus
            ERR "\\(\"bogus\"\\)")
nsim_expect(cli.io.algo_unavailable 1 CMD ${NCCLSIM} run
            ${NSIM_TESTS}/data/nvlstree-a100-2node.json --algo nvls,nvlstree
            ERR "no allowed algorithm \\(NCCL_ALGO\\)")
nsim_expect(cli.io.cputime 0 CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json
            -b 1M -e 1M -g 8 -C 1
            OUT "host thread's CPU time.*\n.*\n.*\n.*\n.*\n +1048576 .* 40\\.00 ")
nsim_expect(cli.io.cudagraph 0 CMD ${NCCLSIM} run ${SEED} -b 8 -e 8 -g 4 -G 1
            OUT "CUDA graph.*\n.*\n.*\n.*\n.*\n +8 ")
nsim_expect(cli.io.noted_flags 0 CMD ${NCCLSIM} run ${SEED} -b 1M -e 1M
            -a 2 -N 3 -p 1 -R 1 ERR "-a 2 ignored.*-N 3 ignored.*-p 1 ignored.*-R 1 ignored")
nsim_expect(cli.io.noted_flag_range 2 CMD ${NCCLSIM} run ${SEED} -a 7
            ERR "-a: expected 0..3")
nsim_expect(cli.io.fp8_h100 0 CMD ${NCCLSIM} run ${S}/dgx-h100-allreduce.json
            -b 1M -e 1M -d f8e4m3 OUT "1048576 +1048576 +f8e4m3")
nsim_expect(cli.io.fp8_a100 1 CMD ${NCCLSIM} run
            ${NSIM_TESTS}/data/nvlstree-a100-2node.json --algo auto -d f8e5m2
            ERR "f8e5m2 needs sm >= 90")
nsim_expect(cli.io.analytic_header 0 CMD ${NCCLSIM} run
            ${S}/dgx-h100-2node-allreduce.json --mode analytic --algo NVLSTree
            -b 1M -e 1M --csv -
            OUT "predicted \\(NCCL's tuner model\\).*\n.*NVLSTree.*16 channels.*1048576,262144,float,sum,-1,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,16,tuner\n")
nsim_expect(cli.io.analytic_alltoall 1 CMD ${NCCLSIM} run ${SEED}
            --mode analytic --collective alltoall -b 1M -e 1M
            ERR "no model for alltoall")
nsim_expect(cli.io.help_run_complete 0 CMD ${NCCLSIM} help run
            OUT "--minbytes.*--maxbytes.*--stepfactor.*--stepbytes.*--collective.*--datatype.*--op.*--root.*--algo.*--proto.*--nchannels.*--qps.*--seed.*--graph.*--mode.*--tuning.*--json.*--csv.*--plot.*--trace.*--quiet.*--timing.*--stats.*--debug.*--ngpus.*--cudagraph.*--report_cputime.*--nthreads.*--iters.*--warmup_iters.*--agg_iters.*--check.*--blocking.*--average.*--run_cycles.*--parallel_init.*--local_register")
io_expect(topo_show_bounded 0 CMD ${NCCLSIM} topo show ${IO}/t16.json
          OUT "host 0 only: --host H" NOT_OUT "h1\\.gpu0")
io_expect(topo_show_host 0 CMD ${NCCLSIM} topo show --host 3 ${IO}/t16.json
          OUT "Routes between the GPUs of host 3.*h3\\.gpu0 > h3\\.nvs > h3\\.gpu1"
          NOT_OUT "h2\\.gpu|  +0 +1  NVL")
io_expect(topo_show_host_range 2 CMD ${NCCLSIM} topo show --host 16
          ${IO}/t16.json ERR "hosts 0..15")
nsim_expect(cli.io.stdout_full 1 CMD sh -c "$<TARGET_FILE:ncclsim> run ${SEED} -b 1M -e 1M --json ${CMAKE_CURRENT_BINARY_DIR}/sf.json > /dev/full"
            ERR "stdout: cannot write: No space left on device"
            NO_FILE ${CMAKE_CURRENT_BINARY_DIR}/sf.json)
nsim_expect(cli.io.params_range 0 CMD ${NCCLSIM} params
            OUT "\"stream_chunk_bytes\":[^}]*\"range\":[ \t]*\"4 KiB \\.\\. 64 MiB\"")
nsim_expect(cli.io.root_range 2 CMD ${NCCLSIM} run ${SEED} --collective
            broadcast -r 4294967296 ERR "-r: expected a root rank, got '4294967296'")
nsim_expect(cli.io.nodes_limit 2 CMD ${NCCLSIM} topo build --nodes 70000
            --node-preset dgx-h100 ERR "bad value '70000' for option --nodes \\(1..65536\\)")
