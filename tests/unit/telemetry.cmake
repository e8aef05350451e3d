# Telemetry wire: Reporter -> Collector over real loopback sockets.
add_executable(telemetry_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/telemetry_test.cpp)
target_link_libraries(telemetry_tests PRIVATE ranklab_telemetry GTest::gtest_main Threads::Threads)
gtest_discover_tests(telemetry_tests TEST_PREFIX "telemetry." PROPERTIES TIMEOUT 60)
