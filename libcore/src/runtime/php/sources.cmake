# gp-runtime's PHP adapter: gp's own PHP sampler (gp_php_adapter.cpp over php_sampler and the
# per-version Zend layouts). phpspy's adapter is in src/runtime/spies/.
target_sources(gp_core PRIVATE
  src/runtime/php/gp_php_adapter.cpp
  src/runtime/php/php_layout.cpp
  src/runtime/php/php_sampler.cpp
)
