// What `kvsweep plan` asks of a target: the commands each treatment would run. Touches nothing.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/scenario/treatment.h"

namespace kvsweep::orchestrator {

// Thread contract: const, so any thread; a planner never runs a command nor opens a socket.
class TreatmentPlanner {
 public:
  virtual ~TreatmentPlanner() = default;

  virtual std::string describe() const = 0;  // as Target::describe()

  // What Target::apply(next) would run, as full argv lists in order, after `previous` was
  // applied (nullptr: the first apply of the sweep; the sim restarts on a later deploy-time
  // change). Targets that run no command (sim, replicas, endpoints) describe the change as an
  // argv-like list: {"POST", "/admin/strategy", "{\"strategy\":\"prefix-hash\"}"}. A treatment
  // the target cannot apply gives one list {"<cannot apply: why>"}: plan never throws.
  virtual std::vector<std::vector<std::string>> planned_commands(const Treatment* previous,
                                                                 const Treatment& next) const = 0;

  // What the readiness gates after that apply wait for, one line per gate ("pods: 8 pods -l
  // model=m Ready, ... (limit 30m)"); empty when the kind does not say.
  virtual std::vector<std::string> planned_gates(const Treatment* /*previous*/,
                                                 const Treatment& /*next*/) const {
    return {};
  }
};

}  // namespace kvsweep::orchestrator
