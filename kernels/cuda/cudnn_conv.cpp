// cuDNN convolutions (forward, input grad, weight grad) behind the hooks of
// kernels/cuda/cudnn_conv.h, through cuDNN's legacy convolution API. The
// algorithm for a shape comes from cuDNN's heuristics (no benchmarking, no
// host sync) once and is cached. Built only with FASTT_WITH_CUDNN.
#include "kernels/cuda/cudnn_conv.h"

#ifdef FASTT_WITH_CUDNN
#include <cudnn.h>

#include <array>
#include <climits>
#include <mutex>
#include <unordered_map>

#include "csrc/errors.h"
#include "kernels/cuda/blas.h"
#include "kernels/cuda/handle_pool.h"
#include "kernels/cuda/runtime.h"
#endif

namespace fastt {
namespace cuda {

#ifndef FASTT_WITH_CUDNN

void register_cudnn_conv() {}

#else

namespace {

#define FASTT_CUDNN_CHECK(expr, what)                                      \
  do {                                                                     \
    cudnnStatus_t _st = (expr);                                            \
    if (FASTT_UNLIKELY(_st != CUDNN_STATUS_SUCCESS))                       \
      throw RuntimeError(fmt::format("{}: cuDNN error: {}", what,          \
                                     cudnnGetErrorString(_st)));           \
  } while (0)

// One handle per (thread, device), created lazily and pooled at thread
// exit (handle_pool.h). cudnnSetStream only when the stream changed.
struct HandleState {
  cudnnHandle_t handle;
  cudaStream_t bound;  // stream last given to cudnnSetStream
  bool created;
};

cudnnHandle_t get_handle(const char* what) {
  HandleState& s = thread_handle_state<HandleState>(current_device());
  if (FASTT_UNLIKELY(!s.created)) {
    FASTT_CUDNN_CHECK(cudnnCreate(&s.handle), what);
    s.created = true;
    s.bound = reinterpret_cast<cudaStream_t>(~uintptr_t(0));
  }
  cudaStream_t stream = current_stream();
  if (s.bound != stream) {
    FASTT_CUDNN_CHECK(cudnnSetStream(s.handle, stream), what);
    s.bound = stream;
  }
  return s.handle;
}

// RAII owners of the descriptors of one call.
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc(cudnnDataType_t dt, int64_t n, int64_t c, int64_t h, int64_t w,
             const char* what) {
    FASTT_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d), what);
    FASTT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, dt,
                                                 int(n), int(c), int(h),
                                                 int(w)),
                      what);
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
};

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc(cudnnDataType_t dt, const ConvDesc& c, const char* what) {
    FASTT_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d), what);
    FASTT_CUDNN_CHECK(
        cudnnSetFilter4dDescriptor(d, dt, CUDNN_TENSOR_NCHW, int(c.O),
                                   int(c.C / c.G), int(c.kh), int(c.kw)),
        what);
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
};

struct ConvolutionDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvolutionDesc(cudnnDataType_t compute, const ConvDesc& c,
                  const char* what) {
    FASTT_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d), what);
    FASTT_CUDNN_CHECK(
        cudnnSetConvolution2dDescriptor(
            d, int(c.pad[0]), int(c.pad[1]), int(c.stride[0]),
            int(c.stride[1]), int(c.dil[0]), int(c.dil[1]),
            CUDNN_CROSS_CORRELATION, compute),
        what);
    FASTT_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d, int(c.G)), what);
  }
  ~ConvolutionDesc() { cudnnDestroyConvolutionDescriptor(d); }
};

// cuDNN's types for a fastt dtype; false for the ones it has no
// convolutions for (integers: the composition handles them).
bool cudnn_types(DType dt, cudnnDataType_t* data, cudnnDataType_t* compute) {
  switch (dt) {
    case DType::Float32:
      *data = *compute = CUDNN_DATA_FLOAT;
      return true;
    case DType::Float64:
      *data = *compute = CUDNN_DATA_DOUBLE;
      return true;
    case DType::Float16:  // float accumulate, like torch
      *data = CUDNN_DATA_HALF;
      *compute = CUDNN_DATA_FLOAT;
      return true;
    case DType::BFloat16:
      *data = CUDNN_DATA_BFLOAT16;
      *compute = CUDNN_DATA_FLOAT;
      return true;
    default:
      return false;
  }
}

