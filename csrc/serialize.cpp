// safetensors reader/writer. The header is parsed by a small strict JSON
// reader for exactly the subset the format uses (objects, strings, arrays,
// non-negative integers), driven by the schema, so nothing recurses and
// every read is bounds-checked. To support a new dtype add a row to
// kSafetensorsDTypes.
#include "serialize.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>

#include "capture.h"

namespace fastt {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; fastt copies it as is");

namespace {

struct DTypeRow {
  DType dtype;
  const char* name;
};
constexpr DTypeRow kSafetensorsDTypes[] = {
    {DType::Bool, "BOOL"},    {DType::UInt8, "U8"},
    {DType::Int8, "I8"},      {DType::Int16, "I16"},
    {DType::Int32, "I32"},    {DType::Int64, "I64"},
    {DType::Float16, "F16"},  {DType::BFloat16, "BF16"},
    {DType::Float32, "F32"},  {DType::Float64, "F64"},
    {DType::Complex64, "C64"},
};
// Valid safetensors dtypes fastt has no type for (a clearer error).
constexpr const char* kForeignDTypes[] = {
    "U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3",
    "F6_E3M2"};

constexpr const char* kOp = "load_safetensors";

// Length of the valid UTF-8 sequence at p (< end), or 0 when invalid
// (overlong forms, surrogates and code points past U+10FFFF included).
size_t utf8_sequence(const unsigned char* p, const unsigned char* end) {
  unsigned c = p[0];
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp, min;
  if ((c & 0xE0) == 0xC0) {
    n = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (size_t(end - p) < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

bool valid_utf8(const std::string& s) {
  auto* p = reinterpret_cast<const unsigned char*>(s.data());
  auto* end = p + s.size();
  while (p < end) {
    size_t n = utf8_sequence(p, end);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

// ---------------------------------------------------------------- reader --
class JsonReader {
 public:
  JsonReader(const char* data, size_t size)
      : begin_(data), p_(data), end_(data + size) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw ValueError(fmt::format("{}: malformed JSON header at byte {}: {}",
                                 kOp, size_t(p_ - begin_), what));
  }
  void skip_ws() {
    while (p_ < end_ &&
           (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r'))
      ++p_;
  }
  bool at_end() const { return p_ == end_; }
  // True (and consumes it) when the next non-space byte is c.
  bool accept(char c) {
    skip_ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* what) {
    if (!accept(c)) {
      if (p_ == end_) fail(fmt::format("unexpected end, expected {}", what));
      fail(fmt::format("expected {}", what));
    }
  }

  std::string string() {
    expect('"', "a string");
    std::string out;
    for (;;) {
      if (p_ >= end_) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return out;
      }
      if (c < 0x20) fail("control character inside a string");
      if (c == '\\') {
        ++p_;
        if (p_ >= end_) fail("unterminated escape");
        char e = *p_++;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            uint32_t cp = hex4();
            if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
                fail("high surrogate without a low surrogate");
              p_ += 2;
              uint32_t lo = hex4();
              if (lo < 0xDC00 || lo > 0xDFFF)
                fail("high surrogate without a low surrogate");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            append_utf8(out, cp);
            break;
          }
          default: fail("invalid escape in a string");
        }
        continue;
      }
      size_t n = utf8_sequence(reinterpret_cast<const unsigned char*>(p_),
                               reinterpret_cast<const unsigned char*>(end_));
      if (n == 0) fail("invalid UTF-8 in a string");
      out.append(p_, n);
      p_ += n;
    }
  }

  // A non-negative JSON integer; `what` names it in errors.
  uint64_t uint(const std::string& what) {
    skip_ws();
    if (p_ < end_ && *p_ == '-') fail(what + " is negative");
    if (p_ >= end_ || *p_ < '0' || *p_ > '9')
      fail(what + ": expected a non-negative integer");
    if (*p_ == '0' && end_ - p_ > 1 && p_[1] >= '0' && p_[1] <= '9')
      fail(what + ": leading zeros are not allowed");
    uint64_t v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      if (__builtin_mul_overflow(v, uint64_t(10), &v) ||
          __builtin_add_overflow(v, uint64_t(*p_ - '0'), &v))
        fail(what + " does not fit in 64 bits");
      ++p_;
    }
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E'))
      fail(what + ": expected an integer");
    return v;
  }

 private:
  uint32_t hex4() {
    if (end_ - p_ < 4) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
      else fail("invalid hex digit in a \\u escape");
    }
    return v;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
};

struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  std::vector<Entry> entries;  // header order
  StringMap metadata;
  uint64_t data_start = 0;  // file offset of the byte buffer
};

DType parse_dtype(const std::string& s, const std::string& name) {
  DType dt;
  if (safetensors_dtype_from_name(s, &dt)) return dt;
  for (const char* f : kForeignDTypes)
    FASTT_CHECK(s != f, ValueError,
                "{}: tensor '{}' has dtype {}, which fastt does not support",
                kOp, name, s);
  throw ValueError(
      fmt::format("{}: tensor '{}' has unknown dtype \"{}\"", kOp, name, s));
}

Entry parse_entry(JsonReader& r, std::string name) {
  Entry e;
  e.name = std::move(name);
  bool has_dtype = false, has_shape = false, has_offsets = false;
  const std::string ctx = fmt::format("tensor '{}'", e.name);
  r.expect('{', fmt::format("an object for {}", ctx).c_str());
  if (!r.accept('}')) {
    do {
      std::string key = r.string();
      r.expect(':', "':'");
      bool* seen = key == "dtype"          ? &has_dtype
                   : key == "shape"        ? &has_shape
                   : key == "data_offsets" ? &has_offsets
                                           : nullptr;
      if (!seen) r.fail(fmt::format("{} has unknown field \"{}\"", ctx, key));
      if (*seen) r.fail(fmt::format("{} repeats field \"{}\"", ctx, key));
      *seen = true;
      if (seen == &has_dtype) {
        e.dtype = parse_dtype(r.string(), e.name);
      } else if (seen == &has_shape) {
        r.expect('[', "'[' opening the shape");
        if (!r.accept(']')) {
          do {
            if (e.shape.size() == size_t(kMaxDims))
              throw ValueError(fmt::format(
                  "{}: {} has more than {} dimensions", kOp, ctx, kMaxDims));
            uint64_t d = r.uint(ctx + " shape dimension");
            if (d > uint64_t(std::numeric_limits<int64_t>::max()))
              r.fail(ctx + " shape dimension is too large");
            e.shape.push_back(int64_t(d));
          } while (r.accept(','));
          r.expect(']', "']' closing the shape");
        }
      } else {
        r.expect('[', "'[' opening data_offsets");
        e.begin = r.uint(ctx + " data_offsets[0]");
        r.expect(',', "two data_offsets");
        e.end = r.uint(ctx + " data_offsets[1]");
        r.expect(']', "exactly two data_offsets");
      }
    } while (r.accept(','));
    r.expect('}', "',' or '}'");
  }
  FASTT_CHECK(has_dtype && has_shape && has_offsets, ValueError,
              "{}: {} lacks \"{}\"", kOp, ctx,
              !has_dtype ? "dtype" : !has_shape ? "shape" : "data_offsets");
  return e;
}

// Parses the JSON header and checks it against a byte buffer of
// `buffer_size` bytes: sizes, offsets, full coverage without overlap.
Header parse_header(const char* json, size_t json_size, uint64_t buffer_size) {
  Header h;
  // The spec: the header starts with '{' and may be padded with spaces.
  FASTT_CHECK(json_size > 0 && json[0] == '{', ValueError,
              "{}: the JSON header must start with '{{'", kOp);
  JsonReader r(json, json_size);
  r.expect('{', "'{'");
  std::set<std::string> names;
  bool has_metadata = false;
  if (!r.accept('}')) {
    do {
      std::string key = r.string();
      r.expect(':', "':'");
      if (key == "__metadata__") {
        if (has_metadata) r.fail("duplicate \"__metadata__\"");
        has_metadata = true;
        r.expect('{', "an object for \"__metadata__\"");
        if (!r.accept('}')) {
          do {
            std::string k = r.string();
            r.expect(':', "':'");
            std::string v = r.string();
            if (!h.metadata.emplace(std::move(k), std::move(v)).second)
              r.fail("duplicate key in \"__metadata__\"");
          } while (r.accept(','));
          r.expect('}', "',' or '}' in \"__metadata__\"");
        }
        continue;
      }
      FASTT_CHECK(names.insert(key).second, ValueError,
                  "{}: duplicate tensor name '{}' in the header", kOp, key);
      h.entries.push_back(parse_entry(r, std::move(key)));
    } while (r.accept(','));
    r.expect('}', "',' or '}'");
  }
  r.skip_ws();
  if (!r.at_end()) r.fail("unexpected data after the header object");

  // Sizes and offsets of each tensor.
  for (const Entry& e : h.entries) {
    std::string op = fmt::format("{}: tensor '{}'", kOp, e.name);
    int64_t numel = checked_numel(e.shape, op.c_str());
    uint64_t nbytes = uint64_t(numel) * itemsize(e.dtype);
    FASTT_CHECK(e.begin <= e.end, ValueError,
                "{} has reversed data_offsets [{}, {}]", op, e.begin, e.end);
    FASTT_CHECK(e.end - e.begin == nbytes, ValueError,
                "{}: data_offsets [{}, {}] hold {} bytes but shape {} of "
                "dtype {} needs {}",
                op, e.begin, e.end, e.end - e.begin, shape_str(e.shape),
                safetensors_dtype_name(e.dtype), nbytes);
    FASTT_CHECK(e.end <= buffer_size, ValueError,
                "{}: data_offsets [{}, {}] lie outside the data buffer of {} "
                "bytes (truncated file?)",
                op, e.begin, e.end, buffer_size);
  }
  // The buffer must be covered exactly: no overlap, no gap, nothing after.
  std::vector<size_t> order(h.entries.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Entry &x = h.entries[a], &y = h.entries[b];
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  uint64_t covered = 0;
  const Entry* prev = nullptr;
  for (size_t i : order) {
    const Entry& e = h.entries[i];
    FASTT_CHECK(e.begin >= covered, ValueError,
                "{}: tensors '{}' and '{}' overlap in the data buffer", kOp,
                prev ? prev->name : std::string(), e.name);
    FASTT_CHECK(e.begin == covered, ValueError,
                "{}: {} unused bytes before tensor '{}' (safetensors "
                "requires the data buffer to be fully covered)",
                kOp, e.begin - covered, e.name);
    covered = e.end;
    prev = &e;
  }
  FASTT_CHECK(covered == buffer_size, ValueError,
              "{}: {} bytes of trailing data after the last tensor", kOp,
              buffer_size - covered);
  return h;
}

uint64_t read_u64_le(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// The header length after the 8-byte prefix, checked against the size.
uint64_t check_header_length(uint64_t n, uint64_t file_size) {
  FASTT_CHECK(n <= kMaxSafetensorsHeader, ValueError,
              "{}: header length {} exceeds the {} byte limit", kOp, n,
              kMaxSafetensorsHeader);
  FASTT_CHECK(n <= file_size - 8, RuntimeError,
              "{}: header length {} is larger than the rest of the file "
              "({} bytes): truncated or corrupt file",
              kOp, n, file_size - 8);
  return n;
}

void check_prefix(uint64_t file_size) {
  FASTT_CHECK(file_size >= 8, RuntimeError,
              "{}: truncated file: {} bytes, but the 8-byte header length "
              "alone needs 8",
              kOp, file_size);
}

// Bool bytes other than 0/1 would be invalid C++ bools: normalise them.
void normalise_bools(Tensor& t) {
  auto* p = static_cast<unsigned char*>(t.data_ptr());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
}
bool bools_normal(const char* p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    if (static_cast<unsigned char>(p[i]) > 1) return false;
  return true;
}

Tensor copy_entry(const Entry& e, const char* src) {
  Tensor t = Tensor::empty(e.shape, e.dtype);
  if (e.end > e.begin) std::memcpy(t.data_ptr(), src, e.end - e.begin);
  if (e.dtype == DType::Bool) normalise_bools(t);
  return t;
}

// ---------------------------------------------------------------- writer --
void append_json_string(std::string& out, const std::string& s) {
  out += '"';
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", unsigned(c));
    } else {
      out += ch;
    }
  }
  out += '"';
}

struct Plan {
  std::string header;            // 8-byte length + padded JSON
  std::vector<Tensor> tensors;   // CPU, contiguous, in buffer order
};

Plan plan_save(const NamedTensors& tensors, const StringMap& metadata) {
  capture::host_read("saving tensors");
  const char* op = "save_safetensors";
  std::set<std::string> names;
  std::vector<Tensor> cpu(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string& name = tensors[i].first;
    FASTT_CHECK(name != "__metadata__", ValueError,
                "{}: '__metadata__' is reserved and cannot name a tensor", op);
    FASTT_CHECK(names.insert(name).second, ValueError,
                "{}: duplicate tensor name '{}'", op, name);
    FASTT_CHECK(valid_utf8(name), ValueError,
                "{}: tensor name is not valid UTF-8", op);
    const Tensor& t = tensors[i].second;
    FASTT_CHECK(t.defined(), ValueError, "{}: tensor '{}' is undefined", op,
                name);
    FASTT_CHECK(std::string(safetensors_dtype_name(t.dtype())) != "?",
                ValueError,
                "{}: tensor '{}' is {}, which safetensors has no dtype for "
                "(its complex type is C64, complex64)",
                op, name, dtype_name(t.dtype()));
    Tensor c = t.is_cpu() ? t : t.to(kCPU);
    cpu[i] = c.contiguous();
  }
  for (const auto& kv : metadata)
    FASTT_CHECK(valid_utf8(kv.first) && valid_utf8(kv.second), ValueError,
                "{}: metadata key or value is not valid UTF-8", op);

  // Buffer layout: widest dtypes first so every tensor stays aligned to
  // its itemsize (the buffer itself starts 8-aligned); the header keeps
  // the caller's order.
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return cpu[a].itemsize() > cpu[b].itemsize();
  });
  std::vector<uint64_t> begin(tensors.size());
  uint64_t offset = 0;
  Plan plan;
  for (size_t i : order) {
    begin[i] = offset;
    offset += cpu[i].nbytes();
    plan.tensors.push_back(cpu[i]);
  }

