//===- ManifestTest.cpp - manifest JSON round trip and malformed input ----===//

#include "tile/Manifest.h"

#include <gtest/gtest.h>

using tile::Manifest;

namespace {

Manifest sample() {
  Manifest m;
  m.kernelName = "flash_fwd";
  m.params = {{"q", "ptr<bf16>", 16}, {"k", "ptr<bf16>", 16},
              {"v", "ptr<bf16>", 16}, {"o", "ptr<bf16>", 16},
              {"lse", "ptr<f32>", 16}, {"seqlen", "i32"}, {"sm_scale", "f32"}};
  m.constants = {
      {"BM", "128"}, {"BN", "64"}, {"CAUSAL", "true"}, {"T", "bf16"}};
  m.blockSize = 128;
  m.sharedMemoryBytes = 98304;
  m.arch = "sm_90a";
  m.tilecVersion = "0.1.0";
  m.llvmVersion = "22.1.0";
  m.cudaVersion = "12.4.131";
  m.sourceHash = tile::hashHex("kernel flash_fwd() {}");
  return m;
}

std::string parseError(const std::string &json) {
  Manifest m;
  std::string error;
  EXPECT_FALSE(Manifest::fromJSON(json, m, error)) << json;
  return error;
}

} // namespace

TEST(Manifest, RoundTrip) {
  Manifest m = sample(), back;
  std::string error;
  std::string json = m.toJSON();
  ASSERT_TRUE(Manifest::fromJSON(json, back, error)) << error << "\n" << json;
  EXPECT_EQ(m, back);
  EXPECT_EQ(json, back.toJSON()); // stable output
}

TEST(Manifest, RoundTripEmptyAndEscapes) {
  Manifest m;
  m.kernelName = "we\"ird\\name\n\t\x01 é";
  m.constants["K"] = "a\"b";
  Manifest back;
  std::string error;
  ASSERT_TRUE(Manifest::fromJSON(m.toJSON(), back, error)) << error;
  EXPECT_EQ(m, back);
}

TEST(Manifest, StableKeyOrder) {
  std::string json = sample().toJSON();
  EXPECT_LT(json.find("\"kernelName\""), json.find("\"params\""));
  EXPECT_LT(json.find("\"params\""), json.find("\"constants\""));
  EXPECT_LT(json.find("\"BM\""), json.find("\"BN\""));
  EXPECT_LT(json.find("\"blockSize\""), json.find("\"sourceHash\""));
}

TEST(Manifest, AcceptsUnicodeEscapesAndWhitespace) {
  Manifest m = sample(), back;
  std::string json = m.toJSON();
  // \u00e9 and a surrogate pair decode to UTF-8.
  std::size_t at = json.find("flash_fwd");
  json.replace(at, 9, "flash\\u00e9\\ud83d\\ude00");
  std::string error;
  ASSERT_TRUE(Manifest::fromJSON("\n\t " + json + " \n", back, error)) << error;
  EXPECT_EQ(back.kernelName, "flash\xc3\xa9\xf0\x9f\x98\x80");
}

TEST(Manifest, MalformedJSONSaysWhere) {
  EXPECT_EQ(parseError(""), "malformed manifest JSON: line 1, column 1: "
                            "unexpected end of input, expected a value");
  EXPECT_EQ(parseError("{\n  \"kernelName\": \"x\"\n  \"params\": []}"),
            "malformed manifest JSON: line 3, column 3: expected ',' or '}' "
            "in object");
  EXPECT_NE(parseError("{\"a\": \"unterminated}").find("unterminated string"),
            std::string::npos);
  EXPECT_NE(parseError("{\"a\": tru}").find("unexpected character 't'"),
            std::string::npos);
  EXPECT_NE(parseError("{\"a\": 1} trailing").find("after the JSON value"),
            std::string::npos);
  EXPECT_NE(parseError("{\"a\": 01}").find("expected ',' or '}'"),
            std::string::npos);
  EXPECT_NE(parseError("{\"a\": \"\\x\"}").find("unknown escape"),
            std::string::npos);
  EXPECT_NE(parseError("{\"a\": 1, \"a\": 2}").find("duplicate key \"a\""),
            std::string::npos);
  EXPECT_NE(parseError(std::string(100, '[')).find("nesting deeper"),
            std::string::npos);
  EXPECT_NE(parseError("{\"a\": \"\\ud800\"}").find("unpaired surrogate"),
            std::string::npos);
}

