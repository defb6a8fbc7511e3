// Prints how fast Store::add_requests writes request rows to a real file and reads them back,
// and how many bytes a request of seed 002's shape takes in the file at schema 6 (ITLs as JSON
// text) and at the current schema (ITLs as a compact blob).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "store/schema.h"
#include "store/sqlite_handles.h"
#include "store/store.h"

namespace {

constexpr int kRows = 50000;
// Seed 002's requests as predicted: 76 output tokens (75 ITL gaps), about 833 prompt tokens,
// each gap whole microseconds of a decode step (predict/virtual_load.cc rounds them so).
constexpr int kItlGaps = 75;

kvsweep::store::RequestRow bench_row(int index) {
  kvsweep::store::RequestRow r;
  r.index = index;
  r.worker = index % 800;
  r.conversation = index / 10;
  r.turn = index % 10;
  r.ok = true;
  r.http_status = 200;
  r.scheduled_s = index * 0.00125;
  r.sent_s = r.scheduled_s + 0.000137;
  r.first_token_s = r.sent_s + 0.1 + (index % 97) * 0.001;
  r.ttft_ms = (r.first_token_s - r.sent_s) * 1000.0;
  // A decode step of 20-40 ms that drifts as the batch changes, rounded to microseconds.
  double step_s = 0.02 + (index % 200) * 0.0001;
  double t = r.first_token_s;
  for (int k = 0; k < kItlGaps; ++k) {
    step_s += ((index * 31 + k * 17) % 41 - 20) * 0.00002;
    const double at = t + std::fabs(step_s);
    r.itl_ms.push_back(std::round((at - t) * 1e6) / 1e3);
    t = at;
  }
  r.last_token_s = t;
  r.ended_s = t;
  r.e2e_ms = (r.last_token_s - r.sent_s) * 1000.0;
  r.tpot_ms = (r.e2e_ms - r.ttft_ms) / kItlGaps;
  r.prompt_tokens = 800 + index % 67;
  r.output_tokens = kItlGaps + 1;
  r.cached_tokens = 512;
  r.replica = "replica-" + std::to_string(index % 8);
  return r;
}

// The mean length of the ITL blobs in a store of the current schema.
double itl_blob_bytes(const std::string& path) {
  auto s = kvsweep::store::SqliteDb::open(path).prepare("SELECT AVG(LENGTH(itl_us)) FROM requests");
  s.step();
  return s.column_double(0);
}

// The file's size with its WAL folded in: every row in the database file itself.
double bytes_per_row(const std::string& path) {
  kvsweep::store::SqliteDb::open(path).exec("PRAGMA wal_checkpoint(TRUNCATE)");
  return static_cast<double>(std::filesystem::file_size(path)) / kRows;
}

// The same rows as kvsweep wrote them at schema 6, ITLs as JSON text.
double schema6_bytes_per_row(const std::string& path,
                             const std::vector<kvsweep::store::RequestRow>& rows) {
  {
    const auto db = kvsweep::store::SqliteDb::open(path);
    db.exec("PRAGMA journal_mode = WAL");
    kvsweep::store::migrate_to(db, 6);
    db.exec(
        "INSERT INTO experiments (id, name) VALUES (1, 'bench');"
        "INSERT INTO cells (id, experiment_id, ordinal, key) VALUES (1, 1, 0, 'bench');");
    kvsweep::store::Transaction transaction(db);
    auto s = db.prepare(
        "INSERT INTO requests (cell_id, request_index, worker, conversation, turn, ok, "
        "http_status, scheduled_s, sent_s, first_token_s, last_token_s, ended_s, ttft_ms, "
        "e2e_ms, tpot_ms, itl_ms, prompt_tokens, output_tokens, cached_tokens, replica) "
        "VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& r : rows) {
      s.bind_int64(1, r.index);
      s.bind_int64(2, r.worker);
      s.bind_int64(3, r.conversation);
      s.bind_int64(4, r.turn);
      s.bind_int64(5, 1);
      s.bind_int64(6, r.http_status);
      s.bind_double(7, r.scheduled_s);
      s.bind_double(8, r.sent_s);
      s.bind_double(9, r.first_token_s);
      s.bind_double(10, r.last_token_s);
      s.bind_double(11, r.ended_s);
      s.bind_double(12, r.ttft_ms);
      s.bind_double(13, r.e2e_ms);
      s.bind_double(14, r.tpot_ms);
      s.bind_text(15, nlohmann::json(r.itl_ms).dump());
      s.bind_int64(16, r.prompt_tokens);
      s.bind_int64(17, r.output_tokens);
      s.bind_int64(18, r.cached_tokens);
      s.bind_text(19, r.replica);
      s.step();
      s.reset();
    }
    transaction.commit();
  }
  return bytes_per_row(path);
}

}  // namespace

int main() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kvsweep-store-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<kvsweep::store::RequestRow> rows;
  rows.reserve(kRows);
  for (int i = 0; i < kRows; ++i) rows.push_back(bench_row(i));
  {
    const std::string path = (dir / "bench.db").string();
    auto store = kvsweep::store::Store::open(path);
    kvsweep::store::ExperimentRow experiment;
    experiment.name = "bench";
    kvsweep::store::CellRow cell;
    cell.experiment_id = store.add_experiment(experiment);
    cell.key = "bench";
    const auto cell_id = store.add_cell(cell);

    const auto start = std::chrono::steady_clock::now();
    store.add_requests(cell_id, rows);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

    const auto read_start = std::chrono::steady_clock::now();
    const auto back = store.requests(cell_id);
    const std::chrono::duration<double> read_elapsed =
        std::chrono::steady_clock::now() - read_start;
    std::printf(
        "store_bench: %d request rows (%d ITL gaps each) inserted in %.3f s: %.0f rows/s; "
        "read back in %.3f s: %.0f rows/s\n",
        kRows, kItlGaps, elapsed.count(), kRows / elapsed.count(), read_elapsed.count(),
        static_cast<double>(back.size()) / read_elapsed.count());
    const double before = schema6_bytes_per_row((dir / "schema6.db").string(), rows);
    std::printf(
        "store_bench: bytes per request of seed 002's shape: %.0f at schema 6 (ITLs as JSON "
        "text), %.0f at schema %d (ITLs as a blob of %.0f bytes)\n",
        before, bytes_per_row(path), kvsweep::store::kSchemaVersion, itl_blob_bytes(path));
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return EXIT_SUCCESS;
}
