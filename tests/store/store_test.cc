// Tests for store/: round trips on a real SQLite file, transactions, lookups, schema versions.
#include "store/store.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

ExperimentRow make_experiment(const std::string& name) {
  ExperimentRow row;
  row.name = name;
  row.scenario_path = "scenarios/" + name + ".yaml";
  row.scenario_text = "name: " + name + "\nfactors: {strategy: [a, b]}\n";
  row.scenario_hash = "0123456789abcdef";
  row.started_at = "2026-11-22T04:30:00Z";
  row.finished_at = "";
  row.status = "running";
  row.kvsweep_version = "0.1.0";
  row.host = "bench-host";
  row.setup = kvsweep::store::decode_setup(R"({"load":{"request_rate":800}})");
  row.baseline = "random";
  return row;
}

CellRow make_cell(std::int64_t experiment_id, int ordinal) {
  CellRow row;
  row.experiment_id = experiment_id;
  row.ordinal = ordinal;
  row.key = "hash/strategy=random/concurrency=8/repeat=" + std::to_string(ordinal);
  row.arm = "random";
  row.concurrency = 8;
  row.repeat = ordinal;
  row.factors = kvsweep::store::decode_factors(R"({"strategy":"random","concurrency":8})");
  row.status = "running";
  row.started_at = "2026-11-22T04:31:00Z";
  row.finished_at = "";
  row.error = "";
  row.epoch_wall_s = 1795321860.125;
  return row;
}

RequestRow make_request(std::int64_t index) {
  RequestRow row;
  row.index = index;
  row.worker = 3;
  row.conversation = 17;
  row.turn = 2;
  row.prompt_hash = 0x9e3779b97f4a7c15ULL;  // above 2^63: stored in a signed column
  row.warmup = true;
  row.ok = false;
  row.error_kind = "http_status";
  row.error = "HTTP 503: overloaded | try later";
  row.http_status = 503;
  row.scheduled_s = 0.1;
  row.sent_s = 0.1000001;
  row.first_token_s = 0.3;
  row.last_token_s = 1.7;
  row.ended_s = 1.7000003;
  row.ttft_ms = 199.9999;
  row.e2e_ms = 1599.9999;
  row.tpot_ms = 12.345678901234567;
  row.itl_ms = {0.1, 1.0 / 3.0, 25.5, 1e-9};
  row.prompt_tokens = 1024;
  row.output_tokens = 129;
  row.cached_tokens = 512;
  row.tokens_estimated = true;
  row.replica = "replica-7";
  return row;
}

void expect_same(const ExperimentRow& a, const ExperimentRow& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.scenario_path, b.scenario_path);
  EXPECT_EQ(a.scenario_text, b.scenario_text);
  EXPECT_EQ(a.scenario_hash, b.scenario_hash);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.finished_at, b.finished_at);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.kvsweep_version, b.kvsweep_version);
  EXPECT_EQ(a.host, b.host);
  EXPECT_EQ(a.setup, b.setup);
  EXPECT_EQ(a.baseline, b.baseline);
}

void expect_same(const CellRow& a, const CellRow& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.experiment_id, b.experiment_id);
  EXPECT_EQ(a.ordinal, b.ordinal);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.arm, b.arm);
  EXPECT_EQ(a.concurrency, b.concurrency);
  EXPECT_EQ(a.repeat, b.repeat);
  EXPECT_EQ(a.factors, b.factors);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.finished_at, b.finished_at);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.epoch_wall_s, b.epoch_wall_s);
}

// Doubles are compared with ==: the store must give back the very same bits.
void expect_same(const RequestRow& a, const RequestRow& b) {
  EXPECT_EQ(a.cell_id, b.cell_id);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.worker, b.worker);
  EXPECT_EQ(a.conversation, b.conversation);
  EXPECT_EQ(a.turn, b.turn);
  EXPECT_EQ(a.prompt_hash, b.prompt_hash);
  EXPECT_EQ(a.warmup, b.warmup);
  EXPECT_EQ(a.ok, b.ok);
  EXPECT_EQ(a.error_kind, b.error_kind);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.http_status, b.http_status);
  EXPECT_EQ(a.scheduled_s, b.scheduled_s);
  EXPECT_EQ(a.sent_s, b.sent_s);
  EXPECT_EQ(a.first_token_s, b.first_token_s);
  EXPECT_EQ(a.last_token_s, b.last_token_s);
  EXPECT_EQ(a.ended_s, b.ended_s);
  EXPECT_EQ(a.ttft_ms, b.ttft_ms);
  EXPECT_EQ(a.e2e_ms, b.e2e_ms);
  EXPECT_EQ(a.tpot_ms, b.tpot_ms);
  EXPECT_EQ(a.itl_ms, b.itl_ms);
  EXPECT_EQ(a.prompt_tokens, b.prompt_tokens);
  EXPECT_EQ(a.output_tokens, b.output_tokens);
  EXPECT_EQ(a.cached_tokens, b.cached_tokens);
  EXPECT_EQ(a.tokens_estimated, b.tokens_estimated);
  EXPECT_EQ(a.replica, b.replica);
}

TEST(Store, RoundTripsEveryFieldAcrossReopen) {
  TempDir dir;
  const std::string path = dir.file("kvsweep.db");
  ExperimentRow experiment = make_experiment("kubeai-l4");
  CellRow cell;
  RequestRow warm = make_request(0);
  RequestRow plain;  // defaults: ok=false, cached_tokens=-1, empty itl, empty strings
  plain.index = 1;
  MetricSample sample{0,
                      "before",
                      "http://127.0.0.1:8001/metrics",
                      "vllm:prefix_cache_hits_total",
                      R"({"model_name":"m"})",
                      12345.5,
                      -0.25};
  {
    Store store = Store::open(path);
    EXPECT_EQ(store.path(), path);
    experiment.id = store.add_experiment(experiment);
    cell = make_cell(experiment.id, 0);
    cell.id = store.add_cell(cell);
    store.add_requests(cell.id, {warm, plain});
    store.add_metric_samples(cell.id, {sample});
  }
  warm.cell_id = plain.cell_id = sample.cell_id = cell.id;

  const Store store = Store::open(path);
  const auto loaded = store.experiment(experiment.id);
  ASSERT_TRUE(loaded.has_value());
  expect_same(*loaded, experiment);
  const auto cells = store.cells(experiment.id);
  ASSERT_EQ(cells.size(), 1u);
  expect_same(cells[0], cell);
  const auto requests = store.requests(cell.id);
  ASSERT_EQ(requests.size(), 2u);
  expect_same(requests[0], warm);
  expect_same(requests[1], plain);
  EXPECT_GT(requests[0].id, 0);
  EXPECT_EQ(store.request_count(cell.id), 2);
  const auto samples = store.metric_samples(cell.id);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].cell_id, cell.id);
  EXPECT_EQ(samples[0].phase, sample.phase);
  EXPECT_EQ(samples[0].source, sample.source);
  EXPECT_EQ(samples[0].name, sample.name);
  EXPECT_EQ(samples[0].labels_json, sample.labels_json);
  EXPECT_EQ(samples[0].value, sample.value);
  EXPECT_EQ(samples[0].t_s, sample.t_s);
}

TEST(Store, UpdatesCellAndFinishesExperiment) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto experiment_id = store.add_experiment(make_experiment("e"));
  CellRow cell = make_cell(experiment_id, 0);
  cell.id = store.add_cell(cell);
  cell.status = "failed";
  cell.finished_at = "2026-11-22T04:40:00Z";
  cell.error = "applying strategy=prefix-hash: kubectl exited 1";
  cell.epoch_wall_s = 42.5;
  store.update_cell(cell);
  store.finish_experiment(experiment_id, "done", "2026-11-22T05:00:00Z");

  expect_same(store.cells(experiment_id).at(0), cell);
  const auto experiment = store.experiment(experiment_id);
  EXPECT_EQ(experiment->status, "done");
  EXPECT_EQ(experiment->finished_at, "2026-11-22T05:00:00Z");

  cell.id = 999;
  EXPECT_THROW(store.update_cell(cell), std::runtime_error);
  EXPECT_THROW(store.finish_experiment(999, "done", ""), std::runtime_error);
}

TEST(Store, CellsComeBackByOrdinal) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto experiment_id = store.add_experiment(make_experiment("e"));
  store.add_cell(make_cell(experiment_id, 2));
  store.add_cell(make_cell(experiment_id, 0));
  store.add_cell(make_cell(experiment_id, 1));
  const auto cells = store.cells(experiment_id);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells[0].ordinal, 0);
  EXPECT_EQ(cells[1].ordinal, 1);
  EXPECT_EQ(cells[2].ordinal, 2);
}

