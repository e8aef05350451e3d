// train.device's value to a ComputeDevice: the CPU, or a GPU where ranklab has CUDA.
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/job/device_spec.h"
#include "engine/model/compute_device.h"
#include "engine/model/cuda_device.h"
#include "kernels/gpu_probe.h"

namespace ranklab {
namespace {

std::mutex registry_mutex;

std::map<std::string, DeviceMaker>& registered() {
  static std::map<std::string, DeviceMaker> devices;
  return devices;
}

}  // namespace

void registerDevice(const std::string& name, DeviceMaker make) {
  if (parseDeviceSpec(name))
    throw std::invalid_argument("registerDevice: \"" + name + "\" is a built-in device");
  const std::lock_guard<std::mutex> lock(registry_mutex);
  registered()[name] = std::move(make);
}

const ComputeDevice& deviceNamed(const std::string& spec, int local_rank, DeviceOptions options) {
  {
    const std::lock_guard<std::mutex> lock(registry_mutex);
    const auto found = registered().find(spec);
    if (found != registered().end()) return found->second(local_rank);
  }
  const std::optional<DeviceSpec> device = parseDeviceSpec(spec);
  if (!device) {
    throw std::invalid_argument("train.device \"" + spec +
                                "\" is not a device: \"cpu\", \"cuda\" or \"cuda:N\"");
  }
  if (!device->onGpu() && options.tf32) {
    throw std::invalid_argument("train.tf32: TF32 is a GPU's, and train.device is \"cpu\"");
  }
  if (!device->onGpu()) return cpuDevice();
  std::string why;
  const int gpus = kernels::usableGpus(&why);
  if (gpus == 0) throw std::invalid_argument("train.device \"" + spec + "\": " + why);
  const int index = device->gpuFor(local_rank, gpus);
  if (index >= gpus) {
    throw std::invalid_argument("train.device \"" + spec + "\": this host has " +
                                std::to_string(gpus) +
                                " GPU(s), cuda:0..cuda:" + std::to_string(gpus - 1));
  }
  return cudaDevice(index, options);  // a build without CUDA finds no GPU above
}

}  // namespace ranklab
