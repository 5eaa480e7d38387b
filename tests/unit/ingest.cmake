# ingest: the .col/folded reader and read_profile's dispatch.
target_sources(gp_unit_tests PRIVATE unit/collapsed_test.cpp)
