// A measured sketch, not a CUDA path of the library: the hanging cloth's constraint set (structural,
// both diagonals, bend edges two apart; the constraints of scenes/hanging_cloth.json) solved by
// XPBD Gauss-Seidel over a static colouring, one kernel launch per colour group, every array on
// the device. It prints the time per frame (one frame = substeps x iterations x colours launches)
// with plain launches and with the frame captured once as a CUDA graph.
//
//   nvcc -O3 -o colour_xpbd colour_xpbd.cu && ./colour_xpbd 128 16 2 300
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

struct Con { int a, b; float rest, compliance; };

__global__ void predict(int n, float4* x, float4* prev, float4* v, float h) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float4 p = x[i], u = v[i];
	prev[i] = p;
	if (p.w == 0.0f) return;  // w: inverse mass, 0 = pinned
	u.y -= 9.81f * h;
	v[i] = u;
	x[i] = make_float4(p.x + h * u.x, p.y + h * u.y, p.z + h * u.z, p.w);
}

__global__ void project(int first, int count, const Con* c, float* lambda, float4* x, float inv_h2) {
	int k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k >= count) return;
	k += first;
	Con q = c[k];
	float4 pa = x[q.a], pb = x[q.b];
	float dx = pa.x - pb.x, dy = pa.y - pb.y, dz = pa.z - pb.z;
	float len = sqrtf(dx * dx + dy * dy + dz * dz);
	float wsum = pa.w + pb.w;
	if (len < 1e-9f || wsum == 0.0f) return;
	float alpha = q.compliance * inv_h2;
	float dl = (-(len - q.rest) - alpha * lambda[k]) / (wsum + alpha);
	lambda[k] += dl;
	float s = dl / len;
	x[q.a] = make_float4(pa.x + pa.w * s * dx, pa.y + pa.w * s * dy, pa.z + pa.w * s * dz, pa.w);
	x[q.b] = make_float4(pb.x - pb.w * s * dx, pb.y - pb.w * s * dy, pb.z - pb.w * s * dz, pb.w);
}

__global__ void velocities(int n, const float4* x, const float4* prev, float4* v, float inv_h) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n || x[i].w == 0.0f) return;
	v[i] = make_float4((x[i].x - prev[i].x) * inv_h, (x[i].y - prev[i].y) * inv_h,
	                   (x[i].z - prev[i].z) * inv_h, 0.0f);
}