TEST(Manifest, SchemaErrorsNameTheKey) {
  std::string json = sample().toJSON();
  auto without = [&](const std::string &key) {
    std::string j = json;
    std::size_t at = j.find("\"" + key + "\"");
    j.replace(at, key.size() + 2, "\"x" + key + "\"");
    return j;
  };
  EXPECT_EQ(parseError(without("blockSize")),
            "invalid manifest: missing key \"blockSize\"");
  EXPECT_EQ(parseError(without("sourceHash")),
            "invalid manifest: missing key \"sourceHash\"");
  EXPECT_EQ(parseError("[]"),
            "invalid manifest: the top level must be an object, got array");

  std::string j = json;
  j.replace(j.find("\"blockSize\": 128"), 16, "\"blockSize\": \"128\"");
  EXPECT_EQ(parseError(j),
            "invalid manifest: \"blockSize\" must be an integer, got string");
  j = json;
  j.replace(j.find("\"blockSize\": 128"), 16, "\"blockSize\": 12.5");
  EXPECT_EQ(parseError(j), "invalid manifest: \"blockSize\" must be an "
                           "integer in 0..2^31-1, got 12.5");
  j = json;
  j.replace(j.find("\"type\": \"i32\""), 13, "\"tipe\": \"i32\"");
  EXPECT_EQ(parseError(j), "invalid manifest: params[5]: missing key \"type\"");
  j = json;
  j.replace(j.find("\"params\": ["), 11, "\"params\": {\"a\": [");
  j.replace(j.find("\n  ],"), 5, "\n  ]},");
  EXPECT_EQ(parseError(j),
            "invalid manifest: \"params\" must be an array, got object");
}

TEST(Manifest, PointerAlignment) {
  std::string json = sample().toJSON();
  EXPECT_NE(json.find("{\"name\": \"q\", \"type\": \"ptr<bf16>\", \"align\": 16}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"name\": \"seqlen\", \"type\": \"i32\"}"),
            std::string::npos)
      << json;
  std::string bad = json;
  bad.replace(bad.find("\"align\": 16"), 11, "\"align\": 12");
  EXPECT_EQ(parseError(bad),
            "invalid manifest: params[0]: \"align\" must be a power of two in [1, 4096]");
}

TEST(Manifest, EqualityLooksAtEveryField) {
  Manifest a = sample(), b = sample();
  EXPECT_EQ(a, b);
  b.params[5].type = "i64";
  EXPECT_FALSE(a == b);
  b = sample();
  b.params[0].align = 8;
  EXPECT_FALSE(a == b);
  b = sample();
  b.constants["BM"] = "64";
  EXPECT_FALSE(a == b);
  b = sample();
  b.cudaVersion = "none";
  EXPECT_FALSE(a == b);
  b = sample();
  b.tensorMaps.push_back(tile::TensorMapParam{1, 2, 128, 128, 64, 64});
  EXPECT_FALSE(a == b);
  a.tensorMaps = b.tensorMaps;
  EXPECT_EQ(a, b);
  int tile::TensorMapParam::*const fields[] = {
      &tile::TensorMapParam::arg,      &tile::TensorMapParam::elemBytes,
      &tile::TensorMapParam::rowElems, &tile::TensorMapParam::rowStride,
      &tile::TensorMapParam::boxElems, &tile::TensorMapParam::boxRows};
  for (auto field : fields) {
    b = a;
    b.tensorMaps[0].*field += 1;
    EXPECT_FALSE(a == b);
    EXPECT_FALSE(a.tensorMaps[0] == b.tensorMaps[0]);
  }
}

namespace {

/// sample() with two tensor maps: of k (arg 1) and of v (arg 2).
Manifest withMaps() {
  Manifest m = sample();
  m.tensorMaps = {{1, 2, 128, 128, 64, 64}, {2, 2, 64, 192, 32, 128}};
  return m;
}

/// The parse error of withMaps() with its second map replaced by `t`.
std::string mapError(const tile::TensorMapParam &t) {
  Manifest m = withMaps();
  m.tensorMaps[1] = t;
  return parseError(m.toJSON());
}

} // namespace

TEST(Manifest, TensorMapsRoundTrip) {
  Manifest m = withMaps(), back;
  std::string error, json = m.toJSON();
  EXPECT_NE(
      json.find("\n  \"tensorMaps\": [\n    {\"arg\": 1, \"elemBytes\": 2, "
                "\"rowElems\": 128, \"rowStride\": 128, \"boxElems\": "
                "64, \"boxRows\": 64},\n    {\"arg\": 2, \"elemBytes\": "
                "2, \"rowElems\": 64, \"rowStride\": 192, \"boxElems\": "
                "32, \"boxRows\": 128}\n  ],\n"),
      std::string::npos)
      << json;
  EXPECT_LT(json.find("\"arch\""), json.find("\"tensorMaps\""));
  EXPECT_LT(json.find("\"tensorMaps\""), json.find("\"tilecVersion\""));
  ASSERT_TRUE(Manifest::fromJSON(json, back, error)) << error << "\n" << json;
  ASSERT_EQ(back.tensorMaps.size(), 2u);
  EXPECT_EQ(back.tensorMaps[1].arg, 2);
  EXPECT_EQ(back.tensorMaps[1].rowStride, 192);
  EXPECT_EQ(back.tensorMaps[1].boxRows, 128);
  EXPECT_EQ(m, back);
  EXPECT_EQ(json, back.toJSON());

  // None is written too, as an empty array.
  EXPECT_NE(sample().toJSON().find("\n  \"tensorMaps\": [],\n"),
            std::string::npos);
  ASSERT_TRUE(Manifest::fromJSON(sample().toJSON(), back, error)) << error;
  EXPECT_TRUE(back.tensorMaps.empty());
}

TEST(Manifest, MissingTensorMapsMeansNone) {
  // Manifests written before the key existed still load, with no maps.
  Manifest m = sample(), back = withMaps(); // overwritten
  std::string json = m.toJSON();
  std::string line = "  \"tensorMaps\": [],\n";
  std::size_t at = json.find(line);
  ASSERT_NE(at, std::string::npos) << json;
  json.erase(at, line.size());
  std::string error;
  ASSERT_TRUE(Manifest::fromJSON(json, back, error)) << error << "\n" << json;
  EXPECT_TRUE(back.tensorMaps.empty());
  EXPECT_EQ(m, back);
}

TEST(Manifest, PersistentKeyOnlyWhenTrue) {
  Manifest m = sample(), back;
  std::string error;
  EXPECT_EQ(m.toJSON().find("persistent"), std::string::npos);
  m.persistent = true;
  std::string json = m.toJSON();
  EXPECT_NE(json.find("\n  \"persistent\": true,\n"), std::string::npos) << json;
  ASSERT_TRUE(Manifest::fromJSON(json, back, error)) << error << "\n" << json;
  EXPECT_TRUE(back.persistent);
  EXPECT_EQ(m, back);
  EXPECT_FALSE(sample() == back); // equality looks at it
  std::string wrong = json;
  wrong.replace(wrong.find("true,\n  \"tilecVersion"), 4, "1");
  EXPECT_EQ(parseError(wrong),
            "invalid manifest: \"persistent\" must be a boolean, got number");
}

TEST(Manifest, OldScratchKernelsAreRefused) {
  // Before tensor maps, TMA kernels took a hidden global scratch pointer
  // ("scratchBytesPerProgram" > 0) that nothing passes any more.
  Manifest m = sample(), back;
  std::string json = m.toJSON(), error;
  std::string line = "  \"tensorMaps\": [],\n";
  std::size_t at = json.find(line);
  ASSERT_NE(at, std::string::npos) << json;
  std::string zero = json, some = json;
  zero.replace(at, line.size(), "  \"scratchBytesPerProgram\": 0,\n");
  some.replace(at, line.size(), "  \"scratchBytesPerProgram\": 256,\n");
  ASSERT_TRUE(Manifest::fromJSON(zero, back, error)) << error;
  EXPECT_EQ(m, back);
  EXPECT_EQ(parseError(some),
            "invalid manifest: \"scratchBytesPerProgram\" 256: the kernel "
            "needs the global scratch of an older tilec, which this runtime "
            "no longer passes; compile it again");
}

