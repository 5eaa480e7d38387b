# gp-merge's engine: runtime into system, --smart, --aggregate.
target_sources(gp_core PRIVATE
  src/merge/aggregate.cpp
  src/merge/copier.cpp
  src/merge/merge.cpp
  src/merge/pid_samples.cpp
  src/merge/runtime.cpp
  src/merge/scale.cpp
  src/merge/smart.cpp
)
