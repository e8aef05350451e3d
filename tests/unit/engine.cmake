add_executable(engine_tests
  unit/mlp_gradient_test.cpp
  unit/idx_dataset_test.cpp
  unit/shard_loader_test.cpp
  unit/trainer_test.cpp)
target_link_libraries(engine_tests PRIVATE ranklab_engine GTest::gtest_main ZLIB::ZLIB)
gtest_discover_tests(engine_tests TEST_PREFIX "engine." PROPERTIES TIMEOUT 120)
