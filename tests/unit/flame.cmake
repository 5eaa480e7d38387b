# gp-flame's library: tree building, differential counts, pruning, the JSON and the page.
target_sources(gp_unit_tests PRIVATE
  unit/flame_tree_test.cpp
  unit/flame_json_test.cpp
  unit/flame_page_test.cpp
)
