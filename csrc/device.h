// Devices. The dispatch table has one column per DeviceType.
#pragma once
#include <cstdint>
#include <string>

namespace fastt {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;

inline const char* device_type_name(DeviceType t) {
  return t == DeviceType::CPU ? "cpu" : "cuda";
}

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = 0;  // always 0 for cpu

  constexpr Device() = default;
  constexpr Device(DeviceType t, int idx = 0)
      : type(t), index(static_cast<int8_t>(idx)) {}
  // "cpu", "cuda", "cuda:1"; throws ValueError on anything else.
  explicit Device(const std::string& spec);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const {
    return type == o.type && index == o.index;
  }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;
};

constexpr Device kCPU{};

}  // namespace fastt
