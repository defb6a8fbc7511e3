// Tests for store/cell_summaries.cc: summaries stored and found, which cells still need one,
// and prune: raw rows gone, cells, loads and summaries kept, the file smaller.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

#include "store/sqlite_handles.h"
#include "store/store.h"
#include "tests/support/temp_dir.h"

namespace kvsweep::store {
namespace {

using kvsweep::testing::TempDir;

std::int64_t add_experiment(Store& store, const std::string& name) {
  ExperimentRow e;
  e.name = name;
  e.started_at = "2026-11-22T04:30:00Z";
  e.status = "done";
  e.setup = kvsweep::store::decode_setup("{}");
  return store.add_experiment(e);
}

CellRow add_cell(Store& store, std::int64_t experiment_id, int ordinal, const std::string& status,
                 int requests) {
  CellRow c;
  c.experiment_id = experiment_id;
  c.ordinal = ordinal;
  c.key = "k" + std::to_string(ordinal);
  c.arm = "random";
  c.concurrency = 4;
  c.factors = kvsweep::store::decode_factors("{}");
  c.status = "running";
  c.id = store.add_cell(c);
  std::vector<RequestRow> rows;
  for (int i = 0; i < requests; ++i) {
    RequestRow r;
    r.index = i;
    r.ok = true;
    r.sent_s = i * 0.01;
    r.first_token_s = r.sent_s + 0.05;
    r.last_token_s = r.ended_s = r.sent_s + 0.2;
    r.ttft_ms = 50;
    r.e2e_ms = 200;
    r.output_tokens = 16;
    r.itl_ms.assign(15, 10.0);
    r.error = std::string(200, 'x');  // bulk, so that pruning frees whole pages
    rows.push_back(r);
  }
  MetricSample sample;
  sample.phase = "after";
  sample.source = "http://r0/metrics";
  sample.name = "vllm:prefix_cache_hits_total";
  sample.value = 5;
  c.status = status;
  store.record_cell(c, rows, {sample}, {});
  return c;
}

CellSummaryRow summary_of(std::int64_t cell_id, int format = 1) {
  return {cell_id, format, R"({"format":1,"ok":3})", std::string("\x01\x02\x00", 3),
          std::string(28, '\x07')};
}

TEST(CellSummaries, StoredAndFoundWithTheirBytesWhole) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto e = add_experiment(store, "nightly");
  const CellRow a = add_cell(store, e, 0, "done", 3);
  const CellRow b = add_cell(store, e, 1, "done", 3);
  store.set_cell_summary(summary_of(b.id));
  store.set_cell_summary(summary_of(a.id));
  const auto found = store.cell_summary(a.id);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->figures, R"({"format":1,"ok":3})");
  EXPECT_EQ(found->distributions, std::string("\x01\x02\x00", 3));
  EXPECT_EQ(found->sample, std::string(28, '\x07'));
  const auto all = store.cell_summaries(e);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].cell_id, a.id);  // by ordinal
  EXPECT_FALSE(store.cell_summary(b.id + 100));
  store.reset_cell(a.id);  // a re-run cell's old summary goes with its rows
  EXPECT_FALSE(store.cell_summary(a.id));
}

TEST(CellSummaries, OnlyDoneCellsWithoutACurrentSummaryAreToSummarize) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto e = add_experiment(store, "nightly");
  const CellRow done = add_cell(store, e, 0, "done", 3);
  add_cell(store, e, 1, "failed", 3);
  const CellRow summarized = add_cell(store, e, 2, "done", 3);
  const CellRow old_format = add_cell(store, e, 3, "done", 3);
  store.set_cell_summary(summary_of(summarized.id, 2));
  store.set_cell_summary(summary_of(old_format.id, 1));
  auto todo = store.cells_to_summarize(2);
  ASSERT_EQ(todo.size(), 2u);
  EXPECT_EQ(todo[0].id, done.id);
  EXPECT_EQ(todo[1].id, old_format.id);
  EXPECT_EQ(store.cells_to_summarize(1).size(), 1u);
}