TEST(Store, DuplicateCellKeyIsRefused) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto experiment_id = store.add_experiment(make_experiment("e"));
  store.add_cell(make_cell(experiment_id, 0));
  EXPECT_THROW(store.add_cell(make_cell(experiment_id, 0)), std::runtime_error);
}

TEST(Store, FailedBatchStoresNoRequests) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto experiment_id = store.add_experiment(make_experiment("e"));
  const auto cell_id = store.add_cell(make_cell(experiment_id, 0));
  // No cell 999: the foreign key fails on the first row, so nothing of the batch may remain.
  try {
    store.add_requests(999, {make_request(0), make_request(1)});
    FAIL() << "expected a foreign-key failure";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(dir.file("s.db")), std::string::npos) << message;
    EXPECT_NE(message.find("FOREIGN KEY"), std::string::npos) << message;
  }
  EXPECT_EQ(store.request_count(999), 0);
  EXPECT_THROW(store.add_metric_samples(999, {MetricSample{}}), std::runtime_error);
  EXPECT_TRUE(store.metric_samples(999).empty());
  // The store is usable afterwards: the failed transaction was rolled back, not left open.
  store.add_requests(cell_id, {make_request(0), make_request(1)});
  EXPECT_EQ(store.request_count(cell_id), 2);
}

TEST(Store, LatestAndByName) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  EXPECT_FALSE(store.latest_experiment().has_value());
  EXPECT_FALSE(store.experiment_by_name("a").has_value());
  const auto a1 = store.add_experiment(make_experiment("a"));
  const auto b = store.add_experiment(make_experiment("b"));
  const auto a2 = store.add_experiment(make_experiment("a"));
  EXPECT_EQ(store.latest_experiment()->id, a2);
  EXPECT_EQ(store.experiment_by_name("a")->id, a2);
  EXPECT_EQ(store.experiment_by_name("b")->id, b);
  EXPECT_FALSE(store.experiment_by_name("c").has_value());
  EXPECT_FALSE(store.experiment(12345).has_value());
  const auto all = store.experiments();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, a1);
  EXPECT_EQ(all[2].id, a2);
}

MetricSample make_sample(const std::string& phase, double value) {
  MetricSample sample;
  sample.phase = phase;
  sample.source = "http://10.0.3.7:8000/metrics";
  sample.name = "vllm:prefix_cache_hits_total";
  sample.labels_json = R"({"model_name":"m"})";
  sample.value = value;
  sample.t_s = phase == "before" ? -0.5 : 12.25;
  return sample;
}

CommandRow make_command(const std::string& step) {
  CommandRow command;
  command.step = step;
  const std::string patch = R"({"spec":{"loadBalancing":{"strategy":"PrefixHash"}}})";
  command.argv = {"kubectl", "--namespace",  "default", "patch", "model",
                  "llama",   "--type=merge", "-p",      patch};
  command.exit_code = 0;
  command.seconds = 0.375;
  command.out = "model.kubeai.org/llama patched\n";
  command.err = "Warning: \"quoted\" and\ttabbed\n";
  return command;
}

TEST(Store, RecordCellStoresEverythingAndCommandsRoundTrip) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  std::int64_t cell_id = 0;
  CellRow cell;
  {
    Store store = Store::open(path);
    const auto experiment_id = store.add_experiment(make_experiment("e"));
    cell = make_cell(experiment_id, 0);
    cell.id = cell_id = store.add_cell(cell);
    cell.status = "done";
    cell.finished_at = "2026-11-22T04:35:00Z";
    CommandRow failed = make_command("gate pods");
    failed.argv = {"kubectl", "get", "pods", "-l", "model=llama", "-o", "json"};
    failed.exit_code = -1;  // killed at its timeout
    failed.out.clear();
    store.record_cell(cell, {make_request(0), make_request(1), make_request(2)},
                      {make_sample("before", 10), make_sample("after", 250)},
                      {make_command("apply"), failed});
  }
  // Reopened from the file: what record_cell wrote is there, in order, bit for bit.
  Store store = Store::open(path);
  expect_same(store.cells(cell.experiment_id).at(0), cell);
  EXPECT_EQ(store.request_count(cell_id), 3);
  const auto samples = store.metric_samples(cell_id);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].phase, "before");
  EXPECT_EQ(samples[1].value, 250);
  EXPECT_EQ(samples[1].t_s, 12.25);
  const auto commands = store.commands(cell_id);
  ASSERT_EQ(commands.size(), 2u);
  const CommandRow apply = make_command("apply");
  EXPECT_EQ(commands[0].cell_id, cell_id);
  EXPECT_EQ(commands[0].step, "apply");
  EXPECT_EQ(commands[0].argv, apply.argv);
  EXPECT_EQ(commands[0].exit_code, 0);
  EXPECT_EQ(commands[0].seconds, 0.375);
  EXPECT_EQ(commands[0].out, apply.out);
  EXPECT_EQ(commands[0].err, apply.err);
  EXPECT_EQ(commands[1].step, "gate pods");
  EXPECT_EQ(commands[1].exit_code, -1);
  EXPECT_EQ(commands[1].argv.back(), "json");
  EXPECT_TRUE(store.commands(cell_id + 1).empty());
}

