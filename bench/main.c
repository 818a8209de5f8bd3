/* pbd-bench: the benchmark without the `pbd` program (same code as `pbd bench`). */
#include "bench.h"

int main(int argc, char** argv) { return pbd_bench_main(argc, argv); }
