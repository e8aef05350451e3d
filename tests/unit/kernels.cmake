# Math kernels alone: low-precision casts and GEMMs against fp32 references.
add_executable(kernel_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/cpu_isa_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/low_precision_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/low_precision_gemm_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/fast_math_test.cpp)
target_link_libraries(kernel_tests PRIVATE ranklab_kernels GTest::gtest_main)
gtest_discover_tests(kernel_tests TEST_PREFIX "kernels." PROPERTIES TIMEOUT 60)
ranklab_discover_per_isa(kernel_tests "kernels.")
