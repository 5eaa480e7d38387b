# gp-runtime's Ruby sampler: gp's own CRuby stack reader (gp_ruby_adapter.cpp over
# ruby_sampler / ruby_layout / line_numbers). rbspy's adapter is in src/runtime/spies.
target_sources(gp_core PRIVATE
  src/runtime/ruby/gp_ruby_adapter.cpp
  src/runtime/ruby/line_numbers.cpp
  src/runtime/ruby/ruby_layout.cpp
  src/runtime/ruby/ruby_sampler.cpp
)
