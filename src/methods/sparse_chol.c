/* Sparse Cholesky factorisation (sparse_chol.h).
 *
 * Notation: A is the input matrix, P the permutation (perm), C = P A P^T stored as its upper
 * triangle by columns, so that column k of C is row k of its lower triangle: what the up-looking
 * factorisation needs to compute row k of L. Row k of L has its nonzeros at the nodes met
 * climbing the elimination tree from each i < k with C(i, k) != 0 until k (Liu 1986), which gives
 * the structure of L without any numbers, and the numeric factorisation walks the same paths. */
#include "methods/sparse_chol.h"

#include <string.h>

#include "methods/sparse_amd.h"

#define NO_NODE UINT32_MAX

/* An array of count elements (at least one, so that NULL only ever means failure), or NULL
 * when the size overflows or the allocation fails. */
static void* array_new(pbd_alloc_ctx* mem, size_t count, size_t size) {
	if (count == 0) count = 1;
	if (count > SIZE_MAX / size) return NULL;
	return pbd_alloc(mem, count * size);
}

static void array_free(pbd_alloc_ctx* mem, void* p, size_t count, size_t size) {
	pbd_free(mem, p, (count ? count : 1) * size);
}

void pbd_sparse_chol_free(pbd_sparse_chol* c, pbd_alloc_ctx* mem) {
	const size_t n = c->n;
	array_free(mem, c->perm, n, sizeof *c->perm);
	array_free(mem, c->iperm, n, sizeof *c->iperm);
	array_free(mem, c->parent, n, sizeof *c->parent);
	array_free(mem, c->map, c->nnz_in, sizeof *c->map);
	array_free(mem, c->cp, n + 1, sizeof *c->cp);
	array_free(mem, c->ci, c->nnz_c, sizeof *c->ci);
	array_free(mem, c->cx, c->nnz_c, sizeof *c->cx);
	array_free(mem, c->lp, n + 1, sizeof *c->lp);
	array_free(mem, c->li, c->nnz_l, sizeof *c->li);
	array_free(mem, c->lx, c->nnz_l, sizeof *c->lx);
	array_free(mem, c->work, 3 * n, sizeof *c->work);
	array_free(mem, c->fill, n, sizeof *c->fill);
	array_free(mem, c->stack, n, sizeof *c->stack);
	array_free(mem, c->mark, n, sizeof *c->mark);
	memset(c, 0, sizeof *c);
}

/* Working arrays of the analysis, carved from one block. */
typedef struct analysis {
	uint32_t* block;
	size_t words;
	uint32_t *ecol, *sorted, *bstart, *owner, *where;      /* checking and summing the input */
	uint32_t *drow, *dstart, *qmap, *dpos;                 /* the distinct lower entries */
	uint32_t *adj_start, *adj;                             /* the graph for the ordering */
	uint32_t *perm0, *iperm0, *cp0, *ci0, *post, *t1, *t2; /* the order before the postorder */
	uint32_t nnz_d;                                        /* distinct lower entries */
} analysis;

static bool analysis_new(analysis* s, pbd_alloc_ctx* mem, uint32_t n, uint32_t nnz) {
	const uint64_t n1 = (uint64_t)n + 1, m = nnz;
	const uint64_t words = 8 * m + 4 * n1 + 7 * (uint64_t)n;
	if (words > SIZE_MAX / sizeof(uint32_t)) return false;
	s->words = (size_t)words;
	s->block = array_new(mem, s->words, sizeof(uint32_t));
	if (!s->block) return false;
	uint32_t* p = s->block;
	uint32_t** const per_entry[] = {&s->ecol, &s->sorted, &s->drow, &s->qmap, &s->dpos, &s->ci0};
	for (size_t k = 0; k < sizeof per_entry / sizeof per_entry[0]; ++k, p += m) *per_entry[k] = p;
	s->adj = p;
	p += 2 * m;
	uint32_t** const per_column[] = {&s->bstart, &s->dstart, &s->adj_start, &s->cp0};
	for (size_t k = 0; k < sizeof per_column / sizeof per_column[0]; ++k, p += n1) *per_column[k] = p;
	uint32_t** const per_node[] = {&s->owner, &s->where, &s->perm0, &s->iperm0, &s->post, &s->t1, &s->t2};
	for (size_t k = 0; k < sizeof per_node / sizeof per_node[0]; ++k, p += n) *per_node[k] = p;
	PBD_ASSERT((size_t)(p - s->block) == s->words);
	return true;
}

