// Unary elementwise kernels: the unary rows of csrc/ops/elementwise.def
// expanded through this file's loop policy (UnaryAdapter), math in
// kernels/functors.h. Float-only ops see integer inputs already promoted
// by the op layer (csrc/ops/elementwise.cpp).
#include "kernels/cpu/vec_exp.h"  // first: it sets the file's FP options

#include <algorithm>

#include "csrc/mutation.h"
#include "kernels/cpu/loop.h"
#include "kernels/cpu/vec_math_call.h"
#include "kernels/functors.h"

namespace fastt {
namespace {
using namespace cpu;
namespace F = functors;

// float32 exp, sigmoid and silu over dense ranges: std::exp is an opaque
// libm call that keeps the loop scalar; vec_exp is plain arithmetic, so the
// loop vectorizes (AVX2/AVX-512 clones picked at load time). About 1 ulp.
// expm1, tanh, erf and both GELUs likewise through vec_expm1 / vec_tanh /
// vec_erf / vec_normal_cdf.
enum class ExpKind { Exp, Expm1, Sigmoid, Silu, Tanh, Erf, Gelu, GeluTanh };
template <ExpKind K>
FASTT_VEC_CLONES void exp_range(const float* x, float* o, int64_t n) {
#if defined(__AVX512F__)
  // (the AVX-512 level's build: vec_exp.h's 16-lane exp, tanh and erf)
  if constexpr (K == ExpKind::Exp || K == ExpKind::Tanh ||
                K == ExpKind::Erf) {
    const auto f = [](__m512 v) {
      if constexpr (K == ExpKind::Exp) return vec_exp16(v);
      else if constexpr (K == ExpKind::Tanh) return vec_tanh16(v);
      else return vec_erf16(v);
    };
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
      _mm512_storeu_ps(o + i, f(_mm512_loadu_ps(x + i)));
    if (i < n) {
      const __mmask16 m = __mmask16((1u << (n - i)) - 1);
      _mm512_mask_storeu_ps(o + i, m, f(_mm512_maskz_loadu_ps(m, x + i)));
    }
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if constexpr (K == ExpKind::Exp) {
      o[i] = vec_exp(v);
    } else if constexpr (K == ExpKind::Expm1) {
      o[i] = vec_expm1(v);
    } else if constexpr (K == ExpKind::Sigmoid) {
      o[i] = vec_sigmoid(v);
    } else if constexpr (K == ExpKind::Silu) {
      o[i] = v * vec_sigmoid(v);
    } else if constexpr (K == ExpKind::Tanh) {
      o[i] = vec_tanh(v);
    } else if constexpr (K == ExpKind::Erf) {
      o[i] = vec_erf(v);
    } else if constexpr (K == ExpKind::Gelu) {
      o[i] = v * vec_normal_cdf(v);
    } else {
      const float k = 0.79788456080286535588f;
      o[i] = v * vec_sigmoid(2.0f * k * (v + 0.044715f * v * v * v));
    }
  }
}
// Functors with a vectorized float32 range (exp_range) for dense inputs.
template <class Fn> struct VecExp { static constexpr bool kHas = false; };
template <> struct VecExp<F::Exp> {
  static constexpr bool kHas = true;
  static constexpr ExpKind kKind = ExpKind::Exp;
};
template <> struct VecExp<F::Expm1> {
  static constexpr bool kHas = true;
  static constexpr ExpKind kKind = ExpKind::Expm1;
};
template <> struct VecExp<F::Sigmoid> {
  static constexpr bool kHas = true;
  static constexpr ExpKind kKind = ExpKind::Sigmoid;
};
template <> struct VecExp<F::Silu> {
  static constexpr bool kHas = true;
  static constexpr ExpKind kKind = ExpKind::Silu;
};
template <> struct VecExp<F::Tanh> {
  static constexpr bool kHas = true;
  static constexpr ExpKind kKind = ExpKind::Tanh;
};
template <> struct VecExp<F::Erf> {
  static constexpr bool kHas = true;
  static constexpr ExpKind kKind = ExpKind::Erf;
};
template <> struct VecExp<F::Gelu> {
  static constexpr bool kHas = true;
  static constexpr ExpKind kKind = ExpKind::Gelu;
};
template <> struct VecExp<F::GeluTanh> {
  static constexpr bool kHas = true;
  static constexpr ExpKind kKind = ExpKind::GeluTanh;
};

// Plain-arithmetic functors (one or two vector instructions each): dense
// float/double ranges run in an AVX2/AVX-512 clone instead of the SSE2
// baseline loop (1M float32 1/x: 215 -> ~110 us, sqrt/rsqrt likewise).
template <class Fn> struct VecArith { static constexpr bool kHas = false; };
#define FASTT_VEC_ARITH(Fn) \
  template <> struct VecArith<F::Fn> { static constexpr bool kHas = true; };
FASTT_VEC_ARITH(Sqrt)
FASTT_VEC_ARITH(Rsqrt)
FASTT_VEC_ARITH(Reciprocal)
FASTT_VEC_ARITH(Square)
FASTT_VEC_ARITH(Neg)
FASTT_VEC_ARITH(Abs)
FASTT_VEC_ARITH(Relu)
#undef FASTT_VEC_ARITH
// sqrt through the builtin: <cmath>'s std::sqrt(float) is compiled before
// vec_exp.h's optimize pragma, so it does not inline into these loops.
template <class T> inline T builtin_sqrt(T v) {
  if constexpr (std::is_same<T, float>::value) return __builtin_sqrtf(v);
  else return __builtin_sqrt(v);
}
// (`stream`: past the cache, written around it; kernels/cpu/loop.h)
template <class Fn, class T>
FASTT_VEC_CLONES void arith_range(const T* x, T* o, int64_t n, bool stream) {
  const Fn f{};
  dense_out(o, n, stream, [=](int64_t i) -> T {
    if constexpr (std::is_same<Fn, F::Sqrt>::value) return builtin_sqrt(x[i]);
    else if constexpr (std::is_same<Fn, F::Rsqrt>::value)
      return T(1) / builtin_sqrt(x[i]);
    else return f(x[i]);
  });
}

// Functors with a SLEEF vector function (kernels/cpu/vec_math.def).
template <class Fn> struct VecMathOf { static constexpr int kIdx = -1; };
#define FASTT_VM1(functor, ...)                        \
  template <> struct VecMathOf<F::functor> {           \
    static constexpr int kIdx = vec_math::k##functor; \
  };
#define FASTT_VM2(functor, name, ulp)
#include "kernels/cpu/vec_math.def"
#undef FASTT_VM1
#undef FASTT_VM2

// A dense range through the vector math table (kernels/cpu/vec_math_call.h:
// half and bfloat16 staged through float32, as torch's Vectorized<Half>
// computes in float); the mutation hook lives here, in a .cpp.
template <class T>
void vec_math_range(int idx, const T* x, T* o, int64_t n) {
  if (FASTT_MUTANT(VecMathSkipLast) && n > 0) --n;
  vec_math::unary_range(idx, x, o, n);
}

// The CPU loop policy for the unary rows of csrc/ops/elementwise.def.
template <Op kOp, class Fn, bool kBoolOut>
struct UnaryAdapter {
  template <class T>
  struct K {
    static void run(KernelArgs& a) {
      using O = std::conditional_t<kBoolOut, bool, T>;
      if constexpr (VecMathOf<Fn>::kIdx >= 0 && !kBoolOut &&
                    !kIsComplex<T> &&
                    !(VecExp<Fn>::kHas && std::is_same<T, float>::value)) {
        if (a.contiguous && vec_math::g_table) {
          T* o = reinterpret_cast<T*>(a.data[0]);
          const T* x = reinterpret_cast<const T*>(a.data[1]);
          parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
            vec_math_range<T>(VecMathOf<Fn>::kIdx, x + b, o + b, e - b);
          });
          return;
        }
      }
      if constexpr (VecExp<Fn>::kHas && std::is_same<T, float>::value) {
        if (a.contiguous) {
          float* o = reinterpret_cast<float*>(a.data[0]);
          const float* x = reinterpret_cast<const float*>(a.data[1]);
          parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
            exp_range<VecExp<Fn>::kKind>(x + b, o + b, e - b);
          });
          return;
        }
      }
      // float16 / bfloat16 through the same float32 loops, in blocks
      // (gelu, silu, sigmoid had only the scalar functor: 20x torch).
      if constexpr (VecExp<Fn>::kHas && !kBoolOut &&
                    (std::is_same<T, Half>::value ||
                     std::is_same<T, BFloat16>::value)) {
        if (a.contiguous) {
          T* o = reinterpret_cast<T*>(a.data[0]);
          const T* x = reinterpret_cast<const T*>(a.data[1]);
          parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
            float buf[kHalfBlock];
            for (int64_t i = b; i < e; i += kHalfBlock) {
              const int64_t m = std::min(kHalfBlock, e - i);
              vec_math::to_float_block(x + i, buf, m);
              exp_range<VecExp<Fn>::kKind>(buf, buf, m);
              vec_math::from_float_block(buf, o + i, m);
            }
          });
          return;
        }
      }
      if constexpr (VecArith<Fn>::kHas && !kBoolOut &&
                    (std::is_same<T, float>::value ||
                     std::is_same<T, double>::value)) {
        if (a.contiguous) {
          T* o = reinterpret_cast<T*>(a.data[0]);
          const T* x = reinterpret_cast<const T*>(a.data[1]);
          const bool stream = stream_stores(a.numel, 2 * sizeof(T));
          parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
            arith_range<Fn, T>(x + b, o + b, e - b, stream);
          });
          return;
        }
      }
      if (FASTT_MUTANT(UnarySkipLast) && !kBoolOut && a.contiguous)
        --a.numel;
      unary_loop<O, T>(a, Fn{});
    }
  };
};
template <class T>
struct LeakyReluK {
  static void run(KernelArgs& a) {
    unary_loop<T, T>(a, F::LeakyRelu{a.f0});
  }
};

}  // namespace

void register_unary_kernels() {
#define FASTT_EW FASTT_EW_REGISTER_UNARY
#include "csrc/ops/elementwise.def"
#undef FASTT_EW
}

}  // namespace fastt
