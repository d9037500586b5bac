# The headers the CUDA collector compiles against (docs/GPU.md "Building
# without a toolkit"): cupti_activity.h of CUDA 13 (CUPTI_API_VERSION 130000 on)
# or of CUDA 12.9 Update 1 (CUPTI_API_VERSION 28: the record structs of
# src/collectors/cuda/cupti_record_types.h; older CUDA 12 headers lack some of
# those the decoder reads and are refused), and the cuda.h and
# crt/host_defines.h those include. Either set decodes the records of both a
# CUDA 12 and a CUDA 13 libcupti. Looked for in a CUDA toolkit, then in the
# PyPI CUDA wheels of the Python that builds smprof: the CUDA 13 wheels
# nvidia-cuda-cupti, nvidia-cuda-runtime and nvidia-cuda-crt all install to
# nvidia/cu13/include; the CUDA 12 ones nvidia-cuda-cupti-cu12,
# nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12 (the only cu12 wheel with
# crt/host_defines.h) to nvidia/cuda_cupti/include,
# nvidia/cuda_runtime/include and nvidia/cuda_nvcc/include.
#
# Sets SMPROF_CUDA_HEADER_DIRS (empty when not found), and
# SMPROF_CUDA_HEADERS_FOUND or SMPROF_CUDA_HEADERS_MISSING: where each header
# came from, or what is missing and how to get it.
# -DSMPROF_CUPTI_INCLUDE_DIR=... skips the search for CUPTI.
set(SMPROF_CUDA_HEADER_DIRS)
find_package(CUDAToolkit QUIET)
set(_smprof_pip_dirs)
find_package(Python3 QUIET COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  # `nvidia` is a namespace package: every directory of it, both layouts.
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c
            "import nvidia; print(';'.join(d + s for d in nvidia.__path__ for s in ('/cu13/include', '/cuda_cupti/include', '/cuda_runtime/include', '/cuda_nvcc/include')))"
    OUTPUT_VARIABLE _smprof_pip_dirs OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()

set(_smprof_candidates ${CUDAToolkit_INCLUDE_DIRS})
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _smprof_candidates ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include)
endif()
list(APPEND _smprof_candidates ${_smprof_pip_dirs})
set(_smprof_too_old)
if(NOT SMPROF_CUPTI_INCLUDE_DIR)
  foreach(_dir IN LISTS _smprof_candidates)
    if(NOT EXISTS ${_dir}/cupti_activity.h OR NOT EXISTS ${_dir}/cupti_version.h)
      continue()
    endif()
    file(STRINGS ${_dir}/cupti_version.h _line REGEX "^#define CUPTI_API_VERSION [0-9]+")
    string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _version "${_line}")
    if(_version GREATER_EQUAL 28)
      set(SMPROF_CUPTI_INCLUDE_DIR ${_dir})
      break()
    endif()
    list(APPEND _smprof_too_old "${_dir} (CUPTI_API_VERSION ${_version}, before CUDA 12.9 Update 1)")
  endforeach()
endif()
if(SMPROF_CUPTI_INCLUDE_DIR)
  find_path(SMPROF_CUDA_INCLUDE_DIR cuda.h
            HINTS ${SMPROF_CUPTI_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS} ${_smprof_pip_dirs})
  find_path(SMPROF_CUDA_CRT_INCLUDE_DIR crt/host_defines.h
            HINTS ${SMPROF_CUDA_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS} ${_smprof_pip_dirs})
endif()

if(SMPROF_CUPTI_INCLUDE_DIR AND SMPROF_CUDA_INCLUDE_DIR AND SMPROF_CUDA_CRT_INCLUDE_DIR)
  set(SMPROF_CUDA_HEADER_DIRS ${SMPROF_CUPTI_INCLUDE_DIR} ${SMPROF_CUDA_INCLUDE_DIR} ${SMPROF_CUDA_CRT_INCLUDE_DIR})
  list(REMOVE_DUPLICATES SMPROF_CUDA_HEADER_DIRS)
  string(CONCAT SMPROF_CUDA_HEADERS_FOUND "CUPTI headers from ${SMPROF_CUPTI_INCLUDE_DIR} and cuda.h from "
                "${SMPROF_CUDA_INCLUDE_DIR} and crt/ from ${SMPROF_CUDA_CRT_INCLUDE_DIR}")
else()
  set(_smprof_missing "cupti_activity.h of CUDA 12.9 Update 1 or later")
  if(_smprof_too_old)
    string(REPLACE ";" ", " _smprof_too_old "${_smprof_too_old}")
    string(APPEND _smprof_missing " (refused: ${_smprof_too_old})")
  elseif(SMPROF_CUPTI_INCLUDE_DIR)
    set(_smprof_missing "cuda.h (${SMPROF_CUDA_INCLUDE_DIR}) or crt/host_defines.h (${SMPROF_CUDA_CRT_INCLUDE_DIR})")
  endif()
  string(CONCAT SMPROF_CUDA_HEADERS_MISSING
      "no ${_smprof_missing}. Install a CUDA 13 or 12.9 toolkit with CUPTI, or CUDA header wheels into the Python "
      "that builds smprof (${Python3_EXECUTABLE}): nvidia-cuda-cupti, nvidia-cuda-runtime and nvidia-cuda-crt "
      "(version 13.x), or nvidia-cuda-cupti-cu12, nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12 (version "
      "12.9.79 or later; 12.9.86 for nvcc) (either set works with a CUDA 12 or 13 PyTorch: at run time smprof "
      "loads the CUPTI that matches the process's CUDA runtime)")
endif()
