//===- JsonScaleTest.cpp - the manifest reader is linear in its input -----===//
//
// 100 000 keys in one object took over a minute when each key was checked
// for duplicates by scanning the ones before it. Linear, they take tens of
// milliseconds; the bound below leaves a wide margin for slow machines and
// still fails the quadratic reader by far.
//
//===----------------------------------------------------------------------===//

#include "lib/Runtime/Json.h"
#include "tile/Manifest.h"

#include <gtest/gtest.h>

#include <chrono>

namespace {

constexpr int kKeys = 100000;
constexpr double kBoundSeconds = 5.0;

/// {"k0": "0", "k1": "1", ...}
std::string manyKeys(int n, const std::string &last = std::string()) {
  std::string s = "{";
  for (int i = 0; i < n; ++i)
    s += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": \"" +
         std::to_string(i) + "\"";
  return s + last + "}";
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

} // namespace

TEST(JsonScale, HundredThousandKeysParseQuickly) {
  std::string text = manyKeys(kKeys);
  auto start = std::chrono::steady_clock::now();
  tile::json::Value v;
  std::string error;
  ASSERT_TRUE(tile::json::parse(text, v, error)) << error;
  double seconds = secondsSince(start);
  ASSERT_EQ(v.members.size(), std::size_t(kKeys));
  EXPECT_EQ(v.members.back().first, "k99999");
  EXPECT_LT(seconds, kBoundSeconds);
}

TEST(JsonScale, DuplicateAmongManyKeysIsFoundQuickly) {
  std::string text = manyKeys(kKeys, ", \"k123\": \"again\"");
  auto start = std::chrono::steady_clock::now();
  tile::json::Value v;
  std::string error;
  EXPECT_FALSE(tile::json::parse(text, v, error));
  EXPECT_LT(secondsSince(start), kBoundSeconds);
  EXPECT_NE(error.find("duplicate key \"k123\""), std::string::npos) << error;
}

TEST(JsonScale, ManifestWithManyConstantsLoadsQuickly) {
  tile::Manifest m;
  m.kernelName = "k";
  m.params = {{"x", "ptr<f32>"}};
  m.blockSize = 128;
  m.arch = "sm_80";
  for (int i = 0; i < kKeys; ++i)
    m.constants["C" + std::to_string(i)] = std::to_string(i);
  std::string json = m.toJSON();
  auto start = std::chrono::steady_clock::now();
  tile::Manifest back;
  std::string error;
  ASSERT_TRUE(tile::Manifest::fromJSON(json, back, error)) << error;
  EXPECT_LT(secondsSince(start), kBoundSeconds);
  EXPECT_EQ(back.constants.size(), std::size_t(kKeys));
  EXPECT_EQ(back.constants.at("C4242"), "4242");
}
