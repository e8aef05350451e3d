# Mixed precision: dynamic loss scaling.
add_executable(amp_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/loss_scaler_test.cpp)
target_link_libraries(amp_tests PRIVATE ranklab_engine GTest::gtest_main)
gtest_discover_tests(amp_tests TEST_PREFIX "amp." PROPERTIES TIMEOUT 60)
