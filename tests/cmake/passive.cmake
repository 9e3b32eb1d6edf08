# taskplace_check_passive(<target>): fails the consumer's configure when the
# library target hands flags, definitions or link options to its users, or
# has set the consumer's language standard variable.
function(taskplace_check_passive target)
  foreach(prop INTERFACE_COMPILE_OPTIONS INTERFACE_COMPILE_DEFINITIONS INTERFACE_LINK_OPTIONS)
    get_target_property(value ${target} ${prop})
    if(value)
      message(FATAL_ERROR "${target} is not passive: ${prop} = '${value}'")
    endif()
  endforeach()
  get_target_property(features ${target} INTERFACE_COMPILE_FEATURES)
  if(NOT "cxx_std_20" IN_LIST features)
    message(FATAL_ERROR "${target} does not carry cxx_std_20 (has '${features}')")
  endif()
  if(DEFINED CMAKE_CXX_STANDARD)
    message(FATAL_ERROR "CMAKE_CXX_STANDARD was set to '${CMAKE_CXX_STANDARD}' for the consumer")
  endif()
endfunction()

# taskplace_check_staged(<target>): fails the consumer's configure when the
# target's include path does not point into the staged install
# (TASKPLACE_STAGE_PREFIX, passed by the test driver), e.g. at the checkout.
function(taskplace_check_staged target)
  get_target_property(includes ${target} INTERFACE_INCLUDE_DIRECTORIES)
  string(FIND "${includes}" "${TASKPLACE_STAGE_PREFIX}" at)
  if(TASKPLACE_STAGE_PREFIX AND NOT at EQUAL 0)
    message(FATAL_ERROR "${target} includes '${includes}', not the staged install")
  endif()
endfunction()
