// VirtualRecords: a virtual run's request records and the measured counts its progress shows.
#include "predict/virtual_records.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace kvsweep::predict {
namespace {

// The replica's answer to a request it rejects, as vLLM words it (sim/http/replica_server.cc).
constexpr int kBadRequest = 400;

}  // namespace

VirtualRecords::VirtualRecords(const driver::LoadOptions& options, double epoch_s)
    : options_(options), epoch_(epoch_s) {
  load_.epoch_wall_s = kVirtualEpochS + epoch_;
  load_.epoch_steady_ns = static_cast<std::int64_t>(std::llround(epoch_ * 1e9));
  if (options.num_requests > 0 && options.duration_s == 0) {
    load_.records.reserve(static_cast<std::size_t>(options.num_requests + options.warmup_requests));
  }
}

void VirtualRecords::open(const driver::Job& job, double sent_s) {
  const auto index = static_cast<std::size_t>(job.index);
  if (load_.records.size() <= index) load_.records.resize(index + 1);
  driver::RequestRecord& record = load_.records[index];
  record.index = job.index;
  record.worker = std::max(job.user, 0);
  record.conversation = job.conversation;
  record.turn = job.turn;
  record.prompt_hash = job.prompt_hash;
  record.warmup = job.warmup;
  record.scheduled_s = job.scheduled_s;
  record.sent_s = rel(sent_s);
  if (job.scheduled_s >= 0) {
    record.schedule_lag_ms = std::max(0.0, record.sent_s - job.scheduled_s) * 1000.0;
  }
}

bool VirtualRecords::answered(std::int64_t index, const VirtualFlight& f, double now_s) {
  driver::RequestRecord& r = at(index);
  r.ended_s = rel(now_s);
  r.replica = std::to_string(f.replica);  // the x-kvsweep-replica header
  if (!f.error.empty()) {
    r.http_status = kBadRequest;
    r.ok = false;
    r.error_kind = driver::kErrorHttpStatus;
    r.error = "HTTP " + std::to_string(kBadRequest) + ": " + f.error;
    return false;
  }
  r.http_status = 200;
  r.prompt_tokens = f.prompt_tokens;
  r.cached_tokens = f.cached_tokens;
  r.output_tokens = f.output_tokens;
  r.tokens_estimated = false;
  if (!options_.stream) {
    // The whole JSON body arrives at once: TTFT = E2E (driver/full_response.h).
    r.first_token_s = r.last_token_s = r.ended_s;
    r.ttft_ms = r.e2e_ms = (r.ended_s - r.sent_s) * 1000.0;
    r.tpot_ms = 0;
    r.itl_ms.clear();
  } else {
    set_token_times(r, f);
  }
  r.ok = true;
  return true;
}

void VirtualRecords::abandoned(std::int64_t index, const VirtualFlight& f, double now_s) {
  driver::RequestRecord& r = at(index);
  r.ended_s = rel(now_s);
  r.http_status = f.status_client_s >= 0 && f.status_client_s <= now_s ? 200 : 0;
  if (r.http_status != 0) r.replica = std::to_string(f.replica);
  if (options_.stream) {
    // The usage chunk comes last, so a cut stream has none: tokens are counted.
    r.output_tokens = f.tokens;
    r.tokens_estimated = true;
    set_token_times(r, f);
  }
  r.ok = false;
  r.error_kind = f.abandon_kind;
  r.error = f.abandon_error;
}

void VirtualRecords::cancelled(std::int64_t index, const VirtualFlight& f, double now_s) {
  driver::RequestRecord& r = at(index);
  r.ended_s = rel(now_s);
  r.http_status = f.status_client_s >= 0 && f.status_client_s <= now_s ? 200 : 0;
  if (r.http_status != 0) r.replica = std::to_string(f.replica);
  // A cancelled transfer keeps its status line only, no token timings (transfer_worker.cc).
  r.first_token_s = -1;
  r.itl_ms.clear();
  r.ok = false;
  r.error_kind = driver::kErrorCancelled;
  r.error = "run stopped before the response completed";
}

void VirtualRecords::set_token_times(driver::RequestRecord& r, const VirtualFlight& f) const {
  if (f.tokens == 0) return;
  r.last_token_s = rel(f.last_token_s);
  r.ttft_ms = (r.first_token_s - r.sent_s) * 1000.0;
  r.e2e_ms = (r.last_token_s - r.sent_s) * 1000.0;
  r.tpot_ms = r.output_tokens > 1 ? (r.e2e_ms - r.ttft_ms) / (r.output_tokens - 1) : 0.0;
}

void VirtualRecords::count(std::int64_t index, bool ok) {
  const driver::RequestRecord& r = at(index);
  if (r.warmup) return;
  ++measured_done_;
  if (!ok) {
    ++measured_failed_;
  } else if (r.first_token_s >= 0) {
    ttft_ms_.add(r.ttft_ms);
  }
}

driver::Progress VirtualRecords::progress(double now_s, double measured_start_s) const {
  driver::Progress p;
  p.done = measured_done_;
  p.total = options_.num_requests;
  p.failed = measured_failed_;
  p.elapsed_s = measured_start_s >= 0 ? std::max(0.0, rel(now_s) - measured_start_s) : 0;
  p.requests_per_s = p.elapsed_s > 0 ? static_cast<double>(measured_done_) / p.elapsed_s : 0;
  p.p50_ttft_ms = ttft_ms_.percentile(50);
  return p;
}

}  // namespace kvsweep::predict
