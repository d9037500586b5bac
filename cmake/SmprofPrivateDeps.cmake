# The libraries libsmprof and _smppy use but never share with the host
# process: protobuf-lite, zstd and libpfm4, from the static archives of
# Debian's -dev packages. Sets PFM_INCLUDE_DIR and SMPROF_PRIVATE_DEPS, the
# link items of a target that hides them (see SmprofExports.cmake).
set(Protobuf_USE_STATIC_LIBS ON)
# A build tree configured before smprof linked statically cached the shared
# libraries: forget them, so that FindProtobuf looks for the archives.
foreach(_smprof_var Protobuf_LIBRARY_RELEASE Protobuf_LIBRARY_DEBUG Protobuf_LITE_LIBRARY_RELEASE
                    Protobuf_LITE_LIBRARY_DEBUG)
  if(DEFINED CACHE{${_smprof_var}} AND NOT "${${_smprof_var}}" MATCHES "\\.a$")
    unset(${_smprof_var} CACHE)
  endif()
endforeach()
find_package(Protobuf REQUIRED)
find_package(zstd REQUIRED)
# libpfm4 turns perf event names (cycles, clk_unhalted_ref.tsc, ...) into encodings.
find_path(PFM_INCLUDE_DIR perfmon/pfmlib_perf_event.h)
find_library(PFM_STATIC_LIBRARY NAMES libpfm.a)
if(TARGET zstd::libzstd_static)
  get_target_property(_smprof_zstd_archive zstd::libzstd_static LOCATION)
endif()

set(_smprof_missing "")
if(NOT _smprof_zstd_archive MATCHES "\\.a$")
  list(APPEND _smprof_missing "libzstd.a (libzstd-dev)")
endif()
if(NOT Protobuf_LITE_LIBRARY MATCHES "\\.a$")
  list(APPEND _smprof_missing "libprotobuf-lite.a (libprotobuf-dev), found '${Protobuf_LITE_LIBRARY}'")
endif()
if(NOT PFM_INCLUDE_DIR OR NOT PFM_STATIC_LIBRARY)
  list(APPEND _smprof_missing "libpfm.a and perfmon/pfmlib_perf_event.h (libpfm4-dev)")
endif()
if(_smprof_missing)
  list(JOIN _smprof_missing ", " _smprof_missing)
  message(FATAL_ERROR "smprof links these static archives and did not find: ${_smprof_missing}. "
                      "scripts/install_deps.sh installs the Debian packages.")
endif()

# Debian compiles these archives as PIE, for executables. Two things in them
# cannot go into a shared library, so the build links adapted copies:
# - their direct reads of glibc's `stderr`/`stdout` are renamed to hidden
#   pointers that src/session/archive_libc_streams.cc defines;
# - protobuf's arena.o (local-exec TLS) is left out: smprof uses no arenas,
#   and src/trace/protobuf_without_arenas.cc defines what the rest references.
# (Their references to libstdc++ resolve inside: it is linked statically.)
set(_smprof_archive_dir ${CMAKE_BINARY_DIR}/private-archives)
file(MAKE_DIRECTORY ${_smprof_archive_dir})
function(_smprof_adapt_archive input output)
  execute_process(COMMAND ${CMAKE_OBJCOPY} --redefine-sym stderr=smprof_archive_stderr
                          --redefine-sym stdout=smprof_archive_stdout ${input} ${output}
                  RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "objcopy could not adapt ${input}")
  endif()
endfunction()
_smprof_adapt_archive(${Protobuf_LITE_LIBRARY} ${_smprof_archive_dir}/libprotobuf-lite.a)
execute_process(COMMAND ${CMAKE_AR} d ${_smprof_archive_dir}/libprotobuf-lite.a arena.o RESULT_VARIABLE _smprof_result)
if(NOT _smprof_result EQUAL 0)
  message(FATAL_ERROR "could not remove arena.o from ${Protobuf_LITE_LIBRARY}")
endif()
_smprof_adapt_archive(${_smprof_zstd_archive} ${_smprof_archive_dir}/libzstd.a)
_smprof_adapt_archive(${PFM_STATIC_LIBRARY} ${_smprof_archive_dir}/libpfm.a)

add_library(smprof_protobuf_lite STATIC IMPORTED)
set_target_properties(smprof_protobuf_lite PROPERTIES IMPORTED_LOCATION ${_smprof_archive_dir}/libprotobuf-lite.a
                                                      INTERFACE_INCLUDE_DIRECTORIES "${Protobuf_INCLUDE_DIRS}")
get_target_property(_smprof_zstd_includes zstd::libzstd_static INTERFACE_INCLUDE_DIRECTORIES)
add_library(smprof_zstd STATIC IMPORTED)
set_target_properties(smprof_zstd PROPERTIES IMPORTED_LOCATION ${_smprof_archive_dir}/libzstd.a)
if(_smprof_zstd_includes)
  set_target_properties(smprof_zstd PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_smprof_zstd_includes}")
endif()
# What the adapted archives need from us, as object files so that every link
# that uses an archive gets them whatever the order of the link line.
add_library(smprof_archive_support OBJECT ${PROJECT_SOURCE_DIR}/src/session/archive_libc_streams.cc
                                          ${PROJECT_SOURCE_DIR}/src/trace/protobuf_without_arenas.cc)
set_target_properties(smprof_archive_support PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden)
target_link_libraries(smprof_archive_support PRIVATE smprof_protobuf_lite)
target_compile_features(smprof_archive_support PRIVATE cxx_std_17)

set(SMPROF_PRIVATE_DEPS $<TARGET_OBJECTS:smprof_archive_support> smprof_protobuf_lite smprof_zstd
                        ${_smprof_archive_dir}/libpfm.a Threads::Threads ${CMAKE_DL_LIBS})
