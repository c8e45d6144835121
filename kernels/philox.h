// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2,
// 3", SC'11) and the maps from its 32-bit outputs to uniform and normal
// values. FASTT_HD so the CPU and CUDA kernels share it: element i of an op
// whose generator reserved blocks starting at `offset` reads counter block
// offset + i / K (K values per block), so any thread count, and either
// backend, produces the same numbers.
#pragma once
#include <cmath>
#include <cstdint>

#include "csrc/macros.h"

namespace fastt {
namespace philox {

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

struct Block {
  uint32_t v[4];
};

FASTT_HD void mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t p = uint64_t(a) * uint64_t(b);
  *hi = uint32_t(p >> 32);
  *lo = uint32_t(p);
}

// One round: two 32x32->64 multiplies, then mix the halves with the key.
FASTT_HD void single_round(uint32_t c[4], uint32_t k0, uint32_t k1) {
  uint32_t hi0, lo0, hi1, lo1;
  mulhilo(kMul0, c[0], &hi0, &lo0);
  mulhilo(kMul1, c[2], &hi1, &lo1);
  uint32_t n0 = hi1 ^ c[1] ^ k0;
  uint32_t n2 = hi0 ^ c[3] ^ k1;
  c[0] = n0;
  c[1] = lo1;
  c[2] = n2;
  c[3] = lo0;
}

// The bijection: 10 rounds, the key bumped by the Weyl constants between
// rounds.
FASTT_HD Block philox4x32_10(const uint32_t ctr[4], uint32_t k0, uint32_t k1) {
  uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    single_round(c, k0, k1);
  }
  return Block{{c[0], c[1], c[2], c[3]}};
}

// fastt's counter layout: the 64-bit seed is the key, the 64-bit block
// index the low counter words; the high words stay 0 (free for a
// per-device stream later).
FASTT_HD Block block(uint64_t seed, uint64_t index) {
  uint32_t ctr[4] = {uint32_t(index), uint32_t(index >> 32), 0u, 0u};
  return philox4x32_10(ctr, uint32_t(seed), uint32_t(seed >> 32));
}

// [0, 1) from the top 24 bits: every value is exact in float.
FASTT_HD float uniform_float(uint32_t x) {
  return float(x >> 8) * 5.9604644775390625e-08f;  // 2^-24
}
// [0, 1) from 53 bits of two words: every value is exact in double.
FASTT_HD double uniform_double(uint32_t hi, uint32_t lo) {
  uint64_t r = ((uint64_t(hi) << 32) | lo) >> 11;
  return double(r) * 1.1102230246251565e-16;  // 2^-53
}
FASTT_HD uint64_t bits64(uint32_t hi, uint32_t lo) {
  return (uint64_t(hi) << 32) | lo;
}

// Box-Muller: two uniforms in [0, 1) to two standard normals. 1 - u1 lies
// in (0, 1], so the log is finite; the tail ends near 5.8 sigma for float
// (24-bit uniforms) and 8.6 sigma for double (53-bit).
template <class T>
FASTT_HD void box_muller(T u1, T u2, T* z0, T* z1) {
  const T two_pi = T(6.283185307179586476925286766559);
  T r = std::sqrt(T(-2) * std::log(T(1) - u1));
  T theta = two_pi * u2;
  *z0 = r * std::cos(theta);
  *z1 = r * std::sin(theta);
}

// K values per block for each draw kind (the counter -> element map).
// float-sized uniforms/normals: 4 per block; double-sized and 64-bit: 2.
template <class M>
FASTT_HD constexpr int values_per_block() {
  return sizeof(M) == 8 ? 2 : 4;
}

// Fills out[0..K) with uniforms in [0, 1) of type M (float or double).
template <class M>
FASTT_HD void uniform_block(const Block& b, M* out) {
  if constexpr (sizeof(M) == 8) {
    out[0] = M(uniform_double(b.v[0], b.v[1]));
    out[1] = M(uniform_double(b.v[2], b.v[3]));
  } else {
    for (int j = 0; j < 4; ++j) out[j] = M(uniform_float(b.v[j]));
  }
}

// Fills out[0..K) with standard normals of type M (float or double).
template <class M>
FASTT_HD void normal_block(const Block& b, M* out) {
  if constexpr (sizeof(M) == 8) {
    box_muller<double>(uniform_double(b.v[0], b.v[1]),
                       uniform_double(b.v[2], b.v[3]), &out[0], &out[1]);
  } else {
    box_muller<float>(uniform_float(b.v[0]), uniform_float(b.v[1]), &out[0],
                      &out[1]);
    box_muller<float>(uniform_float(b.v[2]), uniform_float(b.v[3]), &out[2],
                      &out[3]);
  }
}

// Two 64-bit words per block (randint, randperm).
FASTT_HD void bits64_block(const Block& b, uint64_t* out) {
  out[0] = bits64(b.v[0], b.v[1]);
  out[1] = bits64(b.v[2], b.v[3]);
}

}  // namespace philox
}  // namespace fastt
