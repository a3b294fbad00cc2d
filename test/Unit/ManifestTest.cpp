//===- ManifestTest.cpp - manifest JSON round trip and malformed input ----===//

#include "tile/Manifest.h"

#include <gtest/gtest.h>

using tile::Manifest;

namespace {

Manifest sample() {
  Manifest m;
  m.kernelName = "flash_fwd";
  m.params = {{"q", "ptr<bf16>"}, {"k", "ptr<bf16>"},  {"v", "ptr<bf16>"},
              {"o", "ptr<bf16>"}, {"lse", "ptr<f32>"}, {"seqlen", "i32"},
              {"sm_scale", "f32"}};
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

TEST(Manifest, EqualityLooksAtEveryField) {
  Manifest a = sample(), b = sample();
  EXPECT_EQ(a, b);
  b.params[5].type = "i64";
  EXPECT_FALSE(a == b);
  b = sample();
  b.constants["BM"] = "64";
  EXPECT_FALSE(a == b);
  b = sample();
  b.cudaVersion = "none";
  EXPECT_FALSE(a == b);
  b = sample();
  b.scratchBytesPerProgram = 128;
  EXPECT_FALSE(a == b);
}

TEST(Manifest, ScratchBytesRoundTrip) {
  Manifest m = sample(), back;
  m.scratchBytesPerProgram = 256;
  std::string error, json = m.toJSON();
  EXPECT_NE(json.find("\n  \"scratchBytesPerProgram\": 256,\n"),
            std::string::npos)
      << json;
  EXPECT_LT(json.find("\"arch\""), json.find("\"scratchBytesPerProgram\""));
  EXPECT_LT(json.find("\"scratchBytesPerProgram\""),
            json.find("\"tilecVersion\""));
  ASSERT_TRUE(Manifest::fromJSON(json, back, error)) << error << "\n" << json;
  EXPECT_EQ(back.scratchBytesPerProgram, 256);
  EXPECT_EQ(m, back);
  EXPECT_EQ(json, back.toJSON());

  // 0 (no scratch) is written too.
  EXPECT_NE(sample().toJSON().find("\"scratchBytesPerProgram\": 0,"),
            std::string::npos);

  std::string j = json;
  j.replace(j.find("256,"), 3, "-1");
  EXPECT_EQ(parseError(j), "invalid manifest: \"scratchBytesPerProgram\" "
                           "must be an integer in 0..2^31-1, got -1");
  j = json;
  j.replace(j.find("256,"), 3, "\"x\"");
  EXPECT_EQ(parseError(j), "invalid manifest: \"scratchBytesPerProgram\" "
                           "must be an integer, got string");
}

TEST(Manifest, MissingScratchBytesMeansNone) {
  // Manifests written before the key existed still load, with 0.
  Manifest m = sample(), back;
  m.scratchBytesPerProgram = 0;
  std::string json = m.toJSON();
  std::string line = "  \"scratchBytesPerProgram\": 0,\n";
  std::size_t at = json.find(line);
  ASSERT_NE(at, std::string::npos) << json;
  json.erase(at, line.size());
  back.scratchBytesPerProgram = 99; // overwritten
  std::string error;
  ASSERT_TRUE(Manifest::fromJSON(json, back, error)) << error << "\n" << json;
  EXPECT_EQ(back.scratchBytesPerProgram, 0);
  EXPECT_EQ(m, back);
}

TEST(Manifest, HashIsFnv1a64) {
  EXPECT_EQ(tile::hashHex(""), "cbf29ce484222325");
  EXPECT_EQ(tile::hashHex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(tile::hashHex("foobar"), "85944171f73967e8");
  EXPECT_EQ(tile::hashHex("x").size(), 16u);
}
