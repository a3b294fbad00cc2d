//===- CacheTest.cpp - cache keys, the kernel cache, JIT (fake compiler) --===//
//
// Links TileJITCore only: the compiler is a fake that counts its calls, so
// these tests need neither LLVM nor a GPU.
//
//===----------------------------------------------------------------------===//

#include "FakeCompiler.h"
#include "TestUtil.h"
#include "tile/JIT.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace tile;
using tiletest::jitOptions;
using tiletest::FakeCompiler;
using tiletest::contains;
using tiletest::ScopedEnv;
using tiletest::TempDir;

namespace {

CacheKeyInputs baseInputs() {
  CacheKeyInputs in;
  in.source = "kernel k<D = 64>(x: ptr<f32>) {}";
  in.defines = {{"D", "128"}, {"CAUSAL", "true"}};
  in.kernel = "k";
  in.arch = "sm_80";
  in.tilecVersion = "0.1.0";
  in.llvmVersion = "22.1.0";
  in.cudaVersion = "12.4.131";
  return in;
}

const char *kSource = "kernel k<D = 64>(x: ptr<f32>) {}";

} // namespace

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

TEST(CacheKey, SameInputsSameKey) {
  EXPECT_EQ(cacheKey(baseInputs()), cacheKey(baseInputs()));
  EXPECT_EQ(cacheKey(baseInputs()).size(), 16u);
}

TEST(CacheKey, EveryInputChangesTheKey) {
  const std::string base = cacheKey(baseInputs());
  auto differs = [&](auto mutate) {
    CacheKeyInputs in = baseInputs();
    mutate(in);
    return cacheKey(in) != base;
  };
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.source += " "; }));
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.defines["D"] = "64"; }));
  EXPECT_TRUE(
      differs([](CacheKeyInputs &in) { in.defines["CAUSAL"] = "false"; }));
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.defines["T"] = "f16"; }));
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.defines.erase("D"); }));
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.kernel = ""; }));
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.arch = "sm_90a"; }));
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.tilecVersion = "0.1.1"; }));
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.llvmVersion = "22.1.1"; }));
  EXPECT_TRUE(differs([](CacheKeyInputs &in) { in.cudaVersion = "none"; }));
}

TEST(CacheKey, FieldsCannotBleedIntoEachOther) {
  CacheKeyInputs a = baseInputs(), b = baseInputs();
  a.defines = {{"D", "12"}};
  b.defines = {{"D1", "2"}};
  EXPECT_NE(cacheKey(a), cacheKey(b));
  a = b = baseInputs();
  a.tilecVersion = "1";
  a.llvmVersion = "22";
  b.tilecVersion = "12";
  b.llvmVersion = "2";
  EXPECT_NE(cacheKey(a), cacheKey(b));
}

TEST(CacheKey, DefinesOrderDoesNotMatter) {
  CacheKeyInputs a = baseInputs(), b = baseInputs();
  a.defines.clear();
  a.defines["CAUSAL"] = "true";
  a.defines["D"] = "128";
  b.defines.clear();
  b.defines["D"] = "128";
  b.defines["CAUSAL"] = "true";
  EXPECT_EQ(cacheKey(a), cacheKey(b));
}

TEST(CacheKey, DefaultCacheDir) {
  {
    ScopedEnv a("TILEC_CACHE_DIR", "/x/tc");
    EXPECT_EQ(defaultCacheDir(), "/x/tc");
  }
  ScopedEnv a("TILEC_CACHE_DIR", nullptr);
  {
    ScopedEnv b("XDG_CACHE_HOME", "/x/xdg");
    EXPECT_EQ(defaultCacheDir(), "/x/xdg/tilec");
  }
  ScopedEnv b("XDG_CACHE_HOME", nullptr);
  ScopedEnv c("HOME", "/x/home");
  EXPECT_EQ(defaultCacheDir(), "/x/home/.cache/tilec");
}

TEST(CacheKey, PtxasVersion) {
  EXPECT_EQ(ptxasVersion(""), "none");
  EXPECT_EQ(findPtxas("/nonexistent/ptxas"), "");
  std::string ptxas = findPtxas();
  if (!ptxas.empty()) {
    std::string v = ptxasVersion(ptxas);
    EXPECT_NE(v, "none");
    EXPECT_TRUE(v[0] >= '0' && v[0] <= '9') << v;
  }
}

//===----------------------------------------------------------------------===//
// JIT cache with a fake compiler
//===----------------------------------------------------------------------===//

