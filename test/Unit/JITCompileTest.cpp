//===- JITCompileTest.cpp - the JIT with the real compiler (no GPU) -------===//
//
// The one unit-test binary that links LLVM/MLIR (through TileJIT). Compiles
// examples/attention/flash_fwd.tile (TILEC_FLASH_FWD_TILE) for an explicit
// arch, so no GPU is needed.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "tile/JIT.h"

#include <gtest/gtest.h>

using namespace tile;
using tiletest::contains;
using tiletest::TempDir;

namespace {
JITOptions options(const std::string &dir) {
  JITOptions o;
  o.cacheDir = dir;
  o.arch = "sm_80";
  return o;
}
} // namespace

TEST(JITCompile, FlashForwardCompilesOnceAndHitsTheCache) {
  TempDir dir;
  Defines defines = {{"D", "64"}, {"CAUSAL", "true"}, {"T", "f16"}};
  std::string key;
  {
    JIT jit(options(dir.path()));
    auto a = jit.compileFile(TILEC_FLASH_FWD_TILE, defines);
    ASSERT_TRUE(a) << a.error();
    const Manifest &m = (*a)->manifest;
    EXPECT_EQ(m.kernelName, "flash_fwd");
    EXPECT_EQ(m.arch, "sm_80");
    EXPECT_GT(m.blockSize, 0);
    ASSERT_EQ(m.params.size(), 7u);
    EXPECT_EQ(m.params[0].type, "ptr<f16>");
    EXPECT_EQ(m.params[4].type, "ptr<f32>");
    EXPECT_EQ(m.params[5].type, "i32");
    EXPECT_EQ(m.params[6].type, "f32");
    EXPECT_TRUE(m.constants.count("BM")) << m.toJSON();
    EXPECT_TRUE(contains((*a)->ptx, ".entry flash_fwd"))
        << (*a)->ptx.substr(0, 400);
    EXPECT_TRUE(contains((*a)->ptx, ".target sm_80"));
    key = (*a)->key;

    auto b = jit.compileFile(TILEC_FLASH_FWD_TILE, defines);
    ASSERT_TRUE(b);
    EXPECT_EQ(jit.stats().compilations, 1u);
    EXPECT_EQ(jit.stats().memoryHits, 1u);
  }
  JIT fresh(options(dir.path()));
  auto c = fresh.compileFile(TILEC_FLASH_FWD_TILE, defines);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(fresh.stats().compilations, 0u);
  EXPECT_EQ(fresh.stats().diskHits, 1u);
  EXPECT_EQ((*c)->key, key);

  defines["D"] = "128";
  auto d = fresh.compileFile(TILEC_FLASH_FWD_TILE, defines);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(fresh.stats().compilations, 1u);
  EXPECT_NE((*d)->key, key);
}

TEST(JITCompile, SameSourceGivesByteIdenticalPTX) {
  TempDir a, b;
  JITOptions oa = options(a.path()), ob = options(b.path());
  oa.diskCache = ob.diskCache = false;
  JIT ja(oa), jb(ob);
  auto x = ja.compileFile(TILEC_FLASH_FWD_TILE);
  auto y = jb.compileFile(TILEC_FLASH_FWD_TILE);
  ASSERT_TRUE(x) << x.error();
  ASSERT_TRUE(y) << y.error();
  EXPECT_EQ((*x)->ptx, (*y)->ptx);
}

// A kernel much smaller than flash_fwd, so that the cache is exercised with
// the real compiler even while attention lowering is in progress.
const char *kCopy = R"(kernel copy<BM = 128>(x: ptr<f32>, y: ptr<f32>, n: i32) {
  let i = program_id(0) * BM + iota(BM);
  store(y + i, load(x + i, mask: i < n, other: 0), mask: i < n);
}
)";

TEST(JITCompile, SmallKernelCompilesOnce) {
  TempDir dir;
  JIT jit(options(dir.path()));
  auto a = jit.compileSource(kCopy, "copy.tile", {{"BM", "256"}});
  ASSERT_TRUE(a) << a.error();
  EXPECT_TRUE(contains((*a)->ptx, ".entry copy")) << (*a)->ptx.substr(0, 400);
  EXPECT_EQ((*a)->manifest.kernelName, "copy");
  ASSERT_EQ((*a)->manifest.params.size(), 3u);
  EXPECT_EQ((*a)->manifest.params[2].type, "i32");
  ASSERT_TRUE(jit.compileSource(kCopy, "copy.tile", {{"BM", "256"}}));
  EXPECT_EQ(jit.stats().compilations, 1u);
  JIT fresh(options(dir.path()));
  ASSERT_TRUE(fresh.compileSource(kCopy, "copy.tile", {{"BM", "256"}}));
  EXPECT_EQ(fresh.stats().compilations, 0u);
  EXPECT_EQ(fresh.stats().diskHits, 1u);
}

TEST(JITCompile, CompileErrorsCarryDiagnostics) {
  TempDir dir;
  JIT jit(options(dir.path()));
  auto r = jit.compileSource("kernel broken(\n", "broken.tile");
  ASSERT_FALSE(r);
  EXPECT_TRUE(contains(r.error(), "compiling broken.tile for sm_80 failed:"))
      << r.error();
  EXPECT_TRUE(contains(r.error(), "broken.tile:")) << r.error();
  EXPECT_EQ(jit.stats().compilations, 1u);
}

// A kernel that imports another file: found beside the importing file or in
// JITOptions::includeDirs, and an edit of the imported file misses the
// cache (the key hashes every imported file).
TEST(JITCompile, ImportedFilesAreFoundAndKeyed) {
  TempDir dir, lib;
  const std::string libFile = lib.path() + "/mods.tile";
  auto writeLib = [&](const char *factor) {
    std::string text =
        std::string("fn scale(v) { return v * ") + factor + "; }\n" + kCopy;
    std::FILE *f = std::fopen(libFile.c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs(text.c_str(), f);
    std::fclose(f);
  };
  writeLib("2.0");
  const std::string user = "import \"mods.tile\";\n"
                           "kernel twice = copy<BM = 64>;\n";
  JITOptions o = options(dir.path());
  {
    JIT noDirs(o);
    auto r = noDirs.compileSource(user, dir.path() + "/user.tile");
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error(), "cannot find imported file 'mods.tile'"))
        << r.error();
  }
  o.includeDirs = {lib.path()};
  JIT jit(o);
  auto a = jit.compileSource(user, dir.path() + "/user.tile");
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ((*a)->manifest.kernelName, "twice");
  EXPECT_EQ((*a)->manifest.constants.at("BM"), "64");
  ASSERT_TRUE(jit.compileSource(user, dir.path() + "/user.tile"));
  EXPECT_EQ(jit.stats().compilations, 1u);
  writeLib("3.0");
  auto b = jit.compileSource(user, dir.path() + "/user.tile");
  ASSERT_TRUE(b) << b.error();
  EXPECT_EQ(jit.stats().compilations, 2u);
  EXPECT_NE((*a)->key, (*b)->key);
}
