// Tensor::str(): PyTorch's print format (tensor([...]) with aligned
// columns, 4 significant decimals or scientific notation, "..." summaries
// above 1000 elements, and the dtype when it is not a default one).
#include <cmath>
#include <string>
#include <vector>

#include "tensor.h"

namespace fastt {
namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

struct Formatter {
  bool floating = false;
  bool boolean = false;
  bool int_mode = true;  // floats that are all whole numbers print as "1."
  bool sci = false;
  size_t width = 1;

  std::string format(double v) const {
    if (boolean) return v != 0 ? "True" : "False";
    if (!floating) return fmt::format("{}", int64_t(v));
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (sci) return fmt::format("{:.4e}", v);
    if (int_mode) return fmt::format("{:.0f}.", v);
    return fmt::format("{:.4f}", v);
  }
};

// Collects the printed elements (all, or the summarized edges).
void collect(const Tensor& t, int dim, int64_t offset, bool summarize,
             const std::vector<double>& all, std::vector<double>& out) {
  if (t.dim() == 0) {
    out.push_back(all[0]);
    return;
  }
  int64_t size = t.sizes()[dim];
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < t.dim(); ++d) stride *= t.sizes()[d];
  auto visit = [&](int64_t i) {
    if (dim == t.dim() - 1)
      out.push_back(all[size_t(offset + i)]);
    else
      collect(t, dim + 1, offset + i * stride, summarize, all, out);
  };
  if (summarize && size > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) visit(i);
    for (int64_t i = size - kEdgeItems; i < size; ++i) visit(i);
  } else {
    for (int64_t i = 0; i < size; ++i) visit(i);
  }
}

void emit(const Tensor& t, int dim, int64_t offset, bool summarize,
          const std::vector<double>& all, const Formatter& f, int indent,
          std::string& s) {
  int64_t size = t.sizes()[dim];
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < t.dim(); ++d) stride *= t.sizes()[d];
  s += '[';
  bool last = dim == t.dim() - 1;
  auto elem = [&](int64_t i, bool first) {
    if (!first) {
      if (last) {
        s += ", ";
      } else {
        s += ',';
        s.append(size_t(t.dim() - dim - 1), '\n');
        s.append(size_t(indent + dim + 1), ' ');
      }
    }
    if (last) {
      std::string v = f.format(all[size_t(offset + i)]);
      if (v.size() < f.width) s.append(f.width - v.size(), ' ');
      s += v;
    } else {
      emit(t, dim + 1, offset + i * stride, summarize, all, f, indent, s);
    }
  };
  if (summarize && size > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) elem(i, i == 0);
    if (last) {
      s += ", ...";
    } else {
      s += ',';
      s.append(size_t(t.dim() - dim - 1), '\n');
      s.append(size_t(indent + dim + 1), ' ');
      s += "...";
    }
    for (int64_t i = size - kEdgeItems; i < size; ++i) elem(i, false);
  } else {
    for (int64_t i = 0; i < size; ++i) elem(i, i == 0);
  }
  s += ']';
}

}  // namespace

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  Tensor c = to(kCPU).contiguous().to(DType::Float64);
  const double* p = c.data_ptr<double>();
  std::vector<double> all(p, p + c.numel());
  bool summarize = numel() > kThreshold;
  std::vector<double> shown;
  if (numel() > 0) collect(c, 0, 0, summarize, all, shown);

  Formatter f;
  f.floating = is_floating_point();
  f.boolean = dtype() == DType::Bool;
  if (f.boolean) f.floating = false;
  if (f.floating) {
    double amax = 0, amin = INFINITY;
    bool any_finite = false;
    for (double v : shown) {
      if (!std::isfinite(v)) continue;
      any_finite = true;
      if (v != std::floor(v)) f.int_mode = false;
      double a = std::fabs(v);
      if (a > amax) amax = a;
      if (a != 0 && a < amin) amin = a;
    }
    if (any_finite) {
      if (f.int_mode) {
        f.sci = amax > 1e8;
      } else {
        f.sci = amax / (amin == INFINITY ? amax : amin) > 1000.0 ||
                amax > 1e8 || (amin != INFINITY && amin < 1e-4);
      }
    }
  }
  for (double v : shown) {
    std::string sv = f.format(v);
    f.width = std::max(f.width, sv.size());
  }

  std::string body;
  const int indent = 7;  // strlen("tensor(")
  if (dim() == 0) {
    body = f.format(all[0]);
  } else if (numel() == 0) {
    body = "[]";
  } else {
    emit(c, 0, 0, summarize, all, f, indent, body);
  }
  std::string r = "tensor(" + body;
  if (numel() == 0 && dim() != 1)
    r += fmt::format(", size=({}{})", fmt::join(sizes().begin(), sizes().end(), ", "),
                     dim() == 1 ? "," : "");
  if (!is_cpu()) r += fmt::format(", device='{}'", device().str());
  DType dt = dtype();
  bool implicit = dt == default_dtype() || dt == DType::Int64 || dt == DType::Bool;
  if (!implicit) r += fmt::format(", dtype=fastt.{}", dtype_name(dt));
  r += ")";
  return r;
}

}  // namespace fastt
