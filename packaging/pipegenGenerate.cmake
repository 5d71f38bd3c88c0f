# pipegen_generate(TARGET tgt SPECS a.pipe... [LOWER mech] [ARCH sm_80,sm_90]
#                  [WISDOM file [WISDOM_GPU name]] [OUTPUT_DIR dir] [OPTIONS opt...])
# for the installed pipegen (pipegenConfig.cmake includes this file) and for pipegen's own
# CMakeLists.txt (add_subdirectory, FetchContent): both define pipegen::pipegen and
# pipegen::pipert first. pipegenConfig.cmake says what it does.
function(pipegen_generate)
  cmake_parse_arguments(PARSE_ARGV 0 _pg "" "TARGET;LOWER;ARCH;WISDOM;WISDOM_GPU;OUTPUT_DIR" "SPECS;OPTIONS")
  if(_pg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "pipegen_generate: unexpected arguments: ${_pg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT _pg_TARGET OR NOT TARGET "${_pg_TARGET}")
    message(FATAL_ERROR "pipegen_generate: TARGET must name an existing target")
  endif()
  if(NOT _pg_SPECS)
    message(FATAL_ERROR "pipegen_generate: no SPECS")
  endif()
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "CUDA" IN_LIST _langs)
    message(FATAL_ERROR "pipegen_generate: enable the CUDA language first "
                        "(project(... LANGUAGES C CUDA) or enable_language(CUDA))")
  endif()
  if(NOT _pg_ARCH)
    set(_pg_ARCH "sm_80,sm_90")
  endif()
  string(REPLACE ";" "," _pg_ARCH "${_pg_ARCH}")
  string(REPLACE "," ";" _archs "${_pg_ARCH}")
  set(_newest 0)
  # What pipegen --arch takes: sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_103 sm_120, and
  # from sm_90 on the arch-specific sm_90a, sm_100a, ... (CMake's 90a).
  foreach(_a IN LISTS _archs)
    set(_ok FALSE)
    if(_a MATCHES "^sm_(80|86|87|89|90|100|103|120)(a?)$")
      if(NOT CMAKE_MATCH_2 STREQUAL "a" OR NOT CMAKE_MATCH_1 LESS 90)
        set(_ok TRUE)
      endif()
    endif()
    if(NOT _ok)
      message(FATAL_ERROR "pipegen_generate: ARCH '${_a}' is not one of pipegen's "
              "architectures: sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_103 sm_120, and from "
              "sm_90 on also sm_90a, sm_100a, sm_103a, sm_120a")
    endif()
    if(CMAKE_MATCH_1 GREATER _newest)
      set(_newest "${CMAKE_MATCH_1}")
    endif()
  endforeach()
  # Each architecture as a real one, and the newest also as PTX (a GPU newer than every
  # one JIT-compiles it; an arch-specific one's PTX runs only on its own GPU).
  set(_cuda_archs "")
  foreach(_a IN LISTS _archs)
    string(REGEX REPLACE "^sm_" "" _n "${_a}")
    string(REGEX REPLACE "a$" "" _num "${_n}")
    if(_num EQUAL _newest)
      list(APPEND _cuda_archs "${_n}")
    else()
      list(APPEND _cuda_archs "${_n}-real")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _cuda_archs)
  get_property(_prev TARGET "${_pg_TARGET}" PROPERTY PIPEGEN_ARCH)
  if(_prev AND NOT _prev STREQUAL _pg_ARCH)
    message(FATAL_ERROR "pipegen_generate: ${_pg_TARGET} already has sources generated for "
                        "${_prev}, not ${_pg_ARCH}: one ARCH per target")
  endif()

  if(NOT _pg_OUTPUT_DIR)
    set(_pg_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/pipegen")
  endif()
  get_filename_component(_dir "${_pg_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  file(MAKE_DIRECTORY "${_dir}")
  # pipegen::pipegen: the installed one (imported), or the one add_subdirectory or
  # FetchContent builds (an alias).
  get_target_property(_exe_target pipegen::pipegen ALIASED_TARGET)
  if(NOT _exe_target)
    set(_exe_target pipegen::pipegen)
  endif()

  cmake_policy(PUSH)
  cmake_policy(SET CMP0116 NEW)
  foreach(_spec IN LISTS _pg_SPECS)
    get_filename_component(_abs "${_spec}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(_name "${_spec}" NAME_WE)
    set(_cu "${_dir}/${_name}.cu")
    set(_cuh "${_dir}/${_name}.cuh")
    # The whole command is here, nothing from the environment; the output names the
    # spec relative to the source (or build) tree, not by its absolute path
    # (-ffile-prefix-map: the same bytes from any checkout, ccache hits across them).
    # OPTIONS come last: a -ffile-prefix-map of theirs wins where it matches.
    set(_args "${_abs}" -o "${_cu}" "--arch=${_pg_ARCH}" -MD -MF "${_cu}.d")
    if(_pg_LOWER)
      list(APPEND _args "--lower=${_pg_LOWER}")
    endif()
    # A wisdom file (pipegen-tune's): auto's choices from it, of one GPU's records where
    # WISDOM_GPU names it; the depfile names the file, so an edit regenerates. Without
    # them, --wisdom= and --wisdom-gpu= (none): not $PIPEGEN_WISDOM(_GPU) either, the
    # command being the whole input.
    set(_wisdom "")
    if(_pg_WISDOM)
      get_filename_component(_wisdom "${_pg_WISDOM}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    endif()
    list(APPEND _args "--wisdom=${_wisdom}" "--wisdom-gpu=${_pg_WISDOM_GPU}")
    list(APPEND _args "-ffile-prefix-map=${CMAKE_SOURCE_DIR}/=" "-ffile-prefix-map=${CMAKE_BINARY_DIR}/="
         ${_pg_OPTIONS})
    add_custom_command(
      OUTPUT "${_cu}" "${_cuh}"
      COMMAND ${_exe_target} ${_args}
      MAIN_DEPENDENCY "${_abs}"
      DEPENDS ${_exe_target}
      DEPFILE "${_cu}.d"
      COMMENT "pipegen ${_spec}"
      VERBATIM)
    target_sources("${_pg_TARGET}" PRIVATE "${_cu}" "${_cuh}")
  endforeach()
  cmake_policy(POP)

  target_include_directories("${_pg_TARGET}" PRIVATE "${_dir}")
  target_link_libraries("${_pg_TARGET}" PRIVATE pipegen::pipert)
  set_property(TARGET "${_pg_TARGET}" PROPERTY CUDA_ARCHITECTURES ${_cuda_archs})
  set_property(TARGET "${_pg_TARGET}" PROPERTY PIPEGEN_ARCH "${_pg_ARCH}")
  if(PIPEGEN_PIPERT_SHARED)
    set_property(TARGET "${_pg_TARGET}" PROPERTY CUDA_RUNTIME_LIBRARY Shared)
  endif()
endfunction()
