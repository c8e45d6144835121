// Bindings of csrc/ops/fft.h: torch's three FFT primitives as private
// fastt._C._fft_c2c / _fft_r2c / _fft_c2r, which python/fastt/fft.py
// composes into torch.fft's API (n/s, dim, norm, out=).
#include "binder.h"

#include "csrc/ops/fft.h"

namespace fastt {
namespace py {

FASTT_BIND_FUNCTION(_fft_c2c, 4,
                    fastt::fft_c2c(input, dim, normalization, forward),
                    (Tensor, input), (Ints, dim), (Int, normalization),
                    (BoolOr<true>, forward))
FASTT_BIND_FUNCTION(_fft_r2c, 4,
                    fastt::fft_r2c(input, dim, normalization, onesided),
                    (Tensor, input), (Ints, dim), (Int, normalization),
                    (BoolOr<true>, onesided))
FASTT_BIND_FUNCTION(_fft_c2r, 4,
                    fastt::fft_c2r(input, dim, normalization, last_dim_size),
                    (Tensor, input), (Ints, dim), (Int, normalization),
                    (Int, last_dim_size))

}  // namespace py
}  // namespace fastt
