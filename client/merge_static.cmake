# Folds the objects of static library ADD into static library INTO, so that libnnd.a is
# usable on its own (the generated protobuf code and framing live in nnd_proto, the
# operation signatures in the engine copy).
# Usage: cmake -DINTO=libnnd.a -DADD=libnnd_proto.a -DAR=ar -DWORK=dir -P merge_static.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${AR} x ${ADD} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cannot extract ${ADD}")
endif()
file(GLOB objects ${WORK}/*)
execute_process(COMMAND ${AR} rs ${INTO} ${objects} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cannot add the objects of ${ADD} to ${INTO}")
endif()
file(REMOVE_RECURSE ${WORK})
