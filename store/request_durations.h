// Which of a request's stored durations follow from its times, bit for bit: the store leaves
// those out (NULL) and computes them again on reading, as the driver and the predictor did.
#pragma once

#include <optional>

#include "store/rows.h"

namespace kvsweep::store {

// What the driver (driver/stream_decoder.cc) and the predictor (predict/virtual_load.cc)
// compute for a request that streamed tokens: ttft and e2e from the times, tpot from those two
// and the output tokens, and the end at the last token.
double derived_ttft_ms(const RequestRow& row);
double derived_e2e_ms(const RequestRow& row);
double derived_tpot_ms(const RequestRow& row);  // from the row's ttft_ms and e2e_ms
double derived_ended_s(const RequestRow& row);

// The value to store: nullopt when it equals the derived one in every bit (NULL in the table).
std::optional<double> stored_ttft_ms(const RequestRow& row);
std::optional<double> stored_e2e_ms(const RequestRow& row);
std::optional<double> stored_tpot_ms(const RequestRow& row);
std::optional<double> stored_ended_s(const RequestRow& row);

// Fills the durations read as NULL, in the order they depend on each other (tpot last).
struct NullDurations {
  bool ttft_ms = false;
  bool e2e_ms = false;
  bool tpot_ms = false;
  bool ended_s = false;
};
void restore_durations(RequestRow& row, const NullDurations& nulls);

}  // namespace kvsweep::store
