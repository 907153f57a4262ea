# Checks that FILE exists and its content matches RE.
#   cmake -DFILE=path -DRE=regex [-DNOT_RE=regex] -P file_matches.cmake
if(NOT EXISTS "${FILE}")
  message(FATAL_ERROR "${FILE} was not written")
endif()
file(READ "${FILE}" content)
if(NOT content MATCHES "${RE}")
  message(FATAL_ERROR "${FILE} does not match '${RE}':\n${content}")
endif()
# NOT_RE (optional): the content must not match it.
if(DEFINED NOT_RE AND content MATCHES "${NOT_RE}")
  message(FATAL_ERROR "${FILE} matches '${NOT_RE}', which it must not")
endif()
