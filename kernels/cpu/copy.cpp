// copy (strided, dtype-converting) and fill. The table's dtype column is the
// destination dtype; the source dtype is args.dtypes[1], dispatched inside.
#include "kernels/cpu/loop.h"

namespace fastt {
namespace {
using namespace cpu;

template <class O, class I>
struct Convert {
  FASTT_HD O operator()(opmath_t<I> x) const {
    if constexpr (std::is_same<O, bool>::value) return x != opmath_t<I>(0);
    else return static_cast<O>(x);
  }
};

template <class O>
struct CopyK {
  static void run(KernelArgs& a) {
    DType src = a.dtypes[1];
    if (src == dtype_of<O> && a.contiguous) {
      std::memcpy(a.data[0], a.data[1], size_t(a.numel) * sizeof(O));
      return;
    }
    visit_dtype(src, [&](auto tag) {
      using I = decltype(tag);
      if constexpr (std::is_same<O, I>::value) {
        // Move the bytes: a trip through opmath_t (float for the 16-bit
        // floats) would quiet float16 NaNs and drop their payloads.
        strided_loop<2>(a, [](char** p, const int64_t* s, int64_t n) {
          if (s[0] == sizeof(O) && s[1] == sizeof(O)) {
            std::memcpy(p[0], p[1], size_t(n) * sizeof(O));
            return;
          }
          for (int64_t i = 0; i < n; ++i)
            std::memcpy(p[0] + i * s[0], p[1] + i * s[1], sizeof(O));
        });
      } else {
        unary_loop<O, I>(a, Convert<O, I>{});
      }
    });
  }
};

template <class T>
struct FillK {
  static void run(KernelArgs& a) {
    const T v = a.s0.to<T>();
    if (a.contiguous) {
      T* o = reinterpret_cast<T*>(a.data[0]);
      parallel_for(0, a.numel, kGrainSize, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = v;
      });
      return;
    }
    strided_loop<1>(a, [&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  }
};

}  // namespace

void register_copy_kernels() {
#define FASTT_KERNELS_copy
#include "kernels/kernels.def"
}

}  // namespace fastt
