// A kernel's require(...) conditions: the manifest carries and validates
// them, checkArguments (every launch) evaluates them on the arguments.
#include "tile/Manifest.h"
#include "tile/Runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tile;

namespace {

/// k(x: ptr<f32>, heads: i32, heads_kv: i32, n: u32, big: i64)
Manifest gqaManifest(std::string expr, std::string text = "c") {
  Manifest m;
  m.kernelName = "k";
  m.params = {{"x", "ptr<f32>", 16},
              {"heads", "i32"},
              {"heads_kv", "i32"},
              {"n", "u32"},
              {"big", "i64"}};
  m.blockSize = 128;
  m.arch = "sm_90a";
  m.requirements.push_back({std::move(expr), std::move(text), "k.tile:4:11"});
  return m;
}

std::vector<KernelArg> gqaArgs(int heads, int heads_kv, unsigned n = 1,
                               long long big = 0) {
  return {KernelArg::pointer(0x1000, "f32"), KernelArg::int32(heads),
          KernelArg::int32(heads_kv), KernelArg::uint32(n),
          KernelArg::int64(big)};
}

const char *kWholeGroups = "and:1 sgt:32 a2 #0 eq:32 rems:32 a1 a2 #0";

bool holds(const std::string &expr, const std::vector<KernelArg> &args) {
  return checkArguments(gqaManifest(expr), args).ok();
}

} // namespace

TEST(Requires, RefusesArgumentsThatBreakTheCondition) {
  Manifest m = gqaManifest(kWholeGroups, "heads_kv > 0 && heads % heads_kv == 0");
  EXPECT_TRUE(checkArguments(m, gqaArgs(32, 8)).ok());
  EXPECT_TRUE(checkArguments(m, gqaArgs(32, 32)).ok());
  Status s = checkArguments(m, gqaArgs(6, 4));
  EXPECT_EQ(s.message(),
            "the kernel requires heads_kv > 0 && heads % heads_kv == 0 "
            "(k.tile:4:11), which heads = 6, heads_kv = 4 do not meet");
}

TEST(Requires, AndOfBoolsIgnoresAnUndefinedSide) {
  // heads % 0 is undefined, but heads_kv > 0 is false: the whole is false.
  Manifest m = gqaManifest(kWholeGroups, "g");
  Status s = checkArguments(m, gqaArgs(6, 0));
  EXPECT_EQ(s.message(), "the kernel requires g (k.tile:4:11), which heads "
                         "= 6, heads_kv = 0 do not meet");
  // Alone, the division by zero leaves the condition undefined: refused.
  s = checkArguments(gqaManifest("eq:32 rems:32 a1 a2 #0", "g"), gqaArgs(6, 0));
  EXPECT_EQ(s.message(), "the kernel requires g (k.tile:4:11), which heads "
                         "= 6, heads_kv = 0 leave undefined (division by "
                         "zero)");
  // true || undefined is true.
  EXPECT_TRUE(holds("or:1 eq:32 a2 #0 eq:32 rems:32 a1 a2 #0", gqaArgs(6, 0)));
  // sel evaluates only the branch it takes.
  EXPECT_TRUE(holds("sel eq:32 a2 #0 #-1 eq:32 divs:32 a1 a2 #3", gqaArgs(6, 0)));
  EXPECT_TRUE(holds("sel eq:32 a2 #0 #-1 eq:32 divs:32 a1 a2 #3", gqaArgs(6, 2)));
  EXPECT_FALSE(holds("sel eq:32 a2 #0 #-1 eq:32 divs:32 a1 a2 #3", gqaArgs(6, 3)));
}

TEST(Requires, ArithmeticWrapsAtItsWidth) {
  // i32: 65536 * 65536 wraps to 0, as the kernel's own i32 multiply does.
  EXPECT_TRUE(holds("eq:32 mul:32 a1 a1 #0", gqaArgs(65536, 1)));
  // i64 (after sign extension): it does not.
  EXPECT_FALSE(holds("eq:64 mul:64 a1 a1 #0", gqaArgs(65536, 1)));
  // u32 arguments compare unsigned; signed comparisons see them as i32.
  EXPECT_TRUE(holds("ugt:32 a3 #100", gqaArgs(1, 1, 0x80000000u)));
  EXPECT_FALSE(holds("sgt:32 a3 #100", gqaArgs(1, 1, 0x80000000u)));
  // zext of a u32 to 64 bits keeps it positive; trunc wraps.
  EXPECT_TRUE(holds("sgt:64 zext:32 a3 #100", gqaArgs(1, 1, 0x80000000u)));
  EXPECT_TRUE(holds("eq:32 trunc:32 a4 #0", gqaArgs(1, 1, 1, 1ll << 32)));
  // INT_MIN / -1 wraps (no trap); shifts past the width are undefined.
  EXPECT_TRUE(holds("eq:32 divs:32 a1 #-1 a1", gqaArgs(int(0x80000000u), 1)));
  EXPECT_FALSE(holds("eq:32 shl:32 a1 #32 #0", gqaArgs(1, 1)));
  EXPECT_TRUE(holds("eq:32 shl:32 a1 #31 #-2147483648", gqaArgs(1, 1)));
  EXPECT_TRUE(holds("eq:32 maxu:32 a1 #-1 #-1", gqaArgs(5, 1)));
  EXPECT_TRUE(holds("eq:32 mins:32 a1 #-1 #-1", gqaArgs(5, 1)));
}

