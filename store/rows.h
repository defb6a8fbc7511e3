// Plain rows of the store: what an experiment, a cell, a request and a metric sample hold.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/experiment_setup.h"

namespace kvsweep::store {

struct ExperimentRow {
  std::int64_t id = 0;
  std::string name;  // scenario name
  std::string scenario_path;
  std::string scenario_text;  // the YAML as read, for reproduction
  std::string scenario_hash;  // hex xxh64 of scenario_text
  std::string started_at;     // ISO 8601 UTC, "2026-11-22T04:30:00Z"
  std::string finished_at;    // "" while running
  std::string status;         // "running" | "done" | "failed" | "interrupted"
  std::string kvsweep_version;
  std::string host;
  ExperimentSetup setup;  // what ran it, decoded once as the row is read (experiment_setup.h)
  // The arm every other arm is compared to (report.baseline). Rows older than schema 6 have
  // the baseline their setup held.
  std::string baseline;
};

struct CellRow {
  std::int64_t id = 0;
  std::int64_t experiment_id = 0;
  int ordinal = 0;  // position in the plan, from 0
  std::string key;  // deterministic: scenario hash + factor levels + repeat
  std::string arm;  // what the reports compare: "PrefixHash", "k8s-service", "cache, x=512"
  int concurrency = 0;
  int repeat = 0;
  CellFactors factors;  // {"strategy":"random","concurrency":8}, decoded
  std::string status;   // "pending" | "running" | "done" | "failed" | "interrupted"
  std::string started_at;
  std::string finished_at;
  std::string error;        // why the cell failed, "" otherwise
  double epoch_wall_s = 0;  // unix time that request times (*_s) are relative to
};

// One request; times in seconds relative to CellRow::epoch_wall_s, durations in ms.
struct RequestRow {
  std::int64_t id = 0;
  std::int64_t cell_id = 0;
  std::int64_t index = 0;
  int worker = 0;
  int conversation = 0;
  int turn = 0;
  // driver::turn_fingerprint of the turn's dataset text; 0: not recorded (rows before schema 13).
  std::uint64_t prompt_hash = 0;
  bool warmup = false;
  bool ok = false;
  std::string error_kind;
  std::string error;
  int http_status = 0;
  double scheduled_s = -1;
  double sent_s = 0;
  double first_token_s = -1;
  double last_token_s = -1;
  // When the request ended, however it ended (last byte, error, timeout, cancel). -1 for
  // rows stored before schema 3, which did not record it.
  double ended_s = -1;
  double ttft_ms = 0;
  double e2e_ms = 0;
  double tpot_ms = 0;
  std::vector<double> itl_ms;  // stored compactly (store/itl_blob.h)
  int prompt_tokens = -1;      // -1: unknown (the server sent no usage)
  int output_tokens = 0;
  int cached_tokens = -1;
  bool tokens_estimated = false;  // output_tokens counted from stream events, not reported
  std::string replica;
};

// A done cell's figures computed once from its raw rows (schema 9), so reports, history and
// serve need not read the rows again. The store keeps the bytes; figures/cell_summary.h
// writes and reads them.
struct CellSummaryRow {
  std::int64_t cell_id = 0;
  int format = 0;             // figures::kSummaryFormat of the writer
  std::string figures;        // JSON: every figure the reports show, the verdict, the replicas
  std::string distributions;  // TTFT, TPOT, ITL and E2E as mergeable histograms
  std::string sample;         // the seeded request sample compare bootstraps once rows are gone
};

// An experiment whose raw request rows and metric samples were removed (kvsweep prune): its
// summaries remain.
struct PruneMark {
  std::int64_t experiment_id = 0;
  std::string pruned_at;  // ISO 8601 UTC
  std::string policy;     // what selected it: "keep the last 30 runs of each scenario"
};

// A finished run compared with the run of its scenario before it, as `kvsweep compare` does,
// stored when the run ends (schema 10), so serve's history page reads the verdicts instead of
// bootstrapping every cell of both runs again (and keeps them after either run is pruned).
struct RunComparisonRow {
  std::int64_t experiment_id = 0;
  std::int64_t previous_id = 0;  // the run it was compared with
  std::string computed_at;       // ISO 8601 UTC
  std::string options;           // the compare options used ("resamples=1000 ...")
  std::string regressions;       // JSON: [{"strategy", "concurrency", "metrics": [...]}]
};

// One arm's capacity search of a searching experiment (scenario key `search`, schema 12), as
// it ended or as far as it got: the reports' capacity section reads it. Its probes are the
// experiment's cells; `probes` lists them in order as JSON:
// [{"load":12.5,"attempt":0,"outcome":"pass","cell_id":7}, ...].
struct ArmSearchRow {
  std::int64_t experiment_id = 0;
  std::string arm_key;  // "<arm>" (a concurrency search) or "<arm>@<in-flight cap>"
  int position = 0;     // the arm's place in the plan, from 0
  std::string arm;
  int concurrency = 0;                  // a rate search's in-flight cap
  std::string factor;                   // "concurrency" or "load.request_rate"
  std::optional<double> guide;          // the predicted capacity the search started from
  std::optional<double> capacity;       // the highest passing load
  std::optional<double> first_failing;  // the lowest failing load
  std::string why;                      // how it ended
  std::string probes;                   // JSON, as above
  std::int64_t capacity_cell_id = 0;    // the probe that passed at the capacity; 0 none
};

// One shard of a sharded cell (load.shards, schema 11): what it was asked for (its part of the
// cap or users, and of the rate), what it sent, and its driver's own figures, which judge it
// as the cell's are judged (figures/validity.h): a client-bound shard marks the cell.
struct CellShardRow {
  int shard = 0;
  std::int64_t requests = 0;  // records, warm-up included
  std::int64_t measured = 0;
  std::int64_t failed = 0;     // measured requests that failed
  double start_skew_ms = 0;    // its start against the instant every shard was given
  double clock_offset_ms = 0;  // its clock minus the coordinator's, where measured
  double request_rate = 0;     // its part of the cell's rate (rate / shards)
  int max_concurrency = 0;     // its part of the cap: ceil(cap / shards)
  int users = 0;               // closed loop: its users
  int driver_threads = 0;
  int driver_cores = 0;
  double driver_wall_s = 0;
  double driver_cpu_s = 0;
  std::int64_t send_delay_count = 0;
  double send_delay_p50_ms = 0;
  double send_delay_p99_ms = 0;
  double send_delay_max_ms = 0;
  double ready_span_s = 0;
  double sent_span_s = 0;
};

// What load a cell asked for and how the driver kept up with it (schema 7), for the achieved-
// load figures and verdicts of figures/validity.h. One row per measured cell.
struct CellLoadRow {
  std::int64_t cell_id = 0;
  // Asked for.
  bool open_loop = false;
  double request_rate = 0;  // req/s; infinity: every request due at once; 0 in closed loop
  int max_concurrency = 0;  // open loop's cap on requests in flight; 0 none
  int users = 0;            // closed loop's users
  // The driver's own figures (driver::DriverSelf); driver_measured false where none ran (the
  // virtual-time predictor) or for cells stored before schema 7.
  bool driver_measured = false;
  int driver_threads = 0;
  int driver_cores = 0;
  double driver_wall_s = 0;
  double driver_cpu_s = 0;
  std::int64_t send_delay_count = 0;
  double send_delay_p50_ms = 0;
  double send_delay_p99_ms = 0;
  double send_delay_max_ms = 0;
  double ready_span_s = 0;
  double sent_span_s = 0;
  bool stopped_over_capacity = false;  // load.stop_when_over_capacity ended the cell
  std::string stop_reason;
  // A sharded cell's shards (schema 11), in shard order; empty for a cell run by one process.
  // The driver figures above are then the shards' joined (driver/shard_merge.h).
  std::vector<CellShardRow> shards;
};

// A cell's stored requests by phase: warm-up (and warm pre-pass) rows are flagged and
// excluded from every statistic, so they are counted apart.
struct RequestCounts {
  std::int64_t measured = 0;
  std::int64_t warmup = 0;
};

// One scraped series value. phase: "before" or "after" the measured phase (later: "during").
struct MetricSample {
  std::int64_t cell_id = 0;
  std::string phase;
  std::string source;       // the /metrics URL it came from
  std::string name;         // "vllm:prefix_cache_hits_total"
  std::string labels_json;  // {"model_name":"m"}
  double value = 0;
  double t_s = 0;  // seconds relative to the cell's epoch
};

// What a running cell has done so far, written about once a second while a load phase runs
// (schema 4), so another process (kvsweep serve) can follow a sweep. Counts are of the phase
// named; the TTFT figures are over its successful requests so far.
struct ProgressSnapshot {
  std::int64_t cell_id = 0;
  std::string phase;       // "measured", "warm-up", "warm pre-pass"
  double wall_s = 0;       // unix time the snapshot was taken
  double elapsed_s = 0;    // since the phase's first request
  std::int64_t done = 0;   // requests finished, ok and failed
  std::int64_t total = 0;  // requests planned; 0 when the phase is bounded by time
  std::int64_t failed = 0;
  double requests_per_s = 0;  // done / elapsed_s
  double ttft_p50_ms = -1;    // -1: no successful request yet
  double ttft_p95_ms = -1;
  std::vector<std::string> metrics_urls;  // the target's /metrics URLs (stored as JSON)
};

// Who runs a cell: one process at a time. The run id is drawn at random by each `kvsweep
// run`; host, pid and pid namespace let another process on the same host tell at once that
// the owner is gone, and say in messages who holds the cell.
struct ClaimOwner {
  std::string run_id;
  std::string host;
  std::int64_t pid = 0;
  std::string pid_namespace;  // "pid:[4026531836]"; "" when unknown
};

// A cell's claim. The owner beats (sets heartbeat_s) while it runs, waits included; a claim
// whose heartbeat is older than the claim timeout is dead and may be taken over.
struct CellClaim {
  std::int64_t cell_id = 0;
  ClaimOwner owner;
  std::string claimed_at;  // ISO 8601 UTC
  double heartbeat_s = 0;  // unix seconds, the owner's clock
};

// One external command run for a cell (a kubectl apply, a readiness poll), with its output.
struct CommandRow {
  std::int64_t cell_id = 0;
  std::string step;               // "apply", "gate pods", "cold", ...
  std::vector<std::string> argv;  // stored as a JSON array
  int exit_code = -1;             // -1: did not exit by itself
  double seconds = 0;
  std::string out;
  std::string err;
};

}  // namespace kvsweep::store
