# The predictor's purity promise, checked on the sources (cmake -DROOT=<repo> -DCXX=<compiler>
# -P layering.cmake; fails with a list): nothing in predict/ reaches HTTP, sockets, Asio,
# libcurl, a clock or a sleep, directly or through another header, and neither the driver nor
# the sim includes predict/; nothing in predict/ (its calibrate/ fit included) includes the
# orchestrator: a fit is handed the run's figures and something that replays it.
set(problems "")

file(GLOB_RECURSE sources "${ROOT}/predict/*.cc")
list(LENGTH sources count)
if(count LESS 5)
  list(APPEND problems "only ${count} sources in ${ROOT}/predict: wrong directory?")
endif()
foreach(source IN LISTS sources)
  execute_process(COMMAND "${CXX}" -std=c++20 "-I${ROOT}" -M "${source}"
                  OUTPUT_VARIABLE deps ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(REPLACE "${ROOT}/" "" short "${source}")
  if(NOT rc EQUAL 0)
    list(APPEND problems "${short}: could not list its includes: ${err}")
  endif()
  foreach(bad "/boost/" "/curl/" "sim/http/" "sim/router/router.h" "sim/fleet.h" "sim/engine/engine.h"
          "driver/load_run.h" "driver/transfer_worker.h" "driver/stream_transfer.h"
          "driver/http_fetch.h" "sys/socket.h" "netinet/")
    if(deps MATCHES "${bad}")
      list(APPEND problems "${short} includes ${bad} (directly or through another header)")
    endif()
  endforeach()
  file(STRINGS "${source}" calls REGEX "sleep|steady_clock|system_clock|clock_gettime")
  foreach(line IN LISTS calls)
    list(APPEND problems "${short}: reads a clock or sleeps: ${line}")
  endforeach()
endforeach()

file(GLOB_RECURSE below "${ROOT}/driver/*.h" "${ROOT}/driver/*.cc" "${ROOT}/sim/*.h"
     "${ROOT}/sim/*.cc")
foreach(file IN LISTS below)
  file(STRINGS "${file}" includes REGEX "^#include \"predict/")
  foreach(line IN LISTS includes)
    string(REPLACE "${ROOT}/" "" short "${file}")
    list(APPEND problems "${short}: ${line} (driver and sim never include predict/)")
  endforeach()
endforeach()

file(GLOB_RECURSE own "${ROOT}/predict/*.h" "${ROOT}/predict/*.cc")
foreach(file IN LISTS own)
  file(STRINGS "${file}" includes REGEX "^#include \"orchestrator/")
  foreach(line IN LISTS includes)
    string(REPLACE "${ROOT}/" "" short "${file}")
    list(APPEND problems "${short}: ${line} (predict/ never includes the orchestrator)")
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n" text)
  message(FATAL_ERROR "predict layering broken:\n${text}")
endif()
message(STATUS "predict layering holds")