TEST(JITCache, SecondCompileIsAMemoryHit) {
  TempDir dir;
  FakeCompiler compiler;
  JIT jit(jitOptions(dir.path()), compiler.fn());
  auto a = jit.compileSource(kSource, "k.tile", {{"D", "128"}});
  ASSERT_TRUE(a) << a.error();
  auto b = jit.compileSource(kSource, "k.tile", {{"D", "128"}});
  ASSERT_TRUE(b) << b.error();
  EXPECT_EQ(compiler.calls, 1);
  EXPECT_EQ(jit.stats().compilations, 1u);
  EXPECT_EQ(jit.stats().memoryHits, 1u);
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ((*a)->manifest.constants.at("D"), "128");
  EXPECT_EQ(compiler.lastOptions.arch, "sm_80");
  EXPECT_EQ(compiler.lastOptions.defines.at("D"), "128");

  auto c = jit.compileSource(kSource, "k.tile", {{"D", "64"}});
  ASSERT_TRUE(c);
  auto d = jit.compileSource(kSource, "k.tile", {{"D", "64"}}, "", "sm_90a");
  ASSERT_TRUE(d);
  EXPECT_EQ(compiler.calls, 3);
  EXPECT_TRUE(contains((*d)->ptx, "PTX for sm_90a"));
}

TEST(JITCache, FreshJITHitsTheDisk) {
  TempDir dir;
  FakeCompiler compiler;
  std::string key;
  {
    JIT jit(jitOptions(dir.path()), compiler.fn());
    auto a = jit.compileSource(kSource, "k.tile");
    ASSERT_TRUE(a) << a.error();
    key = (*a)->key;
  }
  for (const char *ext : {".ptx", ".manifest.json", ".meta"})
    EXPECT_TRUE(std::filesystem::exists(dir.path() + "/" + key + ext)) << ext;

  JIT again(jitOptions(dir.path()), compiler.fn());
  auto b = again.compileSource(kSource, "k.tile");
  ASSERT_TRUE(b) << b.error();
  EXPECT_EQ(compiler.calls, 1); // nothing compiled by the second JIT
  EXPECT_EQ(again.stats().compilations, 0u);
  EXPECT_EQ(again.stats().diskHits, 1u);
  EXPECT_EQ((*b)->manifest.kernelName, "k");
  EXPECT_TRUE(contains((*b)->ptx, kSource));
  auto c = again.compileSource(kSource, "k.tile");
  ASSERT_TRUE(c);
  EXPECT_EQ(again.stats().memoryHits, 1u);
}

TEST(JITCache, CubinIsStoredAndVerified) {
  TempDir dir;
  FakeCompiler compiler;
  JITOptions o = jitOptions(dir.path());
  o.ptxasPath = "/bin/true"; // "found": the JIT asks for a cubin
  std::string key;
  {
    JIT jit(o, compiler.fn());
    auto a = jit.compileSource(kSource, "k.tile");
    ASSERT_TRUE(a) << a.error();
    EXPECT_EQ(compiler.lastStage, EmitStage::Cubin);
    EXPECT_EQ((*a)->cubin, "FAKECUBIN k");
    key = (*a)->key;
  }
  std::ofstream(dir.path() + "/" + key + ".cubin") << "FAKECUBIN evil";
  JIT again(o, compiler.fn());
  auto b = again.compileSource(kSource, "k.tile");
  ASSERT_TRUE(b);
  EXPECT_EQ(again.stats().diskRejected, 1u);
  EXPECT_EQ(compiler.calls, 2);
  EXPECT_EQ((*b)->cubin, "FAKECUBIN k");
}

