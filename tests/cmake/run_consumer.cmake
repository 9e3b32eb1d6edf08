# Driver for the consumer proofs, run as `cmake -P run_consumer.cmake` by
# CTest. Configures, builds and runs one consumer project with the parent
# build's generator and compiler, from a clean binary directory.
#
#   -DMODE=stage     install a fresh configure of the checkout into STAGE_PREFIX
#                    and check where the package files went
#   -DMODE=consumer  configure + build CONSUMER_SOURCE in CONSUMER_BINARY, run it
#   -DMODE=configure_fails  configure CONSUMER_SOURCE and pass only when that
#                    fails with output matching EXPECT (a regular expression)
#   -DMODE=pkgconfig compile CONSUMER_SOURCE (one .cpp) with the flags that
#                    `pkg-config --cflags --libs PC_MODULE` gives for the staged
#                    install (PKG_CONFIG), into CONSUMER_BINARY, run it
# Common: TASKPLACE_SOURCE_DIR GENERATOR MAKE_PROGRAM CXX_COMPILER BUILD_TYPE
# Consumer and configure_fails, all optional:
#   STAGE_PREFIX  becomes CMAKE_PREFIX_PATH (and TASKPLACE_STAGE_PREFIX)
#   TASKPLACE_DIR becomes taskplace_DIR (a build folder: the build-tree package)
#   COMPONENTS    comma-separated, becomes TASKPLACE_TEST_COMPONENTS
#   HIDE_RANGE_V3 a range-v3 package folder (range-v3_DIR) to hide from the
#                 consumer, with its aliases (CMAKE_IGNORE_PATH)
cmake_minimum_required(VERSION 3.21)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}): ${ARGN}")
  endif()
endfunction()

