# Checks that FILE exists and its content matches RE.
#   cmake -DFILE=path -DRE=regex -P file_matches.cmake
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${FILE} was not written")
endif()
file(READ "${FILE}" content)
if(NOT content MATCHES "${RE}")
  message(FATAL_ERROR "${FILE} does not match '${RE}':\n${content}")
endif()
