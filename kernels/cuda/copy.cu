// CUDA copy (dtype-converting, strided) and fill, registered in the CUDA
// column of the dispatch table. Other ops' CUDA kernels come per family.
#include "kernels/cuda/loop.cuh"

namespace fastt {
namespace cuda {
namespace {

// Float -> uint8 goes through int64 (as torch does): the GPU's direct
// conversion saturates (-1.0 -> 0) where the CPU's wraps (-1.0 -> 255).
template <class O, class I>
struct ConvertF {
  __device__ O operator()(opmath_t<I> x) const {
    using X = opmath_t<I>;
    if constexpr (std::is_same<O, bool>::value) return x != X(0);
    else if constexpr (kIsComplex<X> && !kIsComplex<O>)  // the real part
      return ConvertF<O, typename X::value_type>{}(x.re);
    else if constexpr (std::is_unsigned<O>::value &&
                       std::is_floating_point<X>::value)
      return static_cast<O>(static_cast<int64_t>(x));
    else return static_cast<O>(x);
  }
};

template <class O>
struct FillF {
  O v;
  template <class X>
  __device__ O operator()(X) const { return v; }
};

// A same-dtype copy moves bits, as unsigned integers of the dtype's width:
// a trip through opmath_t (float for the 16-bit floats) would quiet float16
// NaNs and drop their payloads.
template <size_t N> struct BitsOf;
template <> struct BitsOf<1> { using type = uint8_t; };
template <> struct BitsOf<2> { using type = uint16_t; };
template <> struct BitsOf<4> { using type = uint32_t; };
template <> struct BitsOf<8> { using type = uint64_t; };
template <> struct BitsOf<16> {  // complex128
  struct type { uint64_t lo, hi; };
};

struct SameBits {
  template <class X>
  __device__ X operator()(X x) const { return x; }
};

template <class O>
struct CopyK {
  static void run(KernelArgs& a) {
    if (a.dtypes[1] == dtype_of<O>) {
      using B = typename BitsOf<sizeof(O)>::type;
      launch_elementwise<B, B>(a, SameBits{}, "copy");
      return;
    }
    visit_dtype(a.dtypes[1], [&](auto tag) {
      using I = decltype(tag);
      launch_elementwise<O, I>(a, ConvertF<O, I>{}, "copy");
    });
  }
};

template <class O>
struct FillK {
  static void run(KernelArgs& a) {
    // A fill is a unary loop whose input is the output itself (never read).
    KernelArgs b = a;
    b.nops = 2;
    b.data[1] = b.data[0];
    for (int i = 0; i < b.ndim; ++i) b.strides[1][i] = b.strides[0][i];
    launch_elementwise<O, O>(b, FillF<O>{a.s0.to<O>()}, "fill");
  }
};

}  // namespace

void register_copy_cuda_kernels() {
#define FASTT_KERNELS_copy
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt
