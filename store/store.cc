// The kvsweep store: rows in and out of one SQLite file (schema and migrations in schema.cc).
#include "store/store.h"

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store_identity.h"
#include "store/store_impl.h"

namespace kvsweep::store {
namespace {

constexpr const char* kExperimentColumns =
    "id, name, scenario_path, scenario_text, scenario_hash, started_at, finished_at, status, "
    "kvsweep_version, host, setup_json, baseline";
constexpr const char* kCellColumns =
    "id, experiment_id, ordinal, key, arm, concurrency, repeat, factors_json, status, "
    "started_at, finished_at, error, epoch_wall_s";
constexpr const char* kRequestColumns =
    "id, cell_id, request_index, worker, conversation, turn, warmup, ok, error_kind, error, "
    "http_status, scheduled_s, sent_s, first_token_s, last_token_s, ttft_ms, e2e_ms, tpot_ms, "
    "itl_ms, prompt_tokens, output_tokens, cached_tokens, tokens_estimated, replica, ended_s";
constexpr const char* kMetricColumns = "cell_id, phase, source, name, labels_json, value, t_s";

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
  row.setup_json = s.column_text(10);
  row.baseline = s.column_text(11);
  return row;
}

CellRow read_cell(const SqliteStatement& s) {
  CellRow row;
  row.id = s.column_int64(0);
  row.experiment_id = s.column_int64(1);
  row.ordinal = static_cast<int>(s.column_int64(2));
  row.key = s.column_text(3);
  row.arm = s.column_text(4);
  row.concurrency = static_cast<int>(s.column_int64(5));
  row.repeat = static_cast<int>(s.column_int64(6));
  row.factors_json = s.column_text(7);
  row.status = s.column_text(8);
  row.started_at = s.column_text(9);
  row.finished_at = s.column_text(10);
  row.error = s.column_text(11);
  row.epoch_wall_s = s.column_double(12);
  return row;
}

std::vector<double> parse_itl(const std::string& path, std::int64_t request_id,
                              const std::string& text) {
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) {
    throw std::runtime_error(path + ": request " + std::to_string(request_id) +
                             ": itl_ms is not a JSON array: " + text.substr(0, 80));
  }
  std::vector<double> itl;
  itl.reserve(parsed.size());
  for (const auto& gap : parsed) itl.push_back(gap.is_number() ? gap.get<double>() : 0.0);
  return itl;
}

RequestRow read_request(const std::string& path, const SqliteStatement& s) {
  RequestRow row;
  row.id = s.column_int64(0);
  row.cell_id = s.column_int64(1);
  row.index = s.column_int64(2);
  row.worker = static_cast<int>(s.column_int64(3));
  row.conversation = static_cast<int>(s.column_int64(4));
  row.turn = static_cast<int>(s.column_int64(5));
  row.warmup = s.column_int64(6) != 0;
  row.ok = s.column_int64(7) != 0;
  row.error_kind = s.column_text(8);
  row.error = s.column_text(9);
  row.http_status = static_cast<int>(s.column_int64(10));
  row.scheduled_s = s.column_double(11);
  row.sent_s = s.column_double(12);
  row.first_token_s = s.column_double(13);
  row.last_token_s = s.column_double(14);
  row.ttft_ms = s.column_double(15);
  row.e2e_ms = s.column_double(16);
  row.tpot_ms = s.column_double(17);
  row.itl_ms = parse_itl(path, row.id, s.column_text(18));
  row.prompt_tokens = static_cast<int>(s.column_int64(19));
  row.output_tokens = static_cast<int>(s.column_int64(20));
  row.cached_tokens = static_cast<int>(s.column_int64(21));
  row.tokens_estimated = s.column_int64(22) != 0;
  row.replica = s.column_text(23);
  row.ended_s = s.column_double(24);
  return row;
}

