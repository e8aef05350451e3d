#include "kernels/gpu_probe.h"

#if RANKLAB_HAVE_CUDA
#include <cuda_runtime.h>
#include <dlfcn.h>
#endif

namespace ranklab::kernels {

namespace {

struct Probe {
  int gpus = 0;
  std::string why;
};

Probe probe() {
  Probe p;
#if RANKLAB_HAVE_CUDA
  // Without the driver the runtime says "driver version is insufficient": say what is missing.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY);
  if (!driver) {
    p.why = "this machine has no NVIDIA driver (libcuda.so.1 is not installed)";
    return p;
  }
  dlclose(driver);  // the runtime opens it again itself
  const cudaError_t code = cudaGetDeviceCount(&p.gpus);
  if (code != cudaSuccess) {
    p.gpus = 0;
    p.why = std::string("the CUDA runtime finds no usable GPU: ") + cudaGetErrorString(code);
  } else if (p.gpus == 0) {
    p.why = "the CUDA runtime finds no GPU on this machine";
  }
#else
  p.why =
      "this ranklab was built without CUDA (nvcc and NCCL were not found when it was "
      "configured)";
#endif
  return p;
}

}  // namespace

int usableGpus(std::string* why) {
  static const Probe answer = probe();
  if (why) *why = answer.why;
  return answer.gpus;
}

}  // namespace ranklab::kernels