TEST(CellSummaries, PruneRemovesRawRowsKeepsSummariesAndRefusesUnsummarizedCells) {
  TempDir dir;
  const std::string path = dir.file("s.db");
  Store store = Store::open(path);
  const auto old_run = add_experiment(store, "nightly");
  const auto new_run = add_experiment(store, "nightly");
  const CellRow a = add_cell(store, old_run, 0, "done", 3000);
  const CellRow b = add_cell(store, old_run, 1, "done", 3000);
  const CellRow keep = add_cell(store, new_run, 0, "done", 10);
  store.set_cell_summary(summary_of(a.id));
  CellLoadRow load;
  load.cell_id = a.id;
  store.set_cell_load(load);

  const PruneMark mark{old_run, "2026-11-27T10:00:00Z", "keep the last 1 runs of each scenario"};
  try {
    store.prune_raw_rows(mark);
    FAIL() << "pruned an experiment with a done cell that has no summary";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("1 done cells without a summary"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(store.request_count(b.id), 3000);  // nothing removed
  EXPECT_FALSE(store.prune_mark(old_run));

  store.set_cell_summary(summary_of(b.id));
  // The database and its write-ahead log: under WAL the rows may still sit in the log.
  const auto bytes = [&path] {
    std::error_code none;
    const auto wal = std::filesystem::file_size(path + "-wal", none);
    return std::filesystem::file_size(path) + (none ? 0 : wal);
  };
  const auto before = bytes();
  store.prune_raw_rows(mark);
  EXPECT_EQ(store.request_count(a.id), 0);
  EXPECT_EQ(store.request_count(b.id), 0);
  EXPECT_TRUE(store.metric_samples(a.id).empty());
  EXPECT_EQ(store.request_count(keep.id), 10);  // another experiment's rows stay
  EXPECT_EQ(store.metric_samples(keep.id).size(), 1u);
  EXPECT_EQ(store.cells(old_run).size(), 2u);
  EXPECT_TRUE(store.cell_summary(a.id));
  EXPECT_TRUE(store.cell_load(a.id));
  const auto found = store.prune_mark(old_run);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->policy, mark.policy);
  EXPECT_EQ(found->pruned_at, mark.pruned_at);
  EXPECT_TRUE(store.cells_to_summarize(9).size() == 1u);  // only the kept run's cell
  store.vacuum();
  const auto after = bytes();
  EXPECT_LT(after, before / 2) << before << " -> " << after;
  {
    const SqliteDb db = SqliteDb::open(path);
    SqliteStatement mode = db.prepare("PRAGMA auto_vacuum");
    mode.step();
    EXPECT_EQ(mode.column_int64(0), 2);  // incremental from now on
  }
  store.vacuum();  // now the incremental path: nothing left to free, the file stays as small
  EXPECT_LE(bytes(), after);
}

}  // namespace
}  // namespace kvsweep::store

namespace kvsweep::store {
namespace {

// request_latencies reads a few columns; what it reads must be what requests() gives, for
// durations stored and for durations left NULL as derived.
TEST(RequestLatencies, TheFieldsItReadsAreThoseOfTheWholeRows) {
  TempDir dir;
  Store store = Store::open(dir.file("s.db"));
  const auto e = add_experiment(store, "nightly");
  const CellRow cell = add_cell(store, e, 0, "done", 5);
  RequestRow odd;  // durations that do not follow from the times: stored, not derived
  odd.index = 5;
  odd.warmup = true;
  odd.sent_s = 1;
  odd.first_token_s = 1.25;
  odd.last_token_s = 2;
  odd.ttft_ms = 249.5;
  odd.e2e_ms = 1000.25;
  odd.output_tokens = 3;
  store.add_requests(cell.id, {odd});
  const auto whole = store.requests(cell.id);
  const auto few = store.request_latencies(cell.id);
  ASSERT_EQ(whole.size(), 6u);
  ASSERT_EQ(few.size(), whole.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(few[i].index, whole[i].index);
    EXPECT_EQ(few[i].warmup, whole[i].warmup);
    EXPECT_EQ(few[i].ok, whole[i].ok);
    EXPECT_EQ(few[i].sent_s, whole[i].sent_s);
    EXPECT_EQ(few[i].scheduled_s, whole[i].scheduled_s);
    EXPECT_EQ(few[i].ttft_ms, whole[i].ttft_ms) << i;
    EXPECT_EQ(few[i].e2e_ms, whole[i].e2e_ms) << i;
    EXPECT_EQ(few[i].output_tokens, whole[i].output_tokens);
    EXPECT_TRUE(few[i].itl_ms.empty());
  }
  EXPECT_EQ(few.back().ttft_ms, 249.5);
}

}  // namespace
}  // namespace kvsweep::store
