/* The soak's own random numbers: xoshiro256** seeded through splitmix64. Kept here instead of
 * rand(), whose sequence differs between C libraries, so that a case seed names one scene. */
#ifndef PBD_SOAK_RNG_H
#define PBD_SOAK_RNG_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct soak_rng {
	uint64_t s[4];
} soak_rng;

static inline uint64_t soak_splitmix64(uint64_t* state) {
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Neighbouring seeds (case k of a run is seed + k) must give unrelated streams: splitmix64
 * spreads them over the whole state. */
static inline void soak_rng_seed(soak_rng* r, uint64_t seed) {
	uint64_t sm = seed;
	for (int i = 0; i < 4; ++i) r->s[i] = soak_splitmix64(&sm);
}

static inline uint64_t soak_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t soak_rng_next(soak_rng* r) {
	uint64_t* s = r->s;
	const uint64_t result = soak_rotl(s[1] * 5, 7) * 9;
	const uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = soak_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, 1), 53 random bits. */
static inline double soak_rng_unit(soak_rng* r) { return (double)(soak_rng_next(r) >> 11) * 0x1.0p-53; }

static inline double soak_rng_range(soak_rng* r, double lo, double hi) { return lo + (hi - lo) * soak_rng_unit(r); }

/* Log-uniform in [lo, hi], lo > 0: every decade is as likely, so tiny and huge values both
 * come up. */
static inline double soak_rng_log(soak_rng* r, double lo, double hi) {
	return exp(soak_rng_range(r, log(lo), log(hi)));
}

/* Uniform integer in [lo, hi]. The modulo bias is below 2^-50 for the small ranges used. */
static inline int soak_rng_int(soak_rng* r, int lo, int hi) {
	return lo + (int)(soak_rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* Integer in [lo, hi], lo >= 1, log-uniform: small counts as likely as large ones. */
static inline int soak_rng_int_log(soak_rng* r, int lo, int hi) {
	int v = (int)floor(soak_rng_log(r, (double)lo, (double)hi + 1));
	return v < lo ? lo : v > hi ? hi : v;
}

static inline bool soak_rng_chance(soak_rng* r, double p) { return soak_rng_unit(r) < p; }

#endif
