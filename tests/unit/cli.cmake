# Text from ranks and the store made inert before it reaches a terminal.
add_executable(terminal_text_test unit/terminal_text_test.cpp ${PROJECT_SOURCE_DIR}/app/terminal_text.cpp
  ${PROJECT_SOURCE_DIR}/app/cli/json_output.cpp ${PROJECT_SOURCE_DIR}/engine/job/utf8.cpp)
target_include_directories(terminal_text_test PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(terminal_text_test PRIVATE GTest::gtest_main)
gtest_discover_tests(terminal_text_test TEST_PREFIX "cli." PROPERTIES TIMEOUT 30)

