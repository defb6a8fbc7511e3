// An EndpointPickerConfig for tests that run every strategy, "epp" included.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "sim/router/epp_config.h"

namespace kvsweep::sim {

// A queue scorer alone: the EPP's least-waiting-queue pick.
inline std::shared_ptr<const EppConfig> queue_scorer_epp() {
  std::string error;
  auto config = parse_epp_config(
      "test-epp.yaml",
      "apiVersion: inference.networking.x-k8s.io/v1alpha1\nkind: EndpointPickerConfig\n"
      "plugins: [{type: queue-scorer}]\n",
      &error);
  if (!config) throw std::logic_error(error);
  return config;
}

}  // namespace kvsweep::sim
