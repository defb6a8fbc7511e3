// Converts the load driver's request records into store rows.
#include "orchestrator/sweep/record_rows.h"

namespace kvsweep::orchestrator {
namespace {

double shifted(double t_s, double shift_s) { return t_s < 0 ? t_s : t_s + shift_s; }

}  // namespace

std::vector<store::RequestRow> to_request_rows(const std::vector<driver::RequestRecord>& records,
                                               double shift_s, std::int64_t index_offset) {
  std::vector<store::RequestRow> rows;
  rows.reserve(records.size());
  for (const auto& r : records) {
    store::RequestRow row;
    row.index = r.index + index_offset;
    row.worker = r.worker;
    row.conversation = r.conversation;
    row.turn = r.turn;
    row.prompt_hash = r.prompt_hash;
    row.warmup = r.warmup;
    row.ok = r.ok;
    row.error_kind = r.error_kind;
    row.error = r.error;
    row.http_status = r.http_status;
    row.scheduled_s = shifted(r.scheduled_s, shift_s);
    row.sent_s = r.sent_s + shift_s;
    row.first_token_s = shifted(r.first_token_s, shift_s);
    row.last_token_s = shifted(r.last_token_s, shift_s);
    row.ended_s = shifted(r.ended_s, shift_s);
    row.ttft_ms = r.ttft_ms;
    row.e2e_ms = r.e2e_ms;
    row.tpot_ms = r.tpot_ms;
    row.itl_ms = r.itl_ms;
    row.prompt_tokens = r.prompt_tokens;
    row.output_tokens = r.output_tokens;
    row.cached_tokens = r.cached_tokens;
    row.tokens_estimated = r.tokens_estimated;
    row.replica = r.replica;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace kvsweep::orchestrator