TEST(Requires, FloatComparisons) {
  // k(x: ptr<f32>, scale: f32, n: i32): `scale > 0.0`, as flex_fwd.tile's
  // require(sm_scale > 0.0).
  Manifest m;
  m.kernelName = "k";
  m.params = {{"x", "ptr<f32>", 16}, {"scale", "f32"}, {"n", "i32"}};
  m.blockSize = 128;
  m.arch = "sm_90a";
  m.requirements.push_back({"fogt:32 a1 %0x0p+0", "scale > 0.0", "k.tile:3:3"});
  auto args = [](float scale) {
    return std::vector<KernelArg>{KernelArg::pointer(0x1000, "f32"),
                                  KernelArg::float32(scale),
                                  KernelArg::int32(1)};
  };
  EXPECT_TRUE(checkArguments(m, args(0.125f)).ok());
  EXPECT_TRUE(checkArguments(m, args(1e-30f)).ok());
  EXPECT_EQ(checkArguments(m, args(-0.5f)).message(),
            "the kernel requires scale > 0.0 (k.tile:3:3), which scale = -0.5 "
            "do not meet");
  EXPECT_FALSE(checkArguments(m, args(0.0f)).ok());
  EXPECT_FALSE(checkArguments(m, args(std::nanf(""))).ok()); // ordered: false
  // Unordered predicates hold for NaN; hexadecimal constants are exact.
  m.requirements[0].expr = "fugt:32 a1 %0x1p-3";
  EXPECT_TRUE(checkArguments(m, args(std::nanf(""))).ok());
  EXPECT_FALSE(checkArguments(m, args(0.125f)).ok());
  EXPECT_TRUE(checkArguments(m, args(0.12500001f)).ok());
  // Mixed with integers: a float comparison of an integer is undefined.
  m.requirements[0].expr = "fogt:32 a2 %0x0p+0";
  EXPECT_FALSE(checkArguments(m, args(1.0f)).ok());
  m.requirements[0].expr = "and:1 sgt:32 a2 #0 foge:32 a1 %0x0p+0";
  EXPECT_TRUE(checkArguments(m, args(0.0f)).ok());
}

TEST(Requires, ManifestRoundTripsAndValidates) {
  Manifest m = gqaManifest(kWholeGroups, "heads % heads_kv == 0");
  m.tilecVersion = m.llvmVersion = m.cudaVersion = "x";
  m.sourceHash = "0";
  std::string json = m.toJSON();
  EXPECT_NE(json.find("\"requires\": ["), std::string::npos) << json;
  Manifest back;
  std::string error;
  ASSERT_TRUE(Manifest::fromJSON(json, back, error)) << error;
  EXPECT_EQ(back, m);

  auto refused = [&](const std::string &expr) {
    Manifest bad = gqaManifest(expr);
    bad.tilecVersion = bad.llvmVersion = bad.cudaVersion = "x";
    bad.sourceHash = "0";
    Manifest out;
    std::string why;
    EXPECT_FALSE(Manifest::fromJSON(bad.toJSON(), out, why)) << expr;
    return why;
  };
  EXPECT_EQ(refused("eq:32 a9 #0"),
            "invalid manifest: \"requires\"[0]: 'a9' is not a parameter index");
  EXPECT_EQ(refused("eq:32 a0 #0"), "invalid manifest: \"requires\"[0]: reads "
                                    "'x' of type ptr<f32>, not a scalar");
  EXPECT_EQ(refused("fogt:32 %x #0"),
            "invalid manifest: \"requires\"[0]: '%x' is not a float constant");
  EXPECT_EQ(refused("frob:32 a1 #0"),
            "invalid manifest: \"requires\"[0]: unknown operation 'frob:32'");
  EXPECT_EQ(refused("eq:32 a1"),
            "invalid manifest: \"requires\"[0]: the expression ends early");
  EXPECT_EQ(refused("eq:32 a1 #0 #1"), "invalid manifest: \"requires\"[0]: "
                                       "trailing tokens after the expression");
  EXPECT_EQ(refused("eq:99 a1 #0"),
            "invalid manifest: \"requires\"[0]: unknown operation 'eq:99'");
  std::string deep;
  for (int i = 0; i < 300; ++i)
    deep += "add:32 #1 ";
  EXPECT_EQ(refused(deep + "#0"),
            "invalid manifest: \"requires\"[0]: the expression is nested too "
            "deeply");
}

TEST(Requires, RandomTokenStreamsNeverCrash) {
  // Manifests come from disk: any token soup must be refused or evaluated,
  // never crash or loop (the reader validates, the launcher evaluates).
  const char *vocab[] = {"a0", "a1", "a2", "a3", "a4", "a9", "#0", "#1", "#-1",
                         "#2147483648", "#-9223372036854775808", "add:32",
                         "divs:32", "divu:64", "rems:8", "shl:32", "shrs:64",
                         "and:1", "or:1", "xor:1", "eq:32", "ult:64", "sel",
                         "zext:32", "trunc:16", "maxu:32", "mins:64", "frob",
                         "add:0", "add:65", "#", "a", "", "sel:1"};
  std::mt19937 rng(7);
  std::vector<KernelArg> args = gqaArgs(INT32_MIN, -1, 0xFFFFFFFFu, INT64_MIN);
  int valid = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string expr;
    int n = 1 + int(rng() % 12);
    for (int t = 0; t < n; ++t)
      expr += std::string(t ? " " : "") + vocab[rng() % (sizeof vocab / sizeof *vocab)];
    Manifest m = gqaManifest(expr);
    std::string why;
    if (!validRequirement(expr, m.params, why))
      continue;
    ++valid;
    Status s = checkArguments(m, args); // true, false or undefined: no crash
    EXPECT_TRUE(s.ok() || s.message().find("requires c") != std::string::npos)
        << expr << ": " << s.message();
  }
  EXPECT_GT(valid, 100); // the soup does hold well-formed expressions
}
