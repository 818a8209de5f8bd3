# PBD_FUZZ: libFuzzer targets (fuzz/, docs/fuzzing.md). They need clang with its fuzzer runtime
# (Debian: libclang-rt-dev, which clang only recommends). When it is there, everything in this
# build is compiled with coverage instrumentation for the fuzzer and with ASan and UBSan, so that
# the library the targets link is the one being explored; otherwise the targets are skipped.
set(PBD_FUZZ_ENABLED OFF)
if(PBD_FUZZ)
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
  set(CMAKE_REQUIRED_LINK_OPTIONS "-fsanitize=fuzzer,address,undefined")
  check_c_source_compiles(
    "#include <stddef.h>
     #include <stdint.h>
     int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return data && size ? 0 : 1; }"
    PBD_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND PBD_HAVE_LIBFUZZER)
    set(PBD_FUZZ_ENABLED ON)
    # A float division by zero is a finding too: every denominator in the library is guarded.
    set(PBD_FUZZ_SANITIZERS address,undefined,float-divide-by-zero)
    add_compile_options(-fsanitize=fuzzer-no-link,${PBD_FUZZ_SANITIZERS} -fno-sanitize-recover=all
                        -fno-omit-frame-pointer -g)
    add_link_options(-fsanitize=${PBD_FUZZ_SANITIZERS})
    message(STATUS "PBD_FUZZ: libFuzzer found; building the fuzz targets (target pbd_fuzz)")
  else()
    message(STATUS "PBD_FUZZ: skipped, ${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION} cannot build libFuzzer "
                   "targets (needs clang with the fuzzer runtime: Debian package libclang-rt-dev)")
  endif()
endif()
