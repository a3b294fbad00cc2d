//===- DecodeSplitsTest.cpp - tile::decodeSplits, the split-KV rule -------===//

#include "tile/Decode.h"

#include <gtest/gtest.h>

namespace {

// 132 SMs x 2 programs each = 264 slots (decode.tile at D = 128 on an H100 /
// H200); B x 8 KV heads programs.
TEST(DecodeSplits, FillsTheWavesOfSmallBatches) {
  // One sequence: 8 programs; 33 splits fill the 264 slots exactly.
  EXPECT_EQ(tile::decodeSplits(8, 512, 264), 29); // first >= 85 % of the best
  // 16 sequences: 128 programs; 2 splits = 256 of 264 slots (97 %).
  EXPECT_EQ(tile::decodeSplits(128, 512, 264), 2);
  // 64 sequences: 512 programs are 1.94 waves (97 %) unsplit.
  EXPECT_EQ(tile::decodeSplits(512, 512, 264), 1);
}

TEST(DecodeSplits, KeepsAKeyBlockPerSplit) {
  // Sequences of 2 blocks cannot be cut in more than 2.
  EXPECT_LE(tile::decodeSplits(8, 2, 264), 2);
  EXPECT_EQ(tile::decodeSplits(8, 1, 264), 1);
  EXPECT_LE(tile::decodeSplits(1, 100000, 264, 16), 16);
}

TEST(DecodeSplits, DegenerateInputs) {
  EXPECT_EQ(tile::decodeSplits(0, 10, 264), 1);
  EXPECT_EQ(tile::decodeSplits(8, 10, 0), 1);
}

} // namespace