/* Fills ecol with the column of every entry; false when an index or col_start is out of order. */
static bool entry_columns(const pbd_sparse_pattern* a, uint32_t* ecol) {
	if (a->col) {
		for (uint32_t q = 0; q < a->nnz; ++q) ecol[q] = a->col[q];
	} else {
		if (a->col_start[0] != 0 || a->col_start[a->n] != a->nnz) return false;
		for (uint32_t j = 0; j < a->n; ++j) {
			if (a->col_start[j + 1] < a->col_start[j]) return false;
			for (uint32_t q = a->col_start[j]; q < a->col_start[j + 1]; ++q) ecol[q] = j;
		}
	}
	for (uint32_t q = 0; q < a->nnz; ++q)
		if (a->row[q] >= a->n || ecol[q] >= a->n) return false;
	return true;
}

/* The distinct entries of the lower triangle by columns (dstart, drow), where each input entry
 * is summed (qmap, NO_NODE above the diagonal). Entries are bucketed by the lower column they
 * belong to, min(row, col), so that the mirror of each upper entry is looked up in the same
 * bucket. False when one is missing. */
static bool lower_entries(const pbd_sparse_pattern* a, analysis* s) {
	const uint32_t n = a->n;
	memset(s->bstart, 0, ((size_t)n + 1) * sizeof *s->bstart);
	for (uint32_t q = 0; q < a->nnz; ++q) {
		const uint32_t r = a->row[q], j = s->ecol[q];
		s->bstart[(r < j ? r : j) + 1]++;
	}
	for (uint32_t j = 0; j < n; ++j) s->bstart[j + 1] += s->bstart[j];
	memcpy(s->t1, s->bstart, (size_t)n * sizeof *s->t1);
	for (uint32_t q = 0; q < a->nnz; ++q) {
		const uint32_t r = a->row[q], j = s->ecol[q];
		s->sorted[s->t1[r < j ? r : j]++] = q;
	}
	for (uint32_t i = 0; i < n; ++i) s->owner[i] = NO_NODE;
	uint32_t nd = 0;
	for (uint32_t j = 0; j < n; ++j) {
		s->dstart[j] = nd;
		for (uint32_t b = s->bstart[j]; b < s->bstart[j + 1]; ++b) {
			const uint32_t q = s->sorted[b], r = a->row[q];
			if (r < s->ecol[q]) continue;
			if (s->owner[r] != j) {
				s->owner[r] = j;
				s->where[r] = nd;
				s->drow[nd++] = r;
			}
			s->qmap[q] = s->where[r];
		}
		for (uint32_t b = s->bstart[j]; b < s->bstart[j + 1]; ++b) {
			const uint32_t q = s->sorted[b];
			if (a->row[q] >= s->ecol[q]) continue;
			if (s->owner[s->ecol[q]] != j) return false;
			s->qmap[q] = NO_NODE;
		}
	}
	s->dstart[n] = nd;
	s->nnz_d = nd;
	return true;
}

