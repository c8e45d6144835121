// A tour of the C++ frontend: tensors, views, broadcasting, reductions and
// matmul — fitting a linear model by gradient descent with hand-written
// gradients (autograd comes with the autograd module).
#include <fastt/fastt.hpp>

#include <cstdio>
#include <iostream>

int main() {
  using namespace fastt;
  manual_seed(0);

  Tensor a = arange(0, 6).view({2, 3}).to(DType::Float32);
  std::cout << "a =\n" << a << "\n";
  std::cout << "a.t() =\n" << a.t() << "\n";
  std::cout << "a * 2 + 1 =\n" << a * 2 + 1 << "\n";
  std::cout << "a + row (broadcast) =\n" << a + ones({3}) << "\n";
  std::cout << "sum over dim 1 = " << sum(a, {1}) << "\n";

  // Least squares: y = X w* + noise, minimised by gradient descent.
  const int64_t n = 512;
  Tensor X = randn({n, 3});
  Tensor w_true = arange(1, 4).to(DType::Float32).view({3, 1});
  Tensor y = matmul(X, w_true) + randn({n, 1}) * 0.01;
  Tensor w = zeros({3, 1});
  for (int step = 0; step <= 100; ++step) {
    Tensor err = matmul(X, w) - y;
    Tensor loss = mean(err * err);
    Tensor grad = matmul(X.t(), err) * (2.0 / double(n));
    w -= grad * 0.1;
    if (step % 25 == 0)
      std::printf("step %3d  loss %.6f\n", step, loss.item<double>());
  }
  std::cout << "fitted w = " << w.view({3}) << " (true: 1, 2, 3)\n";
  auto stats = CachingAllocator::stats();
  std::printf("allocator: %lld bytes in use, %lld system allocations\n",
              (long long)stats.allocated_bytes, (long long)stats.system_allocs);
  return 0;
}
