# Telemetry wire: Reporter -> Collector over real loopback sockets.
add_executable(telemetry_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/telemetry_test.cpp)
target_link_libraries(telemetry_tests PRIVATE ranklab_telemetry GTest::gtest_main Threads::Threads)
gtest_discover_tests(telemetry_tests TEST_PREFIX "telemetry." PROPERTIES TIMEOUT 60)

# CURVE for telemetry across hosts: the run's key gets in, no other does.
add_executable(telemetry_curve_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/telemetry_curve_test.cpp)
target_link_libraries(telemetry_curve_tests PRIVATE ranklab_telemetry GTest::gmock GTest::gtest_main)
gtest_discover_tests(telemetry_curve_tests TEST_PREFIX "telemetry." PROPERTIES TIMEOUT 60)

# The step record's one list against the proto, the store's tables and the copies between.
add_executable(step_record_tests ${CMAKE_CURRENT_SOURCE_DIR}/unit/step_record_test.cpp)
target_link_libraries(step_record_tests PRIVATE ranklab_telemetry ranklab_storage SQLite::SQLite3
                                                GTest::gtest_main)
gtest_discover_tests(step_record_tests TEST_PREFIX "telemetry." PROPERTIES TIMEOUT 60)

