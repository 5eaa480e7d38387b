# gp_bpf_object(<name> <source.bpf.c> [headers...])
# Compiles a BPF program with clang -target bpf, generates its libbpf skeleton with
# `bpftool gen skeleton` into the build tree (never committed), and defines the INTERFACE target
# <name>_skel: link it to get `#include "<name>.skel.h"` (struct <name>_bpf) and libbpf.
# Only gp-record links a skeleton (STYLE.md §A: BPF is isolated).

find_program(GP_BPF_CLANG NAMES clang clang-16 clang-15 clang-14 REQUIRED)
find_program(GP_BPFTOOL NAMES bpftool PATHS /usr/sbin /usr/local/sbin REQUIRED)
pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf>=0.8)

# The BPF target's __TARGET_ARCH_* and the multiarch include dir for <asm/types.h>.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|amd64")
  set(GP_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(GP_BPF_ARCH arm64)
else()
  set(GP_BPF_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch OUTPUT_VARIABLE GP_MULTIARCH
                OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)

function(gp_bpf_object name source)
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
  set(skel_dir ${CMAKE_CURRENT_BINARY_DIR}/skel)
  set(skel ${skel_dir}/${name}.skel.h)
  set(arch_include)
  if(GP_MULTIARCH)
    set(arch_include -I/usr/include/${GP_MULTIARCH})
  endif()
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${GP_BPF_CLANG} -target bpf -g -O2 -Wall -D__TARGET_ARCH_${GP_BPF_ARCH}
            ${arch_include} -I${CMAKE_CURRENT_SOURCE_DIR} -c ${CMAKE_CURRENT_SOURCE_DIR}/${source}
            -o ${obj}
    DEPENDS ${source} ${ARGN}
    COMMENT "BPF ${source}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${skel_dir}
    COMMAND ${GP_BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}
    DEPENDS ${obj}
    COMMENT "BPF skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(${name}_skel_gen DEPENDS ${skel})
  add_library(${name}_skel INTERFACE)
  add_dependencies(${name}_skel ${name}_skel_gen)
  target_include_directories(${name}_skel INTERFACE ${skel_dir} ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name}_skel INTERFACE PkgConfig::LIBBPF)
endfunction()
