# Checks that every function declared in the public headers is exported by the shared library.
# The library is built with hidden visibility, so a declaration without PBD_API compiles and
# links statically but leaves shared-library users with an undefined reference.
# Inputs: LIB (path to the shared library), HEADERS (its public headers, separated by '|'),
# NM (the nm program), MIN (the fewest declarations the headers are known to hold).
string(REPLACE "|" ";" headers "${HEADERS}")
set(declared "")
foreach(h ${headers})
  file(READ "${h}" text)
  # Semicolons would split CMake lists; no declaration needs them to be recognised.
  string(REPLACE ";" " " text "${text}")
  # A function declaration starts at column 0 with its return type and names pbd_...( on that
  # line; inline helpers (static) and typedefs of function pointers are not exported symbols.
  string(REGEX MATCHALL "\n[A-Za-z][^\n(]*[ *]pbd_[a-z0-9_]+[(]" decls "${text}")
  foreach(d ${decls})
    if(NOT d MATCHES "^\n(static|typedef)" AND d MATCHES "[ *](pbd_[a-z0-9_]+)[(]$")
      list(APPEND declared "${CMAKE_MATCH_1}")
    endif()
  endforeach()
endforeach()
list(LENGTH declared n_declared)
if(n_declared LESS MIN)
  message(FATAL_ERROR "found only ${n_declared} declarations in ${HEADERS}: the pattern is broken")
endif()
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}" OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIB}")
endif()
set(missing "")
foreach(f ${declared})
  if(NOT symbols MATCHES " T ${f}\n")
    list(APPEND missing ${f})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "declared in the public headers but not exported by ${LIB}: ${missing}")
endif()
message(STATUS "all ${n_declared} public functions are exported")
