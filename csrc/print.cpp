// Tensor::str(): PyTorch's print format (torch/_tensor_str.py with default
// print options): widths from the nonzero finite values, int/fixed/sci
// modes, 80-column wrapping, "..." summaries above 1000 elements, and the
// device/size/dtype suffixes. Python's repr and the C++ frontend share it.
#include <cmath>

#include "autograd.h"
#include "capture.h"
#include <string>
#include <vector>

#include "ops/complex.h"
#include "tensor.h"

namespace fastt {
namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

struct Printer {
  const Tensor& t;             // contiguous, on the CPU
  const double* f = nullptr;   // floating dtypes, as double
  const int64_t* i = nullptr;  // integer dtypes, as int64 (exact)
  bool boolean = false;
  // Complex: this printer formats the real parts, `imag` the imaginary
  // ones, each with its own mode and width (torch's two formatters); an
  // element is the real part padded, then the imaginary part signed, "j".
  const Printer* imag = nullptr;
  bool summarize = false;
  bool int_mode = true;
  bool sci = false;
  size_t width = 1;

  int64_t stride_of(int dim) const {
    int64_t s = 1;
    for (int64_t d = dim + 1; d < t.dim(); ++d) s *= t.sizes()[d];
    return s;
  }
  // Calls fn(flat index) for every element that will be printed.
  template <class Fn>
  void visit(int dim, int64_t off, Fn&& fn) const {
    if (t.dim() == 0) return fn(off);
    int64_t n = t.sizes()[dim], st = stride_of(dim);
    auto one = [&](int64_t k) {
      if (dim == t.dim() - 1)
        fn(off + k);
      else
        visit(dim + 1, off + k * st, fn);
    };
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t k = 0; k < kEdgeItems; ++k) one(k);
      for (int64_t k = n - kEdgeItems; k < n; ++k) one(k);
    } else {
      for (int64_t k = 0; k < n; ++k) one(k);
    }
  }
  std::string raw(int64_t k) const {
    if (boolean) return i[k] ? "True" : "False";
    if (i) return fmt::format("{}", i[k]);
    double v = f[k];
    if (sci) return fmt::format("{:.4e}", v);
    if (int_mode) {
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      return fmt::format("{:.0f}.", v);
    }
    return fmt::format("{:.4f}", v);
  }
  std::string cell(int64_t k) const {
    std::string s = raw(k);
    if (s.size() < width) s.insert(0, width - s.size(), ' ');
    if (imag) {
      std::string im = imag->raw(k);
      if (im[0] != '-' && im[0] != '+') s += '+';
      s += im + 'j';
    }
    return s;
  }
  // A cell's width as the line wrapping counts it.
  size_t cell_width() const { return imag ? width + imag->width + 1 : width; }
  void setup() {
    if (!f) {
      visit(0, 0, [&](int64_t k) { width = std::max(width, raw(k).size()); });
      return;
    }
    double amax = 0, amin = INFINITY;
    bool any = false;
    visit(0, 0, [&](int64_t k) {
      double v = f[k];
      if (!std::isfinite(v) || v == 0) return;
      any = true;
      if (v != std::ceil(v)) int_mode = false;
      amax = std::max(amax, std::fabs(v));
      amin = std::min(amin, std::fabs(v));
    });
    if (!any) return;
    sci = amax / amin > 1000.0 || amax > 1.0e8 || (!int_mode && amin < 1.0e-4);
    visit(0, 0, [&](int64_t k) {
      double v = f[k];
      if (std::isfinite(v) && v != 0) width = std::max(width, raw(k).size());
    });
  }
  void vec(int64_t off, int64_t indent, std::string& s) const {
    int64_t n = t.sizes()[t.dim() - 1];
    std::vector<std::string> data;
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t k = 0; k < kEdgeItems; ++k) data.push_back(cell(off + k));
      data.push_back(" ...");
      for (int64_t k = n - kEdgeItems; k < n; ++k)
        data.push_back(cell(off + k));
    } else {
      for (int64_t k = 0; k < n; ++k) data.push_back(cell(off + k));
    }
    int64_t per_line = std::max<int64_t>(
        1, (kLineWidth - indent) / int64_t(cell_width() + 2));
    s += '[';
    for (size_t k = 0; k < data.size(); ++k) {
      if (k) {
        if (int64_t(k) % per_line == 0) {
          s += ",\n";
          s.append(size_t(indent + 1), ' ');
        } else {
          s += ", ";
        }
      }
      s += data[k];
    }
    s += ']';
  }
  void nd(int dim, int64_t off, int64_t indent, std::string& s) const {
    if (dim == t.dim() - 1) return vec(off, indent, s);
    int64_t n = t.sizes()[dim], st = stride_of(dim);
    std::string sep = ",";
    sep.append(size_t(t.dim() - dim - 1), '\n');
    sep.append(size_t(indent + 1), ' ');
    s += '[';
    bool first = true;
    auto one = [&](int64_t k) {
      if (!first) s += sep;
      first = false;
      nd(dim + 1, off + k * st, indent + 1, s);
    };
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t k = 0; k < kEdgeItems; ++k) one(k);
      s += sep;
      s += "...";
      for (int64_t k = n - kEdgeItems; k < n; ++k) one(k);
    } else {
      for (int64_t k = 0; k < n; ++k) one(k);
    }
    s += ']';
  }
};

}  // namespace

