// CPU emulation of the CUB device algorithms fastt calls, with std::
// algorithms. They keep CUB's two-call protocol (a null temp pointer asks
// for temp_bytes; a second call with that much storage runs) and check the
// arguments the way a wrong call would fail on the GPU. Radix sorts order
// keys exactly like CUB (bit range, signed/float twiddling).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <type_traits>
#include <vector>

namespace emu {
// Reports a bad CUB call: the call returns cudaErrorInvalidValue and
// cudaGetErrorString says why.
cudaError_t cub_fail(const char* what);
// Whether [p, p+n) lies in emulated device memory.
bool is_device_range(const void* p, size_t n);
constexpr size_t kCubTempBytes = 256;
// Counts a call of CUB algorithm `name` (a string literal; both the
// temp-storage query and the run count).
void count_cub(const char* name);
// Null mode (emu_device.h): after the query, a call does nothing.
extern bool g_null_kernels;
// Stream capture (emu_device.h): a call on the capturing stream is
// recorded to run when the graph is launched.
extern std::atomic<bool> g_capture_active;
bool defer(cudaStream_t stream, std::function<void()> op);
}  // namespace emu

namespace cub {
namespace detail_emu {

// CUB's radix key: unsigned bits ordered like the key type.
template <class K>
uint64_t twiddle(K k) {
  if constexpr (std::is_floating_point<K>::value) {
    using U = std::conditional_t<sizeof(K) == 4, uint32_t, uint64_t>;
    U u;
    std::memcpy(&u, &k, sizeof(u));
    constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
    return (u & sign) ? U(~u) : U(u | sign);
  } else if constexpr (std::is_same<K, bool>::value) {
    return k ? 1 : 0;
  } else {
    using U = std::make_unsigned_t<K>;
    U u = static_cast<U>(k);
    if (std::is_signed<K>::value) u ^= U(U(1) << (sizeof(U) * 8 - 1));
    return uint64_t(u);
  }
}

template <class K>
uint64_t radix_bits(K k, int begin_bit, int end_bit) {
  uint64_t t = twiddle(k);
  const int w = end_bit - begin_bit;
  t >>= begin_bit;
  return w >= 64 ? t : (t & ((uint64_t(1) << w) - 1));
}

inline bool query(void* temp, size_t& bytes) {
  if (temp) return false;
  bytes = emu::kCubTempBytes;
  return true;
}

template <class K, class V, class N>
cudaError_t sort_pairs(const K* kin, K* kout, const V* vin, V* vout,
                       int64_t lo, int64_t hi, int begin_bit, int end_bit) {
  std::vector<int64_t> o(size_t(hi - lo));
  std::iota(o.begin(), o.end(), lo);
  std::stable_sort(o.begin(), o.end(), [&](int64_t a, int64_t b) {
    return radix_bits(kin[a], begin_bit, end_bit) <
           radix_bits(kin[b], begin_bit, end_bit);
  });
  // Through temporaries: CUB allows no aliasing of in and out, but a
  // caller that aliases them must not get a silently right answer.
  std::vector<K> ks(o.size());
  std::vector<V> vs(o.size());
  for (size_t i = 0; i < o.size(); ++i) {
    ks[i] = kin[o[i]];
    vs[i] = vin[o[i]];
  }
  for (size_t i = 0; i < o.size(); ++i) {
    kout[lo + int64_t(i)] = ks[i];
    vout[lo + int64_t(i)] = vs[i];
  }
  return cudaSuccess;
}

}  // namespace detail_emu

struct DeviceRadixSort {
  template <class K, class V, class N>
  static cudaError_t SortPairs(void* temp, size_t& bytes, const K* kin,
                               K* kout, const V* vin, V* vout, N num_items,
                               int begin_bit = 0,
                               int end_bit = int(sizeof(K) * 8),
                               cudaStream_t stream = nullptr) {
    emu::count_cub("DeviceRadixSort::SortPairs");
    if (detail_emu::query(temp, bytes)) return cudaSuccess;
    if (emu::g_null_kernels) return cudaSuccess;
    if (bytes < emu::kCubTempBytes)
      return emu::cub_fail("DeviceRadixSort::SortPairs: temp_bytes shrank");
    if (begin_bit < 0 || end_bit > int(sizeof(K) * 8) || begin_bit > end_bit)
      return emu::cub_fail("DeviceRadixSort::SortPairs: bad bit range");
    const int64_t n = int64_t(num_items);
    if (n < 0) return emu::cub_fail("DeviceRadixSort::SortPairs: n < 0");
    if (n == 0) return cudaSuccess;
    if (!emu::is_device_range(kin, size_t(n) * sizeof(K)) ||
        !emu::is_device_range(kout, size_t(n) * sizeof(K)) ||
        !emu::is_device_range(vin, size_t(n) * sizeof(V)) ||
        !emu::is_device_range(vout, size_t(n) * sizeof(V)) ||
        !emu::is_device_range(temp, bytes))
      return emu::cub_fail(
          "DeviceRadixSort::SortPairs: an array is not device memory of "
          "num_items elements");
    if (emu::g_capture_active && emu::defer(stream, [=] {
          detail_emu::sort_pairs<K, V, N>(kin, kout, vin, vout, 0, n,
                                          begin_bit, end_bit);
        }))
      return cudaSuccess;
    return detail_emu::sort_pairs<K, V, N>(kin, kout, vin, vout, 0, n,
                                           begin_bit, end_bit);
  }
};

struct DeviceSegmentedSort {
  template <class K, class V, class N, class S, class B, class E>
  static cudaError_t StableSortPairs(void* temp, size_t& bytes, const K* kin,
                                     K* kout, const V* vin, V* vout,
                                     N num_items, S num_segments, B begin,
                                     E end, cudaStream_t stream = nullptr) {
    emu::count_cub("DeviceSegmentedSort::StableSortPairs");
    if (detail_emu::query(temp, bytes)) return cudaSuccess;
    if (emu::g_null_kernels) return cudaSuccess;
    if (bytes < emu::kCubTempBytes)
      return emu::cub_fail("DeviceSegmentedSort: temp_bytes shrank");
    const int64_t n = int64_t(num_items), segs = int64_t(num_segments);
    if (n < 0 || segs < 0)
      return emu::cub_fail("DeviceSegmentedSort: negative sizes");
    if (!emu::is_device_range(kin, size_t(n) * sizeof(K)) ||
        !emu::is_device_range(kout, size_t(n) * sizeof(K)) ||
        !emu::is_device_range(vin, size_t(n) * sizeof(V)) ||
        !emu::is_device_range(vout, size_t(n) * sizeof(V)) ||
        !emu::is_device_range(temp, bytes))
      return emu::cub_fail(
          "DeviceSegmentedSort: an array is not device memory of num_items "
          "elements");
    auto run = [=]() -> cudaError_t {
      for (int64_t s = 0; s < segs; ++s) {
        const int64_t lo = int64_t(begin[s]), hi = int64_t(end[s]);
        if (hi <= lo) continue;  // CUB: empty segment
        if (lo < 0 || hi > n)
          return emu::cub_fail("DeviceSegmentedSort: segment out of range");
        detail_emu::sort_pairs<K, V, N>(kin, kout, vin, vout, lo, hi, 0,
                                        int(sizeof(K) * 8));
      }
      return cudaSuccess;
    };
    if (emu::g_capture_active && emu::defer(stream, [run] { run(); }))
      return cudaSuccess;
    return run();
  }
};

struct DeviceScan {
  // CUB accumulates in the input's value type promoted by operator+
  // (e.g. int for uint8 input), not in the output type.
  template <class I, class O, class N>
  static cudaError_t InclusiveSum(void* temp, size_t& bytes, I in, O out,
                                  N num_items,
                                  cudaStream_t stream = nullptr) {
    emu::count_cub("DeviceScan::InclusiveSum");
    if (detail_emu::query(temp, bytes)) return cudaSuccess;
    if (emu::g_null_kernels) return cudaSuccess;
    using T = std::decay_t<decltype(in[0])>;
    using Acc = decltype(T() + T());
    const int64_t n = int64_t(num_items);
    if (n < 0) return emu::cub_fail("DeviceScan::InclusiveSum: n < 0");
    auto run = [=]() mutable {
      Acc acc = Acc();
      for (int64_t i = 0; i < n; ++i) {
        acc = i == 0 ? Acc(in[i]) : Acc(acc + in[i]);
        out[i] = acc;
      }
    };
    if (!(emu::g_capture_active && emu::defer(stream, run))) run();
    return cudaSuccess;
  }
  template <class I, class O, class N>
  static cudaError_t ExclusiveSum(void* temp, size_t& bytes, I in, O out,
                                  N num_items,
                                  cudaStream_t stream = nullptr) {
    emu::count_cub("DeviceScan::ExclusiveSum");
    if (detail_emu::query(temp, bytes)) return cudaSuccess;
    if (emu::g_null_kernels) return cudaSuccess;
    using T = std::decay_t<decltype(in[0])>;
    using Acc = decltype(T() + T());
    const int64_t n = int64_t(num_items);
    if (n < 0) return emu::cub_fail("DeviceScan::ExclusiveSum: n < 0");
    auto run = [=]() mutable {
      Acc acc = Acc();
      for (int64_t i = 0; i < n; ++i) {
        const Acc v = Acc(in[i]);
        out[i] = acc;
        acc = Acc(acc + v);
      }
    };
    if (!(emu::g_capture_active && emu::defer(stream, run))) run();
    return cudaSuccess;
  }
};

}  // namespace cub
