// Device parsing and printing.
#include "device.h"

#include <cstdlib>

#include "errors.h"

namespace fastt {

Device::Device(const std::string& spec) {
  // RuntimeError like torch's device parser.
  auto bad = [&] {
    return RuntimeError(fmt::format(
        "Expected one of cpu, cuda device type at start of device string: {}",
        spec));
  };
  std::string kind = spec.substr(0, spec.find(':'));
  if (kind == "cpu") {
    type = DeviceType::CPU;
  } else if (kind == "cuda") {
    type = DeviceType::CUDA;
  } else {
    throw bad();
  }
  index = 0;
  size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    std::string idx = spec.substr(colon + 1);
    char* end = nullptr;
    long v = idx.empty() ? -1 : std::strtol(idx.c_str(), &end, 10);
    if (idx.empty() || *end != '\0' || v < 0 || v > 127)
      throw RuntimeError(fmt::format("Invalid device string: '{}'", spec));
    FASTT_CHECK(type == DeviceType::CUDA || v == 0, ValueError,
                "Invalid device string: '{}' (cpu has a single device 0)",
                spec);
    index = int8_t(v);
  }
}

std::string Device::str() const {
  if (type == DeviceType::CPU) return "cpu";
  return fmt::format("cuda:{}", int(index));
}

}  // namespace fastt