// Whether cuDNN's convolution (symmetric padding, int sizes) computes
// exactly this geometry: every dim non-empty, and the forward output of
// the x-side with pad on both sides is (oh, ow) (asymmetric "same" pads,
// or an output_padding >= stride, are left to the composition).
bool supported(const ConvDesc& c, DType dt) {
  cudnnDataType_t a, b;
  if (!cudnn_types(dt, &a, &b)) return false;
  const int64_t dims[] = {c.N, c.C, c.H, c.W, c.O, c.G, c.kh, c.kw, c.oh,
                          c.ow};
  for (int64_t v : dims)
    if (v <= 0 || v > INT_MAX) return false;
  const int64_t lim = INT_MAX;
  if (c.N * c.C * c.H * c.W > lim || c.N * c.O * c.oh * c.ow > lim ||
      c.O * (c.C / c.G) * c.kh * c.kw > lim)
    return false;
  const int64_t ext[2] = {c.H, c.W}, out[2] = {c.oh, c.ow};
  const int64_t k[2] = {c.kh, c.kw};
  for (int i = 0; i < 2; ++i) {
    const int64_t span = ext[i] + 2 * c.pad[i] - (c.dil[i] * (k[i] - 1) + 1);
    if (span < 0 || span / c.stride[i] + 1 != out[i]) return false;
  }
  return true;
}

enum class Kind : int64_t { Forward, Data, Filter };

// Cache key: everything the algorithm choice depends on.
using Key = std::array<int64_t, 20>;
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ size_t(v)) * 1099511628211ull;
    return h;
  }
};

Key make_key(Kind kind, DType dt, const ConvDesc& c, bool tf32) {
  return {int64_t(kind), int64_t(dt), c.N,         c.C,
          c.H,           c.W,         c.O,         c.G,
          c.kh,          c.kw,        c.stride[0], c.stride[1],
          c.pad[0],      c.pad[1],    c.dil[0],    c.dil[1],
          c.oh,          c.ow,        int64_t(tf32),
          int64_t(current_device())};
}

struct Choice {
  int algo;  // cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t
  cudnnMathType_t math;
  size_t workspace;
};

std::mutex g_cache_mutex;
std::unordered_map<Key, Choice, KeyHash> g_cache;

// Scratch bounds: algorithms wanting more are skipped.
constexpr size_t kMaxWorkspace = size_t(1) << 30;

// The first (fastest by cuDNN's heuristics) usable result; float32 without
// TF32 accepts only plain-FMA kernels.
template <class Perf>
bool pick(const Perf* perf, int n, bool fma_only, Choice* out) {
  for (int i = 0; i < n; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (perf[i].memory > kMaxWorkspace) continue;
    // Asked under FMA math, a result reporting default math is an FMA
    // kernel too; run it with FMA math so nothing may pick TF32.
    const bool tensor_op = perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
        perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (fma_only && tensor_op) continue;
    out->algo = int(perf[i].algo);
    out->math = fma_only ? CUDNN_FMA_MATH : perf[i].mathType;
    out->workspace = perf[i].memory;
    return true;
  }
  return false;
}

