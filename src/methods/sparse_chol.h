/* Sparse Cholesky factorisation A = L L^T of a symmetric positive definite matrix, for solvers
 * that solve with one matrix many times (projective dynamics: the system matrix of a cloth is
 * fixed while its topology and pins are, and one solve per iteration moves x, y and z at once).
 *
 * Three stages, so that each is repeated only when its input changes:
 *   analyze  the pattern: a fill-reducing order (approximate minimum degree, sparse_amd.h, then
 *            a postorder of the elimination tree, which keeps the fill and makes the columns that
 *            a column updates close in memory), the elimination tree and the structure of L;
 *   factor   the values: an up-looking numeric factorisation into that structure, in double
 *            precision whatever pbd_real is. Call it again with new values for the same pattern
 *            (refactorisation): it allocates nothing and redoes no analysis;
 *   solve    forward and back substitution with the permutation, for one right-hand side or
 *            three interleaved ones (x, y, z per node), allocation-free.
 *
 * The matrix is given once as a pattern of entries (row, col), by compressed columns or as
 * coordinate triplets, and later as values in the same order. Only the lower triangle is read:
 * an entry above the diagonal is skipped, so either the lower triangle or the whole symmetric
 * matrix may be given (a spring's full 2x2 block (i,i), (i,j), (j,i), (j,j) included), but an
 * entry above the diagonal whose mirror is missing is an error rather than silently dropped.
 * Entries at the same position are summed, in the order given.
 *
 * Fill (entries of L, diagonal included) of a 2D grid of N x N nodes with the 8-neighbour stencil,
 * against the band of the natural row-by-row order:
 *   N             32       64       128       256
 *   AMD         19.4 k    109 k     556 k    2.70 M
 *   band        33.8 k    266 k    2.11 M    16.8 M
 *
 * Memory per factor: 12 bytes per entry of L, about 16 per input entry, 64 per node. Indices
 * are 32-bit: up to PBD_SPARSE_CHOL_MAX_N nodes; L itself may hold more than 2^32 entries. */
#ifndef PBD_SPARSE_CHOL_H
#define PBD_SPARSE_CHOL_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

#define PBD_SPARSE_CHOL_MAX_N (UINT32_C(1) << 29)

/* A pivot at most this fraction of its diagonal entry counts as zero: below it the pivot is
 * rounding error (the matrix is singular or nearly so to double precision). */
#define PBD_SPARSE_CHOL_PIVOT_TOL (64 * DBL_EPSILON)

/* The pattern of an n x n symmetric matrix: entry q (q < nnz) is at (row[q], col(q)), where
 * col(q) is col[q] for triplets, or the j with col_start[j] <= q < col_start[j + 1] for
 * compressed columns. Give exactly one of col_start and col. */
typedef struct pbd_sparse_pattern {
	uint32_t n;                /* rows = columns, >= 1 */
	uint32_t nnz;              /* entries given, duplicates and the upper triangle included */
	const uint32_t* col_start; /* n + 1 non-decreasing, col_start[0] = 0, col_start[n] = nnz; or NULL */
	const uint32_t* col;       /* column of each entry (nnz), or NULL */
	const uint32_t* row;       /* row of each entry (nnz) */
} pbd_sparse_pattern;

/* Zero-initialise before the first analyze; free with pbd_sparse_chol_free. The arrays are in
 * the pivot order (index k is the k-th pivot) unless said otherwise. */
typedef struct pbd_sparse_chol {
	uint32_t n;
	uint32_t nnz_in;     /* entries of the input pattern */
	uint32_t nnz_c;      /* distinct entries of the lower triangle */
	size_t nnz_l;        /* entries of L, diagonal included */
	uint32_t* perm;      /* n: the input index of pivot k */
	uint32_t* iperm;     /* n: the pivot of input index i */
	uint32_t* parent;    /* n: elimination tree, UINT32_MAX at a root */
	uint32_t* map;       /* nnz_in: where entry q is summed in cx, UINT32_MAX above the diagonal */
	uint32_t* cp;        /* n + 1: column starts of C, the permuted matrix's upper triangle (row <= col) */
	uint32_t* ci;        /* nnz_c: rows of C */
	double* cx;          /* nnz_c: values of C, summed from the input */
	size_t* lp;          /* n + 1: column starts of L; a column's first entry is its diagonal */
	uint32_t* li;        /* nnz_l: rows of L, increasing within a column */
	double* lx;          /* nnz_l: values of L */
	double* work;        /* 3 n: factor and solve scratch */
	size_t* fill;        /* n: factor scratch, next free entry of each column */
	uint32_t* stack;     /* n: factor scratch, the pattern of a row of L */
	uint32_t* mark;      /* n: factor scratch */
	bool factored;       /* lx holds the factor of the last values given */
	uint32_t bad_column; /* after PBD_ERR_DEGENERATE: input index whose pivot was not positive */
} pbd_sparse_chol;

/* Analyses the pattern: checks it, orders it and lays out L. order, when not NULL, is the
 * elimination order to use instead of minimum degree (order[k] = the input index eliminated
 * k-th, a permutation of 0..n-1; it is postordered, which keeps its fill). Any earlier analysis
 * and factor in c are freed first. Returns PBD_ERR_INVALID_ARGUMENT for a NULL or inconsistent
 * pattern (n = 0, an index >= n, both or neither of col_start and col, an entry above the
 * diagonal without its mirror, an order that is not a permutation) and PBD_ERR_OUT_OF_MEMORY when
 * an allocation fails or a size overflows; c is then left empty. */
pbd_status pbd_sparse_chol_analyze(pbd_sparse_chol* c, pbd_alloc_ctx* mem, const pbd_sparse_pattern* a,
                                   const uint32_t* order);

/* Factors the matrix with values[q] at entry q of the analysed pattern (nnz_in values; those
 * above the diagonal are not read). Returns PBD_ERR_NOT_FINITE for a value read that is NaN or
 * infinite, PBD_ERR_DEGENERATE when the matrix is not positive definite (a pivot not above
 * PBD_SPARSE_CHOL_PIVOT_TOL times its diagonal entry; bad_column says where), and
 * PBD_ERR_INVALID_ARGUMENT before an analysis. On any error no factor is kept (solves refuse)
 * and no NaN is stored. */
pbd_status pbd_sparse_chol_factor(pbd_sparse_chol* c, const double* values);

/* Solves A x = b: b and x hold n values each, and may be the same array. Returns
 * PBD_ERR_INVALID_ARGUMENT, touching nothing, when there is no factor. Uses c's scratch: one
 * solve at a time per factor. */
pbd_status pbd_sparse_chol_solve(pbd_sparse_chol* c, const double* b, double* x);

/* Solves A X = B for three right-hand sides interleaved by node: b[3 i + d] is component d of
 * node i (x, y, z of a position), the same for x; b and x may be the same array. L is read once
 * for all three: about 1.2 times the time of one single solve on a 256 x 256 grid. */
pbd_status pbd_sparse_chol_solve3(pbd_sparse_chol* c, const double* b, double* x);

void pbd_sparse_chol_free(pbd_sparse_chol* c, pbd_alloc_ctx* mem);

#endif