TEST(Store, RecordCellIsAllOrNothing) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  Store store = Store::open(path);
  const auto experiment_id = store.add_experiment(make_experiment("e"));
  CellRow cell = make_cell(experiment_id, 0);
  cell.id = store.add_cell(cell);
  // The row update comes last; make it fail (as a full disk would) after the inserts went in.
  SqliteDb::open(path).exec(
      "CREATE TRIGGER refuse_update BEFORE UPDATE ON cells "
      "BEGIN SELECT RAISE(ABORT, 'simulated failure'); END;");
  cell.status = "done";
  EXPECT_THROW(store.record_cell(cell, {make_request(0), make_request(1)},
                                 {make_sample("after", 1)}, {make_command("apply")}),
               std::runtime_error);
  EXPECT_EQ(store.request_count(cell.id), 0);
  EXPECT_TRUE(store.metric_samples(cell.id).empty());
  EXPECT_TRUE(store.commands(cell.id).empty());
  EXPECT_EQ(store.cells(experiment_id).at(0).status, "running");
}

TEST(Store, ResetCellForgetsWhatItMeasured) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto experiment_id = store.add_experiment(make_experiment("e"));
  CellRow first = make_cell(experiment_id, 0);
  first.id = store.add_cell(first);
  CellRow second = make_cell(experiment_id, 1);
  second.id = store.add_cell(second);
  for (CellRow* cell : {&first, &second}) {
    cell->status = "failed";
    cell->finished_at = "2026-11-22T04:36:00Z";
    cell->error = "readiness gate pods: not open after 1800.0 s";
    store.record_cell(*cell, {make_request(0)}, {make_sample("before", 3)},
                      {make_command("apply")});
  }
  store.reset_cell(first.id);
  const CellRow reset = store.cells(experiment_id).at(0);
  EXPECT_EQ(reset.status, "pending");
  EXPECT_EQ(reset.started_at, "");
  EXPECT_EQ(reset.finished_at, "");
  EXPECT_EQ(reset.error, "");
  EXPECT_EQ(reset.epoch_wall_s, 0);
  EXPECT_EQ(reset.key, first.key);  // the identity stays; only the measurement goes
  EXPECT_EQ(store.request_count(first.id), 0);
  EXPECT_TRUE(store.metric_samples(first.id).empty());
  EXPECT_TRUE(store.commands(first.id).empty());
  // The other cell is untouched.
  expect_same(store.cells(experiment_id).at(1), second);
  EXPECT_EQ(store.request_count(second.id), 1);
  EXPECT_EQ(store.commands(second.id).size(), 1u);
  EXPECT_THROW(store.reset_cell(999), std::runtime_error);
}

TEST(Store, LatestUnfinishedOfAHashAndReopen) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  EXPECT_FALSE(store.latest_unfinished("0123456789abcdef").has_value());
  ExperimentRow other_hash = make_experiment("e");
  other_hash.scenario_hash = "fedcba9876543210";
  store.add_experiment(other_hash);
  const auto interrupted = store.add_experiment(make_experiment("e"));
  store.finish_experiment(interrupted, "interrupted", "2026-11-22T05:00:00Z");
  EXPECT_EQ(store.latest_unfinished("0123456789abcdef")->id, interrupted);
  const auto killed = store.add_experiment(make_experiment("e"));  // left "running"
  EXPECT_EQ(store.latest_unfinished("0123456789abcdef")->id, killed);
  store.finish_experiment(killed, "done", "2026-11-22T06:00:00Z");
  // A done experiment is finished: the latest unfinished one is the older interrupted one.
  EXPECT_EQ(store.latest_unfinished("0123456789abcdef")->id, interrupted);
  EXPECT_FALSE(store.latest_unfinished("0000000000000000").has_value());

  store.reopen_experiment(interrupted);
  const auto reopened = store.experiment(interrupted);
  EXPECT_EQ(reopened->status, "running");
  EXPECT_EQ(reopened->finished_at, "");
  EXPECT_THROW(store.reopen_experiment(999), std::runtime_error);
}

