// Autocast state, casts and the weight-cast cache (csrc/autocast.h).
#include "csrc/autocast.h"

#include <unordered_map>
#include <utility>

#include "csrc/autograd.h"

namespace fastt {
namespace autocast {

FASTT_TLS_IE thread_local bool t_active = false;

namespace {
struct State {
  bool enabled[kNumDeviceTypes] = {false, false};
  DType dtype[kNumDeviceTypes] = {DType::BFloat16, DType::Float16};
  bool cache = true;
};
State& state() {
  thread_local State s;
  return s;
}
// Casts of weights: the source (kept so its address is not reused) and
// its cast, per target dtype.
std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>>& cache() {
  thread_local std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>>
      c;
  return c;
}
void refresh_active() {
  const State& s = state();
  bool any = false;
  for (bool e : s.enabled) any = any || e;
  t_active = any;
}
bool is_low(DType d) { return d == DType::Float16 || d == DType::BFloat16; }
}  // namespace

bool is_enabled(DeviceType d) { return state().enabled[int(d)]; }
void set_enabled(DeviceType d, bool on) {
  state().enabled[int(d)] = on;
  refresh_active();
}
DType dtype(DeviceType d) { return state().dtype[int(d)]; }
void set_dtype(DeviceType d, DType dt) {
  FASTT_CHECK(is_low(dt), ValueError,
              "autocast: the dtype must be float16 or bfloat16, got {}",
              dtype_name(dt));
  state().dtype[int(d)] = dt;
}
bool cache_enabled() { return state().cache; }
void set_cache_enabled(bool on) { state().cache = on; }
void clear_cache() { cache().clear(); }

bool applies(Policy policy, const Tensor& t) {
  if (!t.defined()) return false;
  const DeviceType d = t.device().type;
  if (!state().enabled[int(d)]) return false;
  if ((policy == Policy::CudaFp32 || policy == Policy::CudaLower) &&
      d != DeviceType::CUDA)
    return false;
  return true;
}

Tensor cast(Policy policy, DeviceType d, const Tensor& t) {
  if (!t.defined() || !is_floating(t.dtype()) || t.device().type != d)
    return t;
  DType to;
  if (policy == Policy::Lower || policy == Policy::CudaLower) {
    if (t.dtype() == DType::Float64) return t;  // torch leaves double alone
    to = state().dtype[int(d)];
  } else {
    if (!is_low(t.dtype())) return t;
    to = DType::Float32;
  }
  if (t.dtype() == to) return t;
  // Weights (leaves that require grad) are cast once per region.
  const bool cacheable = state().cache && t.impl()->requires_grad &&
                         t.impl()->grad_fn == nullptr &&
                         autograd::grad_enabled();
  if (cacheable) {
    auto it = cache().find(t.impl());
    if (it != cache().end() && it->second.second.dtype() == to &&
        it->second.first.impl() == t.impl())
      return it->second.second;
  }
  Tensor r = t.to(to);
  if (cacheable) cache()[t.impl()] = {t, r};
  return r;
}

}  // namespace autocast
}  // namespace fastt
