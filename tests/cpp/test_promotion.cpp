// Type promotion: promote_types against torch's table, result_type with
// dimensioned / 0-d tensors and Python scalars, and broadcast_shapes. The
// literal tables were generated once with torch 2.13 (torch.promote_types,
// torch.result_type); this test does not need torch.
#include "catch.h"
#include "core_test_util.h"
#include "csrc/ops/elementwise.h"

using namespace fastt;
using namespace fastt::test;
using D = DType;

namespace {

// kTorchPromotion[a][b] = torch.promote_types(a, b), generated once with torch 2.13.
constexpr DType kTorchPromotion[10][10] = {
    {D::Bool, D::UInt8, D::Int8, D::Int16, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
    {D::UInt8, D::UInt8, D::Int16, D::Int16, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
    {D::Int8, D::Int16, D::Int8, D::Int16, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
    {D::Int16, D::Int16, D::Int16, D::Int16, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
    {D::Int32, D::Int32, D::Int32, D::Int32, D::Int32, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
    {D::Int64, D::Int64, D::Int64, D::Int64, D::Int64, D::Int64, D::Float16, D::BFloat16, D::Float32, D::Float64},
    {D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float16, D::Float32, D::Float32, D::Float64},
    {D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::BFloat16, D::Float32, D::BFloat16, D::Float32, D::Float64},
    {D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float32, D::Float64},
    {D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64, D::Float64},
};

struct ScalarCase {
  DType t;
  int ndim;
  Scalar s;
  DType expected;
};
// torch.result_type(tensor of `ndim` dims, python scalar).
const ScalarCase kScalarCases[] = {
    {D::Bool, 1, Scalar(true), D::Bool},
    {D::Bool, 1, Scalar(3), D::Int64},
    {D::Bool, 1, Scalar(1000), D::Int64},
    {D::Bool, 1, Scalar(2.5), D::Float32},
    {D::Bool, 0, Scalar(true), D::Bool},
    {D::Bool, 0, Scalar(3), D::Int64},
    {D::Bool, 0, Scalar(1000), D::Int64},
    {D::Bool, 0, Scalar(2.5), D::Float32},
    {D::UInt8, 1, Scalar(true), D::UInt8},
    {D::UInt8, 1, Scalar(3), D::UInt8},
    {D::UInt8, 1, Scalar(1000), D::UInt8},
    {D::UInt8, 1, Scalar(2.5), D::Float32},
    {D::UInt8, 0, Scalar(true), D::UInt8},
    {D::UInt8, 0, Scalar(3), D::UInt8},
    {D::UInt8, 0, Scalar(1000), D::UInt8},
    {D::UInt8, 0, Scalar(2.5), D::Float32},
    {D::Int8, 1, Scalar(true), D::Int8},
    {D::Int8, 1, Scalar(3), D::Int8},
    {D::Int8, 1, Scalar(1000), D::Int8},
    {D::Int8, 1, Scalar(2.5), D::Float32},
    {D::Int8, 0, Scalar(true), D::Int8},
    {D::Int8, 0, Scalar(3), D::Int8},
    {D::Int8, 0, Scalar(1000), D::Int8},
    {D::Int8, 0, Scalar(2.5), D::Float32},
    {D::Int16, 1, Scalar(true), D::Int16},
    {D::Int16, 1, Scalar(3), D::Int16},
    {D::Int16, 1, Scalar(1000), D::Int16},
    {D::Int16, 1, Scalar(2.5), D::Float32},
    {D::Int16, 0, Scalar(true), D::Int16},
    {D::Int16, 0, Scalar(3), D::Int16},
    {D::Int16, 0, Scalar(1000), D::Int16},
    {D::Int16, 0, Scalar(2.5), D::Float32},
    {D::Int32, 1, Scalar(true), D::Int32},
    {D::Int32, 1, Scalar(3), D::Int32},
    {D::Int32, 1, Scalar(1000), D::Int32},
    {D::Int32, 1, Scalar(2.5), D::Float32},
    {D::Int32, 0, Scalar(true), D::Int32},
    {D::Int32, 0, Scalar(3), D::Int32},
    {D::Int32, 0, Scalar(1000), D::Int32},
    {D::Int32, 0, Scalar(2.5), D::Float32},
    {D::Int64, 1, Scalar(true), D::Int64},
    {D::Int64, 1, Scalar(3), D::Int64},
    {D::Int64, 1, Scalar(1000), D::Int64},
    {D::Int64, 1, Scalar(2.5), D::Float32},
    {D::Int64, 0, Scalar(true), D::Int64},
    {D::Int64, 0, Scalar(3), D::Int64},
    {D::Int64, 0, Scalar(1000), D::Int64},
    {D::Int64, 0, Scalar(2.5), D::Float32},
    {D::Float16, 1, Scalar(true), D::Float16},
    {D::Float16, 1, Scalar(3), D::Float16},
    {D::Float16, 1, Scalar(1000), D::Float16},
    {D::Float16, 1, Scalar(2.5), D::Float16},
    {D::Float16, 0, Scalar(true), D::Float16},
    {D::Float16, 0, Scalar(3), D::Float16},
    {D::Float16, 0, Scalar(1000), D::Float16},
    {D::Float16, 0, Scalar(2.5), D::Float16},
    {D::BFloat16, 1, Scalar(true), D::BFloat16},
    {D::BFloat16, 1, Scalar(3), D::BFloat16},
    {D::BFloat16, 1, Scalar(1000), D::BFloat16},
    {D::BFloat16, 1, Scalar(2.5), D::BFloat16},
    {D::BFloat16, 0, Scalar(true), D::BFloat16},
    {D::BFloat16, 0, Scalar(3), D::BFloat16},
    {D::BFloat16, 0, Scalar(1000), D::BFloat16},
    {D::BFloat16, 0, Scalar(2.5), D::BFloat16},
    {D::Float32, 1, Scalar(true), D::Float32},
    {D::Float32, 1, Scalar(3), D::Float32},
    {D::Float32, 1, Scalar(1000), D::Float32},
    {D::Float32, 1, Scalar(2.5), D::Float32},
    {D::Float32, 0, Scalar(true), D::Float32},
    {D::Float32, 0, Scalar(3), D::Float32},
    {D::Float32, 0, Scalar(1000), D::Float32},
    {D::Float32, 0, Scalar(2.5), D::Float32},
    {D::Float64, 1, Scalar(true), D::Float64},
    {D::Float64, 1, Scalar(3), D::Float64},
    {D::Float64, 1, Scalar(1000), D::Float64},
    {D::Float64, 1, Scalar(2.5), D::Float64},
    {D::Float64, 0, Scalar(true), D::Float64},
    {D::Float64, 0, Scalar(3), D::Float64},
    {D::Float64, 0, Scalar(1000), D::Float64},
    {D::Float64, 0, Scalar(2.5), D::Float64},
};

struct TensorCase {
  DType a;
  int na;
  DType b;
  int nb;
  DType expected;
};
// torch.result_type(a, b) for every dtype pair with (ndim a, ndim b) in
// (1, 0), (0, 0), (0, 1).
const TensorCase kTensorCases[] = {
    {D::Bool, 1, D::Bool, 0, D::Bool},
    {D::Bool, 0, D::Bool, 0, D::Bool},
    {D::Bool, 0, D::Bool, 1, D::Bool},
    {D::Bool, 1, D::UInt8, 0, D::UInt8},
    {D::Bool, 0, D::UInt8, 0, D::UInt8},
    {D::Bool, 0, D::UInt8, 1, D::UInt8},
    {D::Bool, 1, D::Int8, 0, D::Int8},
    {D::Bool, 0, D::Int8, 0, D::Int8},
    {D::Bool, 0, D::Int8, 1, D::Int8},
    {D::Bool, 1, D::Int16, 0, D::Int16},
    {D::Bool, 0, D::Int16, 0, D::Int16},
    {D::Bool, 0, D::Int16, 1, D::Int16},
    {D::Bool, 1, D::Int32, 0, D::Int32},
    {D::Bool, 0, D::Int32, 0, D::Int32},
    {D::Bool, 0, D::Int32, 1, D::Int32},
    {D::Bool, 1, D::Int64, 0, D::Int64},
    {D::Bool, 0, D::Int64, 0, D::Int64},
    {D::Bool, 0, D::Int64, 1, D::Int64},
    {D::Bool, 1, D::Float16, 0, D::Float16},
    {D::Bool, 0, D::Float16, 0, D::Float16},
    {D::Bool, 0, D::Float16, 1, D::Float16},
    {D::Bool, 1, D::BFloat16, 0, D::BFloat16},
    {D::Bool, 0, D::BFloat16, 0, D::BFloat16},
    {D::Bool, 0, D::BFloat16, 1, D::BFloat16},
    {D::Bool, 1, D::Float32, 0, D::Float32},
    {D::Bool, 0, D::Float32, 0, D::Float32},
    {D::Bool, 0, D::Float32, 1, D::Float32},
    {D::Bool, 1, D::Float64, 0, D::Float64},
    {D::Bool, 0, D::Float64, 0, D::Float64},
    {D::Bool, 0, D::Float64, 1, D::Float64},
    {D::UInt8, 1, D::Bool, 0, D::UInt8},
    {D::UInt8, 0, D::Bool, 0, D::UInt8},
    {D::UInt8, 0, D::Bool, 1, D::UInt8},
    {D::UInt8, 1, D::UInt8, 0, D::UInt8},
    {D::UInt8, 0, D::UInt8, 0, D::UInt8},
    {D::UInt8, 0, D::UInt8, 1, D::UInt8},
    {D::UInt8, 1, D::Int8, 0, D::UInt8},
    {D::UInt8, 0, D::Int8, 0, D::Int16},
    {D::UInt8, 0, D::Int8, 1, D::Int8},
    {D::UInt8, 1, D::Int16, 0, D::UInt8},
    {D::UInt8, 0, D::Int16, 0, D::Int16},
    {D::UInt8, 0, D::Int16, 1, D::Int16},
    {D::UInt8, 1, D::Int32, 0, D::UInt8},
    {D::UInt8, 0, D::Int32, 0, D::Int32},
    {D::UInt8, 0, D::Int32, 1, D::Int32},
    {D::UInt8, 1, D::Int64, 0, D::UInt8},
    {D::UInt8, 0, D::Int64, 0, D::Int64},
    {D::UInt8, 0, D::Int64, 1, D::Int64},
    {D::UInt8, 1, D::Float16, 0, D::Float16},
    {D::UInt8, 0, D::Float16, 0, D::Float16},
    {D::UInt8, 0, D::Float16, 1, D::Float16},
    {D::UInt8, 1, D::BFloat16, 0, D::BFloat16},
    {D::UInt8, 0, D::BFloat16, 0, D::BFloat16},
    {D::UInt8, 0, D::BFloat16, 1, D::BFloat16},
    {D::UInt8, 1, D::Float32, 0, D::Float32},
    {D::UInt8, 0, D::Float32, 0, D::Float32},
    {D::UInt8, 0, D::Float32, 1, D::Float32},
    {D::UInt8, 1, D::Float64, 0, D::Float64},
    {D::UInt8, 0, D::Float64, 0, D::Float64},
    {D::UInt8, 0, D::Float64, 1, D::Float64},
    {D::Int8, 1, D::Bool, 0, D::Int8},
    {D::Int8, 0, D::Bool, 0, D::Int8},
    {D::Int8, 0, D::Bool, 1, D::Int8},
    {D::Int8, 1, D::UInt8, 0, D::Int8},
    {D::Int8, 0, D::UInt8, 0, D::Int16},
    {D::Int8, 0, D::UInt8, 1, D::UInt8},
    {D::Int8, 1, D::Int8, 0, D::Int8},
    {D::Int8, 0, D::Int8, 0, D::Int8},
    {D::Int8, 0, D::Int8, 1, D::Int8},
    {D::Int8, 1, D::Int16, 0, D::Int8},
    {D::Int8, 0, D::Int16, 0, D::Int16},
    {D::Int8, 0, D::Int16, 1, D::Int16},
    {D::Int8, 1, D::Int32, 0, D::Int8},
    {D::Int8, 0, D::Int32, 0, D::Int32},
    {D::Int8, 0, D::Int32, 1, D::Int32},
    {D::Int8, 1, D::Int64, 0, D::Int8},
    {D::Int8, 0, D::Int64, 0, D::Int64},
    {D::Int8, 0, D::Int64, 1, D::Int64},
    {D::Int8, 1, D::Float16, 0, D::Float16},
    {D::Int8, 0, D::Float16, 0, D::Float16},
    {D::Int8, 0, D::Float16, 1, D::Float16},
    {D::Int8, 1, D::BFloat16, 0, D::BFloat16},
    {D::Int8, 0, D::BFloat16, 0, D::BFloat16},
    {D::Int8, 0, D::BFloat16, 1, D::BFloat16},
    {D::Int8, 1, D::Float32, 0, D::Float32},
    {D::Int8, 0, D::Float32, 0, D::Float32},
    {D::Int8, 0, D::Float32, 1, D::Float32},
    {D::Int8, 1, D::Float64, 0, D::Float64},
    {D::Int8, 0, D::Float64, 0, D::Float64},
    {D::Int8, 0, D::Float64, 1, D::Float64},
    {D::Int16, 1, D::Bool, 0, D::Int16},
    {D::Int16, 0, D::Bool, 0, D::Int16},
    {D::Int16, 0, D::Bool, 1, D::Int16},
    {D::Int16, 1, D::UInt8, 0, D::Int16},
    {D::Int16, 0, D::UInt8, 0, D::Int16},
    {D::Int16, 0, D::UInt8, 1, D::UInt8},
    {D::Int16, 1, D::Int8, 0, D::Int16},
    {D::Int16, 0, D::Int8, 0, D::Int16},
    {D::Int16, 0, D::Int8, 1, D::Int8},
    {D::Int16, 1, D::Int16, 0, D::Int16},
    {D::Int16, 0, D::Int16, 0, D::Int16},
    {D::Int16, 0, D::Int16, 1, D::Int16},
    {D::Int16, 1, D::Int32, 0, D::Int16},
    {D::Int16, 0, D::Int32, 0, D::Int32},
    {D::Int16, 0, D::Int32, 1, D::Int32},
    {D::Int16, 1, D::Int64, 0, D::Int16},
    {D::Int16, 0, D::Int64, 0, D::Int64},
    {D::Int16, 0, D::Int64, 1, D::Int64},
    {D::Int16, 1, D::Float16, 0, D::Float16},
    {D::Int16, 0, D::Float16, 0, D::Float16},
    {D::Int16, 0, D::Float16, 1, D::Float16},
    {D::Int16, 1, D::BFloat16, 0, D::BFloat16},
    {D::Int16, 0, D::BFloat16, 0, D::BFloat16},
    {D::Int16, 0, D::BFloat16, 1, D::BFloat16},
    {D::Int16, 1, D::Float32, 0, D::Float32},
    {D::Int16, 0, D::Float32, 0, D::Float32},
    {D::Int16, 0, D::Float32, 1, D::Float32},
    {D::Int16, 1, D::Float64, 0, D::Float64},
    {D::Int16, 0, D::Float64, 0, D::Float64},
    {D::Int16, 0, D::Float64, 1, D::Float64},
    {D::Int32, 1, D::Bool, 0, D::Int32},
    {D::Int32, 0, D::Bool, 0, D::Int32},
    {D::Int32, 0, D::Bool, 1, D::Int32},
    {D::Int32, 1, D::UInt8, 0, D::Int32},
    {D::Int32, 0, D::UInt8, 0, D::Int32},
    {D::Int32, 0, D::UInt8, 1, D::UInt8},
    {D::Int32, 1, D::Int8, 0, D::Int32},
    {D::Int32, 0, D::Int8, 0, D::Int32},
    {D::Int32, 0, D::Int8, 1, D::Int8},
    {D::Int32, 1, D::Int16, 0, D::Int32},
    {D::Int32, 0, D::Int16, 0, D::Int32},
    {D::Int32, 0, D::Int16, 1, D::Int16},
    {D::Int32, 1, D::Int32, 0, D::Int32},
    {D::Int32, 0, D::Int32, 0, D::Int32},
    {D::Int32, 0, D::Int32, 1, D::Int32},
    {D::Int32, 1, D::Int64, 0, D::Int32},
    {D::Int32, 0, D::Int64, 0, D::Int64},
    {D::Int32, 0, D::Int64, 1, D::Int64},
    {D::Int32, 1, D::Float16, 0, D::Float16},
    {D::Int32, 0, D::Float16, 0, D::Float16},
    {D::Int32, 0, D::Float16, 1, D::Float16},
    {D::Int32, 1, D::BFloat16, 0, D::BFloat16},
    {D::Int32, 0, D::BFloat16, 0, D::BFloat16},
    {D::Int32, 0, D::BFloat16, 1, D::BFloat16},
    {D::Int32, 1, D::Float32, 0, D::Float32},
    {D::Int32, 0, D::Float32, 0, D::Float32},
    {D::Int32, 0, D::Float32, 1, D::Float32},
    {D::Int32, 1, D::Float64, 0, D::Float64},
    {D::Int32, 0, D::Float64, 0, D::Float64},
    {D::Int32, 0, D::Float64, 1, D::Float64},
    {D::Int64, 1, D::Bool, 0, D::Int64},
    {D::Int64, 0, D::Bool, 0, D::Int64},
    {D::Int64, 0, D::Bool, 1, D::Int64},
    {D::Int64, 1, D::UInt8, 0, D::Int64},
    {D::Int64, 0, D::UInt8, 0, D::Int64},
    {D::Int64, 0, D::UInt8, 1, D::UInt8},
    {D::Int64, 1, D::Int8, 0, D::Int64},
    {D::Int64, 0, D::Int8, 0, D::Int64},
    {D::Int64, 0, D::Int8, 1, D::Int8},
    {D::Int64, 1, D::Int16, 0, D::Int64},
    {D::Int64, 0, D::Int16, 0, D::Int64},
    {D::Int64, 0, D::Int16, 1, D::Int16},
    {D::Int64, 1, D::Int32, 0, D::Int64},
    {D::Int64, 0, D::Int32, 0, D::Int64},
    {D::Int64, 0, D::Int32, 1, D::Int32},
    {D::Int64, 1, D::Int64, 0, D::Int64},
    {D::Int64, 0, D::Int64, 0, D::Int64},
    {D::Int64, 0, D::Int64, 1, D::Int64},
    {D::Int64, 1, D::Float16, 0, D::Float16},
    {D::Int64, 0, D::Float16, 0, D::Float16},
    {D::Int64, 0, D::Float16, 1, D::Float16},
    {D::Int64, 1, D::BFloat16, 0, D::BFloat16},
    {D::Int64, 0, D::BFloat16, 0, D::BFloat16},
    {D::Int64, 0, D::BFloat16, 1, D::BFloat16},
    {D::Int64, 1, D::Float32, 0, D::Float32},
    {D::Int64, 0, D::Float32, 0, D::Float32},
    {D::Int64, 0, D::Float32, 1, D::Float32},
    {D::Int64, 1, D::Float64, 0, D::Float64},
    {D::Int64, 0, D::Float64, 0, D::Float64},
    {D::Int64, 0, D::Float64, 1, D::Float64},
    {D::Float16, 1, D::Bool, 0, D::Float16},
    {D::Float16, 0, D::Bool, 0, D::Float16},
    {D::Float16, 0, D::Bool, 1, D::Float16},
    {D::Float16, 1, D::UInt8, 0, D::Float16},
    {D::Float16, 0, D::UInt8, 0, D::Float16},
    {D::Float16, 0, D::UInt8, 1, D::Float16},
    {D::Float16, 1, D::Int8, 0, D::Float16},
    {D::Float16, 0, D::Int8, 0, D::Float16},
    {D::Float16, 0, D::Int8, 1, D::Float16},
    {D::Float16, 1, D::Int16, 0, D::Float16},
    {D::Float16, 0, D::Int16, 0, D::Float16},
    {D::Float16, 0, D::Int16, 1, D::Float16},
    {D::Float16, 1, D::Int32, 0, D::Float16},
    {D::Float16, 0, D::Int32, 0, D::Float16},
    {D::Float16, 0, D::Int32, 1, D::Float16},
    {D::Float16, 1, D::Int64, 0, D::Float16},
    {D::Float16, 0, D::Int64, 0, D::Float16},
    {D::Float16, 0, D::Int64, 1, D::Float16},
    {D::Float16, 1, D::Float16, 0, D::Float16},
    {D::Float16, 0, D::Float16, 0, D::Float16},
    {D::Float16, 0, D::Float16, 1, D::Float16},
    {D::Float16, 1, D::BFloat16, 0, D::Float16},
    {D::Float16, 0, D::BFloat16, 0, D::Float32},
    {D::Float16, 0, D::BFloat16, 1, D::BFloat16},
    {D::Float16, 1, D::Float32, 0, D::Float16},
    {D::Float16, 0, D::Float32, 0, D::Float32},
    {D::Float16, 0, D::Float32, 1, D::Float32},
    {D::Float16, 1, D::Float64, 0, D::Float16},
    {D::Float16, 0, D::Float64, 0, D::Float64},
    {D::Float16, 0, D::Float64, 1, D::Float64},
    {D::BFloat16, 1, D::Bool, 0, D::BFloat16},
    {D::BFloat16, 0, D::Bool, 0, D::BFloat16},
    {D::BFloat16, 0, D::Bool, 1, D::BFloat16},
    {D::BFloat16, 1, D::UInt8, 0, D::BFloat16},
    {D::BFloat16, 0, D::UInt8, 0, D::BFloat16},
    {D::BFloat16, 0, D::UInt8, 1, D::BFloat16},
    {D::BFloat16, 1, D::Int8, 0, D::BFloat16},
    {D::BFloat16, 0, D::Int8, 0, D::BFloat16},
    {D::BFloat16, 0, D::Int8, 1, D::BFloat16},
    {D::BFloat16, 1, D::Int16, 0, D::BFloat16},
    {D::BFloat16, 0, D::Int16, 0, D::BFloat16},
    {D::BFloat16, 0, D::Int16, 1, D::BFloat16},
    {D::BFloat16, 1, D::Int32, 0, D::BFloat16},
    {D::BFloat16, 0, D::Int32, 0, D::BFloat16},
    {D::BFloat16, 0, D::Int32, 1, D::BFloat16},
    {D::BFloat16, 1, D::Int64, 0, D::BFloat16},
    {D::BFloat16, 0, D::Int64, 0, D::BFloat16},
    {D::BFloat16, 0, D::Int64, 1, D::BFloat16},
    {D::BFloat16, 1, D::Float16, 0, D::BFloat16},
    {D::BFloat16, 0, D::Float16, 0, D::Float32},
    {D::BFloat16, 0, D::Float16, 1, D::Float16},
    {D::BFloat16, 1, D::BFloat16, 0, D::BFloat16},
    {D::BFloat16, 0, D::BFloat16, 0, D::BFloat16},
    {D::BFloat16, 0, D::BFloat16, 1, D::BFloat16},
    {D::BFloat16, 1, D::Float32, 0, D::BFloat16},
    {D::BFloat16, 0, D::Float32, 0, D::Float32},
    {D::BFloat16, 0, D::Float32, 1, D::Float32},
    {D::BFloat16, 1, D::Float64, 0, D::BFloat16},
    {D::BFloat16, 0, D::Float64, 0, D::Float64},
    {D::BFloat16, 0, D::Float64, 1, D::Float64},
    {D::Float32, 1, D::Bool, 0, D::Float32},
    {D::Float32, 0, D::Bool, 0, D::Float32},
    {D::Float32, 0, D::Bool, 1, D::Float32},
    {D::Float32, 1, D::UInt8, 0, D::Float32},
    {D::Float32, 0, D::UInt8, 0, D::Float32},
    {D::Float32, 0, D::UInt8, 1, D::Float32},
    {D::Float32, 1, D::Int8, 0, D::Float32},
    {D::Float32, 0, D::Int8, 0, D::Float32},
    {D::Float32, 0, D::Int8, 1, D::Float32},
    {D::Float32, 1, D::Int16, 0, D::Float32},
    {D::Float32, 0, D::Int16, 0, D::Float32},
    {D::Float32, 0, D::Int16, 1, D::Float32},
    {D::Float32, 1, D::Int32, 0, D::Float32},
    {D::Float32, 0, D::Int32, 0, D::Float32},
    {D::Float32, 0, D::Int32, 1, D::Float32},
    {D::Float32, 1, D::Int64, 0, D::Float32},
    {D::Float32, 0, D::Int64, 0, D::Float32},
    {D::Float32, 0, D::Int64, 1, D::Float32},
    {D::Float32, 1, D::Float16, 0, D::Float32},
    {D::Float32, 0, D::Float16, 0, D::Float32},
    {D::Float32, 0, D::Float16, 1, D::Float16},
    {D::Float32, 1, D::BFloat16, 0, D::Float32},
    {D::Float32, 0, D::BFloat16, 0, D::Float32},
    {D::Float32, 0, D::BFloat16, 1, D::BFloat16},
    {D::Float32, 1, D::Float32, 0, D::Float32},
    {D::Float32, 0, D::Float32, 0, D::Float32},
    {D::Float32, 0, D::Float32, 1, D::Float32},
    {D::Float32, 1, D::Float64, 0, D::Float32},
    {D::Float32, 0, D::Float64, 0, D::Float64},
    {D::Float32, 0, D::Float64, 1, D::Float64},
    {D::Float64, 1, D::Bool, 0, D::Float64},
    {D::Float64, 0, D::Bool, 0, D::Float64},
    {D::Float64, 0, D::Bool, 1, D::Float64},
    {D::Float64, 1, D::UInt8, 0, D::Float64},
    {D::Float64, 0, D::UInt8, 0, D::Float64},
    {D::Float64, 0, D::UInt8, 1, D::Float64},
    {D::Float64, 1, D::Int8, 0, D::Float64},
    {D::Float64, 0, D::Int8, 0, D::Float64},
    {D::Float64, 0, D::Int8, 1, D::Float64},
    {D::Float64, 1, D::Int16, 0, D::Float64},
    {D::Float64, 0, D::Int16, 0, D::Float64},
    {D::Float64, 0, D::Int16, 1, D::Float64},
    {D::Float64, 1, D::Int32, 0, D::Float64},
    {D::Float64, 0, D::Int32, 0, D::Float64},
    {D::Float64, 0, D::Int32, 1, D::Float64},
    {D::Float64, 1, D::Int64, 0, D::Float64},
    {D::Float64, 0, D::Int64, 0, D::Float64},
    {D::Float64, 0, D::Int64, 1, D::Float64},
    {D::Float64, 1, D::Float16, 0, D::Float64},
    {D::Float64, 0, D::Float16, 0, D::Float64},
    {D::Float64, 0, D::Float16, 1, D::Float16},
    {D::Float64, 1, D::BFloat16, 0, D::Float64},
    {D::Float64, 0, D::BFloat16, 0, D::Float64},
    {D::Float64, 0, D::BFloat16, 1, D::BFloat16},
    {D::Float64, 1, D::Float32, 0, D::Float64},
    {D::Float64, 0, D::Float32, 0, D::Float64},
    {D::Float64, 0, D::Float32, 1, D::Float32},
    {D::Float64, 1, D::Float64, 0, D::Float64},
    {D::Float64, 0, D::Float64, 0, D::Float64},
    {D::Float64, 0, D::Float64, 1, D::Float64},
};

// The complex dtypes (torch 2.13): kTorchComplexPromotion[a] =
// {promote_types(a, complex64), promote_types(a, complex128)}.
constexpr DType kTorchComplexPromotion[12][2] = {
    {D::Complex64, D::Complex128},  // Bool
    {D::Complex64, D::Complex128},  // UInt8
    {D::Complex64, D::Complex128},  // Int8
    {D::Complex64, D::Complex128},  // Int16
    {D::Complex64, D::Complex128},  // Int32
    {D::Complex64, D::Complex128},  // Int64
    {D::Complex64, D::Complex128},  // Float16
    {D::Complex64, D::Complex128},  // BFloat16
    {D::Complex64, D::Complex128},  // Float32
    {D::Complex128, D::Complex128},  // Float64
    {D::Complex64, D::Complex128},  // Complex64
    {D::Complex128, D::Complex128},  // Complex128
};
// result_type(tensor of ndim dims, 0.5+2j); torch's float16 / bfloat16
// rows (complex32) are left out: fastt has no complex32.
const ScalarCase kComplexScalarCases[] = {
    {D::Bool, 1, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Bool, 0, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::UInt8, 1, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::UInt8, 0, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Int8, 1, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Int8, 0, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Int16, 1, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Int16, 0, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Int32, 1, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Int32, 0, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Int64, 1, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Int64, 0, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Float32, 1, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Float32, 0, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Float64, 1, Scalar(Complex128(0.5, 2.0)), D::Complex128},
    {D::Float64, 0, Scalar(Complex128(0.5, 2.0)), D::Complex128},
    {D::Complex64, 1, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Complex64, 0, Scalar(Complex128(0.5, 2.0)), D::Complex64},
    {D::Complex128, 1, Scalar(Complex128(0.5, 2.0)), D::Complex128},
    {D::Complex128, 0, Scalar(Complex128(0.5, 2.0)), D::Complex128},
};

Tensor of(DType dt, int nd) {
  return nd ? Tensor::empty({2}, dt) : Tensor::empty({}, dt);
}

}  // namespace

TEST_CASE("promote_types matches torch for all 100 pairs", "[promotion]") {
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) {
      INFO(dtype_name(a) << " x " << dtype_name(b));
      CHECK(promote_types(a, b) == kTorchPromotion[int(a)][int(b)]);
    }
}

TEST_CASE("result_type of a tensor and a Python scalar", "[promotion]") {
  for (const ScalarCase& c : kScalarCases) {
    INFO(dtype_name(c.t) << " ndim " << c.ndim << " scalar kind "
                         << int(c.s.kind()));
    CHECK(result_type(of(c.t, c.ndim), c.s) == c.expected);
  }
}

TEST_CASE("result_type of two tensors with 0-d participants", "[promotion]") {
  for (const TensorCase& c : kTensorCases) {
    INFO(dtype_name(c.a) << "/" << c.na << " x " << dtype_name(c.b) << "/"
                         << c.nb);
    CHECK(result_type(of(c.a, c.na), of(c.b, c.nb)) == c.expected);
  }
}

TEST_CASE("result_type: the documented examples", "[promotion]") {
  // int tensor + 2.5 -> float32
  CHECK(result_type(of(D::Int32, 1), Scalar(2.5)) == D::Float32);
  // int8 tensor + 1000 -> int8 (a scalar never widens within its category)
  CHECK(result_type(of(D::Int8, 1), Scalar(1000)) == D::Int8);
  // float16 + 0-d float64 tensor -> float16
  CHECK(result_type(of(D::Float16, 1), of(D::Float64, 0)) == D::Float16);
  // 0-d int + 0-d float -> float
  CHECK(result_type(of(D::Int64, 0), of(D::Float32, 0)) == D::Float32);
  // bool tensor + int scalar -> int64
  CHECK(result_type(of(D::Bool, 1), Scalar(3)) == D::Int64);
  // 0-d int32 + int scalar stays int32; 0-d bool + float -> default float
  CHECK(result_type(of(D::Int32, 0), Scalar(7)) == D::Int32);
  CHECK(result_type(of(D::Bool, 0), Scalar(0.5)) == D::Float32);
  // Three participants: int8 tensor, 0-d float64, Python float.
  ResultTypeState s;
  s.add(of(D::Int8, 1));
  s.add(of(D::Float64, 0));
  s.add(Scalar(1.5));
  CHECK(s.result() == D::Float64);
  ResultTypeState empty;
  CHECK(empty.result() == default_dtype());
}

TEST_CASE("result_type follows the default dtype for Python floats",
          "[promotion]") {
  set_default_dtype(D::Float64);
  CHECK(result_type(of(D::Int32, 1), Scalar(2.5)) == D::Float64);
  CHECK(result_type(of(D::Float16, 1), Scalar(2.5)) == D::Float16);
  Tensor r = add(make({1, 2}, {2}, D::Int64), Scalar(0.5));
  CHECK(r.dtype() == D::Float64);
  set_default_dtype(D::Float32);
  CHECK_THROWS_AS(set_default_dtype(D::Int32), TypeError);
}

TEST_CASE("promotion drives elementwise result dtypes", "[promotion]") {
  Tensor i8 = make({1, 2, 3}, {3}, D::Int8);
  CHECK(add(i8, Scalar(1000)).dtype() == D::Int8);
  CHECK(add(i8, Scalar(2.5)).dtype() == D::Float32);
  CHECK(mul(make({1, 2}, {2}, D::Float16), scalar_tensor(2, D::Float64))
            .dtype() == D::Float16);
  CHECK(add(scalar_tensor(1, D::Int64), scalar_tensor(1, D::Float32))
            .dtype() == D::Float32);
  CHECK(add(make({1, 0}, {2}, D::Bool), Scalar(3)).dtype() == D::Int64);
  CHECK(add(make({1, 0}, {2}, D::UInt8), make({1, 2}, {2}, D::Int8))
            .dtype() == D::Int16);
  CHECK(add(Scalar(2), make({1, 0}, {2}, D::BFloat16)).dtype() ==
        D::BFloat16);
  // Values: int8 wraps like torch (100 + 100 = -56).
  CHECK(get(add(make({100}, {1}, D::Int8), Scalar(100)), 0) == -56);
}

TEST_CASE("can_cast follows torch.can_cast", "[promotion]") {
  CHECK(can_cast(D::Int32, D::Float16));
  CHECK_FALSE(can_cast(D::Float32, D::Int64));
  CHECK_FALSE(can_cast(D::Int8, D::Bool));
  CHECK(can_cast(D::Bool, D::UInt8));
  CHECK(can_cast(D::Float64, D::Float16));
  CHECK(can_cast(D::Int64, D::UInt8));
}

TEST_CASE("broadcast_shapes", "[promotion]") {
  using V = std::vector<int64_t>;
  CHECK(broadcast_shapes(V{3, 1}, V{1, 4}) == V{3, 4});
  CHECK(broadcast_shapes(V{}, V{2, 3}) == V{2, 3});
  CHECK(broadcast_shapes(V{5, 1, 7}, V{6, 1}) == V{5, 6, 7});
  CHECK(broadcast_shapes(V{0, 1}, V{1, 4}) == V{0, 4});
  CHECK(broadcast_shapes(V{2, 0}, V{1}) == V{2, 0});
  CHECK(broadcast_shapes(V{1}, V{0}) == V{0});
  CHECK_THROWS_AS(broadcast_shapes(V{2, 0}, V{3}), RuntimeError);
  try {
    broadcast_shapes(V{2, 3}, V{4});
    FAIL("expected an error");
  } catch (const RuntimeError& e) {
    std::string m = e.what();
    CHECK(m.find("(3)") != std::string::npos);
    CHECK(m.find("(4)") != std::string::npos);
    CHECK(m.find("[2, 3]") != std::string::npos);
  }
  // An op names itself and the sizes.
  try {
    add(Tensor::empty({2, 3}, D::Float32), Tensor::empty({2, 4}, D::Float32));
    FAIL("expected an error");
  } catch (const RuntimeError& e) {
    std::string m = e.what();
    CHECK(m.find("add") != std::string::npos);
    CHECK(m.find("[2, 3]") != std::string::npos);
    CHECK(m.find("[2, 4]") != std::string::npos);
  }
}

TEST_CASE("promote_types with the complex dtypes matches torch",
          "[promotion][complex]") {
  for (int a = 0; a < kNumDTypes; ++a)
    for (int k = 0; k < 2; ++k) {
      const DType c = k ? D::Complex128 : D::Complex64;
      INFO(dtype_name(DType(a)) << " x " << dtype_name(c));
      CHECK(promote_types(DType(a), c) == kTorchComplexPromotion[a][k]);
      CHECK(promote_types(c, DType(a)) == kTorchComplexPromotion[a][k]);
    }
}

TEST_CASE("result_type with a Python complex number", "[promotion][complex]") {
  for (const ScalarCase& c : kComplexScalarCases) {
    INFO(dtype_name(c.t) << " ndim " << c.ndim);
    CHECK(result_type(of(c.t, c.ndim), c.s) == c.expected);
  }
  // a 0-d complex tensor keeps a dimensioned float tensor's precision
  CHECK(result_type(of(D::Float32, 1), of(D::Complex128, 0)) ==
        D::Complex64);
  CHECK(result_type(of(D::Float64, 1), of(D::Complex64, 0)) ==
        D::Complex128);
  CHECK(result_type(of(D::Int64, 1), of(D::Complex128, 0)) == D::Complex128);
}
