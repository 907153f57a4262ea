# ncclsim topo / version / help: exit statuses and messages.

nsim_expect(cli.version 0 CMD ${NCCLSIM} version OUT "ncclsim [0-9]")
nsim_expect(cli.help 0 CMD ${NCCLSIM} help OUT "commands:")
nsim_expect(cli.help_topo 0 CMD ${NCCLSIM} help topo OUT "topo check FILE")
nsim_expect(cli.no_args 2 CMD ${NCCLSIM} ERR "usage: ncclsim")
nsim_expect(cli.unknown_command 2 CMD ${NCCLSIM} frobnicate
            ERR "unknown command 'frobnicate'")
nsim_expect(cli.help_unknown 2 CMD ${NCCLSIM} help frobnicate
            ERR "no command named")
nsim_expect(cli.topo_usage 2 CMD ${NCCLSIM} topo check ERR "expected: topo")
nsim_expect(cli.topo_missing_file 1
            CMD ${NCCLSIM} topo check ${NSIM_TESTS}/data/no-such-file.json
            ERR "no-such-file.json: cannot open")
foreach(f seed-4gpu dgx-h100 dgx-h100-2node)
  nsim_expect(cli.topo_check.${f} 0
              CMD ${NCCLSIM} topo check ${NSIM_SRC}/scenarios/${f}.topo.json
              OUT ": ok: ")
endforeach()
nsim_expect(cli.topo_show.seed 0
            CMD ${NCCLSIM} topo show ${NSIM_SRC}/scenarios/seed-4gpu.topo.json
            OUT "0    1  NVL .*0    2  NET ")
file(GLOB bad_topos ${NSIM_TESTS}/data/bad_topo/*.json)
foreach(f ${bad_topos})
  get_filename_component(n ${f} NAME_WE)
  nsim_expect(cli.bad_topo.${n} 1 CMD ${NCCLSIM} topo check ${f}
              ERR "^ncclsim: [^\n]*${n}.json: [^\n]+\n$")
endforeach()

# A scenario's "topology": {"cluster": {...}} is built in memory as
# `topo build` builds it: the same rows as the file topo build writes.
file(READ ${NSIM_TESTS}/data/cluster-2node.json cl_text)
string(REGEX REPLACE "\"topology\":[^\n]*\n"
       "\"topology\": \"cluster-2node.topo.json\",\n" cl_text "${cl_text}")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cluster-2node-file.json "${cl_text}")
add_test(NAME cli.topo.cluster_spec_file
         COMMAND ${NCCLSIM} topo build --nodes 2 --node-preset dgx-h100
                 --fabric rail-fat-tree -o cluster-2node.topo.json)
set_tests_properties(cli.topo.cluster_spec_file PROPERTIES
                     FIXTURES_SETUP cluster_file)
nsim_sweep_same(cli.topo.cluster_spec_same
                A ${NCCLSIM} run ${NSIM_TESTS}/data/cluster-2node.json
                  --csv cl_spec.csv
                FA cl_spec.csv
                B ${NCCLSIM} run cluster-2node-file.json --csv cl_file.csv
                FB cl_file.csv)
set_tests_properties(cli.topo.cluster_spec_same PROPERTIES
                     FIXTURES_REQUIRED cluster_file)
