#include "predict/routing_opportunity.h"

#include <algorithm>

#include "sim/engine/block_hash.h"

namespace kvsweep::predict {

void RoutingOpportunityTracker::note(std::span<const sim::TokenId> prompt, int block_size,
                                     int chosen, const sim::KvIndex& index,
                                     sim::KvIndex::Clock::time_point now) {
  hashes_.clear();
  sim::extend_block_hashes(prompt, block_size, &hashes_);
  index.overlaps(hashes_, &overlaps_, now);
  std::int64_t computed = 0;
  while (computed < static_cast<std::int64_t>(hashes_.size()) &&
         computed_.count(hashes_[static_cast<std::size_t>(computed)]) > 0) {
    ++computed;
  }
  const int best = overlaps_.empty() ? 0 : *std::max_element(overlaps_.begin(), overlaps_.end());
  const int on_chosen =
      chosen >= 0 && chosen < static_cast<int>(overlaps_.size()) ? overlaps_[chosen] : 0;
  totals_.requests += 1;
  totals_.prompt_blocks += static_cast<std::int64_t>(hashes_.size());
  totals_.chosen_cached += on_chosen;
  totals_.best_cached += best;
  // A block the index holds was stored, even if the set missed it (stored before tracking
  // began): computed never falls below best.
  totals_.computed_before += std::max<std::int64_t>(computed, best);
}

}  // namespace kvsweep::predict