TEST(Manifest, TensorMapsSchemaErrors) {
  std::string json = withMaps().toJSON();
  auto edit = [&](const std::string &from, const std::string &to) {
    std::string j = json;
    std::size_t at = j.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? j : j.replace(at, from.size(), to);
  };
  const std::string second = "{\"arg\": 2, \"elemBytes\": 2, \"rowElems\": 64";
  EXPECT_EQ(
      parseError(edit("\"tensorMaps\": [", "\"tensorMaps\": 5, \"x\": [")),
      "invalid manifest: \"tensorMaps\" must be an array, got number");
  EXPECT_EQ(parseError(edit(second, "7, " + second)),
            "invalid manifest: \"tensorMaps\"[1] must be an object, got "
            "number");
  EXPECT_EQ(parseError(edit(second, "{\"arg\": 2, \"rows\": 9, \"elemBytes\": "
                                    "2, \"rowElems\": 64")),
            "invalid manifest: \"tensorMaps\"[1]: unknown key \"rows\"");
  EXPECT_EQ(parseError(edit(", \"boxRows\": 128}", "}")),
            "invalid manifest: \"tensorMaps\"[1]: missing key \"boxRows\"");
  EXPECT_EQ(parseError(edit("\"rowElems\": 64", "\"rowElems\": \"64\"")),
            "invalid manifest: \"tensorMaps\"[1]: \"rowElems\" must be an "
            "integer, got string");
  EXPECT_EQ(parseError(edit("\"boxRows\": 128", "\"boxRows\": -1")),
            "invalid manifest: \"tensorMaps\"[1]: \"boxRows\" must be an "
            "integer in 0..2^31-1, got -1");

  using tile::TensorMapParam;
  EXPECT_EQ(mapError(TensorMapParam{7, 2, 64, 192, 32, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"arg\" 7 is not a "
            "parameter (the kernel has 7)");
  EXPECT_EQ(mapError(TensorMapParam{5, 2, 64, 192, 32, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"arg\" 5 is 'seqlen' of "
            "type i32, not a pointer");
  EXPECT_EQ(mapError(TensorMapParam{2, 4, 64, 192, 32, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"elemBytes\" must be 1 "
            "or 2, got 4");
  // rowElems 0: rows as long as the stride (boxes starting at a column),
  // a run-time stride: rowStride times integer parameters, and fp8 (1-byte
  // elements, 128-element boxes).
  for (const TensorMapParam &ok : {TensorMapParam{2, 2, 0, 192, 32, 128},
                                   TensorMapParam{2, 2, 0, 8, 32, 128, {5}},
                                   TensorMapParam{2, 1, 128, 128, 128, 64},
                                   // a run-time stride's factor: any size
                                   TensorMapParam{2, 1, 0, 1, 128, 128, {5}}}) {
    Manifest m = withMaps(), back;
    m.tensorMaps[1] = ok;
    std::string error;
    EXPECT_TRUE(Manifest::fromJSON(m.toJSON(), back, error)) << error;
    EXPECT_EQ(back, m);
  }
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 0, 16, 32, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"rowStride\" 16 is less "
            "than \"boxElems\" 32");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 0, 8, 32, 128, {1}}),
            "invalid manifest: \"tensorMaps\"[1]: \"strideArgs\" names 'k' "
            "of type ptr<bf16>, not an integer");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 0, 8, 32, 128, {9}}),
            "invalid manifest: \"tensorMaps\"[1]: \"strideArgs\" holds 9, "
            "not a parameter index");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 64, 0, 32, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"rowStride\" must be "
            "positive, got 0");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 64, 192, 0, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"boxElems\" must be "
            "positive, got 0");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 64, 192, 32, 0}),
            "invalid manifest: \"tensorMaps\"[1]: \"boxRows\" must be "
            "positive, got 0");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 64, 48, 32, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"rowStride\" 48 is less "
            "than \"rowElems\" 64");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 64, 68, 32, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"rowStride\" 68 of 2-byte "
            "elements is 136 bytes, not a multiple of 16");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 32, 192, 64, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"boxElems\" 64 is more "
            "than \"rowElems\" 32");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 128, 192, 128, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"boxElems\" 128 of 2-byte "
            "elements is 256 bytes; the 128-byte swizzle needs a multiple of "
            "16 up to 128");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 64, 192, 12, 128}),
            "invalid manifest: \"tensorMaps\"[1]: \"boxElems\" 12 of 2-byte "
            "elements is 24 bytes; the 128-byte swizzle needs a multiple of "
            "16 up to 128");
  EXPECT_EQ(mapError(TensorMapParam{2, 2, 64, 192, 32, 257}),
            "invalid manifest: \"tensorMaps\"[1]: \"boxRows\" must be at "
            "most 256, got 257");

  // The limits themselves are accepted.
  Manifest m = withMaps(), back;
  m.tensorMaps[1] = TensorMapParam{3, 2, 64, 64, 64, 256};
  std::string error;
  EXPECT_TRUE(Manifest::fromJSON(m.toJSON(), back, error)) << error;
  EXPECT_EQ(m, back);
}

TEST(Manifest, HashIsFnv1a64) {
  EXPECT_EQ(tile::hashHex(""), "cbf29ce484222325");
  EXPECT_EQ(tile::hashHex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(tile::hashHex("foobar"), "85944171f73967e8");
  EXPECT_EQ(tile::hashHex("x").size(), 16u);
}
