// Tests for csrc/serialize.h (safetensors): round trips over every dtype,
// 0-d / empty / non-contiguous tensors, file and mmap loading, and one case
// per malformed-file check (each must throw, never crash).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "catch.h"
#include "core_test_util.h"
#include "csrc/serialize.h"

using namespace fastt;
using namespace fastt::test;

#if defined(FASTT_CATCH2_V3)
#define HAS_TEXT(s) Catch::Matchers::ContainsSubstring(s)
#else
#define HAS_TEXT(s) Catch::Contains(s)
#endif

namespace {

Tensor ramp(IntList shape, DType dt, int64_t start = 1) {
  Tensor t = Tensor::empty(shape, dt);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = round_to(dt, double((start + i * 7) % 97) - 40);
    char* p = static_cast<char*>(t.data_ptr()) + i * int64_t(t.itemsize());
    visit_dtype(dt, [&](auto tag) {
      using T = decltype(tag);
      T x = static_cast<T>(v);
      std::memcpy(p, &x, sizeof(T));
    });
  }
  return t;
}

void require_equal(const Tensor& a, const Tensor& b) {
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.sizes().equals(b.sizes()));
  REQUIRE(values(a) == values(b));
}

// A file from a header and a buffer, with the true header length.
std::string make_file(const std::string& json, const std::string& buffer) {
  std::string out(8, '\0');
  uint64_t n = json.size();
  std::memcpy(&out[0], &n, 8);
  return out + json + buffer;
}

SafetensorsContents load(const std::string& bytes) {
  return load_safetensors(bytes.data(), bytes.size());
}

uint64_t header_size(const std::string& bytes) {
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  return n;
}

std::string temp_path(const char* tag) {
  return fmt::format("/tmp/fastt_test_serialize_{}_{}.safetensors", tag,
                     ::getpid());
}

}  // namespace

TEST_CASE("safetensors round trip of every dtype", "[serialize]") {
  NamedTensors in;
  for (DType dt : kAllDTypes)
    in.emplace_back(std::string("t_") + dtype_name(dt), ramp({3, 5}, dt));
  in.emplace_back("scalar", ramp({}, DType::Float64, 5));
  in.emplace_back("empty", Tensor::empty({0, 4}, DType::Float32));
  in.emplace_back("odd", ramp({45, 65}, DType::Float16));
  StringMap meta{{"format", "pt"}, {"note", "quote \" slash \\ nl \n é"}};
  std::string bytes = save_safetensors(in, meta);
  REQUIRE((8 + header_size(bytes)) % 8 == 0);  // header padded to 8 bytes

  SafetensorsContents out = load(bytes);
  REQUIRE(out.metadata == meta);
  REQUIRE(out.tensors.size() == in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    REQUIRE(out.tensors[i].first == in[i].first);  // header order kept
    require_equal(out.tensors[i].second, in[i].second);
    // Widest dtypes first keeps every tensor aligned.
    REQUIRE(reinterpret_cast<uintptr_t>(out.tensors[i].second.data_ptr()) %
                out.tensors[i].second.itemsize() ==
            0);
  }
}

TEST_CASE("safetensors saves non-contiguous tensors contiguously",
          "[serialize]") {
  Tensor base = ramp({6, 7}, DType::Int32);
  Tensor tr = base.t();
  Tensor sl = base.slice(1, 1, 7, 3);
  std::string bytes = save_safetensors({{"tr", tr}, {"sl", sl}});
  SafetensorsContents out = load(bytes);
  require_equal(out.tensors[0].second, tr);
  require_equal(out.tensors[1].second, sl);
  REQUIRE(out.tensors[0].second.is_contiguous());
  // Saving a view writes only its elements.
  REQUIRE(bytes.size() - 8 - header_size(bytes) ==
          size_t(tr.numel() + sl.numel()) * 4);
}

TEST_CASE("safetensors files, mmap and fd loading", "[serialize]") {
  NamedTensors in = {{"w", ramp({4, 3}, DType::Float32)},
                     {"b", ramp({3}, DType::BFloat16)},
                     {"flags", ramp({5}, DType::Bool)},
                     {"ids", ramp({2, 2}, DType::Int64)}};
  std::string path = temp_path("file");
  save_file(path, in, {{"k", "v"}});
  for (bool mmap : {false, true}) {
    SafetensorsContents out = load_file(path, mmap);
    REQUIRE(out.metadata.at("k") == "v");
    for (size_t i = 0; i < in.size(); ++i) {
      REQUIRE(out.tensors[i].first == in[i].first);
      require_equal(out.tensors[i].second, in[i].second);
    }
    if (mmap) {
      // All views share the one mapping; writes are private.
      Tensor w = out.tensors[0].second;
      REQUIRE(w.storage() == out.tensors[3].second.storage());
      w.fill_(Scalar(2.5));
      REQUIRE(get(w, 0) == 2.5);
    }
  }
  // The in-place write above never reached the file.
  require_equal(load_file(path).tensors[0].second, in[0].second);
  // The mapping outlives the loaded struct through the tensors.
  Tensor kept = load_file(path, true).tensors[2].second;
  require_equal(kept, in[2].second);
  std::remove(path.c_str());
  REQUIRE_THROWS_AS(load_file(path), RuntimeError);  // no such file
  REQUIRE_THROWS_WITH(load_file("/tmp"), HAS_TEXT("not a regular file"));
}

