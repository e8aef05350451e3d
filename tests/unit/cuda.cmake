# CUDA kernels against the CPU ones, and NCCL all-reduce under mpirun (where NCCL is found);
# both skip with a message when the machine has no GPU.
add_executable(cuda_kernels_test unit/cuda_kernels_test.cpp)
target_link_libraries(cuda_kernels_test PRIVATE ranklab_kernels_cuda ranklab_kernels GTest::gtest_main)
gtest_discover_tests(cuda_kernels_test TEST_PREFIX "cuda." PROPERTIES TIMEOUT 120 LABELS "gpu")

# The CUDA compute device (train.device = "cuda") against the CPU device: layers, loss head,
# whole networks, memory and optimizer operations.
add_executable(cuda_device_test unit/cuda_device_test.cpp unit/cuda_device_ops_test.cpp)
target_link_libraries(cuda_device_test PRIVATE ranklab_engine GTest::gtest_main)
gtest_discover_tests(cuda_device_test TEST_PREFIX "cuda." PROPERTIES TIMEOUT 300 LABELS "gpu")

# Only where NCCL is found (cmake/cuda.cmake says so when it is not), beside the other rank tests.
if(RANKLAB_HAVE_NCCL AND RANKLAB_RANK_TESTS)
  add_executable(mpi_nccl_test mpi/nccl_allreduce_test.cpp)
  target_link_libraries(mpi_nccl_test PRIVATE ranklab_comm_nccl ranklab_comm_mpi ranklab_kernels_cuda ranklab_gpu_probe ranklab_mpi_test_main)
  add_test(NAME mpi_nccl.np2 COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --bind-to none -np 2 $<TARGET_FILE:mpi_nccl_test>)
  set_tests_properties(mpi_nccl.np2 PROPERTIES ENVIRONMENT "${RANKLAB_MPI_ENV}" TIMEOUT 180
    SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]" LABELS "mpi;cuda;gpu")
endif()