  std::string json = "{";
  bool first = true;
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    for (const auto& kv : metadata) {
      if (!first) json += ',';
      first = false;
      append_json_string(json, kv.first);
      json += ':';
      append_json_string(json, kv.second);
    }
    json += '}';
    first = false;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!first) json += ',';
    first = false;
    append_json_string(json, tensors[i].first);
    const Tensor& t = cpu[i];
    json += fmt::format(
        ":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
        safetensors_dtype_name(t.dtype()),
        fmt::join(t.sizes().begin(), t.sizes().end(), ","), begin[i],
        begin[i] + t.nbytes());
  }
  json += '}';
  // Pad with spaces (allowed by the spec) so the buffer starts 8-aligned.
  json.append((8 - json.size() % 8) % 8, ' ');
  FASTT_CHECK(json.size() <= kMaxSafetensorsHeader, ValueError,
              "{}: the header would be {} bytes, over the {} byte limit", op,
              json.size(), kMaxSafetensorsHeader);
  uint64_t n = json.size();
  plan.header.resize(8);
  std::memcpy(&plan.header[0], &n, 8);
  plan.header += json;
  return plan;
}

void write_all(int fd, const char* p, size_t n, const char* what) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, std::min<size_t>(n, size_t(1) << 30));
    if (w < 0 && errno == EINTR) continue;
    FASTT_CHECK(w > 0, RuntimeError, "{}: write failed: {}", what,
                std::strerror(errno));
    p += w;
    n -= size_t(w);
  }
}

