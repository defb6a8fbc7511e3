// Token id sequences for sim tests: distinct runs that share nothing unless asked to.
#pragma once

#include <vector>

#include "sim/engine/tokenizer.h"

namespace kvsweep::sim::testing {

// `count` consecutive ids starting at `first`: tokens_from(0, 40) and tokens_from(0, 20)
// share their first 20 tokens; runs started far apart share none.
inline std::vector<TokenId> tokens_from(TokenId first, int count) {
  std::vector<TokenId> tokens;
  for (int i = 0; i < count; ++i) tokens.push_back(first + static_cast<TokenId>(i));
  return tokens;
}

}  // namespace kvsweep::sim::testing
