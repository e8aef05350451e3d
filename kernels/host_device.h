// Marks a function nvcc compiles for GPU threads as well as for the host, so the host's
// kernels/cpu arithmetic and the GPU's come from one source where they must agree bit for bit.
#pragma once

#ifdef __CUDACC__
#define RANKLAB_HOST_DEVICE __host__ __device__
#else
#define RANKLAB_HOST_DEVICE
#endif
