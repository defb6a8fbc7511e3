// Cost per million tokens from the fleet's hourly price and a cell's throughput.
#include "figures/token_cost.h"

namespace kvsweep::figures {

std::optional<TokenCost> token_cost(const CostSpec& cost, double output_tok_s,
                                    std::optional<double> total_tok_s) {
  if (cost.empty() || output_tok_s <= 0) return std::nullopt;
  constexpr double kSecondsPerHour = 3600;
  constexpr double kMillion = 1e6;
  const double usd_per_second = cost.usd_per_hour() / kSecondsPerHour;  // dollars per second
  TokenCost out;
  out.usd_per_million_output = usd_per_second / output_tok_s * kMillion;
  if (total_tok_s && *total_tok_s > 0) {
    out.usd_per_million_total = usd_per_second / *total_tok_s * kMillion;
  }
  return out;
}

}  // namespace kvsweep::figures
