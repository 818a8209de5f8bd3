# Every ctest entry of the build carries a label: `scripts/test.sh --fast` and `ctest -L` select
# tests by them, so one without a label would silently run in no selection.
#   cmake -DCTEST=<ctest> -DBUILD=<build dir> -DWORK=<scratch dir> -P check_labels.cmake
# `ctest -N -LE .` lists the entries that no label matches. ctest writes its log under the
# directory it runs in, so it runs in WORK, whose test file points at BUILD, not in BUILD, where
# the ctest that runs this test is writing its own.
foreach(_v CTEST BUILD WORK)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "check_labels: -D${_v}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/CTestTestfile.cmake" "subdirs(\"${BUILD}\")\n")
execute_process(COMMAND "${CTEST}" -N -LE . WORKING_DIRECTORY "${WORK}" OUTPUT_VARIABLE _out ERROR_VARIABLE _err
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "check_labels: ctest -N failed (${_rc}):\n${_out}${_err}")
endif()
if(NOT _out MATCHES "Total Tests: ([0-9]+)")
  message(FATAL_ERROR "check_labels: no test count in ctest's listing:\n${_out}")
endif()
set(_count ${CMAKE_MATCH_1})
if(NOT _count EQUAL 0)
  string(REGEX MATCHALL "Test +#[0-9]+: [^\n]+" _unlabelled "${_out}")
  list(JOIN _unlabelled "\n  " _list)
  message(FATAL_ERROR "check_labels: tests without a LABELS property (${_count}):\n  ${_list}")
endif()
message(STATUS "check_labels: every test is labelled")