void insert_requests(const SqliteDb& db, std::int64_t cell_id,
                     const std::vector<RequestRow>& rows) {
  // One statement for the whole batch: preparing per row would dominate the insert cost.
  SqliteStatement s = db.prepare(
      "INSERT INTO requests (cell_id, request_index, worker, conversation, turn, warmup, ok, "
      "error_kind, error, http_status, scheduled_s, sent_s, first_token_s, last_token_s, "
      "ttft_ms, e2e_ms, tpot_ms, itl_ms, prompt_tokens, output_tokens, cached_tokens, "
      "tokens_estimated, replica, ended_s) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const RequestRow& row : rows) {
    s.bind_int64(1, cell_id);
    s.bind_int64(2, row.index);
    s.bind_int64(3, row.worker);
    s.bind_int64(4, row.conversation);
    s.bind_int64(5, row.turn);
    s.bind_int64(6, row.warmup ? 1 : 0);
    s.bind_int64(7, row.ok ? 1 : 0);
    s.bind_text(8, row.error_kind);
    s.bind_text(9, row.error);
    s.bind_int64(10, row.http_status);
    s.bind_double(11, row.scheduled_s);
    s.bind_double(12, row.sent_s);
    s.bind_double(13, row.first_token_s);
    s.bind_double(14, row.last_token_s);
    s.bind_double(15, row.ttft_ms);
    s.bind_double(16, row.e2e_ms);
    s.bind_double(17, row.tpot_ms);
    // nlohmann writes the shortest text that parses back to the same double.
    s.bind_text(18, nlohmann::json(row.itl_ms).dump());
    s.bind_int64(19, row.prompt_tokens);
    s.bind_int64(20, row.output_tokens);
    s.bind_int64(21, row.cached_tokens);
    s.bind_int64(22, row.tokens_estimated ? 1 : 0);
    s.bind_text(23, row.replica);
    s.bind_double(24, row.ended_s);
    s.step();
    s.reset();
  }
}

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

SqliteDb open_for_writing(const std::string& path) {
  SqliteDb db = SqliteDb::open(path);
  check_store_identity(db);  // before anything below writes to the file
  // WAL lets a report read while a sweep writes; NORMAL sync is durable enough under WAL
  // (a power cut may lose the last transaction, never corrupt the file).
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db);
  return db;
}

SqliteDb open_for_reading(const std::string& path) {
  SqliteDb db = SqliteDb::open_read_only(path);
  check_store_identity(db);
  check_not_newer(db);
  const int version = schema_version(db);
  if (version == 0) {
    throw std::runtime_error(path +
                             ": an empty file, no kvsweep store yet (run a scenario into it "
                             "first)");
  }
  if (version < kSchemaVersion) {
    // The queries below read columns an older schema lacks: migrate once, then read.
    try {
      open_for_writing(path);
    } catch (const std::exception& e) {
      throw std::runtime_error(
          path + ": store of schema version " + std::to_string(version) +
          " must be upgraded to version " + std::to_string(kSchemaVersion) +
          " before this kvsweep reads it, which needs write access once: " + e.what());
    }
    db = SqliteDb::open_read_only(path);
  }
  // A second guard: no statement of this connection may write.
  db.exec("PRAGMA query_only = 1");
  return db;
}

}  // namespace

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

Store Store::open_read_only(const std::string& path, int busy_timeout_ms) {
  SqliteDb db = SqliteDb::open_read_only(path, busy_timeout_ms);
  check_store_identity(db);
  const int version = schema_version(db);
  if (version == 0) throw std::runtime_error(path + ": not a kvsweep store (no schema)");
  if (version != kSchemaVersion) {
    throw std::runtime_error(
        path + ": store has schema version " + std::to_string(version) + ", this kvsweep reads " +
        std::to_string(kSchemaVersion) +
        (version < kSchemaVersion
             ? "; any kvsweep command that writes migrates it (e.g. kvsweep --db " + path + " runs)"
             : "; upgrade kvsweep to read it"));
  }
  db.exec("PRAGMA query_only = 1");  // no statement of this connection may write
  return Store(std::make_unique<Impl>(Impl{std::move(db)}));
}

Store Store::open(const std::string& path, Access access) {
  return Store(std::make_unique<Impl>(
      Impl{access == Access::kReadOnly ? open_for_reading(path) : open_for_writing(path)}));
}

const std::string& Store::path() const { return impl_->db.path(); }

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
  s.bind_text(10, row.setup_json);
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

