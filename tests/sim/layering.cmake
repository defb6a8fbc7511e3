# The sim's folder graph and the two purity promises a virtual-time driver relies on, checked
# on the sources (cmake -DROOT=<repo> -DCXX=<compiler> -P layering.cmake; fails with a list):
# - includes point one way: top -> router -> http -> engine (router -> engine too);
# - the scheduler and block pool include no clock and no Boost (nothing transitively either);
# - the routing decision includes no Boost and nothing of sim/http (transitively).
set(problems "")

function(forbid_direct folder)
  file(GLOB files "${ROOT}/sim/${folder}/*.h" "${ROOT}/sim/${folder}/*.cc")
  foreach(file IN LISTS files)
    file(STRINGS "${file}" includes REGEX "^#include \"sim/")
    foreach(line IN LISTS includes)
      foreach(bad IN LISTS ARGN)
        if(line MATCHES "\"sim/${bad}")
          string(REPLACE "${ROOT}/" "" short "${file}")
          list(APPEND problems "${short}: ${line} (sim/${folder} must not include sim/${bad})")
        endif()
      endforeach()
    endforeach()
  endforeach()
  set(problems "${problems}" PARENT_SCOPE)
endfunction()

function(forbid_transitive source)
  execute_process(COMMAND "${CXX}" -std=c++20 "-I${ROOT}" -M "${ROOT}/${source}"
                  OUTPUT_VARIABLE deps ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    list(APPEND problems "${source}: could not list its includes: ${err}")
  endif()
  foreach(bad IN LISTS ARGN)
    if(deps MATCHES "${bad}")
      list(APPEND problems "${source} includes ${bad} (directly or through another header)")
    endif()
  endforeach()
  set(problems "${problems}" PARENT_SCOPE)
endfunction()

forbid_direct(engine http/ router/ fleet.h proxy.h)
forbid_direct(http router/ fleet.h proxy.h)
forbid_direct(router fleet.h proxy.h)
foreach(source sim/engine/scheduler.cc sim/engine/block_pool.cc)
  forbid_transitive(${source} "/boost/" "/chrono" "sim/http/" "sim/router/")
endforeach()
foreach(source route_decider routing_strategy chwbl kv_index replica_health)
  forbid_transitive(sim/router/${source}.cc "/boost/" "sim/http/" "sim/router/router.h")
endforeach()

if(problems)
  list(JOIN problems "\n" text)
  message(FATAL_ERROR "sim layering broken:\n${text}")
endif()
message(STATUS "sim layering holds")