/* The graph of A without its diagonal, each edge from both ends, for the ordering. */
static void graph(uint32_t n, analysis* s) {
	memset(s->adj_start, 0, ((size_t)n + 1) * sizeof *s->adj_start);
	for (uint32_t j = 0; j < n; ++j)
		for (uint32_t d = s->dstart[j]; d < s->dstart[j + 1]; ++d)
			if (s->drow[d] != j) {
				s->adj_start[s->drow[d] + 1]++;
				s->adj_start[j + 1]++;
			}
	for (uint32_t j = 0; j < n; ++j) s->adj_start[j + 1] += s->adj_start[j];
	memcpy(s->t1, s->adj_start, (size_t)n * sizeof *s->t1);
	for (uint32_t j = 0; j < n; ++j)
		for (uint32_t d = s->dstart[j]; d < s->dstart[j + 1]; ++d)
			if (s->drow[d] != j) {
				s->adj[s->t1[s->drow[d]]++] = j;
				s->adj[s->t1[j]++] = s->drow[d];
			}
}

/* C = P A P^T, upper triangle by columns (cp, ci) from the distinct lower entries of A; dpos[d]
 * is where distinct entry d went. */
static void permuted_upper(uint32_t n, const analysis* s, const uint32_t* iperm, uint32_t* cp, uint32_t* ci,
                           uint32_t* dpos, uint32_t* cursor) {
	memset(cp, 0, ((size_t)n + 1) * sizeof *cp);
	for (uint32_t j = 0; j < n; ++j)
		for (uint32_t d = s->dstart[j]; d < s->dstart[j + 1]; ++d) {
			const uint32_t a = iperm[s->drow[d]], b = iperm[j];
			cp[(a > b ? a : b) + 1]++;
		}
	for (uint32_t k = 0; k < n; ++k) cp[k + 1] += cp[k];
	memcpy(cursor, cp, (size_t)n * sizeof *cursor);
	for (uint32_t j = 0; j < n; ++j)
		for (uint32_t d = s->dstart[j]; d < s->dstart[j + 1]; ++d) {
			const uint32_t a = iperm[s->drow[d]], b = iperm[j];
			const uint32_t pos = cursor[a > b ? a : b]++;
			ci[pos] = a < b ? a : b;
			dpos[d] = pos;
		}
}

/* Elimination tree of C (Liu's algorithm, with path compression through ancestor). */
static void etree(uint32_t n, const uint32_t* cp, const uint32_t* ci, uint32_t* parent, uint32_t* ancestor) {
	for (uint32_t k = 0; k < n; ++k) {
		parent[k] = ancestor[k] = NO_NODE;
		for (uint32_t p = cp[k]; p < cp[k + 1]; ++p)
			for (uint32_t i = ci[p]; i < k;) {
				const uint32_t up = ancestor[i];
				ancestor[i] = k;
				if (up == NO_NODE) parent[i] = k;
				i = up;
			}
	}
}

/* post[k] = the k-th node of a depth-first postorder of the forest, children in increasing
 * order, roots likewise. head, next and stack are n words of scratch. */
static void postorder(uint32_t n, const uint32_t* parent, uint32_t* post, uint32_t* head, uint32_t* next,
                      uint32_t* stack) {
	for (uint32_t j = 0; j < n; ++j) head[j] = NO_NODE;
	for (uint32_t j = n; j-- > 0;)
		if (parent[j] != NO_NODE) {
			next[j] = head[parent[j]];
			head[parent[j]] = j;
		}
	uint32_t k = 0;
	for (uint32_t root = 0; root < n; ++root) {
		if (parent[root] != NO_NODE) continue;
		uint32_t top = 0;
		stack[top++] = root;
		while (top > 0) {
			const uint32_t p = stack[top - 1], child = head[p];
			if (child == NO_NODE) {
				post[k++] = p;
				--top;
			} else {
				head[p] = next[child];
				stack[top++] = child;
			}
		}
	}
	PBD_ASSERT(k == n);
}

/* The nonzeros of row k of L left of the diagonal, in c->stack[top .. n), each after every
 * node below it in the tree (the order in which the up-looking solve must visit them). c->mark
 * must hold no k before the first call of a sweep over the rows. */
