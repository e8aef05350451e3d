#include "engine/job/device_spec.h"

#include <cctype>

namespace ranklab {

std::optional<DeviceSpec> parseDeviceSpec(const std::string& text) {
  if (text == "cpu") return DeviceSpec{};
  if (text == "cuda") return DeviceSpec{DeviceSpec::Kind::kCuda, -1};
  const std::string prefix = "cuda:";
  if (text.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string digits = text.substr(prefix.size());
  if (digits.empty() || digits.size() > 2) return std::nullopt;
  for (const char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return DeviceSpec{DeviceSpec::Kind::kCuda, std::stoi(digits)};
}

}  // namespace ranklab
