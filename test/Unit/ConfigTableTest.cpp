//===- ConfigTableTest.cpp - config tables: lookup and optional tables ----===//
//
// ConfigTable::lookup's rule (entries matching the keys; the largest size
// at or below the launch's, else the smallest; else the default) and
// lookupIfPresent, which tile::AttentionBackward and tile-gpu-bwd use: a
// missing table is the kernel's defaults, a broken one an error.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "tile/ConfigTable.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace tile;
using tiletest::TempDir;

namespace {
const char *kTable = R"({"kernel": "k", "arch": "sm_90a",
 "keys": ["T", "D"], "size": "seqlen",
 "default": {"defines": {"BM": 64}, "schedule": {}},
 "entries": [
  {"match": {"T": "bf16", "D": 128}, "seqlen": 2048,
   "defines": {"BM": 128}, "schedule": {"num_warps": 8}},
  {"match": {"T": "bf16", "D": 128}, "seqlen": 8192,
   "defines": {"BM": 128}, "schedule": {"num_warps": 8, "tma_a": true}}]})";

std::string write(const TempDir &dir, const std::string &name,
                  const std::string &text) {
  std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}
} // namespace

TEST(ConfigTableTest, LookupTakesTheLargestSizeAtOrBelowElseTheSmallest) {
  ConfigTable t;
  std::string error;
  ASSERT_TRUE(ConfigTable::parse(kTable, "t.json", t, error)) << error;
  // Extra keys (G) are ignored; sizes pick the entry.
  std::map<std::string, std::string> keys = {
      {"T", "bf16"}, {"D", "128"}, {"G", "4"}};
  EXPECT_FALSE(t.lookup(keys, 1024).schedule.tmaA); // smallest: 2048's
  EXPECT_EQ(t.lookup(keys, 1024).schedule.numWarps, 8);
  EXPECT_FALSE(t.lookup(keys, 4096).schedule.tmaA);
  EXPECT_TRUE(t.lookup(keys, 8192).schedule.tmaA);
  EXPECT_TRUE(t.lookup(keys, 1 << 20).schedule.tmaA);
  // No match, or a key missing: the default.
  KernelConfig d = t.lookup({{"T", "f16"}, {"D", "128"}}, 8192);
  EXPECT_EQ(d.defines.at("BM"), "64");
  EXPECT_EQ(d.origin, "default");
  EXPECT_EQ(t.lookup({{"T", "bf16"}}, 8192).origin, "default");
}

TEST(ConfigTableTest, LookupIfPresentMissingIsDefaultsBrokenIsAnError) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::map<std::string, std::string> keys = {{"T", "bf16"}, {"D", "128"}};
  KernelConfig c;
  std::string error;
  ASSERT_TRUE(ConfigTable::lookupIfPresent(dir.path() + "/none.json", keys,
                                           8192, c, error));
  EXPECT_EQ(c.origin, "no table");
  EXPECT_TRUE(c.defines.empty());
  EXPECT_FALSE(c.schedule.tmaA);

  ASSERT_TRUE(ConfigTable::lookupIfPresent(write(dir, "t.json", kTable), keys,
                                           8192, c, error))
      << error;
  EXPECT_TRUE(c.schedule.tmaA);
  EXPECT_EQ(c.defines.at("BM"), "128");

  std::string broken = write(dir, "b.json", "{\"kernel\": ");
  EXPECT_FALSE(
      ConfigTable::lookupIfPresent(broken, keys, 8192, c, error));
  EXPECT_TRUE(tiletest::contains(error, "b.json")) << error;
}