// The cached or newly chosen algorithm for `kind`; false when cuDNN offers
// none (the caller then declines).
bool choose(Kind kind, cudnnHandle_t h, DType dt, const ConvDesc& c,
            const TensorDesc& x, const FilterDesc& w,
            const ConvolutionDesc& conv, const TensorDesc& y,
            const char* what, Choice* out) {
  const bool tf32 = dt == DType::Float32 && cudnn_allow_tf32();
  const bool fma_only = dt == DType::Float32 && !tf32;
  const Key key = make_key(kind, dt, c, tf32);
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) {
      *out = it->second;
      return out->algo >= 0;
    }
  }
  // Ask under the math the caller allows: FMA only for strict float32;
  // default math lets the 16-bit types (and TF32) use tensor cores.
  FASTT_CUDNN_CHECK(
      cudnnSetConvolutionMathType(
          conv.d, fma_only ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH),
      what);
  constexpr int kMaxAlgos = 16;
  int n = 0;
  bool found = false;
  if (kind == Kind::Forward) {
    cudnnConvolutionFwdAlgoPerf_t perf[kMaxAlgos];
    FASTT_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
                          h, x.d, w.d, conv.d, y.d, kMaxAlgos, &n, perf),
                      what);
    found = pick(perf, n, fma_only, out);
  } else if (kind == Kind::Data) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kMaxAlgos];
    FASTT_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                          h, w.d, y.d, conv.d, x.d, kMaxAlgos, &n, perf),
                      what);
    found = pick(perf, n, fma_only, out);
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[kMaxAlgos];
    FASTT_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                          h, x.d, y.d, conv.d, w.d, kMaxAlgos, &n, perf),
                      what);
    found = pick(perf, n, fma_only, out);
  }
  if (found) {
    // The heuristics' `memory` was estimated under the math type they were
    // asked with; ask again under the one the call will run with and take
    // the larger (too small a workspace fails the call on the GPU).
    FASTT_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.d, out->math), what);
    size_t bytes = 0;
    cudnnStatus_t st;
    if (kind == Kind::Forward)
      st = cudnnGetConvolutionForwardWorkspaceSize(
          h, x.d, w.d, conv.d, y.d, cudnnConvolutionFwdAlgo_t(out->algo),
          &bytes);
    else if (kind == Kind::Data)
      st = cudnnGetConvolutionBackwardDataWorkspaceSize(
          h, w.d, y.d, conv.d, x.d,
          cudnnConvolutionBwdDataAlgo_t(out->algo), &bytes);
    else
      st = cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, x.d, y.d, conv.d, w.d,
          cudnnConvolutionBwdFilterAlgo_t(out->algo), &bytes);
    if (st != CUDNN_STATUS_SUCCESS || bytes > kMaxWorkspace)
      found = false;  // decline rather than run it short of scratch
    else if (bytes > out->workspace)
      out->workspace = bytes;
  }
  if (!found) out->algo = -1;  // remembered: this shape declines
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache.emplace(key, *out);
  return found;
}

// Scaling factors are double for double tensors, float otherwise.
struct Scale {
  float f1 = 1.0f, f0 = 0.0f;
  double d1 = 1.0, d0 = 0.0;
  bool dbl;
  explicit Scale(DType dt) : dbl(dt == DType::Float64) {}
  const void* one() const { return dbl ? static_cast<const void*>(&d1) : &f1; }
  const void* zero() const {
    return dbl ? static_cast<const void*>(&d0) : &f0;
  }
};

Tensor workspace(size_t bytes) {
  if (bytes == 0) return Tensor();
  return Tensor::empty({int64_t(bytes)}, DType::UInt8,
                       Device(DeviceType::CUDA, current_device()));
}

void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

// out += bias broadcast over channel dim 1 (`channels` of them).
void add_bias(cudnnHandle_t h, cudnnDataType_t dt, const Scale& s,
              const Tensor& bias, int64_t channels, const TensorDesc& out,
              Tensor& o, const char* what) {
  const Tensor b = bias.contiguous();
  TensorDesc bd(dt, 1, channels, 1, 1, what);
  FASTT_CUDNN_CHECK(cudnnAddTensor(h, s.one(), bd.d, b.data_ptr(), s.one(),
                                   out.d, o.data_ptr()),
                    what);
}

// The descriptors, algorithm, scaling factors and workspace of one cuDNN
// convolution call; `ok` is false when cuDNN has no algorithm for the
// shape (the caller then falls back to im2col + GEMM).
struct Call {
  cudnnDataType_t dt = CUDNN_DATA_FLOAT, ct = CUDNN_DATA_FLOAT;
  cudnnHandle_t h;
  TensorDesc xd, yd;
  FilterDesc wd;
  ConvolutionDesc cd;
  Choice ch{};
  Scale s;
  Tensor ws;
  bool ok = false;

