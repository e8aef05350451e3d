#include "kernels/gpu_probe.h"

#if RANKLAB_HAVE_CUDA
#include <cuda_runtime.h>
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
