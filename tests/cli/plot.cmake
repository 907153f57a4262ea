# ncclsim plot: the gnuplot scripts (what is drawn), rendering when gnuplot
# is installed, bad inputs.
set(P ${NSIM_TESTS}/data/plot)
nsim_expect(cli.plot.curves_script 0
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind curves -o c.png
            --script -
            OUT "set logscale x 2\nset format x '%\\.0b %BB'.*\\$s0 << EOD\n1048576 13\\.3296\n.*title 'QPs=1 channels=4'.*title 'QPs=4 channels=16'")
nsim_expect(cli.plot.curves_where 0
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind curves -o c.svg
            --where NCCL_IB_QPS_PER_CONNECTION=4 --script -
            OUT "set terminal svg.*\\(QPs=4\\).*title 'channels=4'"
            NOT_OUT "QPs=1")
nsim_expect(cli.plot.heatmap_script 0
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind heatmap
            --x nchannels --y NCCL_IB_QPS_PER_CONNECTION --size 16M -o h.png
            --script -
            OUT "at 16 MiB.*\\$m << EOD\n0 0 95\\.9866\n.*set xtics \\('4' 0, '8' 1, '16' 2\\)")
nsim_expect(cli.plot.compare_script 0
            CMD ${NCCLSIM} plot ${P}/compare-sample.json --kind compare -o x.png
            --script -
            OUT "\\$c0 << EOD\n1024 [0-9.]+ [0-9.]+ [-0-9.e]+\n.*set multiplot.*with points.*using 1:4")
nsim_expect(cli.plot.heatmap_needs_where 1
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind heatmap --x nchannels
            --y nchannels -o h.png ERR "two different knobs")
nsim_expect(cli.plot.heatmap_no_size 1
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind heatmap --x nchannels
            --y NCCL_IB_QPS_PER_CONNECTION --size 3M -o h_bad.png
            ERR "--size 3145728: no rows of that size" NO_FILE h_bad.png)
nsim_expect(cli.plot.bad_where 1
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind curves --where qps=1
            -o c_bad.png ERR "--where 'qps=1'" NO_FILE c_bad.png)
nsim_expect(cli.plot.not_sweep 1
            CMD ${NCCLSIM} plot ${P}/compare-sample.json --kind curves
            -o c_bad.png ERR "expected \"ncclsim-sweep\"" NO_FILE c_bad.png)
nsim_expect(cli.plot.not_compare 1
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind compare
            -o c_bad.png ERR "reads the JSON of ncclsim compare" NO_FILE c_bad.png)
nsim_expect(cli.plot.bad_kind 2
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind pie -o c.png
            ERR "--kind: expected curves, heatmap or compare")
nsim_expect(cli.plot.bad_ext 2
            CMD ${NCCLSIM} plot ${P}/sweep-2node.csv --kind curves -o c.jpg
            ERR "expected a .png or .svg")
nsim_expect(cli.plot.missing 1
            CMD ${NCCLSIM} plot ${P}/nothing.csv --kind curves -o c_bad.png
            ERR "nothing.csv" NO_FILE c_bad.png)
# nsim_magic(NAME FILE HEX CMD...): CMD writes FILE, which begins with HEX
function(nsim_magic name file hex)
  string(REPLACE ";" "\\;" c "${ARGN}")
  set(args "-DCMD=${c}" -DFILE=${file} -DHEX=${hex})
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${args}
           -P ${NSIM_TESTS}/magic_check.cmake)
endfunction()
find_program(NSIM_GNUPLOT gnuplot)
if(NSIM_GNUPLOT)
  nsim_magic(cli.plot.render_png plot_heat.png 89504e470d0a1a0a
             ${NCCLSIM} plot ${P}/sweep-2node.csv --kind heatmap --x nchannels
             --y NCCL_IB_QPS_PER_CONNECTION -o plot_heat.png)
  nsim_magic(cli.plot.render_svg plot_cmp.svg 3c3f786d6c
             ${NCCLSIM} plot ${P}/compare-sample.json --kind compare
             -o plot_cmp.svg)
endif()
# the JSON ncclsim compare --json writes ("comparisons" with rows)
nsim_expect(cli.plot.compare_ncclsim_json 0
            CMD ${NCCLSIM} plot ${P}/compare-h100.json --kind compare -o x.png
            --script -
            OUT "\\$c0 << EOD\n33554432 331\\.187 321\\.104 3\\.14026\n.*busbw: 02_h100-1node-8gpu-allreduce-xxrjun\\.txt'")
# a configuration that failed part-way (sweep -k) says where it stops
nsim_expect(cli.plot.curves_partial 0
            CMD ${NCCLSIM} plot ${P}/sweep-seed-shared.csv --kind curves -o c.png
            --script -
            OUT "title 'mode=shared QPs=1 \\(stops at 1 MiB\\)'.*set key below|set key below.*title 'mode=shared QPs=1 \\(stops at 1 MiB\\)'")
# knob values with units order by their value, not their text (a fault's
# time: 0us 1ms 5ms 10ms 20ms; scripts/study_faults.sh)
nsim_expect(cli.plot.heatmap_units_order 0
            CMD ${NCCLSIM} plot ${P}/sweep-faults-at.csv --kind heatmap
            --x faults[0].at --y algorithm -o h.png --script -
            OUT "set xtics \\('0us' 0, '1ms' 1, '5ms' 2, '10ms' 3, '20ms' 4\\)")
