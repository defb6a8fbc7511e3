// What a million tokens cost on a fleet of known hourly price (scenario key target.cost):
// the fleet's dollars per hour over the tokens it produced per hour.
#pragma once

#include <optional>

#include "common/search_spec.h"

namespace kvsweep::figures {

struct TokenCost {
  double usd_per_million_output = 0;
  std::optional<double> usd_per_million_total;  // prompt and output tokens
};

// nullopt without a cost or without output throughput. A fleet serving `output_tok_s` output
// tokens per second costs usd_per_hour / (output_tok_s x 3600) x 10^6 per million of them.
std::optional<TokenCost> token_cost(const CostSpec& cost, double output_tok_s,
                                    std::optional<double> total_tok_s);

}  // namespace kvsweep::figures
