# Runs a command and compares its stdout with a golden file.
#   cmake -DCMD="prog;args" -DGOLDEN=file -DOUT=file -P golden_run.cmake
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_FILE ${OUT}
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit status ${rc}: ${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${GOLDEN}
                RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  execute_process(COMMAND diff -u ${GOLDEN} ${OUT})
  message(FATAL_ERROR "output differs from ${GOLDEN} (regenerate it in the "
                      "same commit when the change is meant)")
endif()
