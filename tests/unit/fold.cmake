# fold: stack folding and the text formats (.col, folded, top).
target_sources(gp_unit_tests PRIVATE
  unit/stacks_test.cpp
)
