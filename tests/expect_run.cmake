# Runs one command and checks its exit status and output.
#   cmake -DCMD="prog;arg;..." -DRC=1 [-DOUT_RE=regex] [-DERR_RE=regex]
#         [-DNOT_OUT_RE=regex] [-DNO_FILE=path] -P expect_run.cmake
# NOT_OUT_RE: stdout must not match it.
# NO_FILE: a path that must not exist afterwards (no half-written output).
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc STREQUAL "${RC}")
  message(FATAL_ERROR "exit status ${rc}, expected ${RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED OUT_RE AND NOT out MATCHES "${OUT_RE}")
  message(FATAL_ERROR "stdout does not match '${OUT_RE}':\n${out}")
endif()
if(DEFINED NOT_OUT_RE AND out MATCHES "${NOT_OUT_RE}")
  message(FATAL_ERROR "stdout matches '${NOT_OUT_RE}', which it must not:\n${out}")
endif()
if(DEFINED ERR_RE AND NOT err MATCHES "${ERR_RE}")
  message(FATAL_ERROR "stderr does not match '${ERR_RE}':\n${err}")
endif()
if(DEFINED NO_FILE AND EXISTS "${NO_FILE}")
  message(FATAL_ERROR "${NO_FILE} was left behind")
endif()
