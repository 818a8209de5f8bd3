# Warning and sanitizer flags, applied PRIVATE to the project's own targets only.
set(PBD_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wvla -Wimplicit-fallthrough)
if(PBD_WERROR)
  list(APPEND PBD_WARNINGS -Werror)
endif()
# The library proper is also held to conversion and promotion checks: float math is its job.
set(PBD_STRICT_WARNINGS ${PBD_WARNINGS} -Wmissing-prototypes -Wdouble-promotion -Wconversion
    -Wstrict-prototypes)

set(PBD_SANITIZE_FLAGS "")
if(PBD_SANITIZE)
  set(PBD_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    list(APPEND PBD_SANITIZE_FLAGS -fsanitize=float-divide-by-zero)
  endif()
  add_compile_options(${PBD_SANITIZE_FLAGS})
  add_link_options(${PBD_SANITIZE_FLAGS})
endif()
if(PBD_SANITIZE_THREAD)
  if(PBD_SANITIZE)
    message(FATAL_ERROR "PBD_SANITIZE_THREAD and PBD_SANITIZE cannot be combined")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  add_compile_definitions(PBD_TSAN=1)
endif()

# Bit-determinism: no fused multiply-add contraction, never -ffast-math.
set(PBD_FP_FLAGS -ffp-contract=off)
# clang may pack scalar divisions into vector ones whose unused lanes divide 0 by 0; harmless for
# results, but it raises FE_INVALID, which the tests trap to find real NaNs at their source.
# maytrap keeps the optimiser from inventing operations that raise exceptions.
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
  list(APPEND PBD_FP_FLAGS -ffp-exception-behavior=maytrap)
endif()

function(pbd_target_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${PBD_WARNINGS}> ${PBD_FP_FLAGS})
endfunction()
