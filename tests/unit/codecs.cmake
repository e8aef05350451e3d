# Gradient codecs, wire formats, error feedback, compressed collectives (ranks as threads).
add_executable(codec_tests
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/codec_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/error_feedback_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/unit/compressed_collectives_thread_test.cpp)
target_link_libraries(codec_tests PRIVATE ranklab_codecs GTest::gtest_main)
gtest_discover_tests(codec_tests TEST_PREFIX "codecs." PROPERTIES TIMEOUT 60)
