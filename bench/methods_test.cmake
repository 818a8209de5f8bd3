# Every method on a tiny cloth (ctest bench_methods): pbd-bench --methods must exit 0 and print
# one table with a row for each of the seven methods, each with a status, and write a CSV with the
# expected header and one row per method. Timing and the measured values are not checked: a 6 x 6
# cloth is not the measured one, and --methods-h-min keeps the stable-step search short.
# Expects -DPROGRAM=<pbd-bench> -DWORK=<folder>.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${PROGRAM}" --methods --sizes 6 --methods-h-min 1e-4 --csv "${WORK}/methods.csv"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pbd-bench --methods exited with ${rc}:\n${out}\n${err}")
endif()
file(READ "${WORK}/methods.csv" csv)

set(methods pbd xpbd explicit_euler symplectic_euler implicit_euler projective_dynamics vbd)
list(JOIN methods "|" any_method)
# In `text`, `pattern` must match once per method with the name in place of METHOD, and no more.
function(expect_rows what text pattern)
  string(REPLACE "METHOD" "(${any_method})" any "${pattern}")
  string(REGEX MATCHALL "${any}" rows "${text}")
  list(LENGTH rows count)
  if(NOT count EQUAL 7)
    message(FATAL_ERROR "${what}: ${count} method rows, expected 7:\n${text}")
  endif()
  foreach(method IN LISTS methods)
    string(REPLACE "METHOD" "${method}" one "${pattern}")
    if(NOT text MATCHES "${one}")
      message(FATAL_ERROR "${what}: no row of ${method}:\n${text}")
    endif()
  endforeach()
endfunction()

if(NOT out MATCHES "\nmethod +stable h +ms/sim-s +1 % setting +ms/step +drift +s +status\n")
  message(FATAL_ERROR "no table header in:\n${out}")
endif()
# A row: the name, the stable step (a number, with > or < when it is a bound, or ?), four more
# columns, the seconds, a status.
expect_rows("table" "${out}" "\nMETHOD +([<>] )?([0-9.e+-]+|\\?) +[^ \n]+ +[^\n]+ +[0-9]+  [a-z1][^\n]*")

set(header "n,method,stable_h_kind,stable_h_s,ms_per_sim_s,quality_substeps,quality_iterations,quality_max_mean_structural_strain,quality_ms_per_step,energy_drift,energy_drift_at,cg_residual,runs,seconds,status")
string(FIND "${csv}" "${header}\n" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "methods.csv does not start with the header\n  ${header}\n:\n${csv}")
endif()
expect_rows("methods.csv" "${csv}" "\n6,METHOD,")