std::int64_t Store::add_cell(const CellRow& row) {
  SqliteStatement s = impl_->db.prepare(
      "INSERT INTO cells (experiment_id, ordinal, key, arm, concurrency, repeat, "
      "factors_json, status, started_at, finished_at, error, epoch_wall_s) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind_int64(1, row.experiment_id);
  s.bind_int64(2, row.ordinal);
  s.bind_text(3, row.key);
  s.bind_text(4, row.arm);
  s.bind_int64(5, row.concurrency);
  s.bind_int64(6, row.repeat);
  s.bind_text(7, row.factors_json);
  s.bind_text(8, row.status);
  s.bind_text(9, row.started_at);
  s.bind_text(10, row.finished_at);
  s.bind_text(11, row.error);
  s.bind_double(12, row.epoch_wall_s);
  s.step();
  return impl_->db.last_insert_rowid();
}

void Store::update_cell(const CellRow& row, const std::string& claimed_by) {
  Transaction transaction(impl_->db);
  if (!claimed_by.empty()) require_claim(impl_->db, row.id, claimed_by);
  SqliteStatement s = impl_->db.prepare(
      "UPDATE cells SET status = ?, started_at = ?, finished_at = ?, error = ?, epoch_wall_s = ? "
      "WHERE id = ?");
  s.bind_text(1, row.status);
  s.bind_text(2, row.started_at);
  s.bind_text(3, row.finished_at);
  s.bind_text(4, row.error);
  s.bind_double(5, row.epoch_wall_s);
  s.bind_int64(6, row.id);
  s.step();
  if (impl_->db.changes() == 0) {
    throw std::runtime_error(path() + ": update_cell: no cell with id " + std::to_string(row.id));
  }
  transaction.commit();
}

void Store::add_requests(std::int64_t cell_id, const std::vector<RequestRow>& rows) {
  Transaction transaction(impl_->db);
  insert_requests(impl_->db, cell_id, rows);
  transaction.commit();
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

void Store::record_cell(const CellRow& row, const std::vector<RequestRow>& requests,
                        const std::vector<MetricSample>& samples,
                        const std::vector<CommandRow>& commands, const std::string& claimed_by) {
  Transaction transaction(impl_->db);
  if (!claimed_by.empty()) require_claim(impl_->db, row.id, claimed_by);
  insert_requests(impl_->db, row.id, requests);
  insert_samples(impl_->db, row.id, samples);
  insert_commands(impl_->db, row.id, commands);
  update_cell(row);
  if (!claimed_by.empty()) drop_claim(impl_->db, row.id);
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

void Store::reset_cell(std::int64_t cell_id) {
  const SqliteDb& db = impl_->db;
  Transaction transaction(db);
  for (const char* sql :
       {"DELETE FROM requests WHERE cell_id = ?", "DELETE FROM metric_samples WHERE cell_id = ?",
        "DELETE FROM cell_commands WHERE cell_id = ?",
        "DELETE FROM cell_progress WHERE cell_id = ?", "DELETE FROM cell_loads WHERE cell_id = ?",
        "UPDATE cells SET status = 'pending', started_at = '', finished_at = '', "
        "error = '', epoch_wall_s = 0 WHERE id = ?"}) {
    SqliteStatement s = db.prepare(sql);
    s.bind_int64(1, cell_id);
    s.step();
  }
  // The UPDATE ran last: no row changed means no such cell, and the deletes roll back.
  if (db.changes() == 0) {
    throw std::runtime_error(path() + ": reset_cell: no cell with id " + std::to_string(cell_id));
  }
  transaction.commit();
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

void Store::in_transaction(const std::function<void()>& body) {
  Transaction transaction(impl_->db);
  body();
  transaction.commit();
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

std::vector<CellRow> Store::cells(std::int64_t experiment_id) const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kCellColumns +
                                        " FROM cells WHERE experiment_id = ? ORDER BY ordinal, id");
  s.bind_int64(1, experiment_id);
  std::vector<CellRow> rows;
  while (s.step()) rows.push_back(read_cell(s));
  return rows;
}

std::vector<RequestRow> Store::requests(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(std::string("SELECT ") + kRequestColumns +
                                        " FROM requests WHERE cell_id = ? "
                                        "ORDER BY request_index, id");
  s.bind_int64(1, cell_id);
  std::vector<RequestRow> rows;
  while (s.step()) rows.push_back(read_request(path(), s));
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

std::int64_t Store::request_count(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare("SELECT COUNT(*) FROM requests WHERE cell_id = ?");
  s.bind_int64(1, cell_id);
  s.step();
  return s.column_int64(0);
}

RequestCounts Store::request_counts(std::int64_t cell_id) const {
  SqliteStatement s = impl_->db.prepare(
      "SELECT COALESCE(SUM(warmup = 0), 0), COALESCE(SUM(warmup != 0), 0) FROM requests "
      "WHERE cell_id = ?");
  s.bind_int64(1, cell_id);
  s.step();
  return {s.column_int64(0), s.column_int64(1)};
}

}  // namespace kvsweep::store