int main(int argc, char** argv) {
	int N = argc > 1 ? atoi(argv[1]) : 128, substeps = argc > 2 ? atoi(argv[2]) : 16;
	int iterations = argc > 3 ? atoi(argv[3]) : 2, frames = argc > 4 ? atoi(argv[4]) : 300;
	int n = N * N;
	float h = (1.0f / 60.0f) / substeps, d = 1.0f / (N - 1);
	std::vector<float4> x(n), zero(n, make_float4(0, 0, 0, 0));
	for (int j = 0; j < N; ++j)
		for (int i = 0; i < N; ++i) x[j * N + i] = make_float4(-0.5f + i * d, 0.0f, -0.5f + j * d, n / 0.1f);
	x[0].w = x[N - 1].w = 0.0f;  // the two pinned corners
	// Colour groups: an edge family with stride s in (di, dj) is split by (i or j) mod 2s so that
	// no two edges of a group share a particle.
	struct Fam { int di, dj, mod; float compliance; };
	const Fam fam[6] = {{1, 0, 2, 0.0f}, {0, 1, 2, 0.0f}, {1, 1, 2, 1e-4f}, {-1, 1, 2, 1e-4f},
	                    {2, 0, 4, 0.1f}, {0, 2, 4, 0.1f}};
	std::vector<Con> cons;
	std::vector<int> first;
	for (const Fam& f : fam)
		for (int m = 0; m < f.mod; ++m) {
			first.push_back((int)cons.size());
			for (int j = 0; j < N; ++j)
				for (int i = 0; i < N; ++i) {
					int i2 = i + f.di, j2 = j + f.dj;
					if (i2 < 0 || i2 >= N || j2 >= N) continue;
					int key = f.dj != 0 && f.di == 0 ? j : i;
					if (f.di == 1 && f.dj == 1) key = i;
					if (f.di == -1) key = i;
					if (key % f.mod != m) continue;
					float rx = (i2 - i) * d, rz = (j2 - j) * d;
					cons.push_back({j * N + i, j2 * N + i2, sqrtf(rx * rx + rz * rz), f.compliance});
				}
		}
	first.push_back((int)cons.size());
	int colours = (int)first.size() - 1, m = (int)cons.size();
	float4 *dx, *dprev, *dv;
	Con* dc;
	float* dl;
	CHECK(cudaMalloc(&dx, n * sizeof(float4)));
	CHECK(cudaMalloc(&dprev, n * sizeof(float4)));
	CHECK(cudaMalloc(&dv, n * sizeof(float4)));
	CHECK(cudaMalloc(&dc, m * sizeof(Con)));
	CHECK(cudaMalloc(&dl, m * sizeof(float)));
	CHECK(cudaMemcpy(dc, cons.data(), m * sizeof(Con), cudaMemcpyHostToDevice));
	cudaStream_t s;
	CHECK(cudaStreamCreate(&s));
	const int B = 256;
	auto frame = [&]() {
		for (int k = 0; k < substeps; ++k) {
			predict<<<(n + B - 1) / B, B, 0, s>>>(n, dx, dprev, dv, h);
			cudaMemsetAsync(dl, 0, m * sizeof(float), s);
			for (int it = 0; it < iterations; ++it)
				for (int c = 0; c < colours; ++c) {
					int cnt = first[c + 1] - first[c];
					project<<<(cnt + B - 1) / B, B, 0, s>>>(first[c], cnt, dc, dl, dx, 1.0f / (h * h));
				}
			velocities<<<(n + B - 1) / B, B, 0, s>>>(n, dx, dprev, dv, 1.0f / h);
		}
	};
	auto reset = [&]() {
		CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
		CHECK(cudaMemcpy(dv, zero.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
	};
	cudaEvent_t e0, e1;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	float ms_plain = 0, ms_graph = 0;
	reset();
	frame();  // warm-up
	CHECK(cudaStreamSynchronize(s));
	reset();
	CHECK(cudaEventRecord(e0, s));
	for (int f = 0; f < frames; ++f) frame();
	CHECK(cudaEventRecord(e1, s));
	CHECK(cudaEventSynchronize(e1));
	CHECK(cudaEventElapsedTime(&ms_plain, e0, e1));
	std::vector<float4> out(n);
	CHECK(cudaMemcpy(out.data(), dx, n * sizeof(float4), cudaMemcpyDeviceToHost));
	float ymin = 0;
	for (const float4& p : out) ymin = p.y < ymin ? p.y : ymin;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	frame();
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&ge, g, 0));
	reset();
	CHECK(cudaGraphLaunch(ge, s));  // warm-up
	CHECK(cudaStreamSynchronize(s));
	reset();
	CHECK(cudaEventRecord(e0, s));
	for (int f = 0; f < frames; ++f) CHECK(cudaGraphLaunch(ge, s));
	CHECK(cudaEventRecord(e1, s));
	CHECK(cudaEventSynchronize(e1));
	CHECK(cudaEventElapsedTime(&ms_graph, e0, e1));
	long launches = (long)substeps * (iterations * colours + 2);
	double proj = (double)m * substeps * iterations;
	printf("N %d particles %d constraints %d colours %d substeps %d iterations %d frames %d\n", N, n, m,
	       colours, substeps, iterations, frames);
	printf("plain launches: %.4f ms/frame (%ld kernels/frame), %.1f Mproj/s; lowest y %.4f m\n",
	       ms_plain / frames, launches, proj * frames / (ms_plain * 1e3), ymin);
	printf("CUDA graph:     %.4f ms/frame, %.1f Mproj/s\n", ms_graph / frames, proj * frames / (ms_graph * 1e3));
	return 0;
}
