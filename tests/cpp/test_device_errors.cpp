// Device rules on a CPU-only build: an op mixing devices raises
// RuntimeError, and an op on a device without kernels raises — neither may
// read device memory on the host. "cuda" tensors here wrap host buffers, so a
// host read shows up as a missing throw rather than a crash. To add an op:
// one CHECK_THROWS line per input position.
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/dispatch.h"
#include "csrc/ops/elementwise.h"
#include "csrc/ops/factory.h"
#include "csrc/ops/index.h"
#include "csrc/ops/linalg.h"
#include "csrc/ops/reduce.h"

using namespace fastt;
using namespace fastt::test;

namespace {

// Where a CUDA backend is installed, a "cuda" tensor over host memory would
// reach real device code; these tests are for builds without one.
bool cuda_backend_present() {
  return device_hooks(DeviceType::CUDA).allocate != nullptr ||
         registered_kernel(Op::add, DeviceType::CUDA, DType::Float32) !=
             nullptr;
}

}  // namespace

TEST_CASE("ops that mix devices raise instead of touching memory",
          "[errors][device]") {
  if (cuda_backend_present()) return;
  Tensor c = make({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float32);
  Tensor g = fake_cuda({2, 3}, DType::Float32);
  REQUIRE(g.is_cuda());
  Tensor ci = make({0, 1}, {2}, DType::Int64);
  Tensor gi = fake_cuda({2}, DType::Int64);
  Tensor cm = make({1, 0, 1, 0, 1, 0}, {2, 3}, DType::Bool);
  Tensor gm = fake_cuda({2, 3}, DType::Bool);
  CHECK_THROWS_AS(add(c, g), RuntimeError);
  CHECK_THROWS_AS(add(g, c), RuntimeError);
  CHECK_THROWS_AS(add_(c, g), RuntimeError);
  CHECK_THROWS_AS(mul(c, g), RuntimeError);
  CHECK_THROWS_AS(where(cm, c, g), RuntimeError);
  CHECK_THROWS_AS(where(gm, c, c), RuntimeError);
  CHECK_THROWS_AS(clamp(c, g, c), RuntimeError);
  CHECK_THROWS_AS(lerp(c, g, Scalar(0.5)), RuntimeError);
  CHECK_THROWS_AS(addcmul(c, c, g), RuntimeError);
  CHECK_THROWS_AS(masked_fill(c, gm, Scalar(1)), RuntimeError);
  CHECK_THROWS_AS(masked_select(c, gm), RuntimeError);
  CHECK_THROWS_AS(masked_select(g, cm), RuntimeError);
  CHECK_THROWS_AS(matmul(c.t(), g), RuntimeError);
  CHECK_THROWS_AS(mm(g.t(), c), RuntimeError);
  CHECK_THROWS_AS(cat({c, g}), RuntimeError);
  CHECK_THROWS_AS(stack({c, g}), RuntimeError);
  CHECK_THROWS_AS(index_select(c, 0, gi), RuntimeError);
  CHECK_THROWS_AS(index_select(g, 0, ci), RuntimeError);
  CHECK_THROWS_AS(gather(c, 1, fake_cuda({2, 3}, DType::Int64)),
                  RuntimeError);
  CHECK_THROWS_AS(scatter(c, 1, make({0, 1, 2}, {1, 3}, DType::Int64), g),
                  RuntimeError);
  CHECK_THROWS_AS(scatter_add(g, 1, make({0, 1, 2}, {1, 3}, DType::Int64), c),
                  RuntimeError);
  CHECK_THROWS_AS(index_add(c, 0, gi, c), RuntimeError);
  CHECK_THROWS_AS(embedding(c, gi), RuntimeError);
  CHECK_THROWS_AS(index(c, {gi}), RuntimeError);
  Tensor c2 = c.clone();
  CHECK_THROWS_AS(index_put_(c2, {ci}, g), RuntimeError);
  CHECK_THROWS_AS(c2.copy_(fake_cuda({2, 3}, DType::Float32)), Error);
}

TEST_CASE("ops on a device without kernels raise before reading its memory",
          "[errors][device]") {
  if (cuda_backend_present()) return;
  Tensor g = fake_cuda({2, 3}, DType::Float32);
  Tensor gi = fake_cuda({2}, DType::Int64);
  Tensor gm = fake_cuda({2, 3}, DType::Bool);
  CHECK_THROWS_AS(neg(g), Error);
  CHECK_THROWS_AS(add(g, g), Error);
  CHECK_THROWS_AS(floor_divide(fake_cuda({2}, DType::Int32),
                               fake_cuda({2}, DType::Int32)),
                  Error);
  CHECK_THROWS_AS(sum(g), Error);
  CHECK_THROWS_AS(max(g, 1), Error);
  CHECK_THROWS_AS(softmax(g, 1), Error);
  CHECK_THROWS_AS(cumsum(g, 1), Error);
  CHECK_THROWS_AS(matmul(g, g.t()), Error);
  CHECK_THROWS_AS(index_select(g, 0, gi), Error);
  CHECK_THROWS_AS(embedding(g, gi), Error);
  CHECK_THROWS_AS(one_hot(gi, 3), Error);
  CHECK_THROWS_AS(one_hot(gi), Error);
  CHECK_THROWS_AS(masked_select(g, gm), Error);
  CHECK_THROWS_AS(nonzero(g), Error);
  CHECK_THROWS_AS(index(g, {gi}), Error);
  CHECK_THROWS_AS(index(g, {gm}), Error);
  CHECK_THROWS_AS(sort(g, 1), Error);
  CHECK_THROWS_AS(topk(g, 1, 1), Error);
  CHECK_THROWS_AS(flip(g, {0}), Error);
  CHECK_THROWS_AS(roll(g, {1}, {0}), Error);
  CHECK_THROWS_AS(tril(g), Error);
  CHECK_THROWS_AS(repeat(g, {2, 1}), Error);
  CHECK_THROWS_AS(cat({g, g}), Error);
  CHECK_THROWS_AS(g.item(), Error);
  CHECK_THROWS_AS(g.str(), Error);
  CHECK_THROWS_AS(g.t().contiguous(), Error);
  CHECK_THROWS_AS(g.to(DType::Float64), Error);
  CHECK_THROWS_AS(all(gm), Error);
  CHECK_THROWS_AS(randperm(4, DType::Int64, Device(DeviceType::CUDA)), Error);
  CHECK_THROWS_AS(uniform_(g), Error);
  // Views need no kernel and stay on the device.
  CHECK(g.t().is_cuda());
  CHECK(g.view({3, 2}).is_cuda());
}
