# Writes OUT: the plan IN with its version changed to 2 (a plan of a
# version this ncclsim does not read).
file(READ ${IN} text)
string(REGEX REPLACE "\"version\":[ \t]*1" "\"version\":\t2" text "${text}")
file(WRITE ${OUT} "${text}")
