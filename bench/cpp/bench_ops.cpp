// Per-op latency of the C++ core at four levels, for 1- and 16-element
// float32 CPU tensors: the raw kernel call (KernelArgs prebuilt), table
// lookup + call, the public op (fastt::add: validation, allocation,
// dispatch) and the public op with autograd recording; plus a hand-written
// loop that allocates its output (the floor) and a few extra cases.
// Names are BM_<Level>/<op>/<numel>, parsed by bench/ops.py; add an op: one
// case in make()/call() and it joins every level via FASTT_LEVEL_CASES.
// Run single-threaded (`python -m bench --only ops` runs it with JSON out):
//   build/bench/cpp/fastt_bench_ops --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <cmath>
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

enum class Which { add, mul, relu, sum, matmul, view, slice };

// The operands of one case and, for ops with a kernel, the KernelArgs the
// op layer would build (so the raw and lookup levels call exactly what the
// op calls). matmul and view take numel = side * side (16 -> 4x4).
struct Case {
  Which which;
  Op op = Op::add;
  bool has_kernel = true;
  int64_t side = 1;
  Tensor a, b, out;
  KernelArgs args;
};

void make(Case& c, Which w, int64_t n) {
  c.which = w;
  c.side = int64_t(std::lround(std::sqrt(double(n))));
  if (w == Which::matmul) {
    c.a = filled({c.side, c.side}, 1);
    c.b = filled({c.side, c.side}, 2);
    c.out = filled({c.side, c.side}, 0);
  } else {
    c.a = filled({n}, 1);
    c.b = filled({n}, 2);
    c.out = w == Which::sum ? filled({}, 0) : filled({n}, 0);
  }
  KernelArgs& args = c.args;
  switch (w) {
    case Which::add:
    case Which::mul: {
      c.op = w == Which::add ? Op::add : Op::mul;
      const Tensor* ts[3] = {&c.out, &c.a, &c.b};
      build_dense_loop(args, ts, 3);
      args.f0 = 1.0;  // alpha
      args.i0 = 1;
      break;
    }
    case Which::relu: {
      c.op = Op::relu;
      const Tensor* ts[2] = {&c.out, &c.a};
      build_dense_loop(args, ts, 2);
      break;
    }
    case Which::sum:  // as run_full in csrc/ops/reduce.cpp
      c.op = Op::sum;
      args.in[0] = &c.a;
      args.out = &c.out;
      args.out2 = nullptr;
      args.dims = IntList();
      break;
    case Which::matmul:  // as run_gemm in csrc/ops/linalg.cpp
      c.op = Op::gemm;
      args.out = &c.out;
      args.out2 = nullptr;
      args.in[0] = &c.a;
      args.in[1] = &c.b;
      args.in[2] = nullptr;
      args.in[3] = nullptr;
      args.f0 = 1.0;
      args.f1 = 0.0;
      args.i0 = 1;
      args.i1 = 0;
      args.i2 = 0;
      break;
    case Which::view:
    case Which::slice:
      c.has_kernel = false;  // metadata only: no kernel levels
      break;
  }
}

Tensor call(const Case& c) {
  switch (c.which) {
    case Which::add: return add(c.a, c.b);
    case Which::mul: return mul(c.a, c.b);
    case Which::relu: return relu(c.a);
    case Which::sum: return sum(c.a);
    case Which::matmul: return matmul(c.a, c.b);
    case Which::view: return c.a.view({c.side, c.side});
    case Which::slice: return c.a.slice(0, 1, c.a.size(0));
  }
  return {};
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

// Level 1: the kernel alone, into a preallocated output.
void BM_Raw(benchmark::State& st, Which w) {
  Case c;
  make(c, w, st.range(0));
  KernelFn fn = lookup_kernel(c.op, DeviceType::CPU, DType::Float32);
  for (auto _ : st) {
    fn(c.args);
    benchmark::ClobberMemory();
  }
}

// Level 2: the table lookup + kernel call.
void BM_Lookup(benchmark::State& st, Which w) {
  Case c;
  make(c, w, st.range(0));
  volatile int op = int(c.op);  // keep the lookup in the loop
  for (auto _ : st) {
    lookup_kernel(Op(op), DeviceType::CPU, DType::Float32)(c.args);
    benchmark::ClobberMemory();
  }
}

// Level 3: the public op (fastt::add etc.), result allocated and freed.
void BM_Op(benchmark::State& st, Which w) {
  Case c;
  make(c, w, st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(call(c));
}

// Level 4: the public op with `a` requiring grad, so each call also records
// one tape node (freed when the result dies). Minus BM_Op = recording cost.
void BM_Record(benchmark::State& st, Which w) {
  Case c;
  make(c, w, st.range(0));
  requires_grad_(c.a);
  for (auto _ : st) benchmark::DoNotOptimize(call(c));
}

void BM_Empty(benchmark::State& st) {
  const int64_t n = st.range(0);
  for (auto _ : st)
    benchmark::DoNotOptimize(Tensor::empty({n}, DType::Float32));
}

void BM_MulScalar(benchmark::State& st) {
  Tensor a = filled({st.range(0)}, 1);
  for (auto _ : st) benchmark::DoNotOptimize(mul(a, 2.0));
}

void BM_AddBroadcast(benchmark::State& st) {
  Tensor a = filled({4, 4}, 1), b = filled({4}, 2);
  for (auto _ : st) benchmark::DoNotOptimize(add(a, b));
}

void BM_Matmul64(benchmark::State& st) {
  Tensor a = filled({64, 64}, 1), b = filled({64, 64}, 2);
  for (auto _ : st) benchmark::DoNotOptimize(matmul(a, b));
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

#define FASTT_KERNEL_CASES(fn)                                      \
  BENCHMARK_CAPTURE(fn, add, Which::add)->Arg(1)->Arg(16);          \
  BENCHMARK_CAPTURE(fn, mul, Which::mul)->Arg(1)->Arg(16);          \
  BENCHMARK_CAPTURE(fn, relu, Which::relu)->Arg(1)->Arg(16);        \
  BENCHMARK_CAPTURE(fn, sum, Which::sum)->Arg(1)->Arg(16);          \
  BENCHMARK_CAPTURE(fn, matmul, Which::matmul)->Arg(1)->Arg(16)
#define FASTT_LEVEL_CASES(fn)                                       \
  FASTT_KERNEL_CASES(fn);                                           \
  BENCHMARK_CAPTURE(fn, view, Which::view)->Arg(1)->Arg(16);        \
  BENCHMARK_CAPTURE(fn, slice, Which::slice)->Arg(1)->Arg(16)

BENCHMARK(BM_HandLoopAlloc)->Arg(1)->Arg(16);
FASTT_KERNEL_CASES(BM_Raw);
FASTT_KERNEL_CASES(BM_Lookup);
FASTT_LEVEL_CASES(BM_Op);
FASTT_LEVEL_CASES(BM_Record);
BENCHMARK(BM_Empty)->Arg(1)->Arg(16);
BENCHMARK(BM_MulScalar)->Arg(1)->Arg(16);
BENCHMARK(BM_AddBroadcast);
BENCHMARK(BM_Matmul64);
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
