// Factory and random kernels: arange, linspace, eye, and the Philox-driven
// uniform, normal, randint, randperm, bernoulli. The op layer
// (csrc/ops/factory.cpp) validates everything and reserves the counter
// range; a random kernel maps element i (in the output's logical row-major
// order) to Philox block offset + i / K, so results never depend on the
// thread count. To add a random op: a block map in kernels/philox.h, a
// kernel here built on counter_loop, a registration line at the bottom.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/loop.h"
#include "kernels/factory_common.h"
#include "kernels/philox.h"

namespace fastt {
namespace {
using namespace cpu;
using namespace factory;

// Philox costs more per element than a copy, so threads pay off sooner.
constexpr int64_t kRandomGrain = 8192;

// Runs elem(value, ptrs, strides, i) over the loop in args (N operands, the
// output first), where `value` is slot pos % K of the block that
// make_block(pos / K, vals) fills for linear position pos.
template <int N, int K, class V, class MakeBlock, class Elem>
void counter_loop(const KernelArgs& a, MakeBlock make_block, Elem elem) {
  parallel_for(0, a.numel, kRandomGrain, [&](int64_t b, int64_t e) {
    int64_t pos = b;
    int64_t cached = -1;
    V vals[K];
    strided_range<N>(a, b, e, [&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i, ++pos) {
        const int64_t blk = pos / K;
        if (blk != cached) {
          make_block(uint64_t(blk), vals);
          cached = blk;
        }
        elem(vals[pos - blk * K], p, s, i);
      }
    });
  });
}

// ---------------------------------------------------------- factories --
// out (contiguous) = start + step * i. Integers: i0 start, i1 step;
// floats: f0 start, f1 step.
template <class T>
struct ArangeK {
  static void run(KernelArgs& a) {
    using Acc = arange_acc_t<T>;
    T* o = static_cast<T*>(a.out->data_ptr());
    Acc start, step;
    if constexpr (std::is_integral<T>::value) {
      start = a.i0;
      step = a.i1;
    } else {
      start = Acc(a.f0);
      step = Acc(a.f1);
    }
    parallel_for(0, a.out->numel(), kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        o[i] = static_cast<T>(start + step * Acc(i));
    });
  }
};

// torch's symmetric linspace: the first half counts up from start, the
// second half down from end, so both endpoints are exact. f0/f1 start/end
// (i0/i1 for integer dtypes), the output's numel is the step count (>= 2).
template <class T>
struct LinspaceK {
  static void run(KernelArgs& a) {
    T* o = static_cast<T*>(a.out->data_ptr());
    const int64_t steps = a.out->numel();
    const int64_t halfway = steps / 2;
    if constexpr (std::is_integral<T>::value) {
      const T start = static_cast<T>(a.i0), end = static_cast<T>(a.i1);
      const double step = (double(end) - double(start)) / double(steps - 1);
      parallel_for(0, steps, kGrainSize, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          o[i] = static_cast<T>(i < halfway
                                    ? start + step * double(i)
                                    : end - step * double(steps - i - 1));
      });
    } else {
      // 16-bit types round after every operation (the index too), as
      // torch's Half/BFloat16 arithmetic does; float32/64 are exact types
      using M = opmath_t<T>;
      const auto r = [](M v) { return M(static_cast<T>(v)); };
      const M start = r(M(a.f0)), end = r(M(a.f1));
      const M step = r(r(end - start) / r(M(steps - 1)));
      parallel_for(0, steps, kGrainSize, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
          o[i] = static_cast<T>(
              i < halfway ? start + r(step * r(M(i)))
                          : end - r(step * r(M(steps - i - 1))));
      });
    }
  }
};

// out (contiguous n x m) = identity: zeros (all-zero bits for every dtype)
// and ones on the diagonal.
template <class T>
struct EyeK {
  static void run(KernelArgs& a) {
    T* o = static_cast<T*>(a.out->data_ptr());
    const int64_t n = a.out->size(0), m = a.out->size(1);
    std::memset(static_cast<void*>(o), 0, size_t(n * m) * sizeof(T));
    const int64_t k = n < m ? n : m;
    for (int64_t i = 0; i < k; ++i) o[i * m + i] = static_cast<T>(1);
  }
};

// ------------------------------------------------------------- random --
// Loop over the output; i0 seed, i1 offset (uint64 bit patterns).