static uint32_t row_pattern(const pbd_sparse_chol* c, uint32_t k) {
	uint32_t *s = c->stack, *mark = c->mark, top = c->n;
	mark[k] = k;
	for (uint32_t p = c->cp[k]; p < c->cp[k + 1]; ++p) {
		uint32_t len = 0;
		for (uint32_t i = c->ci[p]; mark[i] != k; i = c->parent[i]) {
			s[len++] = i;
			mark[i] = k;
		}
		while (len > 0) s[--top] = s[--len];
	}
	return top;
}

/* The elimination order: minimum degree, or the caller's after checking it is a permutation. */
static pbd_status first_order(pbd_alloc_ctx* mem, uint32_t n, analysis* s, const uint32_t* order) {
	if (!order) return pbd_amd_order(mem, n, s->adj_start, s->adj, s->perm0);
	for (uint32_t i = 0; i < n; ++i) s->iperm0[i] = NO_NODE;
	for (uint32_t k = 0; k < n; ++k) {
		if (order[k] >= n || s->iperm0[order[k]] != NO_NODE) return PBD_ERR_INVALID_ARGUMENT;
		s->iperm0[order[k]] = k;
		s->perm0[k] = order[k];
	}
	return PBD_OK;
}

/* The final order (the first one postordered), C in it, and the input map. */
static pbd_status lay_out_c(pbd_sparse_chol* c, pbd_alloc_ctx* mem, analysis* s) {
	const uint32_t n = c->n;
	for (uint32_t k = 0; k < n; ++k) s->iperm0[s->perm0[k]] = k;
	permuted_upper(n, s, s->iperm0, s->cp0, s->ci0, s->dpos, s->t1);
	etree(n, s->cp0, s->ci0, s->t2, s->t1);
	postorder(n, s->t2, s->post, s->t1, s->owner, s->where);
	c->perm = array_new(mem, n, sizeof *c->perm);
	c->iperm = array_new(mem, n, sizeof *c->iperm);
	c->parent = array_new(mem, n, sizeof *c->parent);
	c->map = array_new(mem, c->nnz_in, sizeof *c->map);
	c->cp = array_new(mem, (size_t)n + 1, sizeof *c->cp);
	c->nnz_c = s->nnz_d;
	c->ci = array_new(mem, c->nnz_c, sizeof *c->ci);
	c->cx = array_new(mem, c->nnz_c, sizeof *c->cx);
	if (!c->perm || !c->iperm || !c->parent || !c->map || !c->cp || !c->ci || !c->cx) return PBD_ERR_OUT_OF_MEMORY;
	for (uint32_t k = 0; k < n; ++k) {
		c->perm[k] = s->perm0[s->post[k]];
		c->iperm[c->perm[k]] = k;
	}
	permuted_upper(n, s, c->iperm, c->cp, c->ci, s->dpos, s->t1);
	etree(n, c->cp, c->ci, c->parent, s->t1);
	for (uint32_t q = 0; q < c->nnz_in; ++q) c->map[q] = s->qmap[q] == NO_NODE ? NO_NODE : s->dpos[s->qmap[q]];
	return PBD_OK;
}

