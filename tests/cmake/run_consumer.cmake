# Driver for the consumer proofs, run as `cmake -P run_consumer.cmake` by
# CTest. Configures, builds and runs one consumer project with the parent
# build's generator and compiler, from a clean binary directory.
#
#   -DMODE=stage     install a fresh configure of the checkout into STAGE_PREFIX
#   -DMODE=consumer  configure + build CONSUMER_SOURCE in CONSUMER_BINARY, run it
#   -DMODE=pkgconfig compile CONSUMER_SOURCE (one .cpp) with the flags that
#                    `pkg-config --cflags --libs PC_MODULE` gives for the staged
#                    install (PKG_CONFIG), into CONSUMER_BINARY, run it
# Common: TASKPLACE_SOURCE_DIR GENERATOR MAKE_PROGRAM CXX_COMPILER BUILD_TYPE
# Consumer: STAGE_PREFIX (optional, becomes CMAKE_PREFIX_PATH)
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

if(MODE STREQUAL "stage")
  set(build ${STAGE_PREFIX}-build)
  file(REMOVE_RECURSE ${build} ${STAGE_PREFIX})
  run_step("configure of the checkout for install" ${CMAKE_COMMAND}
    -S ${TASKPLACE_SOURCE_DIR} -B ${build} ${common_args}
    -DTASKPLACE_BUILD_TESTS=OFF -DTASKPLACE_BUILD_EXAMPLES=OFF -DTASKPLACE_BUILD_BENCH=OFF
    -DTASKPLACE_INSTALL=ON)
  run_step("build of the checkout" ${CMAKE_COMMAND} --build ${build})
  run_step("install" ${CMAKE_COMMAND} --install ${build} --prefix ${STAGE_PREFIX})
  foreach(f include/taskplace/taskplace.hpp include/taskplace/types.hpp)
    if(NOT EXISTS ${STAGE_PREFIX}/${f})
      message(FATAL_ERROR "install did not stage ${f}")
    endif()
  endforeach()
  file(GLOB_RECURSE config ${STAGE_PREFIX}/*/taskplace-config.cmake)
  file(GLOB_RECURSE version ${STAGE_PREFIX}/*/taskplace-config-version.cmake)
  if(NOT config OR NOT version)
    message(FATAL_ERROR "install did not stage taskplace-config{,-version}.cmake")
  endif()
elseif(MODE STREQUAL "consumer")
  file(REMOVE_RECURSE ${CONSUMER_BINARY})
  set(args -S ${CONSUMER_SOURCE} -B ${CONSUMER_BINARY} ${common_args}
    "-DTASKPLACE_SOURCE_DIR=${TASKPLACE_SOURCE_DIR}" -DFETCHCONTENT_FULLY_DISCONNECTED=ON)
  if(STAGE_PREFIX)
    list(APPEND args "-DCMAKE_PREFIX_PATH=${STAGE_PREFIX}" "-DTASKPLACE_STAGE_PREFIX=${STAGE_PREFIX}")
  endif()
  run_step("configure of ${CONSUMER_SOURCE}" ${CMAKE_COMMAND} ${args})
  run_step("build of ${CONSUMER_SOURCE}" ${CMAKE_COMMAND} --build ${CONSUMER_BINARY})
  run_step("run of the consumer" ${CONSUMER_BINARY}/consumer)
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
  run_step("compile of ${CONSUMER_SOURCE} with pkg-config's flags" ${CXX_COMPILER} -std=c++20
    ${CONSUMER_SOURCE} ${flags} -o ${CONSUMER_BINARY}/consumer)
  run_step("run of the consumer" ${CONSUMER_BINARY}/consumer)
else()
  message(FATAL_ERROR "MODE must be stage, consumer or pkgconfig (got '${MODE}')")
endif()
