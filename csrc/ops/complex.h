// Complex tensors seen as real ones and back: torch's view_as_real,
// view_as_complex, real and imag, views of the input's storage recorded by
// autograd; conj_physical, a copy. The complex arithmetic itself is in the
// elementwise rows (csrc/ops/elementwise.def, WithComplex<...> dtypes).
#pragma once
#include "../tensor.h"

namespace fastt {

// [..., 2] real view of a complex tensor (complex64 -> float32).
Tensor view_as_real(const Tensor& z);
// The complex view of a float32/float64 tensor whose last dim is 2 with
// stride 1 (torch's conditions and messages).
Tensor view_as_complex(const Tensor& x);
// The real part as a view; a real tensor is returned as it is (torch).
Tensor real_part(const Tensor& t);
// The imaginary part as a view; complex tensors only (torch).
Tensor imag_part(const Tensor& t);
// The complex conjugate as a new tensor (recorded: a gradient flows
// through it); a real tensor is returned as it is (torch).
Tensor conj_physical(const Tensor& t);
// The conjugate transpose of the last two dims (torch's mH): a view for a
// real tensor, conj_physical of the transpose for a complex one.
Tensor adjoint(const Tensor& t);

}  // namespace fastt
