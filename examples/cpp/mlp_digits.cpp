// A 64-128-128-10 MLP trained on scikit-learn's handwritten digits through
// the header-only C++ frontend: forward with fastt ops, loss.backward() on
// the tape, SGD with momentum under NoGradGuard. Reports test accuracy.
//
//   fastt_mlp_digits <path to sklearn/datasets/data/digits.csv.gz> [epochs]
//
// (scripts/main.sh finds the file through Python: the data set ships with
// scikit-learn, so nothing is downloaded.)
#include <fastt/fastt.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

struct Digits {
  std::vector<float> x;  // n x 64, pixel values 0..16
  std::vector<int64_t> y;
  int64_t n = 0;
};

// The CSV is gzip-compressed: read it through `gzip -dc`.
Digits load_digits(const std::string& path) {
  Digits d;
  std::string cmd = "gzip -dc '" + path + "'";
  std::unique_ptr<FILE, int (*)(FILE*)> f(popen(cmd.c_str(), "r"), pclose);
  if (!f) throw std::runtime_error("cannot run: " + cmd);
  std::vector<double> row;
  char line[4096];
  while (fgets(line, sizeof line, f.get())) {
    row.clear();
    char* p = line;
    while (*p && *p != '\n') {
      char* end;
      row.push_back(std::strtod(p, &end));
      if (end == p) break;
      p = *end == ',' ? end + 1 : end;
    }
    if (row.size() != 65) continue;
    for (int k = 0; k < 64; ++k) d.x.push_back(float(row[size_t(k)]));
    d.y.push_back(int64_t(row[64]));
    ++d.n;
  }
  if (d.n == 0) throw std::runtime_error("no rows read from " + path);
  return d;
}

fastt::Tensor from_floats(const std::vector<float>& v, int64_t rows,
                          int64_t cols) {
  fastt::Tensor t = fastt::Tensor::empty({rows, cols}, fastt::DType::Float32);
  std::copy(v.begin(), v.end(), t.data_ptr<float>());
  return t;
}

fastt::Tensor from_ints(const std::vector<int64_t>& v) {
  fastt::Tensor t =
      fastt::Tensor::empty({int64_t(v.size())}, fastt::DType::Int64);
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return t;
}

// torch.nn.Linear's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
fastt::Tensor uniform_param(fastt::IntList shape, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(double(fan_in));
  fastt::Tensor t = fastt::rand(shape) * (2 * bound) - bound;
  fastt::requires_grad_(t);
  return t;
}

double accuracy(const fastt::Tensor& logits, const fastt::Tensor& y) {
  fastt::Tensor hit = fastt::eq(fastt::argmax(logits, 1), y);
  return fastt::mean(hit.to(fastt::DType::Float32)).item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s digits.csv.gz [epochs]\n", argv[0]);
    return 2;
  }
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 30;
  const int64_t batch = 32;
  fastt::manual_seed(0);
  Digits d = load_digits(argv[1]);

  // 80/20 split with a fixed permutation, standardised with train stats.
  std::vector<int64_t> order(size_t(d.n));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(0);
  std::shuffle(order.begin(), order.end(), rng);
  const int64_t n_train = d.n * 8 / 10, n_test = d.n - n_train;
  std::vector<float> xtr, xte;
  std::vector<int64_t> ytr, yte;
  for (int64_t i = 0; i < d.n; ++i) {
    const int64_t r = order[size_t(i)];
    auto& xs = i < n_train ? xtr : xte;
    xs.insert(xs.end(), d.x.begin() + r * 64, d.x.begin() + r * 64 + 64);
    (i < n_train ? ytr : yte).push_back(d.y[size_t(r)]);
  }
  fastt::Tensor Xtr = from_floats(xtr, n_train, 64);
  fastt::Tensor Xte = from_floats(xte, n_test, 64);
  fastt::Tensor mu = fastt::mean(Xtr, {0}, true);
  fastt::Tensor sd = fastt::std(Xtr, {0}, 1, true) + 1e-3;
  Xtr = (Xtr - mu) / sd;
  Xte = (Xte - mu) / sd;
  fastt::Tensor Ytr = from_ints(ytr), Yte = from_ints(yte);

  std::vector<fastt::Tensor> params = {
      uniform_param({128, 64}, 64),   uniform_param({128}, 64),
      uniform_param({128, 128}, 128), uniform_param({128}, 128),
      uniform_param({10, 128}, 128),  uniform_param({10}, 128)};
  std::vector<fastt::Tensor> velocity;
  for (auto& p : params) velocity.push_back(fastt::zeros_like(p));
  auto forward = [&](const fastt::Tensor& x) {
    fastt::Tensor h = fastt::relu(fastt::linear(x, params[0], params[1]));
    h = fastt::relu(fastt::linear(h, params[2], params[3]));
    return fastt::linear(h, params[4], params[5]);
  };
  const double lr = 0.05, momentum = 0.9;

  std::printf("fastt C++ MLP on digits: %lld train / %lld test\n",
              (long long)n_train, (long long)n_test);
  double total_ms = 0;
  int64_t steps = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    fastt::Tensor perm = fastt::randperm(n_train);
    double loss_sum = 0;
    int64_t nb = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int64_t s = 0; s + batch <= n_train; s += batch) {
      fastt::Tensor idx = perm.narrow(0, s, batch);
      fastt::Tensor x = fastt::index_select(Xtr, 0, idx);
      fastt::Tensor y = fastt::index_select(Ytr, 0, idx);
      // Cross-entropy as -mean(sum(one_hot * log_softmax)).
      fastt::Tensor logp = fastt::log_softmax(forward(x), 1);
      fastt::Tensor target = fastt::one_hot(y, 10).to(fastt::DType::Float32);
      fastt::Tensor loss =
          fastt::neg(fastt::sum(target * logp)) / double(batch);
      for (auto& p : params) fastt::set_grad(p, fastt::Tensor());
      fastt::backward(loss);
      {
        fastt::NoGradGuard no_grad;
        for (size_t k = 0; k < params.size(); ++k) {
          fastt::mul_(velocity[k], momentum);
          fastt::add_(velocity[k], fastt::grad(params[k]));
          fastt::sub_(params[k], velocity[k], lr);
        }
      }
      loss_sum += loss.item<double>();
      ++nb;
    }
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - t0)
                          .count();
    total_ms += ms;
    steps += nb;
    fastt::NoGradGuard no_grad;
    std::printf("epoch %2d  loss %.4f  test acc %.4f  step %.3f ms\n", epoch,
                loss_sum / double(nb), accuracy(forward(Xte), Yte),
                ms / double(nb));
  }
  fastt::NoGradGuard no_grad;
  const double acc = accuracy(forward(Xte), Yte);
  std::printf("SUMMARY lib=fastt-cpp accuracy=%.4f step_ms=%.3f\n", acc,
              total_ms / double(steps));
  return acc >= 0.97 ? 0 : 1;
}
