// One load run on the virtual fleet: the driver's request source against simulated replicas.
#pragma once

#include <functional>
#include <vector>

#include "driver/load_options.h"
#include "driver/workload.h"
#include "predict/virtual_fleet.h"
#include "store/rows.h"

namespace kvsweep::predict {

struct VirtualLoadOptions {
  // One way, client <-> replica: a request reaches its replica this long after it is sent,
  // and each byte the replica writes reaches the client this long after. 0: none.
  double network_latency_s = 0;
  // The client's time to send one request (build, write, and on the next one's turn): sends
  // due at the same instant leave this far apart, one after another, as a real client's do.
  // Without it, requests that a step's end releases together would reach an idle replica at
  // the same instant and always share its next step, a lockstep no real client keeps (the
  // real-time fleet never shows it). Default: the driver's measured cost per request at
  // saturation, about 20 us (docs/performance.md). 0: sends at the same instant.
  double client_send_cost_s = 20e-6;
  // > 0: the replicas' /metrics are sampled during the run, as the sweep's periodic scraper
  // does: at the first answer to a measured request, then every interval after it (or every
  // interval from the start while no measured request has an answer). 0: before and after only.
  double sample_interval_s = 0;
};

struct VirtualLoadResult {
  // As run_load's (driver/load_run.h): every request a record, ordered by index; times are
  // seconds of virtual time since the run's epoch (epoch_wall_s, see kVirtualEpochS in
  // virtual_records.h).
  driver::LoadResult load;
  // The fleet's samples (fleet_samples.h) "before" (t 0), "during" and "after" (when the last
  // request ended), on the run's epoch.
  std::vector<store::MetricSample> samples;
};

// Runs `options` over `workload` on `fleet` in virtual time, from the fleet's now_s() on, and
// leaves the fleet's clock at the run's end with every replica idle. The load shape is the
// driver's own RequestSource (closed loop, open loop with its schedule and in-flight cap,
// warm-up, bounds, turn order); each request goes through the fleet's routing decision to a
// replica's scheduler, and comes back token by token as the replica's steps complete, as the
// real-time fleet serves it over HTTP. Timeouts (request_timeout_s, first_byte_timeout_s) fail
// a request as the driver does and cancel it on its replica. The stop flag ends the run with
// the requests in flight cancelled. on_progress is called at each second of virtual time.
// Throws std::invalid_argument for bad options (driver::validate_load_options). Never sleeps,
// reads no clock, opens no socket.
VirtualLoadResult run_virtual_load(
    VirtualFleet& fleet, const driver::LoadOptions& options, const driver::Workload& workload,
    const VirtualLoadOptions& virtual_options,
    const std::function<void(const driver::Progress&)>& on_progress = {});

}  // namespace kvsweep::predict
