# The install.consumer CTest: `cmake --install BUILD_DIR --prefix WORK_DIR/prefix`, then configure, build
# and run tests/install_consumer against that prefix (find_package(denote), denote::denote).
#   cmake -DBUILD_DIR=build -DSOURCE_DIR=tests/install_consumer -DWORK_DIR=build/install_consumer -DGENERATOR=Ninja -P run.cmake
file(REMOVE_RECURSE ${WORK_DIR})
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install.consumer: ${what} failed (${rc})\n${out}\n${err}")
  endif()
  message(STATUS "install.consumer: ${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
foreach(f include/denote/ir/model.h lib/libdenote.a bin/denote lib/cmake/denote/denoteConfig.cmake
          lib/cmake/denote/denoteConfigVersion.cmake lib/cmake/denote/denoteTargets.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "install.consumer: ${f} is not installed")
  endif()
endforeach()
step("configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
     -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
step("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("run" ${WORK_DIR}/build/consumer)
message(STATUS "${step_output}")