TEST_CASE("safetensors reads files of other writers", "[serialize]") {
  // Unpadded header, offsets in a different order than the header, an
  // escaped name, a misaligned F32 (copied, not viewed, under mmap).
  std::string json =
      "{\"b\\u00e9\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
      "\"a\" : { \"shape\" : [ 2 ] , \"dtype\":\"F32\", "
      "\"data_offsets\":[1,9]}}";
  std::string buf(9, '\0');
  buf[0] = 7;
  float f[2] = {1.5f, -2.0f};
  std::memcpy(&buf[1], f, 8);
  std::string bytes = make_file(json, buf);
  SafetensorsContents out = load(bytes);
  REQUIRE(out.tensors[0].first == "b\xc3\xa9");
  REQUIRE(values(out.tensors[1].second) == std::vector<double>{1.5, -2.0});
  std::string path = temp_path("foreign");
  FILE* fp = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), fp);
  std::fclose(fp);
  SafetensorsContents m = load_file(path, true);
  REQUIRE(values(m.tensors[1].second) == std::vector<double>{1.5, -2.0});
  REQUIRE(values(m.tensors[0].second) == std::vector<double>{7});
  std::remove(path.c_str());
  // Bool bytes other than 0/1 load as true.
  std::string b = make_file(
      "{\"m\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]}}",
      std::string("\x00\x05", 2));
  REQUIRE(values(load(b).tensors[0].second) == std::vector<double>{0, 1});
  // Nothing at all: an empty header and buffer.
  REQUIRE(load(make_file("{}", "")).tensors.empty());
}

TEST_CASE("safetensors save errors", "[serialize]") {
  Tensor t = ramp({2}, DType::Float32);
  REQUIRE_THROWS_AS(save_safetensors({{"a", t}, {"a", t}}), ValueError);
  REQUIRE_THROWS_AS(save_safetensors({{"__metadata__", t}}), ValueError);
  REQUIRE_THROWS_AS(save_safetensors({{"\xff", t}}), ValueError);
  REQUIRE_THROWS_AS(save_safetensors({{"u", Tensor()}}), ValueError);
  REQUIRE_THROWS_AS(save_file("/nonexistent_dir/x.safetensors", {{"a", t}}),
                    RuntimeError);
}

namespace {
const std::string kF32 =
    "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
const std::string kBuf8(8, '\0');

void require_rejects(const std::string& bytes, const char* text) {
  INFO(text);
  REQUIRE_THROWS_WITH(load(bytes), HAS_TEXT(text));
  // Every rejection is a fastt::Error (ValueError or RuntimeError).
  REQUIRE_THROWS_AS(load(bytes), fastt::Error);
}
std::string one(const std::string& info, const std::string& buffer) {
  return make_file("{\"a\":" + info + "}", buffer);
}
}  // namespace

