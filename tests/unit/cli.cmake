# Text from ranks and the store made inert before it reaches a terminal.
add_executable(terminal_text_test unit/terminal_text_test.cpp ${PROJECT_SOURCE_DIR}/app/terminal_text.cpp
  ${PROJECT_SOURCE_DIR}/app/cli/json_output.cpp ${PROJECT_SOURCE_DIR}/engine/job/utf8.cpp)
target_include_directories(terminal_text_test PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(terminal_text_test PRIVATE GTest::gtest_main)
gtest_discover_tests(terminal_text_test TEST_PREFIX "cli." PROPERTIES TIMEOUT 30)


# A command's ranks: each launcher's command line, what a rank is told, `watch`'s job.
add_executable(command_ranks_test unit/command_ranks_test.cpp
  ${PROJECT_SOURCE_DIR}/app/cli/watch_command.cpp)
target_link_libraries(command_ranks_test PRIVATE ranklab_launch GTest::gmock GTest::gtest_main)
gtest_discover_tests(command_ranks_test TEST_PREFIX "cli." PROPERTIES TIMEOUT 30)
