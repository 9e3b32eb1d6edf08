# cmake -DBUILD_DIR=... -DTARGET=...                  -DEXPECT=... [-DEXPECT_ALSO=a|b] -P expect_failure.cmake
# cmake -DCOMPILER=... -DSOURCE=... -DINCLUDE_DIR=... -DEXPECT=... [-DEXPECT_ALSO=a|b] -P expect_failure.cmake
# Builds TARGET in BUILD_DIR, or compiles SOURCE with COMPILER (C++20,
# syntax only, INCLUDE_DIR on the include path), and succeeds only when
# that fails, the first line of its output that reports an error contains
# EXPECT, and the output contains each of EXPECT_ALSO.
if(DEFINED TARGET)
  set(who "${TARGET}")
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
else()
  get_filename_component(who "${SOURCE}" NAME)
  string(APPEND who " (${COMPILER})")
  execute_process(COMMAND ${COMPILER} -std=c++20 -fsyntax-only -I${INCLUDE_DIR} ${SOURCE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
endif()

# Colours, where a compiler was told to use them, would split the texts.
string(ASCII 27 esc)
string(REGEX REPLACE "${esc}\\[[0-9;]*[mK]" "" out "${out}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${who} compiled; it must not")
endif()
# The first line that reports an error, as g++ and clang++ write it.
string(REGEX MATCH "[^\n]*error: [^\n]*" first "${out}")
if(first STREQUAL "")
  message(FATAL_ERROR "${who} failed without a compiler error:\n${out}")
endif()
string(FIND "${first}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${who}: the first error is not '${EXPECT}':\n${first}\n\nThe whole output:\n${out}")
endif()
string(REPLACE "|" ";" also "${EXPECT_ALSO}")
foreach(text IN LISTS also)
  string(FIND "${out}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${who} failed, but its output lacks '${text}':\n${out}")
  endif()
endforeach()
message(STATUS "${who} refused as expected: ${first}")