/* The structure of L: column counts from the row patterns, then the rows of each column. */
static pbd_status lay_out_l(pbd_sparse_chol* c, pbd_alloc_ctx* mem) {
	const uint32_t n = c->n;
	c->lp = array_new(mem, (size_t)n + 1, sizeof *c->lp);
	c->fill = array_new(mem, n, sizeof *c->fill);
	c->stack = array_new(mem, n, sizeof *c->stack);
	c->mark = array_new(mem, n, sizeof *c->mark);
	c->work = array_new(mem, 3 * (size_t)n, sizeof *c->work);
	if (!c->lp || !c->fill || !c->stack || !c->mark || !c->work) return PBD_ERR_OUT_OF_MEMORY;
	for (uint32_t j = 0; j < n; ++j) {
		c->fill[j] = 1;
		c->mark[j] = NO_NODE;
	}
	for (uint32_t k = 0; k < n; ++k)
		for (uint32_t t = row_pattern(c, k); t < n; ++t) c->fill[c->stack[t]]++;
	c->lp[0] = 0;
	for (uint32_t j = 0; j < n; ++j) {
		if (c->fill[j] > SIZE_MAX - c->lp[j]) return PBD_ERR_OUT_OF_MEMORY;
		c->lp[j + 1] = c->lp[j] + c->fill[j];
	}
	c->nnz_l = c->lp[n];
	c->li = array_new(mem, c->nnz_l, sizeof *c->li);
	c->lx = array_new(mem, c->nnz_l, sizeof *c->lx);
	if (!c->li || !c->lx) return PBD_ERR_OUT_OF_MEMORY;
	for (uint32_t j = 0; j < n; ++j) {
		c->li[c->lp[j]] = j;
		c->fill[j] = c->lp[j] + 1;
		c->mark[j] = NO_NODE;
	}
	for (uint32_t k = 0; k < n; ++k)
		for (uint32_t t = row_pattern(c, k); t < n; ++t) c->li[c->fill[c->stack[t]]++] = k;
	return PBD_OK;
}

pbd_status pbd_sparse_chol_analyze(pbd_sparse_chol* c, pbd_alloc_ctx* mem, const pbd_sparse_pattern* a,
                                   const uint32_t* order) {
	if (!c || !mem) return PBD_ERR_INVALID_ARGUMENT;
	pbd_sparse_chol_free(c, mem);
	if (!a || a->n == 0 || (a->nnz > 0 && !a->row) || !a->col_start == !a->col) return PBD_ERR_INVALID_ARGUMENT;
	/* The graph of the ordering lists each edge twice, with 32-bit positions. */
	if (a->n > PBD_SPARSE_CHOL_MAX_N || a->nnz > UINT32_MAX / 2) return PBD_ERR_OUT_OF_MEMORY;
	analysis s = {0};
	if (!analysis_new(&s, mem, a->n, a->nnz)) return PBD_ERR_OUT_OF_MEMORY;
	pbd_status st = PBD_ERR_INVALID_ARGUMENT;
	if (!entry_columns(a, s.ecol) || !lower_entries(a, &s)) goto done;
	graph(a->n, &s);
	st = first_order(mem, a->n, &s, order);
	if (st != PBD_OK) goto done;
	c->n = a->n;
	c->nnz_in = a->nnz;
	st = lay_out_c(c, mem, &s);
	if (st == PBD_OK) st = lay_out_l(c, mem);
done:
	array_free(mem, s.block, s.words, sizeof *s.block);
	if (st != PBD_OK) pbd_sparse_chol_free(c, mem);
	return st;
}

/* Sums the values into C; false when one read, or a sum, is not finite. */
static bool gather_values(pbd_sparse_chol* c, const double* values) {
	memset(c->cx, 0, (size_t)c->nnz_c * sizeof *c->cx);
	for (uint32_t q = 0; q < c->nnz_in; ++q) {
		if (c->map[q] == NO_NODE) continue;
		if (!isfinite(values[q])) return false;
		c->cx[c->map[q]] += values[q];
	}
	for (uint32_t p = 0; p < c->nnz_c; ++p)
		if (!isfinite(c->cx[p])) return false;
	return true;
}