void read_all(int fd, char* p, size_t n, uint64_t offset) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, std::min<size_t>(n, size_t(1) << 30),
                        off_t(offset));
    if (r < 0 && errno == EINTR) continue;
    FASTT_CHECK(r >= 0, RuntimeError, "load_file: read failed: {}",
                std::strerror(errno));
    FASTT_CHECK(r > 0, RuntimeError,
                "load_file: truncated file (it shrank while being read)");
    p += r;
    n -= size_t(r);
    offset += uint64_t(r);
  }
}

struct Mapping {
  void* base;
  size_t length;
};
void unmap(void* ctx, void*, size_t) {
  auto* m = static_cast<Mapping*>(ctx);
  ::munmap(m->base, m->length);
  delete m;
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

const char* safetensors_dtype_name(DType dt) {
  for (const DTypeRow& r : kSafetensorsDTypes)
    if (r.dtype == dt) return r.name;
  return "?";
}

bool safetensors_dtype_from_name(const std::string& name, DType* out) {
  for (const DTypeRow& r : kSafetensorsDTypes) {
    if (name == r.name) {
      *out = r.dtype;
      return true;
    }
  }
  return false;
}

std::string save_safetensors(const NamedTensors& tensors,
                             const StringMap& metadata) {
  Plan plan = plan_save(tensors, metadata);
  std::string out = std::move(plan.header);
  for (const Tensor& t : plan.tensors)
    out.append(static_cast<const char*>(t.data_ptr()), t.nbytes());
  return out;
}

void save_fd(int fd, const NamedTensors& tensors, const StringMap& metadata) {
  Plan plan = plan_save(tensors, metadata);
  write_all(fd, plan.header.data(), plan.header.size(), "save_file");
  for (const Tensor& t : plan.tensors)
    write_all(fd, static_cast<const char*>(t.data_ptr()), t.nbytes(),
              "save_file");
}

void save_file(const std::string& path, const NamedTensors& tensors,
               const StringMap& metadata) {
  Plan plan = plan_save(tensors, metadata);  // validate before truncating
  Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  FASTT_CHECK(f.fd >= 0, RuntimeError, "save_file: cannot open '{}': {}",
              path, std::strerror(errno));
  write_all(f.fd, plan.header.data(), plan.header.size(), "save_file");
  for (const Tensor& t : plan.tensors)
    write_all(f.fd, static_cast<const char*>(t.data_ptr()), t.nbytes(),
              "save_file");
  int rc = ::close(f.fd);
  f.fd = -1;
  FASTT_CHECK(rc == 0, RuntimeError, "save_file: closing '{}' failed: {}",
              path, std::strerror(errno));
}

SafetensorsContents load_safetensors(const char* data, size_t size) {
  capture::host_read("loading tensors");
  check_prefix(size);
  uint64_t n = check_header_length(read_u64_le(data), size);
  Header h = parse_header(data + 8, size_t(n), size - 8 - n);
  const char* buffer = data + 8 + n;
  SafetensorsContents out;
  out.tensors.reserve(h.entries.size());
  for (const Entry& e : h.entries)
    out.tensors.emplace_back(e.name, copy_entry(e, buffer + e.begin));
  out.metadata = std::move(h.metadata);
  return out;
}

SafetensorsContents load_fd(int fd, bool mmap) {
  capture::host_read("loading tensors");
  struct stat st;
  FASTT_CHECK(::fstat(fd, &st) == 0, RuntimeError, "load_file: fstat: {}",
              std::strerror(errno));
  FASTT_CHECK(S_ISREG(st.st_mode), ValueError,
              "load_file: not a regular file");
  const uint64_t size = uint64_t(st.st_size);
  check_prefix(size);
  SafetensorsContents out;
  if (!mmap) {
    char prefix[8];
    read_all(fd, prefix, 8, 0);
    uint64_t n = check_header_length(read_u64_le(prefix), size);
    std::string json(size_t(n), '\0');
    read_all(fd, &json[0], json.size(), 8);
    Header h = parse_header(json.data(), json.size(), size - 8 - n);
    out.tensors.reserve(h.entries.size());
    for (const Entry& e : h.entries) {
      Tensor t = Tensor::empty(e.shape, e.dtype);
      read_all(fd, static_cast<char*>(t.data_ptr()), e.end - e.begin,
               8 + n + e.begin);
      if (e.dtype == DType::Bool) normalise_bools(t);
      out.tensors.emplace_back(e.name, std::move(t));
    }
    out.metadata = std::move(h.metadata);
    return out;
  }
  // MAP_PRIVATE + PROT_WRITE: in-place ops on loaded tensors copy the page
  // instead of faulting, and never write the file.
  void* base = ::mmap(nullptr, size_t(size), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE, fd, 0);
  FASTT_CHECK(base != MAP_FAILED, RuntimeError, "load_file: mmap failed: {}",
              std::strerror(errno));
  auto* mapping = new Mapping{base, size_t(size)};
  Storage* storage =
      Storage::wrap(base, size_t(size), kCPU, unmap, mapping);
  struct Unref {
    Storage* s;
    ~Unref() { s->decref(); }  // tensors hold their own references
  } guard{storage};
  const char* data = static_cast<const char*>(base);
  uint64_t n = check_header_length(read_u64_le(data), size);
  Header h = parse_header(data + 8, size_t(n), size - 8 - n);
  const uint64_t start = 8 + n;
  out.tensors.reserve(h.entries.size());
  for (const Entry& e : h.entries) {
    const uint64_t at = start + e.begin;
    const size_t isz = itemsize(e.dtype);
    // Misaligned data (a writer that did not order by alignment) or
    // non-0/1 bools are copied instead of viewed.
    if (at % isz != 0 ||
        (e.dtype == DType::Bool && !bools_normal(data + at, e.end - e.begin))) {
      out.tensors.emplace_back(e.name, copy_entry(e, data + at));
      continue;
    }
    int64_t strides[kMaxDims];
    contiguous_strides(e.shape, strides);
    out.tensors.emplace_back(
        e.name, Tensor::from_storage(storage, e.shape,
                                     IntList(strides, e.shape.size()),
                                     int64_t(at / isz), e.dtype));
  }
  out.metadata = std::move(h.metadata);
  return out;
}

SafetensorsContents load_file(const std::string& path, bool mmap) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  FASTT_CHECK(f.fd >= 0, RuntimeError, "load_file: cannot open '{}': {}",
              path, std::strerror(errno));
  return load_fd(f.fd, mmap);
}

}  // namespace fastt
