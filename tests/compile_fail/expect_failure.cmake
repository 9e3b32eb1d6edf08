# cmake -DBUILD_DIR=... -DTARGET=... -DEXPECT=... -P expect_failure.cmake
# Builds TARGET in BUILD_DIR and succeeds only when the build fails and its
# output contains EXPECT.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled; it must not")
endif()
string(FIND "${out}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${TARGET} failed, but not with '${EXPECT}':\n${out}")
endif()
message(STATUS "${TARGET} refused as expected: '${EXPECT}'")
