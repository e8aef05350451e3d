# Layers, networks and optimizers: pure math, no data files.
add_executable(model_tests
  unit/layer_gradient_test.cpp
  unit/gemm_test.cpp
  unit/compute_device_test.cpp
  unit/device_trace_test.cpp
  unit/linear_fusion_test.cpp
  unit/network_test.cpp
  unit/optimizer_test.cpp
  unit/text_sampler_test.cpp)
target_link_libraries(model_tests PRIVATE ranklab_engine GTest::gtest_main)
gtest_discover_tests(model_tests TEST_PREFIX "model." PROPERTIES TIMEOUT 120)
ranklab_discover_per_isa(model_tests "model.")
