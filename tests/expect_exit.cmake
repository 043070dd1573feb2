# cmake -DPROGRAM=... -DARGS="a;b" -DEXPECTED=2 -P expect_exit.cmake
# Runs PROGRAM with ARGS and fails unless it exits with EXPECTED and prints to stderr.
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL EXPECTED)
  message(FATAL_ERROR "expected exit code ${EXPECTED}, got ${code}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT EXPECTED EQUAL 0 AND err STREQUAL "")
  message(FATAL_ERROR "exit code ${code} but nothing on stderr")
endif()
