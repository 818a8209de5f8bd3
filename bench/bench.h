/* pbd benchmark: the hanging-cloth scene of docs/BENCHMARKS.md, timed on pbd and, when the
 * benchmark was built with Bullet, on Bullet's btSoftBody with the same nodes and links. */
#ifndef PBD_BENCH_H
#define PBD_BENCH_H

#ifdef __cplusplus
extern "C" {
#endif

/// Runs the benchmark with command-line style arguments: argv[0] names the command and the
/// options start at argv[1] (`--help` lists them). Prints the table on stdout, errors on stderr.
/// Returns 0 on success, 2 on a bad option (one line on stderr), 1 when a run failed or pbd
/// ended with a non-finite state or a final state that differed between repeats.
int pbd_bench_main(int argc, char** argv);

#ifdef __cplusplus
}
#endif

#endif
