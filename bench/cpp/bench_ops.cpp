// Per-op latency of the C++ core at four levels, for 1- and 16-element
// float32 CPU tensors: a hand-written loop that allocates its output (the
// floor), the raw kernel call, table lookup + call, and the public op
// (fastt::add: validation, allocation, dispatch). Run single-threaded:
//   build/bench/cpp/fastt_bench_ops --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include "csrc/dispatch.h"
#include "csrc/ops.h"
#include "csrc/ops/loop_builder.h"

using namespace fastt;

namespace {

Tensor filled(IntList sizes, float v) {
  Tensor t = Tensor::empty(sizes, DType::Float32);
  t.fill_(v);
  return t;
}

// The floor: what any add must do at least — allocate and loop.
void BM_HandLoopAlloc(benchmark::State& st) {
  const int64_t n = st.range(0);
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]);
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] = float(i);
  for (auto _ : st) {
    float* o = static_cast<float*>(std::malloc(sizeof(float) * size_t(n)));
    for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
    benchmark::DoNotOptimize(o);
    std::free(o);
  }
}

void BM_RawKernel(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = filled({n}, 1), b = filled({n}, 2), out = filled({n}, 0);
  KernelFn fn = lookup_kernel(Op::add, DeviceType::CPU, DType::Float32);
  KernelArgs args;
  const Tensor* ts[3] = {&out, &a, &b};
  build_dense_loop(args, ts, 3);
  args.f0 = 1.0;
  args.i0 = 1;
  for (auto _ : st) {
    fn(args);
    benchmark::ClobberMemory();
  }
}

void BM_LookupAndCall(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = filled({n}, 1), b = filled({n}, 2), out = filled({n}, 0);
  KernelArgs args;
  const Tensor* ts[3] = {&out, &a, &b};
  build_dense_loop(args, ts, 3);
  args.f0 = 1.0;
  args.i0 = 1;
  volatile int op = int(Op::add);  // keep the lookup in the loop
  for (auto _ : st) {
    lookup_kernel(Op(op), DeviceType::CPU, DType::Float32)(args);
    benchmark::ClobberMemory();
  }
}

void BM_Empty(benchmark::State& st) {
  const int64_t n = st.range(0);
  for (auto _ : st) benchmark::DoNotOptimize(Tensor::empty({n}, DType::Float32));
}

void BM_Add(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = filled({n}, 1), b = filled({n}, 2);
  for (auto _ : st) benchmark::DoNotOptimize(add(a, b));
}

void BM_MulScalar(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = filled({n}, 1);
  for (auto _ : st) benchmark::DoNotOptimize(mul(a, 2.0));
}

void BM_Relu(benchmark::State& st) {
  Tensor a = filled({st.range(0)}, 1);
  for (auto _ : st) benchmark::DoNotOptimize(relu(a));
}

void BM_Sum(benchmark::State& st) {
  Tensor a = filled({st.range(0)}, 1);
  for (auto _ : st) benchmark::DoNotOptimize(sum(a));
}

void BM_View(benchmark::State& st) {
  Tensor a = filled({16}, 1);
  for (auto _ : st) benchmark::DoNotOptimize(a.view({4, 4}));
}

void BM_Slice(benchmark::State& st) {
  Tensor a = filled({16}, 1);
  for (auto _ : st) benchmark::DoNotOptimize(a.slice(0, 1, 16));
}

void BM_Matmul(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = filled({n, n}, 1), b = filled({n, n}, 2);
  for (auto _ : st) benchmark::DoNotOptimize(matmul(a, b));
}

void BM_AddBroadcast(benchmark::State& st) {
  Tensor a = filled({4, 4}, 1), b = filled({4}, 2);
  for (auto _ : st) benchmark::DoNotOptimize(add(a, b));
}

// With autograd recording: `a` requires grad, so each add also records one
// tape node (and frees it when the result dies). The difference from
// BM_Add is the recording overhead per op.
void BM_AddRecord(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = filled({n}, 1), b = filled({n}, 2);
  requires_grad_(a);
  for (auto _ : st) benchmark::DoNotOptimize(add(a, b));
}

void BM_MulRecord(benchmark::State& st) {
  const int64_t n = st.range(0);
  Tensor a = filled({n}, 1), b = filled({n}, 2);
  requires_grad_(a);
  for (auto _ : st) benchmark::DoNotOptimize(mul(a, b));
}

// Recording a chain: each op's input already has history (no leaf
// accumulator lookup), like a layer inside a network.
void BM_ReluRecordChain(benchmark::State& st) {
  Tensor a = filled({16}, 1);
  requires_grad_(a);
  Tensor h = mul(a, 2.0);
  for (auto _ : st) benchmark::DoNotOptimize(relu(h));
}

// A whole step: forward of y = sum(relu(x @ w + b)) and backward.
void BM_TinyStep(benchmark::State& st) {
  Tensor x = filled({4, 4}, 1), w = filled({4, 4}, 0.5), b = filled({4}, 0);
  requires_grad_(w);
  requires_grad_(b);
  for (auto _ : st) {
    Tensor y = sum(relu(add(matmul(x, w), b)));
    backward(y);
  }
}

}  // namespace

BENCHMARK(BM_HandLoopAlloc)->Arg(1)->Arg(16);
BENCHMARK(BM_RawKernel)->Arg(1)->Arg(16);
BENCHMARK(BM_LookupAndCall)->Arg(1)->Arg(16);
BENCHMARK(BM_Empty)->Arg(1)->Arg(16);
BENCHMARK(BM_Add)->Arg(1)->Arg(16);
BENCHMARK(BM_MulScalar)->Arg(1)->Arg(16);
BENCHMARK(BM_Relu)->Arg(16);
BENCHMARK(BM_Sum)->Arg(16);
BENCHMARK(BM_View);
BENCHMARK(BM_Slice);
BENCHMARK(BM_AddBroadcast);
BENCHMARK(BM_Matmul)->Arg(4)->Arg(64);
BENCHMARK(BM_AddRecord)->Arg(1)->Arg(16);
BENCHMARK(BM_MulRecord)->Arg(16);
BENCHMARK(BM_ReluRecordChain);
BENCHMARK(BM_TinyStep);

int main(int argc, char** argv) {
  set_num_threads(1);  // per-op latency is measured single-threaded
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
