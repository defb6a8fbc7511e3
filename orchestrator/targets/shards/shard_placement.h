// Where a target runs a sharded cell's shards when they are not local processes: a Kubernetes
// target places them in an Indexed Job of its namespace, through its own kubectl.
#pragma once

#include <memory>

#include "orchestrator/targets/command_log.h"
#include "orchestrator/targets/shards/shard_launcher.h"

namespace kvsweep::orchestrator {

// Thread contract: the runner's thread only, as Target's.
class ShardPlacement {
 public:
  // A launcher for one cell's shards, made as `job` says.
  virtual std::unique_ptr<ShardLauncher> launcher(const ShardJobSettings& job) = 0;
  // The commands the launchers ran since the last call, oldest first, for the cell's log.
  virtual CommandLogs take_commands() = 0;

 protected:
  // Not owned through this interface: the target that offers it owns it.
  ~ShardPlacement() = default;
};

}  // namespace kvsweep::orchestrator