// f0 from, f1 to (from <= to, to - from finite in T).
template <class T>
struct UniformK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    constexpr int K = philox::values_per_block<M>();
    const uint64_t seed = arg_u64(a.i0), offset = arg_u64(a.i1);
    const double from = a.f0, to = a.f1;
    const M lo = M(from), range = M(to - from);
    const bool clamp = to > from;
    const T hi = largest_below<T>(to);
    counter_loop<1, K, M>(
        a,
        [&](uint64_t blk, M* vals) {
          philox::uniform_block<M>(philox::block(seed, offset + blk), vals);
        },
        [&](M u, char** p, const int64_t* s, int64_t i) {
          T v = static_cast<T>(lo + u * range);
          if (clamp && !(static_cast<double>(v) < to)) v = hi;
          *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
        });
  }
};

// f0 mean, f1 std (>= 0).
template <class T>
struct NormalK {
  static void run(KernelArgs& a) {
    using M = opmath_t<T>;
    constexpr int K = philox::values_per_block<M>();
    const uint64_t seed = arg_u64(a.i0), offset = arg_u64(a.i1);
    const M mean = M(a.f0), std = M(a.f1);
    counter_loop<1, K, M>(
        a,
        [&](uint64_t blk, M* vals) {
          philox::normal_block<M>(philox::block(seed, offset + blk), vals);
        },
        [&](M z, char** p, const int64_t* s, int64_t i) {
          *reinterpret_cast<T*>(p[0] + i * s[0]) =
              static_cast<T>(mean + std * z);
        });
  }
};

// out = low + r % range with r 64 random bits; s0 low (int), i2 range > 0
// (uint64 bit pattern). The modulo bias is at most range / 2^64, below
// anything a test of up to 2^40 draws could see.
template <class T>
struct RandintK {
  static void run(KernelArgs& a) {
    const uint64_t seed = arg_u64(a.i0), offset = arg_u64(a.i1);
    const uint64_t low = arg_u64(a.s0.to<int64_t>()), range = arg_u64(a.i2);
    counter_loop<1, 2, uint64_t>(
        a,
        [&](uint64_t blk, uint64_t* vals) {
          philox::bits64_block(philox::block(seed, offset + blk), vals);
        },
        [&](uint64_t r, char** p, const int64_t* s, int64_t i) {
          int64_t v;
          uint64_t u = low + r % range;
          std::memcpy(&v, &u, sizeof(v));
          T out;
          if constexpr (std::is_same<T, bool>::value) out = v != 0;
          else if constexpr (std::is_integral<T>::value)
            out = static_cast<T>(v);
          else out = static_cast<T>(static_cast<opmath_t<T>>(v));
          *reinterpret_cast<T*>(p[0] + i * s[0]) = out;
        });
  }
};

// out (contiguous) = a random permutation of 0..n-1 (randperm_fill).
template <class T>
struct RandpermK {
  static void run(KernelArgs& a) {
    randperm_fill(static_cast<T*>(a.out->data_ptr()), a.out->numel(),
                  arg_u64(a.i0), arg_u64(a.i1));
  }
};

// out = u < p ? 1 : 0 with u a 53-bit uniform. nops == 2: p is operand 1
// (a floating tensor broadcast to out), else p is f0. Writes i2 = 1 when a
// p outside [0, 1] was seen (kernels must not throw; the op layer does).
template <class T>
struct BernoulliK {
  template <class P>
  static void run_with(KernelArgs& a) {
    const uint64_t seed = arg_u64(a.i0), offset = arg_u64(a.i1);
    const double p_scalar = a.f0;
    int64_t* bad_flag = &a.i2;
    auto make = [&](uint64_t blk, double* vals) {
      philox::uniform_block<double>(philox::block(seed, offset + blk), vals);
    };
    auto put = [](char* dst, bool hit) {
      *reinterpret_cast<T*>(dst) = static_cast<T>(hit ? 1 : 0);
    };
    if constexpr (std::is_same<P, void>::value) {
      counter_loop<1, 2, double>(
          a, make, [&](double u, char** p, const int64_t* s, int64_t i) {
            put(p[0] + i * s[0], u < p_scalar);
          });
    } else {
      counter_loop<2, 2, double>(
          a, make, [&](double u, char** p, const int64_t* s, int64_t i) {
            const double prob = double(load<P>(p[1] + i * s[1]));
            if (!(prob >= 0.0 && prob <= 1.0))
              __atomic_store_n(bad_flag, int64_t(1), __ATOMIC_RELAXED);
            put(p[0] + i * s[0], u < prob);
          });
    }
  }
  static void run(KernelArgs& a) {
    if (a.nops == 1) return run_with<void>(a);
    switch (a.dtypes[1]) {
      case DType::Float16: return run_with<Half>(a);
      case DType::BFloat16: return run_with<BFloat16>(a);
      case DType::Float32: return run_with<float>(a);
      default: return run_with<double>(a);
    }
  }
};

}  // namespace

void register_factory_kernels() {
#define FASTT_KERNELS_factory
#include "kernels/kernels.def"
}

}  // namespace fastt