std::string Tensor::str() const {
  const Tensor& self = *this;
  if (!self.defined()) return "tensor(undefined)";
  capture::host_read("printing a tensor");
  const bool floating = self.is_floating_point();
  DType dt = self.dtype();
  std::string body;
  if (self.numel() == 0) {
    body = "[]";
  } else if (is_complex(dt)) {
    const Tensor z = self.to(kCPU).to(DType::Complex128);
    const Tensor re = real_part(z).contiguous(), im = imag_part(z).contiguous();
    Printer pr{re}, pi{im};
    pr.f = re.data_ptr<double>();
    pi.f = im.data_ptr<double>();
    pr.summarize = pi.summarize = self.numel() > kThreshold;
    pr.setup();
    pi.setup();
    pr.imag = &pi;
    if (re.dim() == 0)
      body = pr.cell(0);
    else
      pr.nd(0, 0, 7, body);
  } else {
    Tensor c = self.to(kCPU).contiguous().to(floating ? DType::Float64
                                                      : DType::Int64);
    Printer p{c};
    if (floating)
      p.f = c.data_ptr<double>();
    else
      p.i = c.data_ptr<int64_t>();
    p.boolean = dt == DType::Bool;
    p.summarize = self.numel() > kThreshold;
    p.setup();
    if (c.dim() == 0)
      body = p.cell(0);
    else
      p.nd(0, 0, 7, body);  // 7 == strlen("tensor(")
  }
  std::vector<std::string> suffixes;
  if (!self.is_cpu())
    suffixes.push_back(fmt::format("device='{}'", self.device().str()));
  if (self.numel() == 0 && self.dim() != 1) {
    std::string sz = "size=(";
    for (int64_t d = 0; d < self.dim(); ++d)
      sz += fmt::format(d ? ", {}" : "{}", self.sizes()[d]);
    suffixes.push_back(sz + ")");
  }
  bool shown = self.numel() == 0
                   ? dt != default_dtype()
                   : !(dt == default_dtype() || dt == DType::Int64 ||
                       dt == DType::Bool ||
                       dt == to_complex(default_dtype()));
  if (shown) suffixes.push_back(fmt::format("dtype=fastt.{}", dtype_name(dt)));
  if (self.impl()->grad_fn)
    suffixes.push_back(fmt::format("grad_fn=<{}>", grad_fn_name(self)));
  else if (self.impl()->requires_grad)
    suffixes.push_back("requires_grad=True");
  // torch's _add_suffixes: a suffix that would pass column 80 goes on its
  // own line (its arithmetic, off-by-one included).
  std::string r = "tensor(" + body;
  size_t nl = r.rfind('\n');
  int64_t last = int64_t(r.size()) -
                 (nl == std::string::npos ? -1 : int64_t(nl)) + 1;
  for (const std::string& x : suffixes) {
    int64_t n = int64_t(x.size());
    if (last + n + 2 > kLineWidth) {
      r += ",\n       " + x;  // 7 spaces: strlen("tensor(")
      last = 7 + n;
    } else {
      r += ", " + x;
      last += n + 2;
    }
  }
  return r + ")";
}

}  // namespace fastt
