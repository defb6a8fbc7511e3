# The official openai npm package against `kvsweep sim serve` (needs node and the npm registry).
if("orchestrator" IN_LIST KVSWEEP_PARTS)
  add_test(NAME sim_openai_npm
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run.sh $<TARGET_FILE:kvsweep>
                   ${CMAKE_CURRENT_BINARY_DIR}/openai_npm)
  set_tests_properties(sim_openai_npm PROPERTIES TIMEOUT 300 LABELS "network")
endif()
