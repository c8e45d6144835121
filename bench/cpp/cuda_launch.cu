// Host-side cost per CUDA op launch, the floor fastt's CUDA path is held to
// (issue: a small op from Python <= 1.5x a raw kernel launch). Levels, each
// on 16 float32 elements: an empty kernel, a raw `c = a + b` kernel launch
// with <<<>>>, fastt's add kernel from the dispatch table (KernelArgs
// prebuilt), fastt::add (validation, allocation, dispatch) and fastt::add
// with autograd recording. Each sample times `kBatch` enqueues with the
// stream synchronised before and after (not timed), so the launch queue
// never fills and only host work is measured; medians over interleaved
// repeats. Prints JSON: {"<level>": {"median_ns", "min_ns", "max_ns"}}.
//   build/bench/fastt_cuda_launch [repeats]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "csrc/autograd.h"
#include "csrc/dispatch.h"
#include "csrc/ops.h"
#include "csrc/ops/loop_builder.h"
#include "kernels/cuda/runtime.h"

using namespace fastt;

namespace {

constexpr int kBatch = 100;

__global__ void empty_kernel() {}

__global__ void add16(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double sample_ns(const std::function<void()>& fn) {
  cudaStream_t s = cuda::current_stream();
  check(cudaStreamSynchronize(s), "sync");
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kBatch; ++i) fn();
  auto t1 = std::chrono::steady_clock::now();
  check(cudaStreamSynchronize(s), "sync");
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / kBatch;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 51;
  if (cuda::device_count() == 0) {
    std::fprintf(stderr, "no CUDA device\n");
    return 2;
  }
  const Device dev(DeviceType::CUDA, 0);
  Tensor a = fastt::ones({16}, DType::Float32, dev);
  Tensor b = fastt::ones({16}, DType::Float32, dev);
  Tensor c = fastt::ones({16}, DType::Float32, dev);
  Tensor w = fastt::ones({16}, DType::Float32, dev);
  fastt::requires_grad_(w, true);
  float* pa = static_cast<float*>(a.data_ptr());
  float* pb = static_cast<float*>(b.data_ptr());
  float* pc = static_cast<float*>(c.data_ptr());
  cudaStream_t s = cuda::current_stream();

  KernelArgs args;
  const Tensor* ops[3] = {&c, &a, &b};
  build_dense_loop(args, ops, 3);
  args.f0 = 1.0;
  args.i0 = 1;
  KernelFn add_fn = lookup_kernel(Op::add, DeviceType::CUDA, DType::Float32);

  std::vector<std::pair<std::string, std::function<void()>>> levels = {
      {"empty_kernel", [&] { empty_kernel<<<1, 32, 0, s>>>(); }},
      {"raw_add_kernel", [&] { add16<<<1, 32, 0, s>>>(pa, pb, pc, 16); }},
      {"table_kernel", [&] { add_fn(args); }},
      {"fastt_add", [&] { Tensor r = fastt::add(a, b); }},
      {"fastt_add_recorded", [&] { Tensor r = fastt::add(a, w); }},
  };
  std::vector<std::vector<double>> samples(levels.size());
  for (auto& l : levels) sample_ns(l.second);  // warm-up
  for (int r = 0; r < repeats; ++r)
    for (size_t i = 0; i < levels.size(); ++i)
      samples[i].push_back(sample_ns(levels[i].second));
  check(cudaGetLastError(), "launch");

  std::printf("{\n");
  for (size_t i = 0; i < levels.size(); ++i) {
    auto& v = samples[i];
    std::sort(v.begin(), v.end());
    std::printf("  \"%s\": {\"median_ns\": %.1f, \"min_ns\": %.1f, "
                "\"max_ns\": %.1f}%s\n",
                levels[i].first.c_str(), v[v.size() / 2], v.front(), v.back(),
                i + 1 < levels.size() ? "," : "");
  }
  std::printf("}\n");
  return 0;
}
