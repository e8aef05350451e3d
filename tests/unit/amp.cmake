# Mixed precision: dynamic loss scaling, low-precision layers, AMP in the training loop.
add_executable(amp_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/loss_scaler_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/amp_training_test.cpp)
target_link_libraries(amp_tests PRIVATE ranklab_engine GTest::gtest_main)
gtest_discover_tests(amp_tests TEST_PREFIX "amp." PROPERTIES TIMEOUT 60)
ranklab_discover_per_isa(amp_tests "amp.")