TEST(JITCache, CorruptEntriesAreRebuilt) {
  TempDir dir;
  FakeCompiler compiler;
  std::string key;
  {
    JIT jit(jitOptions(dir.path()), compiler.fn());
    auto a = jit.compileSource(kSource, "k.tile");
    ASSERT_TRUE(a);
    key = (*a)->key;
  }
  std::string base = dir.path() + "/" + key;
  struct Damage {
    const char *what;
    std::function<void()> apply;
  } damages[] = {
      {"truncated ptx",
       [&] { std::filesystem::resize_file(base + ".ptx", 5); }},
      {"garbage manifest",
       [&] { std::ofstream(base + ".manifest.json") << "{not json"; }},
      {"missing ptx", [&] { std::filesystem::remove(base + ".ptx"); }},
      {"garbage meta", [&] { std::ofstream(base + ".meta") << "junk"; }},
  };
  int expectedCalls = 1;
  for (const Damage &d : damages) {
    d.apply();
    std::vector<std::string> log;
    JITOptions o = jitOptions(dir.path());
    o.debug = [&](const std::string &m) { log.push_back(m); };
    JIT jit(o, compiler.fn());
    auto b = jit.compileSource(kSource, "k.tile");
    ASSERT_TRUE(b) << d.what << ": " << b.error();
    ++expectedCalls;
    EXPECT_EQ(compiler.calls, expectedCalls) << d.what;
    EXPECT_EQ(jit.stats().diskRejected, 1u) << d.what;
    bool reported = false;
    for (const std::string &m : log)
      reported |= contains(m, "is corrupt") && contains(m, "rebuilding");
    EXPECT_TRUE(reported) << d.what;
    EXPECT_TRUE(contains((*b)->ptx, kSource)) << d.what;

    JIT healed(jitOptions(dir.path()), compiler.fn()); // rebuilt entry is good
    ASSERT_TRUE(healed.compileSource(kSource, "k.tile"));
    EXPECT_EQ(healed.stats().diskHits, 1u) << d.what;
  }

  // A missing meta file is a plain miss (an interrupted write), not corruption.
  std::filesystem::remove(base + ".meta");
  JIT jit(jitOptions(dir.path()), compiler.fn());
  ASSERT_TRUE(jit.compileSource(kSource, "k.tile"));
  EXPECT_EQ(jit.stats().diskRejected, 0u);
  EXPECT_EQ(jit.stats().compilations, 1u);
}

TEST(JITCache, CompileErrorsCarryDiagnosticsAndAreNotCached) {
  TempDir dir;
  FakeCompiler compiler;
  compiler.fail = true;
  JIT jit(jitOptions(dir.path()), compiler.fn());
  auto a = jit.compileSource(kSource, "bad.tile");
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error(), "compiling bad.tile for sm_80 failed:\nbad.tile:1:1: "
                       "error: fake failure");
  compiler.fail = false;
  auto b = jit.compileSource(kSource, "bad.tile");
  ASSERT_TRUE(b) << b.error();
  EXPECT_EQ(compiler.calls, 2);
}

TEST(JITCache, MemoryOnlyAndUnusableDir) {
  FakeCompiler compiler;
  JITOptions o = jitOptions("/proc/definitely/not/writable");
  JIT jit(o, compiler.fn());
  ASSERT_TRUE(jit.compileSource(kSource, "k.tile"));
  ASSERT_TRUE(jit.compileSource(kSource, "k.tile"));
  EXPECT_EQ(compiler.calls, 1);
  EXPECT_EQ(jit.stats().memoryHits, 1u);

  TempDir dir;
  o = jitOptions(dir.path());
  o.diskCache = false;
  JIT mem(o, compiler.fn());
  ASSERT_TRUE(mem.compileSource(kSource, "k.tile"));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(JITCache, CompileFileReadsTheFile) {
  TempDir dir;
  FakeCompiler compiler;
  JIT jit(jitOptions(dir.path()), compiler.fn());
  auto missing = jit.compileFile(dir.path() + "/nope.tile");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(contains(missing.error(), "nope.tile': No such file"))
      << missing.error();
  std::string path = dir.path() + "/k.tile";
  std::ofstream(path) << kSource;
  auto a = jit.compileFile(path);
  ASSERT_TRUE(a) << a.error();
  auto b = jit.compileSource(kSource, "other-name.tile");
  ASSERT_TRUE(b);
  EXPECT_EQ(compiler.calls, 1); // the key is the text, not the file name
}

TEST(JITCache, NoArchAndNoGPUIsAClearError) {
  ScopedEnv env("TILEC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  TempDir dir;
  FakeCompiler compiler;
  JITOptions o = jitOptions(dir.path());
  o.arch.clear();
  JIT jit(o, compiler.fn());
  auto a = jit.compileSource(kSource, "k.tile");
  ASSERT_FALSE(a);
  EXPECT_TRUE(contains(a.error(), "JIT: cannot pick a target arch"))
      << a.error();
  EXPECT_TRUE(contains(a.error(), "no CUDA driver")) << a.error();
  EXPECT_EQ(compiler.calls, 0);
  EXPECT_TRUE(jit.compileSource(kSource, "k.tile", {}, "", "sm_80"));
}
