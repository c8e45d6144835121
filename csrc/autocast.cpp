// Autocast state, casts and the weight-cast cache (csrc/autocast.h).
#include "csrc/autocast.h"

#include "csrc/autograd.h"
#include "csrc/thread_state.h"

namespace fastt {
namespace autocast {

FASTT_TLS_IE thread_local bool t_active = false;

namespace {
ThreadState& state() { return thread_state(); }
void refresh_active() {
  bool any = false;
  for (bool e : state().autocast_enabled) any = any || e;
  t_active = any;
}
bool is_low(DType d) { return d == DType::Float16 || d == DType::BFloat16; }
}  // namespace

bool is_enabled(DeviceType d) { return state().autocast_enabled[int(d)]; }
void set_enabled(DeviceType d, bool on) {
  state().autocast_enabled[int(d)] = on;
  refresh_active();
}
DType dtype(DeviceType d) { return state().autocast_dtype[int(d)]; }
void set_dtype(DeviceType d, DType dt) {
  FASTT_CHECK(is_low(dt), ValueError,
              "autocast: the dtype must be float16 or bfloat16, got {}",
              dtype_name(dt));
  state().autocast_dtype[int(d)] = dt;
}
bool cache_enabled() { return state().autocast_cache; }
void set_cache_enabled(bool on) { state().autocast_cache = on; }
void clear_cache() { state().autocast_casts.clear(); }

bool applies(Policy policy, const Tensor& t) {
  if (!t.defined()) return false;
  const DeviceType d = t.device().type;
  if (!state().autocast_enabled[int(d)]) return false;
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
    to = state().autocast_dtype[int(d)];
  } else {
    if (!is_low(t.dtype())) return t;
    to = DType::Float32;
  }
  if (t.dtype() == to) return t;
  // Weights (leaves that require grad) are cast once per region.
  const bool cacheable = state().autocast_cache && t.impl()->requires_grad &&
                         t.impl()->grad_fn == nullptr &&
                         autograd::grad_enabled();
  if (cacheable) {
    auto& cache = state().autocast_casts;
    auto it = cache.find(t.impl());
    if (it != cache.end() && it->second.second.dtype() == to &&
        it->second.first.impl() == t.impl())
      return it->second.second;
  }
  Tensor r = t.to(to);
  if (cacheable) state().autocast_casts[t.impl()] = {t, r};
  return r;
}

}  // namespace autocast
}  // namespace fastt
