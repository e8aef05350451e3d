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

# The GUI test gui/<name>.cpp on `library`: the item models alone or the views.
function(ranklab_gui_test_of name library)
  ranklab_gui_test(${name} ${CMAKE_CURRENT_SOURCE_DIR}/gui/${name}.cpp)
  target_link_libraries(${name} PRIVATE ${library} Qt6::Test)
endfunction()

ranklab_gui_test_of(test_runs_table_model ranklab_view_models)
ranklab_gui_test_of(test_live_run_model ranklab_view_models)
ranklab_gui_test_of(test_log_model ranklab_view_models)
ranklab_gui_test_of(test_redraw_pacer ranklab_view_models)
ranklab_gui_test_of(test_setup_page ranklab_views)
ranklab_gui_test_of(test_main_window ranklab_views)

# GUI tests that launch real ranks: the launch core, MPI and Fashion-MNIST; each skips when
# the worker or the data is absent.
function(ranklab_gui_run_test name)
  ranklab_gui_test_of(${name} ranklab_views)
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

ranklab_gui_test_of(test_compare_models ranklab_view_models)
ranklab_gui_test_of(test_workbench_pages ranklab_views)
ranklab_gui_test_of(test_stored_run ranklab_views)
ranklab_gui_test_of(test_runs_page ranklab_views)
ranklab_gui_test_of(test_lessons ranklab_view_models)
# The two GUI tests that launch real MPI runs never run beside a CLI test's ranks (each holds
# its own lock, which every CLI test holds too: tests/CMakeLists.txt), but may run beside each
# other and beside one-process tests: their long run sleeps 1 ms a step, leaving CPU to lessons.
set_tests_properties(test_workbench_live PROPERTIES RESOURCE_LOCK test_workbench_live-ranks)
set_tests_properties(test_learn_page PROPERTIES RESOURCE_LOCK test_learn_page-ranks)
# The two longest tests start first even where CTest has no record of earlier times (CI's
# fresh root), so neither ends a run alone on one core.
set_tests_properties(test_workbench_live test_learn_page PROPERTIES COST 100)

ranklab_gui_test_of(test_big_runs ranklab_views)
ranklab_gui_test_of(test_plan_table_model ranklab_view_models)
# The Plan page running the real CLI; its first plan calibrates with 2 ranks. And the
# toolbar's Simulate on 1,024 ranks (the calibration's path: ranklab_calibrate).
ranklab_gui_run_test(test_plan_page)
target_link_libraries(test_plan_page PRIVATE ranklab_calibrate)
set_tests_properties(test_plan_page PROPERTIES RESOURCE_LOCK test_plan_page-ranks)

# The live page on 1,024 ranks: the ranks' spread and the planted slow ranks (issue 59).
ranklab_gui_test_of(test_many_ranks ranklab_views)
