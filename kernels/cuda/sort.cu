// CUDA sort and topk (layouts as kernels/cpu/sort.cpp). Each row along dim
// becomes unsigned radix keys that order like the CPU's comparators (NaN
// above everything and equal to every NaN, -0 == +0; complemented for
// descending), which a stable radix sort (segmented; device-wide per row
// for a few long rows) orders with their positions; values are then
// re-read from self at the sorted positions.
// Stability gives the CPU's tie order (lower index first) for both
// directions, and topk is the first k of that order.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <cstring>
#include <type_traits>

#include "kernels/cuda/loop.cuh"

namespace fastt {
namespace cuda {
namespace {

// The radix key type of T: as wide as T (16-bit floats go through float).
template <class T>
using radix_key_t = std::conditional_t<
    sizeof(opmath_t<T>) == 1, uint8_t,
    std::conditional_t<sizeof(opmath_t<T>) == 2, uint16_t,
                       std::conditional_t<sizeof(opmath_t<T>) == 4,
                                          uint32_t, uint64_t>>>;

// Order-preserving map to unsigned: key(a) < key(b) iff the CPU's Less
// says a < b, equal keys iff neither.
template <class T>
__device__ __forceinline__ radix_key_t<T> encode(T v) {
  using K = radix_key_t<T>;
  constexpr K sign = K(1) << (sizeof(K) * 8 - 1);
  if constexpr (std::is_same<T, bool>::value) {
    return K(v ? 1 : 0);
  } else if constexpr (std::is_integral<T>::value) {
    const K u = static_cast<K>(v);
    return std::is_signed<T>::value ? K(u ^ sign) : u;
  } else {
    using M = opmath_t<T>;
    M x = static_cast<M>(v);
    if (x != x) return K(~K(0));  // every NaN: the largest key
    if (x == M(0)) x = M(0);      // -0 sorts as +0
    K b;
    memcpy(&b, &x, sizeof(b));
    return (b & sign) ? K(~b) : K(b | sign);
  }
}

// The dims other than `dim`, row-major, with each tensor's strides.
struct Rows {
  int nd;
  int64_t sizes[kMaxDims];
  int64_t self_s[kMaxDims], val_s[kMaxDims], idx_s[kMaxDims];
  int64_t ss, vs, is;  // strides along dim
};

__device__ __forceinline__ void row_offsets(const Rows& r, int64_t row,
                                            int64_t* so, int64_t* vo,
                                            int64_t* io) {
  int64_t a = 0, b = 0, c = 0;
  for (int d = r.nd - 1; d >= 0; --d) {
    const int64_t i = row % r.sizes[d];
    row /= r.sizes[d];
    a += i * r.self_s[d];
    b += i * r.val_s[d];
    c += i * r.idx_s[d];
  }
  *so = a;
  *vo = b;
  *io = c;
}

template <class T>
__global__ void load_keys_kernel(const T* self, Rows r, int64_t n,
                                 int64_t total, radix_key_t<T> flip,
                                 radix_key_t<T>* keys, int64_t* pos) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    const int64_t row = e / n, j = e - row * n;
    int64_t so, vo, io;
    row_offsets(r, row, &so, &vo, &io);
    keys[e] = radix_key_t<T>(encode<T>(self[so + j * r.ss]) ^ flip);
    pos[e] = j;
  }
}

__global__ void row_starts_kernel(int64_t* off, int64_t rows, int64_t n) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= rows;
       r += stride)
    off[r] = r * n;
}

// The first k sorted positions of each row -> values and indices.
template <class T>
__global__ void store_kernel(const T* self, const int64_t* sorted, Rows r,
                             int64_t n, int64_t k, int64_t total, T* values,
                             int64_t* indices) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += stride) {
    const int64_t row = e / k, j = e - row * k;
    int64_t so, vo, io;
    row_offsets(r, row, &so, &vo, &io);
    const int64_t p = sorted[row * n + j];
    values[vo + j * r.vs] = self[so + p * r.ss];
    indices[io + j * r.is] = p;
  }
}

// DeviceSegmentedSort hands each large segment to ONE block, so a few
// long rows would leave the GPU idle (a 1-D sort of 10M keys on one SM).
// Rows at least kLongRow long, when there are at most kFewRows of them,
// go one at a time through the device-wide radix sort (stable as well).
// The thresholds are a first guess, to be tuned on a GPU (bench/).
constexpr int64_t kLongRow = int64_t(1) << 16;
constexpr int64_t kFewRows = 8;

