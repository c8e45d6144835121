// libtorch's C++ API on the same cases as fastt's bench_ops.cpp (op level
// and with autograd recording), so `python -m bench` can put torch's C++
// cost beside fastt's. Names mirror bench_ops.cpp: BM_Torch/<op>/<numel>.
// Add a case: one entry in call() and one BENCHMARK_CAPTURE line per level.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <benchmark/benchmark.h>

#include <cmath>

namespace {

enum class Which { add, mul, relu, sum, matmul, view, slice };

struct Operands {
  at::Tensor a, b;
  int64_t side;  // matmul/view: numel = side * side
};

Operands make(Which w, int64_t n) {
  Operands o;
  o.side = int64_t(std::lround(std::sqrt(double(n))));
  auto opts = at::TensorOptions().dtype(at::kFloat);
  if (w == Which::matmul) {
    o.a = at::ones({o.side, o.side}, opts);
    o.b = at::full({o.side, o.side}, 2.0, opts);
  } else {
    o.a = at::ones({n}, opts);
    o.b = at::full({n}, 2.0, opts);
  }
  return o;
}

at::Tensor call(Which w, const Operands& o) {
  switch (w) {
    case Which::add: return at::add(o.a, o.b);
    case Which::mul: return at::mul(o.a, o.b);
    case Which::relu: return at::relu(o.a);
    case Which::sum: return at::sum(o.a);
    case Which::matmul: return at::matmul(o.a, o.b);
    case Which::view: return o.a.view({o.side, o.side});
    case Which::slice: return o.a.slice(0, 1, o.a.size(0));
  }
  return {};
}

// The public API as a user calls it (tensors that do not require grad).
void BM_Torch(benchmark::State& st, Which w) {
  Operands o = make(w, st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(call(w, o));
}

// Same with `a` requiring grad: each call also records a graph node.
void BM_TorchRecord(benchmark::State& st, Which w) {
  Operands o = make(w, st.range(0));
  o.a.requires_grad_(true);
  for (auto _ : st) benchmark::DoNotOptimize(call(w, o));
}

// Under c10::InferenceMode: torch's cheapest eager path.
void BM_TorchInference(benchmark::State& st, Which w) {
  c10::InferenceMode guard;
  Operands o = make(w, st.range(0));
  for (auto _ : st) benchmark::DoNotOptimize(call(w, o));
}

}  // namespace

#define FASTT_TORCH_CASES(fn)                                          \
  BENCHMARK_CAPTURE(fn, add, Which::add)->Arg(1)->Arg(16);             \
  BENCHMARK_CAPTURE(fn, mul, Which::mul)->Arg(1)->Arg(16);             \
  BENCHMARK_CAPTURE(fn, relu, Which::relu)->Arg(1)->Arg(16);           \
  BENCHMARK_CAPTURE(fn, sum, Which::sum)->Arg(1)->Arg(16);             \
  BENCHMARK_CAPTURE(fn, matmul, Which::matmul)->Arg(1)->Arg(16);       \
  BENCHMARK_CAPTURE(fn, view, Which::view)->Arg(1)->Arg(16);           \
  BENCHMARK_CAPTURE(fn, slice, Which::slice)->Arg(1)->Arg(16)

FASTT_TORCH_CASES(BM_Torch);
FASTT_TORCH_CASES(BM_TorchRecord);
FASTT_TORCH_CASES(BM_TorchInference);

int main(int argc, char** argv) {
  at::set_num_threads(1);  // per-op latency is measured single-threaded
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
