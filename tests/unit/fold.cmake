# fold: stack folding and the text formats (.col, folded, top), filters, the CLI fixture.
target_sources(gp_unit_tests PRIVATE
  unit/stacks_test.cpp
  unit/fold_formats_test.cpp
  unit/folded_switches_test.cpp
)
