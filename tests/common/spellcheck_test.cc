#include "common/spellcheck.h"

#include <gtest/gtest.h>

namespace kvsweep {
namespace {

TEST(EditDistance, CountsInsertDeleteSubstitute) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("concurency", "concurrency"), 1u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
}

TEST(ClosestWord, SuggestsATypoFixButNotAStranger) {
  const std::vector<std::string> keys{"strategy", "concurrency", "model"};
  EXPECT_EQ(closest_word("concurency", keys), "concurrency");
  EXPECT_EQ(closest_word("stratgey", keys), "strategy");
  EXPECT_FALSE(closest_word("banana", keys).has_value());
}

}  // namespace
}  // namespace kvsweep
