// A build without CUDA: usableGpus() finds no GPU, so deviceNamed() never asks for one; if
// something does, it says why.
#include <stdexcept>
#include <string>

#include "engine/model/cuda_device.h"

namespace ranklab {

const ComputeDevice& cudaDevice(int index, DeviceOptions /*options*/) {
  throw std::invalid_argument("cuda:" + std::to_string(index) +
                              ": this ranklab was built without CUDA");
}

}  // namespace ranklab
