#include "catch.h"
#include "csrc/ops/elementwise.h"

using namespace fastt;

TEST_CASE("smoke: add two tensors") {
  Tensor a = Tensor::empty({2, 2}, DType::Float32);
  Tensor b = Tensor::empty({2, 2}, DType::Float32);
  a.fill_(1.5);
  b.fill_(2.0);
  Tensor c = add(a, b);
  REQUIRE(c.data_ptr<float>()[3] == 3.5f);
  Tensor d = add(a, 2, 3);
  REQUIRE(d.data_ptr<float>()[0] == 7.5f);
  REQUIRE(c.str() == "tensor([[3.5000, 3.5000],\n        [3.5000, 3.5000]])");
}