// in[0] = self (ndim >= 1), out = values, out2 = int64 indices, both k =
// out->size(dim) long along dim; i0 = dim, i1 = descending (sort) or
// largest (topk). Both orders are "i1 set: big first".
template <class T>
void sort_rows(KernelArgs& a, const char* what) {
  using K = radix_key_t<T>;
  const Tensor& self = *a.in[0];
  Tensor& values = *a.out;
  Tensor& indices = *a.out2;
  const int nd = int(self.dim());
  const int64_t dim = a.i0;
  const int64_t n = self.sizes()[dim];
  const int64_t k = values.sizes()[dim];
  if (n == 0 || k == 0 || self.numel() == 0) return;
  const int64_t rows = self.numel() / n;
  const int64_t total = rows * n;
  Rows r;
  r.nd = 0;
  for (int d = 0; d < nd; ++d) {
    if (d == dim) continue;
    r.sizes[r.nd] = self.sizes()[d];
    r.self_s[r.nd] = self.strides()[d];
    r.val_s[r.nd] = values.strides()[d];
    r.idx_s[r.nd] = indices.strides()[d];
    ++r.nd;
  }
  r.ss = self.strides()[dim];
  r.vs = values.strides()[dim];
  r.is = indices.strides()[dim];
  const Device dev = self.device();
  const int64_t key_bytes = total * int64_t(sizeof(K));
  Tensor keys_in = Tensor::empty({key_bytes}, DType::UInt8, dev);
  Tensor keys_out = Tensor::empty({key_bytes}, DType::UInt8, dev);
  Tensor pos_in = Tensor::empty({total}, DType::Int64, dev);
  Tensor pos_out = Tensor::empty({total}, DType::Int64, dev);
  K* kin = static_cast<K*>(keys_in.data_ptr());
  K* kout = static_cast<K*>(keys_out.data_ptr());
  int64_t* pin = static_cast<int64_t*>(pos_in.data_ptr());
  int64_t* pout = static_cast<int64_t*>(pos_out.data_ptr());
  const T* src = static_cast<const T*>(self.data_ptr());
  cudaStream_t stream = current_stream();

  const K flip = a.i1 ? K(~K(0)) : K(0);  // descending: complement keys
  load_keys_kernel<T><<<grid_for(total, kBlock), kBlock, 0, stream>>>(
      src, r, n, total, flip, kin, pin);
  FASTT_CUDA_CHECK_LAUNCH(what);

  size_t temp_bytes = 0;
  if (n >= kLongRow && rows <= kFewRows) {
    constexpr int kBits = int(sizeof(K) * 8);
    FASTT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kin,
                                                     kout, pin, pout, n, 0,
                                                     kBits, stream),
                     what);
    Tensor temp = Tensor::empty({int64_t(temp_bytes) + 1}, DType::UInt8, dev);
    for (int64_t row = 0; row < rows; ++row)
      FASTT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
                           temp.data_ptr(), temp_bytes, kin + row * n,
                           kout + row * n, pin + row * n, pout + row * n, n,
                           0, kBits, stream),
                       what);
  } else {
    // Row r is the segment [off[r], off[r + 1]).
    Tensor starts = Tensor::empty({rows + 1}, DType::Int64, dev);
    int64_t* off = static_cast<int64_t*>(starts.data_ptr());
    row_starts_kernel<<<grid_for(rows + 1, kBlock), kBlock, 0, stream>>>(
        off, rows, n);
    FASTT_CUDA_CHECK_LAUNCH(what);
    FASTT_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(
                         nullptr, temp_bytes, kin, kout, pin, pout, total,
                         rows, off, off + 1, stream),
                     what);
    Tensor temp = Tensor::empty({int64_t(temp_bytes) + 1}, DType::UInt8, dev);
    FASTT_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(
                         temp.data_ptr(), temp_bytes, kin, kout, pin, pout,
                         total, rows, off, off + 1, stream),
                     what);
  }

  const int64_t out_total = rows * k;
  store_kernel<T><<<grid_for(out_total, kBlock), kBlock, 0, stream>>>(
      src, pout, r, n, k, out_total, static_cast<T*>(values.data_ptr()),
      static_cast<int64_t*>(indices.data_ptr()));
  FASTT_CUDA_CHECK_LAUNCH(what);
}

// i0 = dim, i1 = descending. Always stable.
template <class T>
struct SortK {
  static void run(KernelArgs& a) { sort_rows<T>(a, "sort"); }
};

// i1 = largest, i2 = k (= out size along dim); ties keep the lower index.
template <class T>
struct TopkK {
  static void run(KernelArgs& a) { sort_rows<T>(a, "topk"); }
};

}  // namespace

void register_sort_cuda_kernels() {
#define FASTT_KERNELS_sort
#include "kernels/kernels.def"
}

}  // namespace cuda
}  // namespace fastt
