// Safe tensor serialization in the safetensors format: an 8-byte
// little-endian header length, a JSON header, then one byte buffer. The
// loader only parses data (no code runs on load) and rejects any file that
// is not exactly well-formed; see serialize.cpp for the checks.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tensor.h"

namespace fastt {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
using StringMap = std::map<std::string, std::string>;

// Largest header accepted (the safetensors reference limit).
constexpr size_t kMaxSafetensorsHeader = 100 * 1000 * 1000;

struct SafetensorsContents {
  NamedTensors tensors;  // in the header's order
  StringMap metadata;    // the "__metadata__" object (may be empty)
};

// The whole file as bytes. Tensors are written contiguous, in their own
// dtype; non-CPU tensors are copied to the CPU first. Names must be unique,
// valid UTF-8 and not "__metadata__".
std::string save_safetensors(const NamedTensors& tensors,
                             const StringMap& metadata = {});
// Writes the same bytes to a file (or an open file descriptor).
void save_file(const std::string& path, const NamedTensors& tensors,
               const StringMap& metadata = {});
void save_fd(int fd, const NamedTensors& tensors,
             const StringMap& metadata = {});

// Parses and validates `data`; every tensor is copied into its own CPU
// allocation. Throws ValueError (malformed content) or RuntimeError
// (truncated input, I/O) naming the problem.
SafetensorsContents load_safetensors(const char* data, size_t size);
// From a file. With mmap, tensors view a private (copy-on-write) mapping of
// the file that lives as long as any of them; writes never reach the file.
SafetensorsContents load_file(const std::string& path, bool mmap = false);
SafetensorsContents load_fd(int fd, bool mmap = false);

// "F32" for Float32 etc., and back (false for names fastt lacks).
const char* safetensors_dtype_name(DType dt);
bool safetensors_dtype_from_name(const std::string& name, DType* out);

}  // namespace fastt
