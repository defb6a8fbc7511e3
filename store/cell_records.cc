// What a cell recorded besides its requests: metric samples, external commands, progress.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "store/sqlite_handles.h"
#include "store/store.h"
#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

constexpr const char* kMetricColumns = "cell_id, phase, source, name, labels_json, value, t_s";

}  // namespace

void insert_samples(const SqliteDb& db, std::int64_t cell_id,
                    const std::vector<MetricSample>& samples) {
  SqliteStatement s = db.prepare(
      "INSERT INTO metric_samples (cell_id, phase, source, name, labels_json, value, t_s) "
      "VALUES (?,?,?,?,?,?,?)");
  for (const MetricSample& sample : samples) {
    s.bind_int64(1, cell_id);
    s.bind_text(2, sample.phase);
    s.bind_text(3, sample.source);
    s.bind_text(4, sample.name);
    s.bind_text(5, sample.labels_json);
    s.bind_double(6, sample.value);
    s.bind_double(7, sample.t_s);
    s.step();
    s.reset();
  }
}

void insert_commands(const SqliteDb& db, std::int64_t cell_id,
                     const std::vector<CommandRow>& commands) {
  SqliteStatement s = db.prepare(
      "INSERT INTO cell_commands (cell_id, step, argv_json, exit_code, seconds, stdout, stderr) "
      "VALUES (?,?,?,?,?,?,?)");
  for (const CommandRow& c : commands) {
    s.bind_int64(1, cell_id);
    s.bind_text(2, c.step);
    s.bind_text(3, nlohmann::json(c.argv).dump());
    s.bind_int64(4, c.exit_code);
    s.bind_double(5, c.seconds);
    s.bind_text(6, c.out);
    s.bind_text(7, c.err);
    s.step();
    s.reset();
  }
}

void Store::add_metric_samples(std::int64_t cell_id, const std::vector<MetricSample>& samples) {
  Transaction transaction(impl_->db);
  insert_samples(impl_->db, cell_id, samples);
  transaction.commit();
}

void Store::add_commands(std::int64_t cell_id, const std::vector<CommandRow>& commands) {
  Transaction transaction(impl_->db);
  insert_commands(impl_->db, cell_id, commands);
  transaction.commit();
}

bool Store::add_progress(const ProgressSnapshot& p, const std::string& claimed_by) {
  // One statement either way, so the claim is checked and the row written under one lock.
  SqliteStatement s = impl_->db.prepare(
      std::string("INSERT INTO cell_progress (cell_id, phase, wall_s, elapsed_s, done, total, "
                  "failed, requests_per_s, ttft_p50_ms, ttft_p95_ms, metrics_urls_json) "
                  "SELECT ?,?,?,?,?,?,?,?,?,?,?") +
      (claimed_by.empty() ? ""
                          : " WHERE EXISTS (SELECT 1 FROM cell_claims WHERE cell_id = ?1 AND "
                            "run_id = ?12)"));
  s.bind_int64(1, p.cell_id);
  s.bind_text(2, p.phase);
  s.bind_double(3, p.wall_s);
  s.bind_double(4, p.elapsed_s);
  s.bind_int64(5, p.done);
  s.bind_int64(6, p.total);
  s.bind_int64(7, p.failed);
  s.bind_double(8, p.requests_per_s);
  s.bind_double(9, p.ttft_p50_ms);
  s.bind_double(10, p.ttft_p95_ms);
  s.bind_text(11, nlohmann::json(p.metrics_urls).dump());
  if (!claimed_by.empty()) s.bind_text(12, claimed_by);
  s.step();
  return impl_->db.changes() > 0;
}

std::vector<ProgressSnapshot> Store::progress(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT cell_id, phase, wall_s, elapsed_s, done, total, failed, requests_per_s, "
      "ttft_p50_ms, ttft_p95_ms, metrics_urls_json FROM cell_progress WHERE cell_id = ? "
      "ORDER BY id");
  s.bind_int64(1, cell_id);
  std::vector<ProgressSnapshot> rows;
  while (s.step()) {
    ProgressSnapshot p;
    p.cell_id = s.column_int64(0);
    p.phase = s.column_text(1);
    p.wall_s = s.column_double(2);
    p.elapsed_s = s.column_double(3);
    p.done = s.column_int64(4);
    p.total = s.column_int64(5);
    p.failed = s.column_int64(6);
    p.requests_per_s = s.column_double(7);
    p.ttft_p50_ms = s.column_double(8);
    p.ttft_p95_ms = s.column_double(9);
    const auto urls = nlohmann::json::parse(s.column_text(10), nullptr, false);
    if (urls.is_array()) {
      for (const auto& url : urls) {
        if (url.is_string()) p.metrics_urls.push_back(url.get<std::string>());
      }
    }
    rows.push_back(std::move(p));
  }
  return rows;
}

std::vector<MetricSample> Store::metric_samples(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kMetricColumns +
                                        " FROM metric_samples WHERE cell_id = ? ORDER BY id");
  s.bind_int64(1, cell_id);
  std::vector<MetricSample> rows;
  while (s.step()) {
    MetricSample sample;
    sample.cell_id = s.column_int64(0);
    sample.phase = s.column_text(1);
    sample.source = s.column_text(2);
    sample.name = s.column_text(3);
    sample.labels_json = s.column_text(4);
    sample.value = s.column_double(5);
    sample.t_s = s.column_double(6);
    rows.push_back(std::move(sample));
  }
  return rows;
}

std::vector<CommandRow> Store::commands(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT cell_id, step, argv_json, exit_code, seconds, stdout, stderr FROM cell_commands "
      "WHERE cell_id = ? ORDER BY id");
  s.bind_int64(1, cell_id);
  std::vector<CommandRow> rows;
  while (s.step()) {
    CommandRow row;
    row.cell_id = s.column_int64(0);
    row.step = s.column_text(1);
    const auto argv = nlohmann::json::parse(s.column_text(2), nullptr, false);
    if (argv.is_array()) {
      for (const auto& word : argv)
        row.argv.push_back(word.is_string() ? word.get<std::string>() : "");
    }
    row.exit_code = static_cast<int>(s.column_int64(3));
    row.seconds = s.column_double(4);
    row.out = s.column_text(5);
    row.err = s.column_text(6);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kvsweep::store
