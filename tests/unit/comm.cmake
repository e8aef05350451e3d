add_executable(comm_tests unit/ring_allreduce_thread_test.cpp unit/thread_communicator_test.cpp
  unit/parameter_server_thread_test.cpp unit/ps_compression_thread_test.cpp
  unit/shm_allreduce_thread_test.cpp unit/shm_shared_model_thread_test.cpp)
target_link_libraries(comm_tests PRIVATE ranklab_ps GTest::gtest_main)
gtest_discover_tests(comm_tests PROPERTIES TIMEOUT 120)
