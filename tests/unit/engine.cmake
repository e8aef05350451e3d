add_executable(engine_tests
  unit/idx_dataset_test.cpp
  unit/shard_loader_test.cpp
  unit/trainer_test.cpp)
target_link_libraries(engine_tests PRIVATE ranklab_engine GTest::gtest_main ZLIB::ZLIB)
gtest_discover_tests(engine_tests TEST_PREFIX "engine." PROPERTIES TIMEOUT 120)

# Layers, networks and optimizers: pure math, no data files.
add_executable(model_tests
  unit/layer_gradient_test.cpp
  unit/network_test.cpp
  unit/optimizer_test.cpp)
target_link_libraries(model_tests PRIVATE ranklab_engine GTest::gtest_main)
gtest_discover_tests(model_tests TEST_PREFIX "model." PROPERTIES TIMEOUT 120)

add_executable(checkpoint_data_tests unit/checkpoint_test.cpp unit/data_test.cpp)
target_link_libraries(checkpoint_data_tests PRIVATE ranklab_engine GTest::gtest_main)
gtest_discover_tests(checkpoint_data_tests TEST_PREFIX "engine." PROPERTIES TIMEOUT 120)
