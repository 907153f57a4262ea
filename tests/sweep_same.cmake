# Runs a sweep twice in different ways and checks the outputs are the same
# bytes:  cmake -DA="prog;args" -DB="prog;args" -DFA=out1 -DFB=out2
#         [-DKEEP_LINES=N] -P sweep_same.cmake
# KEEP_LINES: after A, FB is made from the first N lines of FA (a sweep
# interrupted after some points) before B (which then resumes it) runs.
execute_process(COMMAND ${A} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "first run: exit ${rc}\n${err}")
endif()
if(DEFINED KEEP_LINES)
  file(STRINGS ${FA} lines)
  list(SUBLIST lines 0 ${KEEP_LINES} head)
  string(REPLACE ";" "\n" head "${head}")
  file(WRITE ${FB} "${head}\n")
endif()
execute_process(COMMAND ${B} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "second run: exit ${rc}\n${err}")
endif()
if(DEFINED ERR_RE AND NOT err MATCHES "${ERR_RE}")
  message(FATAL_ERROR "second run's stderr does not match '${ERR_RE}':\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${FA} ${FB}
                RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  file(READ ${FA} a)
  file(READ ${FB} b)
  message(FATAL_ERROR "${FA} and ${FB} differ:\n${a}\n---\n${b}")
endif()
