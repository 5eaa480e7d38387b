target_sources(gp_core PRIVATE
  src/ingest/input.cpp
  src/ingest/collapsed.cpp
)
