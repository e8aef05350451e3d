// How many CUDA GPUs this process can use, asked of the CUDA runtime where ranklab was built
// with CUDA; a build without it has none. Job validation and the CUDA device both ask.
#pragma once

#include <string>

namespace ranklab::kernels {

// The usable GPUs; 0 with `why` saying what is missing (no CUDA in this build, no driver,
// no device). Asked once per process: the answer does not change while it runs.
int usableGpus(std::string* why = nullptr);

}  // namespace ranklab::kernels
