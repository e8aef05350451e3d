// Temporary GPU memory for the kernels: Scratch, buffers for one call of a codec kernel,
// allocated and freed on the calling thread's own stream (cudaMallocAsync's pool: no
// device-wide synchronization per call); ThreadScratch, kept by a thread from call to call.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <vector>

#include "kernels/cuda/cuda_check.h"

namespace ranklab::cuda {

class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get(size_t bytes) {
    if (count_ == kMax) throw std::logic_error("codec scratch: more than 12 buffers");
    void* p = nullptr;
    check(cudaMallocAsync(&p, bytes > 0 ? bytes : 1, cudaStreamPerThread),
          "allocate codec scratch");
    made_[count_++] = p;
    return p;
  }
  ~Scratch() {
    for (int i = 0; i < count_; ++i) cudaFreeAsync(made_[i], cudaStreamPerThread);
  }

 private:
  static constexpr int kMax = 12;
  void* made_[kMax] = {};
  int count_ = 0;
};

// Device memory a thread keeps for its next call, one allocation per device it was used on,
// freed when the thread ends: declare one thread_local per use. Only its own thread's stream
// touches it, so each reuse is queued behind the work still reading it.
class ThreadScratch {
 public:
  ThreadScratch() = default;
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;
  ~ThreadScratch() {
    // No throw from a destructor; at process exit the runtime may already be gone.
    for (size_t device = 0; device < kept_.size(); ++device) {
      if (kept_[device].data == nullptr) continue;
      if (cudaSetDevice(static_cast<int>(device)) == cudaSuccess) cudaFree(kept_[device].data);
    }
  }

  // Room for `count` values of T on the current device; the contents are lost when it grows.
  template <class T>
  T* get(size_t count) {
    return static_cast<T*>(bytes(count * sizeof(T)));
  }

 private:
  struct Kept {
    void* data = nullptr;
    size_t capacity = 0;
  };

  void* bytes(size_t wanted) {
    int device = 0;
    check(cudaGetDevice(&device), "get current device (scratch)");
    if (static_cast<size_t>(device) >= kept_.size()) kept_.resize(device + 1);
    Kept& kept = kept_[device];
    if (kept.data != nullptr && wanted <= kept.capacity) return kept.data;
    if (kept.data != nullptr) {
      // This thread's queued kernels may still read the old one.
      check(cudaStreamSynchronize(cudaStreamPerThread), "wait before growing scratch");
      check(cudaFree(kept.data), "free scratch");
      kept = Kept{};
    }
    check(cudaMalloc(&kept.data, wanted > 0 ? wanted : 1), "malloc scratch");
    kept.capacity = wanted;
    return kept.data;
  }

  std::vector<Kept> kept_;  // by device index
};

}  // namespace ranklab::cuda
