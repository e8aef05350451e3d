#include "comm/nccl/nccl_handles.h"

#include <stdexcept>
#include <string>

namespace ranklab {

NcclHandles::~NcclHandles() {
  // No throw from a destructor: the results are not checked.
  if (inputs_written != nullptr) cudaEventDestroy(inputs_written);
  if (stream != nullptr) cudaStreamDestroy(stream);
  if (comm != nullptr) ncclCommDestroy(comm);
}

namespace nccl_detail {

void check(ncclResult_t code, const char* operation) {
  if (code != ncclSuccess) {
    throw std::runtime_error(std::string("NCCL ") + operation + ": " + ncclGetErrorString(code));
  }
}

void check(cudaError_t code, const char* operation) {
  if (code != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA ") + operation + ": " + cudaGetErrorString(code));
  }
}

}  // namespace nccl_detail

}  // namespace ranklab
