// libFuzzer target for the safetensors loader (csrc/serialize.cpp): any
// byte string must either load or throw a fastt::Error -- never crash, leak,
// hang or read out of bounds (build with ASan/UBSan, see fuzz/README.md).
#include <cstddef>
#include <cstdint>

#include "csrc/serialize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    fastt::SafetensorsContents c =
        fastt::load_safetensors(reinterpret_cast<const char*>(data), size);
    // Touch every loaded byte so ASan sees any bad copy.
    volatile unsigned char sink = 0;
    for (const auto& kv : c.tensors) {
      const auto* p = static_cast<const unsigned char*>(kv.second.data_ptr());
      for (size_t i = 0; i < kv.second.nbytes(); ++i) sink ^= p[i];
    }
    // A loaded file must save and load again to the same tensors.
    std::string again = fastt::save_safetensors(c.tensors, c.metadata);
    fastt::SafetensorsContents d =
        fastt::load_safetensors(again.data(), again.size());
    if (d.tensors.size() != c.tensors.size() || d.metadata != c.metadata)
      __builtin_trap();
  } catch (const fastt::Error&) {
  }
  return 0;
}
