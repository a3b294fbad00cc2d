//===- DecodeSplitsTest.cpp - tile::decodeSplits, the split-KV rule -------===//

#include "tile/Decode.h"

#include <gtest/gtest.h>

namespace {

// 132 SMs running 2 decode programs each (decode.tile at D = 128 on an H100
// / H200); B x 8 KV heads programs.
TEST(DecodeSplits, GivesEverySmOneProgramForFewSequences) {
  // One sequence: 8 programs; 16 splits = 128 programs, one per SM (not
  // the 29 that would fill 85 % of the 264 resident slots).
  EXPECT_EQ(tile::decodeSplits(8, 512, 132, 2), 16);
  // 8 sequences: 64 programs, 2 splits.
  EXPECT_EQ(tile::decodeSplits(64, 512, 132, 2), 2);
  // One program: as many splits as SMs, within maxSplits.
  EXPECT_EQ(tile::decodeSplits(1, 100000, 132, 2), 128);
  EXPECT_EQ(tile::decodeSplits(1, 100000, 132, 2, 16), 16);
}

TEST(DecodeSplits, FillsTheWavesOfPagedCaches) {
  // A paged gather gains from a second resident program: 29 splits fill
  // 85 % of the 264 slots; 33 fill them all.
  EXPECT_EQ(tile::decodeSplits(8, 512, 132, 2, 128, true), 29);
  EXPECT_EQ(tile::decodeSplits(64, 512, 132, 2, 128, true), 4);
}

TEST(DecodeSplits, FillsTheWavesOfLargerBatches) {
  // 16 sequences: 128 programs; 2 splits = 256 of 264 slots (97 %).
  EXPECT_EQ(tile::decodeSplits(128, 512, 132, 2), 2);
  // 64 sequences: 512 programs are 1.94 waves (97 %) unsplit.
  EXPECT_EQ(tile::decodeSplits(512, 512, 132, 2), 1);
  // 100 programs over 264 slots: 5 splits are 1.89 waves (95 %).
  EXPECT_EQ(tile::decodeSplits(100, 512, 132, 2), 5);
}

TEST(DecodeSplits, KeepsAKeyBlockPerSplit) {
  // Sequences of 2 blocks cannot be cut in more than 2.
  EXPECT_EQ(tile::decodeSplits(8, 2, 132, 2), 2);
  EXPECT_EQ(tile::decodeSplits(8, 1, 132, 2), 1);
  EXPECT_LE(tile::decodeSplits(100, 3, 132, 2), 3);
}

TEST(DecodeSplits, DegenerateInputs) {
  EXPECT_EQ(tile::decodeSplits(0, 10, 132, 2), 1);
  EXPECT_EQ(tile::decodeSplits(8, 10, 0, 2), 1);
  EXPECT_EQ(tile::decodeSplits(8, 10, 132, 0), 10); // perSM unknown
}

} // namespace