  Call(Kind kind, DType dtype, const ConvDesc& c, const char* what)
      : dt(data_type(dtype, false)),
        ct(data_type(dtype, true)),
        h(get_handle(what)),
        xd(dt, c.N, c.C, c.H, c.W, what),
        yd(dt, c.N, c.O, c.oh, c.ow, what),
        wd(dt, c, what),
        cd(ct, c, what),
        s(dtype) {
    if (!choose(kind, h, dtype, c, xd, wd, cd, yd, what, &ch)) return;
    FASTT_CUDNN_CHECK(cudnnSetConvolutionMathType(cd.d, ch.math), what);
    try {
      ws = workspace(ch.workspace);
    } catch (const OutOfMemoryError&) {
      return;  // no room for this algorithm's scratch: the composition runs
    }
    ok = true;
  }

  static cudnnDataType_t data_type(DType dtype, bool compute) {
    cudnnDataType_t d = CUDNN_DATA_FLOAT, c = CUDNN_DATA_FLOAT;
    cudnn_types(dtype, &d, &c);
    return compute ? c : d;
  }
};

bool forward(const Tensor& x, const Tensor& w, const Tensor* bias,
             const ConvDesc& c, Tensor& y) {
  const char* what = "conv2d (cuDNN forward)";
  if (!supported(c, x.dtype())) return false;
  Call k(Kind::Forward, x.dtype(), c, what);
  if (!k.ok) return false;
  const Tensor xc = x.contiguous(), wc = w.contiguous();
  FASTT_CUDNN_CHECK(
      cudnnConvolutionForward(
          k.h, k.s.one(), k.xd.d, xc.data_ptr(), k.wd.d, wc.data_ptr(),
          k.cd.d, cudnnConvolutionFwdAlgo_t(k.ch.algo), ptr(k.ws),
          k.ch.workspace, k.s.zero(), k.yd.d, y.data_ptr()),
      what);
  if (bias) add_bias(k.h, k.dt, k.s, *bias, c.O, k.yd, y, what);
  return true;
}

bool input_grad(const Tensor& gy, const Tensor& w, const Tensor* bias,
                const ConvDesc& c, Tensor& gx) {
  const char* what = "conv2d (cuDNN backward data)";
  if (!supported(c, gy.dtype())) return false;
  Call k(Kind::Data, gy.dtype(), c, what);
  if (!k.ok) return false;
  const Tensor gyc = gy.contiguous(), wc = w.contiguous();
  FASTT_CUDNN_CHECK(
      cudnnConvolutionBackwardData(
          k.h, k.s.one(), k.wd.d, wc.data_ptr(), k.yd.d, gyc.data_ptr(),
          k.cd.d, cudnnConvolutionBwdDataAlgo_t(k.ch.algo), ptr(k.ws),
          k.ch.workspace, k.s.zero(), k.xd.d, gx.data_ptr()),
      what);
  if (bias) add_bias(k.h, k.dt, k.s, *bias, c.C, k.xd, gx, what);
  return true;
}

bool weight_grad(const Tensor& gy, const Tensor& x, const ConvDesc& c,
                 Tensor& gw) {
  const char* what = "conv2d (cuDNN backward filter)";
  if (!supported(c, x.dtype())) return false;
  Call k(Kind::Filter, x.dtype(), c, what);
  if (!k.ok) return false;
  const Tensor xc = x.contiguous(), gyc = gy.contiguous();
  FASTT_CUDNN_CHECK(
      cudnnConvolutionBackwardFilter(
          k.h, k.s.one(), k.xd.d, xc.data_ptr(), k.yd.d, gyc.data_ptr(),
          k.cd.d, cudnnConvolutionBwdFilterAlgo_t(k.ch.algo), ptr(k.ws),
          k.ch.workspace, k.s.zero(), k.wd.d, gw.data_ptr()),
      what);
  return true;
}

}  // namespace

void register_cudnn_conv() {
  g_conv_hooks.forward = &forward;
  g_conv_hooks.input_grad = &input_grad;
  g_conv_hooks.weight_grad = &weight_grad;
}

#endif  // FASTT_WITH_CUDNN

}  // namespace cuda
}  // namespace fastt
