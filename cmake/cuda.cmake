# CUDA kernels: built when nvcc is found (here: /usr/local/cuda), skipped with a message
# otherwise; NCCL's collectives too where NCCL is found (RANKLAB_HAVE_NCCL), else the GPU
# path all-reduces on host copies and ZeRO on a GPU is refused. Tests skip at run time when
# no GPU is present.
include(CheckLanguage)
if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
check_language(CUDA)
set(RANKLAB_HAVE_CUDA OFF)
set(RANKLAB_HAVE_NCCL OFF)
if(CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 75 80 90)  # Turing, Ampere, Hopper
  endif()
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no C++20 flag for nvcc
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  set(RANKLAB_HAVE_CUDA ON)
  if(RANKLAB_NCCL AND NCCL_LIBRARY AND NCCL_INCLUDE_DIR)
    set(RANKLAB_HAVE_NCCL ON)
    message(STATUS "ranklab: CUDA ${CUDAToolkit_VERSION} and NCCL found: building CUDA kernels and NCCL all-reduce")
  else()
    message(STATUS "ranklab: CUDA ${CUDAToolkit_VERSION} found, NCCL not (or RANKLAB_NCCL=OFF): building CUDA kernels without "
                   "NCCL (GPU gradients all-reduced on host copies; ZeRO on a GPU refused; mpi_nccl_test not built)")
  endif()
else()
  message(STATUS "ranklab: no nvcc: CUDA kernels and NCCL all-reduce are not built")
endif()
