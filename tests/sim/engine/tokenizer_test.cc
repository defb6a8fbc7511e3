// Tests sim/engine/tokenizer.cc: 4-byte pieces, shared prefixes, generated pieces.
#include "sim/engine/tokenizer.h"

#include <gtest/gtest.h>

#include <set>

namespace kvsweep::sim {
namespace {

TEST(Tokenizer, FourBytesPerTokenLastMayBeShorter) {
  EXPECT_TRUE(tokenize("").empty());
  EXPECT_EQ(tokenize("abcd").size(), 1u);
  EXPECT_EQ(tokenize("abcdefgh").size(), 2u);
  EXPECT_EQ(tokenize("abcdefghi").size(), 3u);
}

TEST(Tokenizer, SharedTextPrefixGivesSharedTokenPrefix) {
  std::vector<TokenId> a = tokenize("You are a helpful assistant. Tell me about cats.");
  std::vector<TokenId> b = tokenize("You are a helpful assistant. Tell me about dogs!");
  ASSERT_EQ(a.size(), b.size());
  // 43 shared bytes: the first 10 pieces are equal, the 11th differs.
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(a[i], b[i]) << i;
  EXPECT_NE(a[10], b[10]);
}

TEST(Tokenizer, EqualPiecesEqualIdsAnywhere) {
  std::vector<TokenId> t = tokenize("abcdxyzwabcd");
  EXPECT_EQ(t[0], t[2]);
  EXPECT_NE(t[0], t[1]);
}

TEST(Tokenizer, GeneratedPieceIsDeterministicWordWithLeadingSpace) {
  EXPECT_EQ(generated_piece(7, 3), generated_piece(7, 3));
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    std::string piece = generated_piece(7, i);
    ASSERT_GE(piece.size(), 2u);
    EXPECT_EQ(piece[0], ' ');
    EXPECT_NE(piece[1], ' ');
    seen.insert(piece);
  }
  EXPECT_GT(seen.size(), 10u);  // varies with the index
  int differ = 0;
  for (int i = 0; i < 50; ++i) differ += generated_piece(7, i) != generated_piece(8, i);
  EXPECT_GT(differ, 25);  // and with the seed
}

}  // namespace
}  // namespace kvsweep::sim
