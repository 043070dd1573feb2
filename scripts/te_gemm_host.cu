// Host time per GEMM of Transformer Engine's multi-stream grouped GEMM, as its C++ issues it on
// Hopper (transformer_engine/common/gemm/cublaslt_gemm.cu at d0067d0: multi_stream_cublas_gemm
// records an event on the caller's stream, makes each of its 4 compute streams wait for it, runs
// GEMM i on stream i mod 4 through cublas_gemm, which creates the matmul and layout descriptors,
// sets their attributes, asks cublasLtMatmulAlgoGetHeuristic for an algorithm and calls
// cublasLtMatmul, then makes the caller's stream wait for each compute stream's event).
//
//   nvcc -O2 -o te_gemm_host scripts/te_gemm_host.cu -lcublasLt && ./te_gemm_host > host.csv
//
// A spinning kernel keeps the GPU busy while the host issues the GEMMs, so the host's time is
// measured alone (the GPU never drains the queue). Three ways per GEMM group: as Transformer
// Engine issues them (te_style), with descriptors and algorithm made once (cached: the launch
// alone), and an empty kernel's launch (cudaLaunchKernel, the floor). Prints CSV: what,groups,
// gemms_per_group,host_us_per_gemm (median of the repeats).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                                       \
  do {                                                                                                                 \
    auto status_ = (x);                                                                                                \
    if (static_cast<int>(status_) != 0) {                                                                              \
      std::fprintf(stderr, "%s failed: %d at line %d\n", #x, static_cast<int>(status_), __LINE__);                    \
      std::exit(1);                                                                                                    \
    }                                                                                                                  \
  } while (0)

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void empty() {}

namespace {

constexpr int streams = 4;                           // nvte_get_num_compute_streams
constexpr size_t workspace_bytes = 32u * 1024 * 1024; // Transformer Engine's Hopper workspace

struct Problem {
  int m, n, k; // D (m x n) = A^T (m x k) B (k x n), column-major, as TE calls cuBLASLt for x W^T
};

struct Gemm {
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t a{}, b{}, d{};
  cublasLtMatmulPreference_t preference{};
  cublasLtMatmulHeuristicResult_t algo{};
};

Gemm describe(cublasLtHandle_t handle, const Problem& p) {
  Gemm g;
  CHECK(cublasLtMatrixLayoutCreate(&g.a, CUDA_R_16BF, p.k, p.m, p.k));
  CHECK(cublasLtMatrixLayoutCreate(&g.b, CUDA_R_16BF, p.k, p.n, p.k));
  CHECK(cublasLtMatrixLayoutCreate(&g.d, CUDA_R_16BF, p.m, p.n, p.m));
  CHECK(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
  CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
  CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof(n)));
  const int sms = 0; // TE sets the SM count target (0: all) on every call
  CHECK(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, sizeof(sms)));
  CHECK(cublasLtMatmulPreferenceCreate(&g.preference));
  const size_t ws = workspace_bytes;
  CHECK(cublasLtMatmulPreferenceSetAttribute(g.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  int found = 0;
  CHECK(cublasLtMatmulAlgoGetHeuristic(handle, g.op, g.a, g.b, g.d, g.d, g.preference, 1, &g.algo, &found));
  if (found == 0) std::exit(2);
  return g;
}

void destroy(Gemm& g) {
  cublasLtMatmulPreferenceDestroy(g.preference);
  cublasLtMatmulDescDestroy(g.op);
  cublasLtMatrixLayoutDestroy(g.a);
  cublasLtMatrixLayoutDestroy(g.b);
  cublasLtMatrixLayoutDestroy(g.d);
}

struct Buffers {
  std::vector<__nv_bfloat16*> a, b, d;
  std::vector<void*> workspace;
};

struct Streams {
  cudaStream_t main{};
  cudaStream_t compute[streams]{};
  cudaEvent_t start{};
  cudaEvent_t done[streams]{};
};

void matmul(cublasLtHandle_t handle, const Gemm& g, const Buffers& buf, int i, cudaStream_t s) {
  const float one = 1, zero = 0;
  CHECK(cublasLtMatmul(handle, g.op, &one, buf.a[i], g.a, buf.b[i], g.b, &zero, buf.d[i], g.d, buf.d[i], g.d,
                       &g.algo.algo, buf.workspace[i % streams], workspace_bytes, s));
}

/// One group as multi_stream_cublas_gemm issues it; `cached` reuses `made` instead of describing.
void group(cublasLtHandle_t handle, const Problem& p, const Buffers& buf, Streams& st, int gemms, const Gemm* made) {
  CHECK(cudaEventRecord(st.start, st.main));
  for (int s = 0; s < streams; ++s) CHECK(cudaStreamWaitEvent(st.compute[s], st.start));
  for (int i = 0; i < gemms; ++i) {
    if (made) {
      matmul(handle, *made, buf, i, st.compute[i % streams]);
    } else {
      Gemm g = describe(handle, p);
      matmul(handle, g, buf, i, st.compute[i % streams]);
      destroy(g);
    }
  }
  for (int s = 0; s < streams; ++s) {
    CHECK(cudaEventRecord(st.done[s], st.compute[s]));
    CHECK(cudaStreamWaitEvent(st.main, st.done[s]));
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Issue> double host_us_per_call(Streams& st, int calls, Issue issue) {
  std::vector<double> samples;
  for (int r = 0; r < 9; ++r) {
    spin<<<1, 1, 0, st.main>>>(2000000000LL / 10); // about 100 ms at 1.98 GHz: the GPU stays busy
    const auto t0 = std::chrono::steady_clock::now();
    issue();
    const auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
    CHECK(cudaDeviceSynchronize());
  }
  return median(samples);
}

} // namespace

int main() {
  cublasLtHandle_t handle;
  CHECK(cublasLtCreate(&handle));
  Streams st;
  CHECK(cudaStreamCreateWithFlags(&st.main, cudaStreamNonBlocking));
  for (auto& s : st.compute) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&st.start, cudaEventDisableTiming));
  for (auto& e : st.done) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  // Qwen3-235B's experts at EP 8 and TP 4 (16 local experts, 512 rows each): fc1 x W^T.
  const Problem p{3072, 512, 4096};
  const int gemms = 16, groups = 8;
  Buffers buf;
  for (int i = 0; i < gemms; ++i) {
    __nv_bfloat16 *a, *b, *d;
    CHECK(cudaMalloc(&a, size_t(p.m) * p.k * 2));
    CHECK(cudaMalloc(&b, size_t(p.k) * p.n * 2));
    CHECK(cudaMalloc(&d, size_t(p.m) * p.n * 2));
    buf.a.push_back(a), buf.b.push_back(b), buf.d.push_back(d);
  }
  for (int s = 0; s < streams; ++s) {
    void* w;
    CHECK(cudaMalloc(&w, workspace_bytes));
    buf.workspace.push_back(w);
  }
  Gemm made = describe(handle, p);
  for (int w = 0; w < 3; ++w) group(handle, p, buf, st, gemms, nullptr); // warm the heuristic cache
  CHECK(cudaDeviceSynchronize());
  std::printf("what,groups,gemms_per_group,host_us_per_gemm\n");
  const int calls = groups * gemms;
  const double te = host_us_per_call(st, calls, [&] {
    for (int g = 0; g < groups; ++g) group(handle, p, buf, st, gemms, nullptr);
  });
  std::printf("te_style,%d,%d,%.3f\n", groups, gemms, te);
  const double cached = host_us_per_call(st, calls, [&] {
    for (int g = 0; g < groups; ++g) group(handle, p, buf, st, gemms, &made);
  });
  std::printf("cached_descriptors,%d,%d,%.3f\n", groups, gemms, cached);
  const double launch = host_us_per_call(st, calls, [&] {
    for (int i = 0; i < calls; ++i) empty<<<1, 1, 0, st.compute[i % streams]>>>();
  });
  std::printf("empty_kernel,%d,%d,%.3f\n", groups, gemms, launch);
  destroy(made);
  return 0;
}
