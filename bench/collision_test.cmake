# The collision rows run tiny (ctest bench_collision): pbd-bench --sizes 8 --collision must exit 0,
# print the sphere, self, self-vf and self-off rows, the table and pile rows on 1 and 2 threads (the
# pile of 8 is four 4 x 4 cloths) and, when Bullet was built, its sphere, self, table and pile rows,
# and write a CSV with one row each.
# Their quality is not checked here: a tiny cloth is not the measured one. The exit status does
# check that the 2-thread rows end in the 1-thread rows' state.
# Expects -DPROGRAM=<pbd-bench> -DWORK=<folder> -DBULLET=<ON|OFF>.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${PROGRAM}" --sizes 8 --collision --steps 60 --repeat 1 --collision-csv "${WORK}/collision.csv"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pbd-bench --collision exited with ${rc}:\n${out}\n${err}")
endif()
set(rows "sphere +pbd +8 +1 " "self +pbd +8 +1 " "self-vf +pbd +8 +1 " "self-off +pbd +8 +1 " "table +pbd +8 +1 "
         "table +pbd +8 +2 " "pile +pbd +8 +1 +64 " "pile +pbd +8 +2 +64 ")
set(expected_lines 9)
if(BULLET)
  list(APPEND rows "sphere +bullet +8 +1 " "self +bullet +8 +1 " "table +bullet +8 +1 " "pile +bullet +8 +1 +64 ")
  set(expected_lines 13)
endif()
foreach(row IN LISTS rows)
  if(NOT out MATCHES "\n${row}")
    message(FATAL_ERROR "no row matching '${row}' in:\n${out}")
  endif()
endforeach()
file(STRINGS "${WORK}/collision.csv" lines)
list(LENGTH lines count)
if(NOT count EQUAL expected_lines)
  message(FATAL_ERROR "collision.csv has ${count} lines, expected ${expected_lines} (header + rows)")
endif()
