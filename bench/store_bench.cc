// Prints how many request rows per second Store::add_requests writes to a real file.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "store/store.h"

namespace {

constexpr int kRows = 50000;
constexpr int kItlGaps = 64;  // a realistic ITL array per request dominates the row size

kvsweep::store::RequestRow bench_row(int index) {
  kvsweep::store::RequestRow r;
  r.index = index;
  r.ok = true;
  r.http_status = 200;
  r.sent_s = index * 0.001;
  r.first_token_s = r.sent_s + 0.1;
  r.last_token_s = r.sent_s + 1.5;
  r.ttft_ms = 100.0 + index % 97;
  r.e2e_ms = 1500.0 + index % 13;
  r.tpot_ms = 21.9;
  r.itl_ms.assign(kItlGaps, 21.875);
  r.prompt_tokens = 1024;
  r.output_tokens = kItlGaps + 1;
  r.cached_tokens = 512;
  r.replica = "replica-" + std::to_string(index % 8);
  return r;
}

}  // namespace

int main() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kvsweep-store-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  double rows_per_s = 0;
  {
    auto store = kvsweep::store::Store::open((dir / "bench.db").string());
    kvsweep::store::ExperimentRow experiment;
    experiment.name = "bench";
    kvsweep::store::CellRow cell;
    cell.experiment_id = store.add_experiment(experiment);
    cell.key = "bench";
    const auto cell_id = store.add_cell(cell);
    std::vector<kvsweep::store::RequestRow> rows;
    rows.reserve(kRows);
    for (int i = 0; i < kRows; ++i) rows.push_back(bench_row(i));

    const auto start = std::chrono::steady_clock::now();
    store.add_requests(cell_id, rows);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    rows_per_s = kRows / elapsed.count();

    const auto read_start = std::chrono::steady_clock::now();
    const auto back = store.requests(cell_id);
    const std::chrono::duration<double> read_elapsed =
        std::chrono::steady_clock::now() - read_start;
    std::printf(
        "store_bench: %d request rows (%d ITL gaps each) inserted in %.3f s: %.0f rows/s; "
        "read back in %.3f s: %.0f rows/s\n",
        kRows, kItlGaps, elapsed.count(), rows_per_s, read_elapsed.count(),
        static_cast<double>(back.size()) / read_elapsed.count());
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return EXIT_SUCCESS;
}
