// Where a cell's shards run and how the coordinator reaches their files (driver/shard_run.h):
// N local processes, or the pods of a Kubernetes Indexed Job. The coordinator
// (shard_coordinator.h) speaks the protocol; a launcher only starts, reaches and ends shards.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kvsweep::orchestrator {

// What a Kubernetes Job of shards is made of (load.shard_job in a scenario).
struct ShardJobSettings {
  std::string name;                      // the Job's name, a DNS label
  std::string image = "kvsweep:latest";  // the kvsweep image (deploy/Dockerfile)
  std::string cpu;                       // the container's requests = limits; "" none
  std::string memory;
  std::map<std::string, std::string> node_selector;
  std::string env_secret;        // a Secret whose keys become the shards' env (the API key)
  double ready_timeout_s = 300;  // a pod's own wait for its plan and for the start
  // The kvsweep binary run beside the coordinator as the Job's watcher (`kvsweep shard watch`):
  // should the coordinator be killed, it deletes the Job, as the coordinator does when it ends
  // well. "" for none.
  std::string watch_program;
};

class ShardLauncher {
 public:
  virtual ~ShardLauncher() = default;

  // Starts `count` shards of the plan (driver/shard_plan.h's JSON text). Throws
  // std::runtime_error when they cannot be started at all.
  virtual void start(const std::string& plan_json, int count) = 0;
  // A file of shard `shard`'s directory, nullopt while it is absent. Only a regular file of
  // at most max_bytes: anything else (a link to /dev/zero, a FIFO, a larger file) throws
  // std::runtime_error naming it, without reading past the bound or waiting on it.
  virtual std::optional<std::string> read_file(int shard, const std::string& name,
                                               std::uint64_t max_bytes) = 0;
  // Where that file is, for messages: a path, or a pod and a path.
  virtual std::string file_location(int shard, const std::string& name) const = 0;
  virtual void write_file(int shard, const std::string& name, const std::string& text) = 0;
  // Why shard `shard` can no longer do its part ("exited with code 1: <its last words>",
  // "pod x: container shard: OOMKilled"), nullopt while it runs or once it ended well.
  virtual std::optional<std::string> failure(int shard) = 0;
  // Ends every shard now and releases what start() made (processes, a Job). Idempotent.
  virtual void stop() = 0;
  // How often the coordinator looks at the shards' files: a local file costs nothing, an exec
  // into a pod tens of milliseconds.
  virtual double poll_interval_s() const { return 0.02; }
  // Shard `shard`'s wall clock minus this machine's, in ms, once it is ready; nullopt where
  // they share one clock (local processes).
  virtual std::optional<double> clock_offset_ms(int /*shard*/) { return std::nullopt; }
};

}  // namespace kvsweep::orchestrator
