// The experiments table: one row per sweep, its scenario, status and baseline.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

constexpr const char* kExperimentColumns =
    "id, name, scenario_path, scenario_text, scenario_hash, started_at, finished_at, status, "
    "kvsweep_version, host, setup_json, baseline";

ExperimentRow read_experiment(const SqliteStatement& s) {
  ExperimentRow row;
  row.id = s.column_int64(0);
  row.name = s.column_text(1);
  row.scenario_path = s.column_text(2);
  row.scenario_text = s.column_text(3);
  row.scenario_hash = s.column_text(4);
  row.started_at = s.column_text(5);
  row.finished_at = s.column_text(6);
  row.status = s.column_text(7);
  row.kvsweep_version = s.column_text(8);
  row.host = s.column_text(9);
  row.setup = decode_setup(s.column_text(10));
  row.baseline = s.column_text(11);
  return row;
}

}  // namespace

std::int64_t Store::add_experiment(const ExperimentRow& row) {
  SqliteStatement s = impl_->db.prepare(
      "INSERT INTO experiments (name, scenario_path, scenario_text, scenario_hash, started_at, "
      "finished_at, status, kvsweep_version, host, setup_json, baseline) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  s.bind_text(1, row.name);
  s.bind_text(2, row.scenario_path);
  s.bind_text(3, row.scenario_text);
  s.bind_text(4, row.scenario_hash);
  s.bind_text(5, row.started_at);
  s.bind_text(6, row.finished_at);
  s.bind_text(7, row.status);
  s.bind_text(8, row.kvsweep_version);
  s.bind_text(9, row.host);
  s.bind_text(10, encode_setup(row.setup));
  s.bind_text(11, row.baseline);
  s.step();
  return impl_->db.last_insert_rowid();
}

void Store::finish_experiment(std::int64_t experiment_id, const std::string& status,
                              const std::string& finished_at) {
  SqliteStatement s =
      impl_->db.prepare("UPDATE experiments SET status = ?, finished_at = ? WHERE id = ?");
  s.bind_text(1, status);
  s.bind_text(2, finished_at);
  s.bind_int64(3, experiment_id);
  s.step();
  if (impl_->db.changes() == 0) {
    throw std::runtime_error(path() + ": finish_experiment: no experiment with id " +
                             std::to_string(experiment_id));
  }
}

void Store::reopen_experiment(std::int64_t experiment_id) {
  SqliteStatement s =
      impl_->db.prepare("UPDATE experiments SET status = 'running', finished_at = '' WHERE id = ?");
  s.bind_int64(1, experiment_id);
  s.step();
  if (impl_->db.changes() == 0) {
    throw std::runtime_error(path() + ": reopen_experiment: no experiment with id " +
                             std::to_string(experiment_id));
  }
}

std::optional<ExperimentRow> Store::latest_unfinished(const std::string& scenario_hash) const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kExperimentColumns +
                                        " FROM experiments WHERE scenario_hash = ? AND "
                                        "status != 'done' ORDER BY id DESC LIMIT 1");
  s.bind_text(1, scenario_hash);
  if (!s.step()) return std::nullopt;
  return read_experiment(s);
}

std::vector<ExperimentRow> Store::experiments() const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kExperimentColumns +
                                        " FROM experiments ORDER BY id");
  std::vector<ExperimentRow> rows;
  while (s.step()) rows.push_back(read_experiment(s));
  return rows;
}

std::optional<ExperimentRow> Store::experiment(std::int64_t id) const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kExperimentColumns +
                                        " FROM experiments WHERE id = ?");
  s.bind_int64(1, id);
  if (!s.step()) return std::nullopt;
  return read_experiment(s);
}

// "Latest" is the last inserted, by id: started_at strings from different hosts may disagree.
std::optional<ExperimentRow> Store::latest_experiment() const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kExperimentColumns +
                                        " FROM experiments ORDER BY id DESC LIMIT 1");
  if (!s.step()) return std::nullopt;
  return read_experiment(s);
}

std::optional<ExperimentRow> Store::experiment_by_name(const std::string& name) const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kExperimentColumns +
                                        " FROM experiments WHERE name = ? "
                                        "ORDER BY id DESC LIMIT 1");
  s.bind_text(1, name);
  if (!s.step()) return std::nullopt;
  return read_experiment(s);
}

}  // namespace kvsweep::store
