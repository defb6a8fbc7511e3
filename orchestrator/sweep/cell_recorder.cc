// Storing what a cell measured: its requests on one epoch, samples and commands, in one
// transaction.
#include "orchestrator/sweep/cell_recorder.h"

#include "common/wall_clock.h"
#include "figures/cell_summary.h"
#include "orchestrator/sweep/cell_claims.h"
#include "orchestrator/sweep/record_rows.h"

#ifndef KVSWEEP_VERSION
#define KVSWEEP_VERSION "unknown"
#endif

namespace kvsweep::orchestrator {
namespace {

std::vector<store::CommandRow> command_rows(const CommandLogs& logs) {
  std::vector<store::CommandRow> rows;
  for (const auto& log : logs) {
    store::CommandRow row;
    row.step = log.step;
    row.argv = log.argv;
    row.exit_code = log.exit_code;
    row.seconds = log.seconds;
    row.out = log.out;
    row.err = log.err;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

store::ExperimentRow new_experiment_row(const std::string& name, const std::string& scenario_path,
                                        const std::string& scenario_text,
                                        const std::string& scenario_hash,
                                        const store::ExperimentSetup& setup) {
  store::ExperimentRow experiment;
  experiment.name = name;
  experiment.scenario_path = scenario_path;
  experiment.scenario_text = scenario_text;
  experiment.scenario_hash = scenario_hash;
  experiment.started_at = utc_now_iso8601();
  experiment.status = "running";
  experiment.kvsweep_version = KVSWEEP_VERSION;
  experiment.host = this_host_name();
  experiment.setup = setup;
  return experiment;
}

RecordedCell record_cell(store::Store& store, store::CellRow& cell,
                         const CellMeasurement& measurement, const ValidityRules& rules,
                         const std::string& claimed_by) {
  // The measured phase's epoch is the cell's; earlier phases land before 0.
  double epoch = measurement.measured.epoch_wall_s;
  if (epoch == 0) epoch = measurement.warmup.epoch_wall_s;
  if (epoch == 0 && !measurement.prepasses.empty()) {
    epoch = measurement.prepasses.back().epoch_wall_s;
  }
  cell.epoch_wall_s = epoch;
  std::vector<store::RequestRow> rows;
  std::int64_t index = 0;
  std::vector<const driver::LoadResult*> phases;
  for (const auto& pass : measurement.prepasses) phases.push_back(&pass);
  phases.insert(phases.end(), {&measurement.warmup, &measurement.measured});
  for (const driver::LoadResult* phase : phases) {
    const auto phase_rows = to_request_rows(phase->records, phase->epoch_wall_s - epoch, index);
    index += static_cast<std::int64_t>(phase->records.size());
    rows.insert(rows.end(), phase_rows.begin(), phase_rows.end());
  }
  // A done cell's figures, computed once here (outside the write lock) and stored with it.
  std::optional<store::CellSummaryRow> summary;
  std::optional<figures::CellMetrics> metrics;
  if (cell.status == "done") {
    figures::CellSummary figures =
        figures::summarize_cell(rows, measurement.samples, measurement.load, rules);
    summary = figures::summary_row(cell.id, figures);
    metrics = std::move(figures.metrics);
  }
  store.in_transaction([&] {
    if (measurement.load) {
      store::CellLoadRow load = *measurement.load;
      load.cell_id = cell.id;
      store.set_cell_load(load, claimed_by);
    }
    store.record_cell(cell, rows, measurement.samples, command_rows(measurement.commands),
                      claimed_by);
    if (summary) store.set_cell_summary(*summary);
  });
  return {std::move(rows), std::move(metrics)};
}

store::CellLoadRow cell_load_row(const driver::LoadOptions& options,
                                 const driver::Workload& workload, const driver::DriverSelf& self) {
  store::CellLoadRow row;
  row.open_loop = driver::is_open_loop(options, workload);
  row.request_rate = row.open_loop ? options.request_rate : 0;
  row.max_concurrency = row.open_loop ? options.max_concurrency : 0;
  row.users = row.open_loop ? 0 : options.concurrency;
  row.driver_measured = self.measured;
  row.driver_threads = self.threads;
  row.driver_cores = self.cores;
  row.driver_wall_s = self.wall_s;
  row.driver_cpu_s = self.cpu_s;
  row.send_delay_count = self.send_delay_count;
  row.send_delay_p50_ms = self.send_delay_p50_ms;
  row.send_delay_p99_ms = self.send_delay_p99_ms;
  row.send_delay_max_ms = self.send_delay_max_ms;
  row.ready_span_s = self.ready_span_s;
  row.sent_span_s = self.sent_span_s;
  row.stopped_over_capacity = self.stopped_over_capacity;
  row.stop_reason = self.stop_reason;
  return row;
}

}  // namespace kvsweep::orchestrator
