# Where unwind tables go: the store over the BPF arrays and each process's mapped tables.
target_sources(gp_core PRIVATE
  src/unwind/ranges.cpp
  src/unwind/table_store.cpp
  src/unwind/process_tables.cpp
)
# The store's arrays as a rule source for the user-space walker.
target_sources(gp_core PRIVATE src/unwind/store_rules.cpp)