pbd_status pbd_sparse_chol_factor(pbd_sparse_chol* c, const double* values) {
	if (!c || !c->perm || !values) return PBD_ERR_INVALID_ARGUMENT;
	c->factored = false;
	if (!gather_values(c, values)) return PBD_ERR_NOT_FINITE;
	const uint32_t n = c->n;
	const size_t* lp = c->lp;
	const uint32_t* li = c->li;
	double *lx = c->lx, *x = c->work;
	size_t* fill = c->fill;
	memset(x, 0, (size_t)n * sizeof *x);
	for (uint32_t j = 0; j < n; ++j) c->mark[j] = NO_NODE;
	/* Row k of L solves L(0:k, 0:k) l = C(0:k, k) over the nonzeros of l only, which are the
	 * row's pattern; x holds the dense right-hand side, zero outside the pattern. Each column
	 * j < k then gets its entry in row k appended at fill[j]. */
	for (uint32_t k = 0; k < n; ++k) {
		const uint32_t top = row_pattern(c, k);
		for (uint32_t p = c->cp[k]; p < c->cp[k + 1]; ++p) x[c->ci[p]] = c->cx[p];
		const double akk = x[k];
		double d = akk;
		x[k] = 0;
		for (uint32_t t = top; t < n; ++t) {
			const uint32_t j = c->stack[t];
			const double lkj = x[j] / lx[lp[j]];
			x[j] = 0;
			for (size_t p = lp[j] + 1; p < fill[j]; ++p) x[li[p]] -= lx[p] * lkj;
			d -= lkj * lkj;
			PBD_ASSERT(li[fill[j]] == k);
			lx[fill[j]++] = lkj;
		}
		if (!(akk > 0) || !(d > PBD_SPARSE_CHOL_PIVOT_TOL * akk)) {
			c->bad_column = c->perm[k];
			memset(x, 0, (size_t)n * sizeof *x);
			return PBD_ERR_DEGENERATE;
		}
		lx[lp[k]] = sqrt(d);
		fill[k] = lp[k] + 1;
	}
	c->factored = true;
	return PBD_OK;
}

/* y <- L^-T L^-1 y for m right-hand sides interleaved by node (m is 1 or 3, a constant once
 * inlined). The forward pass scatters each column into the rows below it, the backward pass
 * gathers each column from them: both read L column by column, in storage order. */
static inline void substitute(const pbd_sparse_chol* c, double* y, const uint32_t m) {
	const uint32_t n = c->n;
	const size_t* lp = c->lp;
	const uint32_t* li = c->li;
	const double* lx = c->lx;
	for (uint32_t j = 0; j < n; ++j) {
		double* yj = y + (size_t)m * j;
		const double ljj = lx[lp[j]];
		for (uint32_t d = 0; d < m; ++d) yj[d] /= ljj;
		for (size_t p = lp[j] + 1; p < lp[j + 1]; ++p) {
			double* yi = y + (size_t)m * li[p];
			for (uint32_t d = 0; d < m; ++d) yi[d] -= lx[p] * yj[d];
		}
	}
	for (uint32_t j = n; j-- > 0;) {
		double* yj = y + (size_t)m * j;
		double s[3] = {0, 0, 0};
		for (uint32_t d = 0; d < m; ++d) s[d] = yj[d];
		for (size_t p = lp[j] + 1; p < lp[j + 1]; ++p) {
			const double* yi = y + (size_t)m * li[p];
			for (uint32_t d = 0; d < m; ++d) s[d] -= lx[p] * yi[d];
		}
		const double ljj = lx[lp[j]];
		for (uint32_t d = 0; d < m; ++d) yj[d] = s[d] / ljj;
	}
}

static inline pbd_status solve_m(pbd_sparse_chol* c, const double* b, double* x, const uint32_t m) {
	if (!c || !c->factored || !b || !x) return PBD_ERR_INVALID_ARGUMENT;
	double* y = c->work;
	for (uint32_t k = 0; k < c->n; ++k)
		for (uint32_t d = 0; d < m; ++d) y[(size_t)m * k + d] = b[(size_t)m * c->perm[k] + d];
	substitute(c, y, m);
	for (uint32_t k = 0; k < c->n; ++k)
		for (uint32_t d = 0; d < m; ++d) x[(size_t)m * c->perm[k] + d] = y[(size_t)m * k + d];
	return PBD_OK;
}

pbd_status pbd_sparse_chol_solve(pbd_sparse_chol* c, const double* b, double* x) { return solve_m(c, b, x, 1); }

pbd_status pbd_sparse_chol_solve3(pbd_sparse_chol* c, const double* b, double* x) { return solve_m(c, b, x, 3); }