TEST_CASE("safetensors rejects malformed files", "[serialize]") {
  REQUIRE(load(make_file(kF32, kBuf8)).tensors.size() == 1);  // the base

  // Truncation and header length.
  require_rejects(std::string("\x05\x00\x00", 3), "truncated file");
  require_rejects("", "truncated file");
  std::string big = make_file(kF32, kBuf8);
  uint64_t huge = 200u * 1000 * 1000;
  std::memcpy(&big[0], &huge, 8);
  require_rejects(big, "exceeds the 100000000 byte limit");
  std::string longer = make_file(kF32, kBuf8);
  uint64_t n = kF32.size() + 9;
  std::memcpy(&longer[0], &n, 8);
  require_rejects(longer, "larger than the rest of the file");
  uint64_t max = ~uint64_t(0);
  std::memcpy(&longer[0], &max, 8);
  require_rejects(longer, "byte limit");
  require_rejects(make_file(kF32, kBuf8.substr(0, 5)), "outside the data");

  // Malformed JSON.
  require_rejects(make_file(" {}", ""), "must start with '{'");
  require_rejects(make_file("", ""), "must start with '{'");
  require_rejects(make_file("{", ""), "unexpected end");
  require_rejects(make_file("{\"a\":", ""), "malformed JSON");
  require_rejects(make_file("{\"a\":{\"dtype\":\"F32\"", ""),
                  "malformed JSON");
  require_rejects(make_file("{\"a\":{}}", ""), "lacks \"dtype\"");
  require_rejects(make_file("{\"a", ""), "unterminated string");
  require_rejects(make_file("{\"a\\q\":{}}", ""), "invalid escape");
  require_rejects(make_file("{\"\\ud800\":{}}", ""), "surrogate");
  require_rejects(make_file("{\"\\udc00\":{}}", ""), "surrogate");
  require_rejects(make_file("{\"\\u12g4\":{}}", ""), "hex digit");
  require_rejects(make_file("{\"\xc3\":{}}", ""), "invalid UTF-8");
  require_rejects(make_file("{\"\xc0\x80\":{}}", ""), "invalid UTF-8");
  require_rejects(make_file("{\"a\nb\":{}}", ""), "control character");
  require_rejects(make_file(kF32 + "x", kBuf8), "unexpected data after");
  require_rejects(make_file(kF32 + "}", kBuf8), "unexpected data after");
  require_rejects(make_file("{\"a\":1}", ""), "expected an object");
  require_rejects(make_file("[]", ""), "must start with '{'");
  require_rejects(make_file("{,}", ""), "expected a string");
  require_rejects(make_file("{\"__metadata__\":{\"k\":1}}", ""),
                  "expected a string");
  require_rejects(
      make_file("{\"__metadata__\":{},\"__metadata__\":{}}", ""),
      "duplicate \"__metadata__\"");
  require_rejects(make_file("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", ""),
                  "duplicate key");
  // Padding after the object is fine; other bytes are not.
  REQUIRE(load(make_file(kF32 + "    \n", kBuf8)).tensors.size() == 1);

  // Duplicate names, fields and dtypes.
  std::string a =
      "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
  require_rejects(make_file("{" + a + "," + a + "}", kBuf8),
                  "duplicate tensor name 'a'");
  require_rejects(
      one("{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],"
          "\"data_offsets\":[0,8]}",
          kBuf8),
      "repeats field \"dtype\"");
  require_rejects(one("{\"dtype\":\"F32\",\"shape\":[2]}", kBuf8),
                  "lacks \"data_offsets\"");
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}",
          kBuf8),
      "unknown field \"x\"");
  require_rejects(
      one("{\"dtype\":\"F31\",\"shape\":[2],\"data_offsets\":[0,8]}", kBuf8),
      "unknown dtype \"F31\"");
  require_rejects(
      one("{\"dtype\":\"U16\",\"shape\":[4],\"data_offsets\":[0,8]}", kBuf8),
      "fastt does not support");

  // Shapes.
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}", kBuf8),
      "is negative");
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}", kBuf8),
      "expected an integer");
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}", kBuf8),
      "leading zeros");
  require_rejects(one("{\"dtype\":\"F32\",\"shape\":[99999999999999999999],"
                      "\"data_offsets\":[0,8]}",
                      kBuf8),
                  "does not fit in 64 bits");
  require_rejects(one("{\"dtype\":\"F32\",\"shape\":[9223372036854775808],"
                      "\"data_offsets\":[0,8]}",
                      kBuf8),
                  "too large");
  require_rejects(one("{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
                      "\"data_offsets\":[0,8]}",
                      kBuf8),
                  "too large");
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"
          "\"data_offsets\":[0,4]}",
          kBuf8.substr(0, 4)),
      "more than 16 dimensions");

  // Offsets.
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}", kBuf8),
      "hold 4 bytes but shape [2] of dtype F32 needs 8");
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,0]}", kBuf8),
      "reversed");
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}", kBuf8),
      "two data_offsets");
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,8]}", kBuf8),
      "exactly two");
  require_rejects(
      one("{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}", kBuf8),
      "outside the data buffer");
  std::string two =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
  require_rejects(make_file(two, kBuf8), "'a' and 'b' overlap");
  std::string gap =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
  require_rejects(make_file(gap, kBuf8), "4 unused bytes before tensor 'a'");
  require_rejects(make_file(kF32, kBuf8 + "junk"), "4 bytes of trailing data");
  require_rejects(make_file("{}", "x"), "1 bytes of trailing data");
  // An empty tensor inside another one's bytes overlaps it.
  std::string inside =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}";
  require_rejects(make_file(inside, kBuf8), "overlap");
}

TEST_CASE("safetensors loader survives every truncation and byte flip",
          "[serialize]") {
  NamedTensors in = {{"w", ramp({3, 2}, DType::Float32)},
                     {"i", ramp({3}, DType::Int16)},
                     {"m", ramp({2}, DType::Bool)}};
  std::string good = save_safetensors(in, {{"a", "b"}});
  for (size_t len = 0; len < good.size(); ++len) {
    INFO(len);
    REQUIRE_THROWS_AS(load(good.substr(0, len)), fastt::Error);
  }
  for (size_t i = 0; i < good.size(); ++i) {
    for (unsigned char x : {0x01, 0x20, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = char(bad[i] ^ x);
      try {
        SafetensorsContents out = load(bad);
        REQUIRE(out.tensors.size() <= in.size());
      } catch (const fastt::Error&) {
      }
    }
  }
}