set(common_args -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(MAKE_PROGRAM)
  list(APPEND common_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()

# consumer_args(<out>): the configure arguments of a consumer project. The
# list-valued settings go through an initial cache file (-C), where their
# semicolons survive.
function(consumer_args out)
  set(args -S ${CONSUMER_SOURCE} -B ${CONSUMER_BINARY} ${common_args}
    "-DTASKPLACE_SOURCE_DIR=${TASKPLACE_SOURCE_DIR}" -DFETCHCONTENT_FULLY_DISCONNECTED=ON)
  if(STAGE_PREFIX)
    list(APPEND args "-DCMAKE_PREFIX_PATH=${STAGE_PREFIX}" "-DTASKPLACE_STAGE_PREFIX=${STAGE_PREFIX}")
  endif()
  if(TASKPLACE_DIR)
    list(APPEND args "-Dtaskplace_DIR=${TASKPLACE_DIR}")
  endif()
  set(init "")
  if(DEFINED COMPONENTS)
    string(REPLACE "," ";" components "${COMPONENTS}")
    string(APPEND init "set(TASKPLACE_TEST_COMPONENTS \"${components}\" CACHE STRING \"\")\n")
  endif()
  if(HIDE_RANGE_V3)
    # The folder as found, its real path, and the same folder under the
    # other half of a merged /usr (/usr/lib and /lib are one folder on
    # Debian 12, and CMake searches both prefixes).
    file(REAL_PATH "${HIDE_RANGE_V3}" real)
    set(hidden "${HIDE_RANGE_V3}" "${real}")
    foreach(dir IN ITEMS "${HIDE_RANGE_V3}" "${real}")
      if(dir MATCHES "^/usr(/.*)$")
        list(APPEND hidden "${CMAKE_MATCH_1}")
      else()
        list(APPEND hidden "/usr${dir}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES hidden)
    string(APPEND init "set(CMAKE_IGNORE_PATH \"${hidden}\" CACHE STRING \"\")\n"
      "set(TASKPLACE_TEST_RANGE_V3_HIDDEN ON CACHE BOOL \"\")\n")
  endif()
  if(init)
    file(WRITE ${CONSUMER_BINARY}.init.cmake "${init}")
    list(APPEND args -C ${CONSUMER_BINARY}.init.cmake)
  endif()
  set(${out} ${args} PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "stage")
  set(build ${STAGE_PREFIX}-build)
  file(REMOVE_RECURSE ${build} ${STAGE_PREFIX})
  run_step("configure of the checkout for install" ${CMAKE_COMMAND}
    -S ${TASKPLACE_SOURCE_DIR} -B ${build} ${common_args}
    -DTASKPLACE_BUILD_TESTS=OFF -DTASKPLACE_BUILD_EXAMPLES=OFF -DTASKPLACE_BUILD_BENCH=OFF
    -DTASKPLACE_INSTALL=ON)
  run_step("build of the checkout" ${CMAKE_COMMAND} --build ${build})
  run_step("install" ${CMAKE_COMMAND} --install ${build} --prefix ${STAGE_PREFIX})
  foreach(f include/taskplace/taskplace.hpp include/taskplace/types.hpp
      include/taskplace/detail/config.hpp include/taskplace/tsc_clock.hpp)
    if(NOT EXISTS ${STAGE_PREFIX}/${f})
      message(FATAL_ERROR "install did not stage ${f}")
    endif()
  endforeach()
  # The package files in one place, beside each other: all of it under
  # share/ (header-only, architecture-independent).
  set(cmakedir ${STAGE_PREFIX}/share/cmake/taskplace)
  foreach(f taskplace-config.cmake taskplace-config-version.cmake taskplace-targets.cmake)
    if(NOT EXISTS ${cmakedir}/${f})
      message(FATAL_ERROR "install did not stage ${f} in share/cmake/taskplace")
    endif()
  endforeach()
  if(NOT EXISTS ${STAGE_PREFIX}/share/pkgconfig/taskplace.pc)
    message(FATAL_ERROR "install did not stage taskplace.pc in share/pkgconfig")
  endif()
  file(GLOB_RECURSE strays LIST_DIRECTORIES false ${STAGE_PREFIX}/*.cmake ${STAGE_PREFIX}/*.pc)
  foreach(f IN LISTS strays)
    file(RELATIVE_PATH rel ${STAGE_PREFIX} ${f})
    if(NOT rel MATCHES "^share/(cmake/taskplace|pkgconfig)/[^/]+$")
      message(FATAL_ERROR "install put a package file outside share/cmake/taskplace and share/pkgconfig: ${f}")
    endif()
  endforeach()
  # The generated config decides with lists, not with constants
  # substituted into if().
  file(READ ${cmakedir}/taskplace-config.cmake config)
  if(config MATCHES "if\\((ON|OFF|TRUE|FALSE|0|1)\\)")
    message(FATAL_ERROR "the generated taskplace-config.cmake holds '${CMAKE_MATCH_0}'")
  endif()
elseif(MODE STREQUAL "consumer")
  file(REMOVE_RECURSE ${CONSUMER_BINARY})
  consumer_args(args)
  run_step("configure of ${CONSUMER_SOURCE}" ${CMAKE_COMMAND} ${args})
  run_step("build of ${CONSUMER_SOURCE}" ${CMAKE_COMMAND} --build ${CONSUMER_BINARY})
  run_step("run of the consumer" ${CONSUMER_BINARY}/consumer)
elseif(MODE STREQUAL "configure_fails")
  file(REMOVE_RECURSE ${CONSUMER_BINARY})
  consumer_args(args)
  execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc
    OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(rc EQUAL 0)
    message(FATAL_ERROR "the configure of ${CONSUMER_SOURCE} succeeded; it must fail")
  endif()
  # CMake wraps long messages: match on the text with its line breaks and
  # indentation folded to single spaces.
  string(REGEX REPLACE "[ \t\r\n]+" " " folded "${out}")
  if(NOT folded MATCHES "${EXPECT}")
    message(FATAL_ERROR "the configure failed, but its output does not match '${EXPECT}'")
  endif()
elseif(MODE STREQUAL "pkgconfig")
  file(REMOVE_RECURSE ${CONSUMER_BINARY})
  file(MAKE_DIRECTORY ${CONSUMER_BINARY})
  file(GLOB_RECURSE pc_files ${STAGE_PREFIX}/*/${PC_MODULE}.pc)
  if(NOT pc_files)
    message(FATAL_ERROR "install did not stage ${PC_MODULE}.pc")
  endif()
  list(GET pc_files 0 pc_file)
  get_filename_component(pc_dir ${pc_file} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pc_dir})
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ${PC_MODULE}
    OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs ${PC_MODULE} failed (${rc})")
  endif()
  # The include path must point into the staged prefix (through the .pc's
  # own directory: the file is relocatable).
  string(FIND "${flags}" "-I${pc_dir}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "pkg-config gave '${flags}', not an include path beside ${pc_file}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  # Each flag once (no `-pthread -pthread` from Cflags and Libs both).
  set(seen)
  foreach(flag IN LISTS flags)
    if(flag IN_LIST seen)
      message(FATAL_ERROR "pkg-config --cflags --libs ${PC_MODULE} gives ${flag} twice: ${flags}")
    endif()
    list(APPEND seen ${flag})
  endforeach()
  run_step("compile of ${CONSUMER_SOURCE} with pkg-config's flags" ${CXX_COMPILER} -std=c++20
    ${CONSUMER_SOURCE} ${flags} -o ${CONSUMER_BINARY}/consumer)
  run_step("run of the consumer" ${CONSUMER_BINARY}/consumer)
else()
  message(FATAL_ERROR "MODE must be stage, consumer, configure_fails or pkgconfig (got '${MODE}')")
endif()
