# Sources of the kubectl-driven targets, compiled into kvsweep_orchestrator.
set(KVSWEEP_KUBE_SOURCES
  dynamo_target.cc
  endpoints_target.cc
  factor_levels.cc
  kube_base.cc
  kubeai_target.cc
  kubectl.cc
  kubectl_target.cc
  pod_gate.cc
  pod_status.cc
  temp_file.cc
)
list(TRANSFORM KVSWEEP_KUBE_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
