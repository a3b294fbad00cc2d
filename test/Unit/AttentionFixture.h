//===- AttentionFixture.h - fake compiler and driver for tile::Attention -===//
//
// Shared by AttentionTest.cpp, AttentionVariantTest.cpp and
// DecodePlanTest.cpp: a stand-in for
// tile::compile that writes a manifest per kernel name, and a fixture with
// the fake driver, a JIT on that compiler, and (fake-driver) buffers for a
// plan's tensors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Attention.h"
#include "FakeCuda.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

namespace tiletest {
using namespace tile;

inline std::string kernelDir() {
  if (const char *src = std::getenv("TILEC_SOURCE_DIR"); src && *src)
    return std::string(src) + "/examples/attention";
  return TILEC_ATTENTION_DIR;
}

/// tile::compile's stand-in: a manifest with the parameters of the kernel
/// the source (or options.kernel) names; fails for the names in `failing`.
struct FakeAttentionCompiler {
  std::set<std::string> failing;
  std::vector<CompileOptions> calls;
  std::vector<std::string> sources, filenames;

  CompileFn fn() {
    return [this](const std::string &source, const std::string &filename,
                  const CompileOptions &o, EmitStage) {
      calls.push_back(o);
      sources.push_back(source);
      filenames.push_back(filename);
      std::string name = o.kernel;
      if (name.empty()) {
        std::size_t at = source.find("\nkernel ");
        at = at == std::string::npos ? 0 : at + 8;
        name = source.substr(at, source.find_first_of("<( ", at) - at);
      }
      CompileResult r;
      if (failing.count(name)) {
        r.diagnostics = filename + ":1:1: error: fake failure of " + name;
        return r;
      }
      std::string t = o.defines.count("T") ? o.defines.at("T") : "bf16";
      std::string pt = "ptr<" + t + ">";
      Manifest &m = r.manifest;
      if (name == "nonfinite_count")
        m.params = {{"x", pt}, {"rows", "i32"}, {"d", "i32"},
                    {"partial", "ptr<i32>"}};
      else if (name == "nonfinite_reduce")
        m.params = {{"partial", "ptr<i32>"}, {"programs", "i32"},
                    {"out", "ptr<i32>"}};
      else if (name == "decode")
        m.params = {{"q", pt},          {"k_cache", pt},
                    {"v_cache", pt},    {"block_table", "ptr<i32>"},
                    {"seq_lens", "ptr<i32>"}, {"o", pt},
                    {"lse", "ptr<f32>"}, {"o_part", "ptr<f32>"},
                    {"lse_part", "ptr<f32>"}, {"num_kv_heads", "i32"},
                    {"max_blocks", "i32"}, {"num_splits", "i32"},
                    {"sm_scale", "f32"}};
      else if (name == "decode_combine")
        m.params = {{"o_part", "ptr<f32>"}, {"lse_part", "ptr<f32>"},
                    {"o", pt},             {"lse", "ptr<f32>"},
                    {"rows", "i32"},       {"num_splits", "i32"}};
      else if (name == "flex_fwd" || name == "attention_variant")
        m.params = {{"q", pt},          {"k", pt},
                    {"v", pt},          {"o", pt},
                    {"lse", "ptr<f32>"}, {"seqlen_q", "i32"},
                    {"seqlen_k", "i32"}, {"heads", "i32"},
                    {"heads_kv", "i32"}, {"q_row", "i32"},
                    {"q_head", "i32"},   {"q_batch", "i32"},
                    {"k_row", "i32"},    {"k_head", "i32"},
                    {"k_batch", "i32"},  {"sm_scale", "f32"},
                    {"sinks", "ptr<f32>"}, {"aux_f", "ptr<f32>"},
                    {"aux_i", "ptr<i32>"}, {"aux_n", "i32"}};
      else {
        m.params = {{"q", pt},      {"k", pt},
                    {"v", pt},      {"o", pt},
                    {"lse", "ptr<f32>"}, {"seqlen", "i32"}};
        if (name != "flash_fwd")
          m.params.push_back({"heads", "i32"});
        m.params.push_back({"sm_scale", "f32"});
      }
      m.kernelName = name;
      m.constants = o.defines;
      if (!m.constants.count("BM"))
        m.constants["BM"] = "64";
      m.blockSize = 128;
      m.arch = o.arch;
      m.sourceHash = hashHex(source);
      r.ok = true;
      r.ptx = "// fake\n.visible .entry " + name + "(\n)\n{\n ret;\n}\n";
      return r;
    };
  }
};

/// The fake driver in `mode` (nullptr: cc 9.0) and a JIT with the fake
/// compiler, for one test.
struct AttentionFixture {
  ScopedEnv driver{"TILEC_CUDA_DRIVER", fakePath()};
  ScopedEnv mode;
  ScopedEnv noGuard{"TILEC_ATTENTION_GUARDRAIL", nullptr};
  ScopedEnv noProfile{"TILEC_PROFILE", nullptr};
  FakeAttentionCompiler compiler;
  std::vector<std::string> lines;
  std::vector<DeviceBuffer> buffers;

  explicit AttentionFixture(const char *m = nullptr) : mode("FAKECUDA_MODE", m) {}

  AttentionOptions options(FallbackPolicy policy = FallbackPolicy::Fallback) {
    AttentionOptions o;
    o.kernelDir = kernelDir();
    o.policy = policy;
    o.nvtx = false;
    o.log = [this](const std::string &l) { lines.push_back(l); };
    JITOptions j;
    j.diskCache = false;
    j.cubin = false;
    j.debug = [](const std::string &) {};
    o.jit = std::make_shared<JIT>(j, compiler.fn());
    return o;
  }

  /// Params with real (fake-driver) buffers for q, k, v, o and lse.
  AttentionParams params(const Device &dev, int d, int seqlen = 1000,
                         AttentionLayout layout = AttentionLayout::BHSD) {
    AttentionParams p;
    p.batch = 2;
    p.heads = 3;
    p.seqlen = seqlen;
    p.headDim = d;
    p.layout = layout;
    std::size_t n = std::size_t(p.batch) * p.heads * seqlen;
    DevicePtr *ptrs[] = {&p.q, &p.k, &p.v, &p.o, &p.lse};
    for (int i = 0; i < 5; ++i) {
      auto b = DeviceBuffer::allocate(dev, i == 4 ? n * 4 : n * d * 2);
      EXPECT_TRUE(b.ok()) << b.error();
      *ptrs[i] = b->ptr();
      buffers.push_back(b.take());
    }
    return p;
  }
};

inline Device openDevice() {
  auto dev = Device::open();
  EXPECT_TRUE(dev.ok()) << dev.error();
  return dev.take();
}

} // namespace tiletest
