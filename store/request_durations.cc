// Which of a request's stored durations follow from its times, and computing them again.
#include "store/request_durations.h"

#include <cstring>

namespace kvsweep::store {
namespace {

std::optional<double> unless_same_bits(double value, double derived) {
  if (std::memcmp(&value, &derived, sizeof value) == 0) return std::nullopt;
  return value;
}

}  // namespace

double derived_ttft_ms(const RequestRow& row) { return (row.first_token_s - row.sent_s) * 1000.0; }

double derived_e2e_ms(const RequestRow& row) { return (row.last_token_s - row.sent_s) * 1000.0; }

double derived_tpot_ms(const RequestRow& row) {
  return row.output_tokens > 1 ? (row.e2e_ms - row.ttft_ms) / (row.output_tokens - 1) : 0.0;
}

double derived_ended_s(const RequestRow& row) { return row.last_token_s; }

std::optional<double> stored_ttft_ms(const RequestRow& row) {
  return unless_same_bits(row.ttft_ms, derived_ttft_ms(row));
}
std::optional<double> stored_e2e_ms(const RequestRow& row) {
  return unless_same_bits(row.e2e_ms, derived_e2e_ms(row));
}
std::optional<double> stored_tpot_ms(const RequestRow& row) {
  return unless_same_bits(row.tpot_ms, derived_tpot_ms(row));
}
std::optional<double> stored_ended_s(const RequestRow& row) {
  return unless_same_bits(row.ended_s, derived_ended_s(row));
}

void restore_durations(RequestRow& row, const NullDurations& nulls) {
  if (nulls.ttft_ms) row.ttft_ms = derived_ttft_ms(row);
  if (nulls.e2e_ms) row.e2e_ms = derived_e2e_ms(row);
  if (nulls.tpot_ms) row.tpot_ms = derived_tpot_ms(row);  // reads the two above
  if (nulls.ended_s) row.ended_s = derived_ended_s(row);
}

}  // namespace kvsweep::store
