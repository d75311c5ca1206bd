# SPDX-License-Identifier: Apache-2.0
# Folds the objects of static library ADD into static library INTO, so that libnnd.a is
# usable on its own (the generated protobuf code and framing live in nnd_proto, the
# operation signatures in the engine copy).
# Usage: cmake -DINTO=libnnd.a -DADD=libnnd_proto.a -DAR=ar -DWORK=dir -P merge_static.cmake
cmake_policy(SET CMP0057 NEW) # if(IN_LIST) in script mode
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${AR} x ${ADD} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cannot extract ${ADD}")
endif()
file(GLOB objects ${WORK}/*)
# ar replaces a member of the same name: two modules' objects that share a file name
# (proto/arena.c and an engine file arena.c once) would leave one of them out of libnnd.a.
execute_process(COMMAND ${AR} t ${INTO} OUTPUT_VARIABLE members RESULT_VARIABLE rc)
string(REPLACE "\n" ";" members "${members}")
foreach(object IN LISTS objects)
  get_filename_component(name ${object} NAME)
  if(name IN_LIST members)
    message(FATAL_ERROR "libnnd.a already has a member ${name}: rename the file adding ${ADD}'s")
  endif()
endforeach()
execute_process(COMMAND ${AR} rs ${INTO} ${objects} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cannot add the objects of ${ADD} to ${INTO}")
endif()
file(REMOVE_RECURSE ${WORK})
