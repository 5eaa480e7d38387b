# fold: stack folding and the text formats (.col, folded, top), filters, the CLI fixture.
target_sources(gp_unit_tests PRIVATE
  unit/stacks_test.cpp
  unit/fold_formats_test.cpp
  unit/folded_switches_test.cpp
  unit/stack_end_test.cpp  # stack ends from builder and archive to every output
  unit/fold_weight_test.cpp
  unit/fold_agent_options_test.cpp
)
