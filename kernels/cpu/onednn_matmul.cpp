// bfloat16 matrix products through oneDNN's matmul primitive (what torch's
// CPU bf16 matmul uses): on a processor with AVX512-BF16 or AMX, oneDNN's
// brgemm kernels multiply the bf16 operands as stored (vdpbf16ps), where
// fastt's own path converts both to float32 for sgemm first. One primitive
// per geometry (sizes and strides), cached; a geometry oneDNN serves only
// with its reference kernel is cached as rejected and keeps fastt's path.
#include "kernels/cpu/onednn_matmul.h"

#include "kernels/cpu/onednn_conv.h"

#if defined(FASTT_HAS_DNNL)
#include <oneapi/dnnl/dnnl.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace fastt {
namespace {

using dnnl::memory;

// Multiply-adds below which the conversions + sgemm path is faster: a
// oneDNN call costs ~6 us before any work (one thread, median us, oneDNN
// vs own: 32x64x64 7.9 vs 6.8, 64^3 9.5 vs 9.9, 64x128x64 13.6 vs 17.4;
// python -m bench.bf16_gemm has more).
constexpr int64_t kMinMacs = int64_t(1) << 18;

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

bool has_bf16_isa() {
  static const bool yes = [] {
    const unsigned want = unsigned(dnnl::cpu_isa::avx512_core_bf16);
    return (unsigned(dnnl::get_effective_cpu_isa()) & want) == want;
  }();
  return yes;
}

// The geometry: sizes, strides, and C's dtype (the pointers left out).
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, bool, int64_t,
                       int64_t, int64_t>;

Key key_of(const Bf16Matmul& m) {
  const bool one = m.batch == 1;  // batch strides do not matter then
  return Key(m.batch, m.M, m.N, m.K, one ? 0 : m.sab, m.sam, m.sak,
             one ? 0 : m.sbb, m.sbk, m.sbn, m.c_bf16, one ? 0 : m.scb, m.scm,
             m.scn);
}

struct Descs {
  memory::desc a, b, c;
};

Descs descs_of(const Key& k) {
  const auto [batch, M, N, K, sab, sam, sak, sbb, sbk, sbn, c_bf16, scb, scm,
              scn] = k;
  const auto bf16 = memory::data_type::bf16;
  const auto ct = c_bf16 ? bf16 : memory::data_type::f32;
  if (batch == 1)
    return {memory::desc({M, K}, bf16, {sam, sak}),
            memory::desc({K, N}, bf16, {sbk, sbn}),
            memory::desc({M, N}, ct, {scm, scn})};
  return {memory::desc({batch, M, K}, bf16, {sab, sam, sak}),
          memory::desc({batch, K, N}, bf16, {sbb, sbk, sbn}),
          memory::desc({batch, M, N}, ct, {scb, scm, scn})};
}

// A null primitive: oneDNN has only its reference kernel for this layout.
std::shared_ptr<const dnnl::matmul> build(const Key& k) {
  const Descs d = descs_of(k);
  try {
#if DNNL_VERSION_MAJOR >= 3
    dnnl::matmul::primitive_desc pd(eng(), d.a, d.b, d.c);
#else
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(d.a, d.b, d.c),
                                    eng());
#endif
    if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return nullptr;
    return std::make_shared<const dnnl::matmul>(pd);
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

std::mutex g_mu;
std::map<Key, std::shared_ptr<const dnnl::matmul>> g_cache;
std::atomic<int64_t> g_calls{0};

std::shared_ptr<const dnnl::matmul> get(const Key& key) {
  {
    std::lock_guard<std::mutex> l(g_mu);
    auto it = g_cache.find(key);
    if (it != g_cache.end()) return it->second;
  }
  auto p = build(key);
  std::lock_guard<std::mutex> l(g_mu);
  if (g_cache.size() > 256) g_cache.clear();  // a bound on shapes held
  return g_cache.emplace(key, std::move(p)).first->second;
}

}  // namespace

bool onednn_bf16_matmul(const Bf16Matmul& m) {
  if (m.batch * m.M * m.N * m.K < kMinMacs || !onednn_enabled() ||
      !has_bf16_isa() || (m.sak != 1 && m.sam != 1) ||
      (m.sbn != 1 && m.sbk != 1) || (m.scn != 1 && m.scm != 1))
    return false;
  const Key key = key_of(m);
  const auto p = get(key);
  if (!p) return false;
  const Descs d = descs_of(key);
  memory am(d.a, eng(), const_cast<void*>(m.a));
  memory bm(d.b, eng(), const_cast<void*>(m.b));
  memory cm(d.c, eng(), m.c);
  // A stream per call, not a thread_local one: fastt._C's static TLS
  // block has a budget (tests/python/test_static_tls.py).
  dnnl::stream s(eng());
  p->execute(s, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm},
                 {DNNL_ARG_DST, cm}});
  s.wait();
  g_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool onednn_bf16_available() { return has_bf16_isa(); }
int64_t onednn_bf16_matmul_calls() { return g_calls.load(); }

}  // namespace fastt

#else  // !FASTT_HAS_DNNL

namespace fastt {
bool onednn_bf16_matmul(const Bf16Matmul&) { return false; }
bool onednn_bf16_available() { return false; }
int64_t onednn_bf16_matmul_calls() { return 0; }
}  // namespace fastt

#endif
