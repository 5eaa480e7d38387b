# gp-runtime's Java adapters (libcore/src/runtime/java): output parsers on captured/documented
# fixtures, and the adapters against real JVMs running tests/fixtures/runtime/java/Main.java,
# compiled here with the JDK's javac (openjdk-17-jdk-headless from scripts/install-deps.sh).
target_sources(gp_unit_tests PRIVATE
  unit/runtime_java_parse_test.cpp
  unit/runtime_java_safemode_watch_test.cpp
  unit/runtime_java_jfr_test.cpp
  unit/runtime_java_ap_test.cpp
  unit/runtime_java_target_dir_test.cpp
)
target_include_directories(gp_unit_tests PRIVATE ${PROJECT_SOURCE_DIR}/libcore/src)

find_program(GP_JAVAC javac)
set(GP_JAVA_CLASSES ${CMAKE_CURRENT_BINARY_DIR}/fixtures/java)
if(GP_JAVAC)
  add_custom_command(OUTPUT ${GP_JAVA_CLASSES}/Main.class
    COMMAND ${CMAKE_COMMAND} -E make_directory ${GP_JAVA_CLASSES}
    COMMAND ${GP_JAVAC} -d ${GP_JAVA_CLASSES} ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/runtime/java/Main.java
    DEPENDS fixtures/runtime/java/Main.java VERBATIM)
  add_custom_target(gp_java_fixtures DEPENDS ${GP_JAVA_CLASSES}/Main.class)
  add_dependencies(gp_unit_tests gp_java_fixtures)
  target_compile_definitions(gp_unit_tests PRIVATE GP_JAVA_CLASSES="${GP_JAVA_CLASSES}")
endif()
