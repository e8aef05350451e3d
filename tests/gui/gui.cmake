# GUI tests: item models alone, then pages and the main window on a temporary run store.
# Offscreen, with their own settings folder so a developer's recent jobs stay untouched.
function(ranklab_gui_test name)
  add_executable(${name} ${ARGN})
  add_dependencies(ci-release-tests ${name})
  set_target_properties(${name} PROPERTIES AUTOMOC ON)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;XDG_CONFIG_HOME=${CMAKE_CURRENT_BINARY_DIR}/gui-config/${name}"
    LABELS gui TIMEOUT 120)
  target_compile_definitions(${name} PRIVATE RANKLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
endfunction()

ranklab_gui_test(test_runs_table_model ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_runs_table_model.cpp)
target_link_libraries(test_runs_table_model PRIVATE ranklab_view_models Qt6::Test)

ranklab_gui_test(test_live_run_model ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_live_run_model.cpp)
target_link_libraries(test_live_run_model PRIVATE ranklab_view_models Qt6::Test)

ranklab_gui_test(test_log_model ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_log_model.cpp)
target_link_libraries(test_log_model PRIVATE ranklab_view_models Qt6::Test)

ranklab_gui_test(test_redraw_pacer ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_redraw_pacer.cpp)
target_link_libraries(test_redraw_pacer PRIVATE ranklab_view_models Qt6::Test)

ranklab_gui_test(test_setup_page ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_setup_page.cpp)
target_link_libraries(test_setup_page PRIVATE ranklab_views Qt6::Test)

ranklab_gui_test(test_main_window ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_main_window.cpp)
target_link_libraries(test_main_window PRIVATE ranklab_views Qt6::Test)

# GUI tests that launch real ranks: the launch core, MPI and Fashion-MNIST; each skips when
# the worker or the data is absent.
function(ranklab_gui_run_test name)
  ranklab_gui_test(${name} ${CMAKE_CURRENT_SOURCE_DIR}/gui/${name}.cpp)
  target_link_libraries(${name} PRIVATE ranklab_views Qt6::Test)
  target_compile_definitions(${name} PRIVATE RANKLAB_WORKER_PATH="$<TARGET_FILE:ranklab-worker>"
                                             RANKLAB_CLI_PATH="$<TARGET_FILE:ranklab>")
  add_dependencies(${name} ranklab-worker ranklab)
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 LABELS "gui;integration")
endfunction()

ranklab_gui_run_test(test_workbench_live)
target_compile_definitions(test_workbench_live PRIVATE
                           RANKLAB_WORKBENCH_PATH="$<TARGET_FILE:ranklab-workbench>")
add_dependencies(test_workbench_live ranklab-workbench)
# Every lesson of the Learn page, run from its preset; one by `ranklab-workbench --lesson --start`.
ranklab_gui_run_test(test_learn_page)
target_compile_definitions(test_learn_page PRIVATE
                           RANKLAB_WORKBENCH_PATH="$<TARGET_FILE:ranklab-workbench>")
add_dependencies(test_learn_page ranklab-workbench)

ranklab_gui_test(test_compare_models ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_compare_models.cpp)
target_link_libraries(test_compare_models PRIVATE ranklab_view_models Qt6::Test)

ranklab_gui_test(test_workbench_pages ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_workbench_pages.cpp)
target_link_libraries(test_workbench_pages PRIVATE ranklab_views Qt6::Test)

ranklab_gui_test(test_stored_run ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_stored_run.cpp)
target_link_libraries(test_stored_run PRIVATE ranklab_views Qt6::Test)

ranklab_gui_test(test_runs_page ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_runs_page.cpp)
target_link_libraries(test_runs_page PRIVATE ranklab_views Qt6::Test)

ranklab_gui_test(test_lessons ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_lessons.cpp)
target_link_libraries(test_lessons PRIVATE ranklab_view_models Qt6::Test)
# The two GUI tests that launch real MPI runs never run beside a CLI test's ranks (each holds
# its own lock, which every CLI test holds too: tests/CMakeLists.txt), but may run beside each
# other and beside one-process tests: their long run sleeps 1 ms a step, leaving CPU to lessons.
set_tests_properties(test_workbench_live PROPERTIES RESOURCE_LOCK test_workbench_live-ranks)
set_tests_properties(test_learn_page PROPERTIES RESOURCE_LOCK test_learn_page-ranks)
# The two longest tests start first even where CTest has no record of earlier times (CI's
# fresh root), so neither ends a run alone on one core.
set_tests_properties(test_workbench_live test_learn_page PROPERTIES COST 100)

ranklab_gui_test(test_big_runs ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_big_runs.cpp)
target_link_libraries(test_big_runs PRIVATE ranklab_views Qt6::Test)

ranklab_gui_test(test_plan_table_model ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_plan_table_model.cpp)
target_link_libraries(test_plan_table_model PRIVATE ranklab_view_models Qt6::Test)
# The Plan page running the real CLI; its first plan calibrates with 2 ranks. And the
# toolbar's Simulate on 1,024 ranks (the calibration's path: ranklab_calibrate).
ranklab_gui_run_test(test_plan_page)
target_link_libraries(test_plan_page PRIVATE ranklab_calibrate)
set_tests_properties(test_plan_page PROPERTIES RESOURCE_LOCK test_plan_page-ranks)

# The live page on 1,024 ranks: the ranks' spread and the planted slow ranks (issue 59).
ranklab_gui_test(test_many_ranks ${CMAKE_CURRENT_SOURCE_DIR}/gui/test_many_ranks.cpp)
target_link_libraries(test_many_ranks PRIVATE ranklab_views Qt6::Test)