TEST(Store, MovedStoreKeepsWorking) {
  TempDir dir;
  Store first = Store::open(dir.file("s.db"));
  Store second = std::move(first);
  second.add_experiment(make_experiment("moved"));
  EXPECT_EQ(second.experiments().size(), 1u);
}

TEST(Store, CountsMeasuredAndWarmupRequestsApart) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto experiment_id = store.add_experiment(make_experiment("counts"));
  const auto cell_id = store.add_cell(make_cell(experiment_id, 0));
  std::vector<RequestRow> rows;
  for (int i = 0; i < 7; ++i) {
    RequestRow row = make_request(i);
    row.warmup = i < 3;
    rows.push_back(row);
  }
  store.add_requests(cell_id, rows);
  const RequestCounts counts = store.request_counts(cell_id);
  EXPECT_EQ(counts.measured, 4);
  EXPECT_EQ(counts.warmup, 3);
  EXPECT_EQ(store.request_counts(cell_id + 1).measured, 0);  // no such cell: nothing, no error
}

// A file exactly as kvsweep wrote it at schema 2 (before requests had ended_s), with rows in it.
TEST(Store, Version2FileMigratesKeepingItsRows) {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  {
    SqliteDb db = SqliteDb::open(path);
    migrate_to(db, 2);
    db.exec(
        "INSERT INTO experiments (id, name, status) VALUES (1, 'old', 'done');"
        "INSERT INTO cells (id, experiment_id, ordinal, key, status) VALUES (1, 1, 0, 'k', 'done');"
        // A success that reported usage, a success without usage (0 meant unknown then) and a
        // timeout sent at 5 s that got no token.
        "INSERT INTO requests (cell_id, request_index, ok, sent_s, first_token_s, last_token_s,"
        "  e2e_ms, prompt_tokens, output_tokens) VALUES"
        "  (1, 0, 1, 0.0, 0.1, 0.5, 500, 1024, 8),"
        "  (1, 1, 1, 0.5, 0.6, 0.9, 400, 0, 3),"
        "  (1, 2, 0, 5.0, -1, -1, 0, 0, 0);");
    EXPECT_EQ(schema_version(db), 2);
  }
  const Store store = Store::open(path);
  EXPECT_EQ(schema_version(SqliteDb::open(path)), kSchemaVersion);
  const auto rows = store.requests(1);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].prompt_tokens, 1024);
  EXPECT_EQ(rows[1].prompt_tokens, -1);  // unknown, not 0
  EXPECT_EQ(rows[2].prompt_tokens, -1);
  for (const RequestRow& row : rows) {
    EXPECT_EQ(row.ended_s, -1) << row.index;      // not recorded
    EXPECT_EQ(row.prompt_hash, 0u) << row.index;  // nor this (schema 13)
  }
  EXPECT_EQ(rows[0].last_token_s, 0.5);
  EXPECT_EQ(rows[2].sent_s, 5.0);
  EXPECT_EQ(store.experiments().size(), 1u);
}

TEST(Store, NewFileGetsCurrentSchemaVersion) {
  TempDir dir;
  { Store store = Store::open(dir.file("s.db")); }
  EXPECT_EQ(schema_version(SqliteDb::open(dir.file("s.db"))), kSchemaVersion);
}

TEST(Store, RefusesFileFromNewerSchema) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  { Store store = Store::open(path); }
  SqliteDb::open(path).exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  try {
    Store::open(path);
    FAIL() << "expected a refusal";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("newer kvsweep"), std::string::npos) << message;
  }
}

TEST(Store, NotADatabaseNamesTheFile) {
  TempDir dir;
  const std::string path = dir.file("junk.db");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("this is not an sqlite file, it is long enough to have a header.......", f);
    std::fclose(f);
  }
  try {
    Store::open(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Store, MissingDirectoryNamesTheFile) {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/s.db");
  try {
    Store::open(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kvsweep::store
