//===- Support.cpp - names, environment and kernel loading for attention --===//
//
// The small pieces the attention plans share (AttentionImpl.h): element
// type and layout names, environment flags, where the kernel sources are,
// and compiling and loading a kernel through the JIT with a one-line error.
//
//===----------------------------------------------------------------------===//
#include "lib/Attention/AttentionImpl.h"

#include <cstdlib>
#include <sys/stat.h>

using namespace tile;
using namespace tile::attention_detail;

namespace {

bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string envOr(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

} // namespace

/// One line of a (multi-line) error for the log: the first line that says
/// "error:" (a compiler diagnostic), else the first line.
std::string tile::attention_detail::firstLine(const std::string &text) {
  std::size_t at = text.find("error:");
  std::size_t start = at == std::string::npos ? 0 : text.rfind('\n', at);
  start = start == std::string::npos || at == std::string::npos ? 0 : start + 1;
  std::string s = text.substr(start, text.find('\n', start) - start);
  return s.empty() ? text : s;
}

const char *tile::dtypeName(DType t) {
  switch (t) {
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::F32:
    return "f32";
  }
  return "?";
}

const char *tile::layoutName(AttentionLayout l) {
  return l == AttentionLayout::BHSD ? "bhsd" : "bshd";
}

int tile::attention_detail::paddedHeadDim(int d) {
  int p = 16;
  while (p < d)
    p *= 2;
  return p;
}

bool tile::attention_detail::envFlag(const char *name) {
  std::string v = envOr(name);
  return !v.empty() && v != "0" && v != "false";
}

Expected<Kernel> tile::attention_detail::compileAndLoad(
    JIT &jit, const Device &dev, const std::string &path, const Defines &d,
    const std::string &kernel, const std::string &arch, const Schedule &s,
    const std::string &what) {
  auto compiled = jit.compileFile(path, d, kernel, arch, s);
  if (!compiled)
    return Status::error(what + " failed to compile: " +
                         firstLine(compiled.error()));
  auto loaded = jit.load(dev, **compiled);
  if (!loaded)
    return Status::error(what + " failed to load: " +
                         firstLine(loaded.error()));
  return loaded.take();
}

unsigned tile::attention_detail::ceilDiv(std::int64_t a, std::int64_t b) {
  return unsigned((a + b - 1) / b);
}

std::string tile::defaultKernelDir() {
  if (std::string env = envOr("TILEC_KERNEL_DIR"); !env.empty())
    return env;
  if (isFile(TILEC_ATTENTION_INSTALL_DIR "/flash_fwd.tile"))
    return TILEC_ATTENTION_INSTALL_DIR;
  // The GPU bundle (scripts/run-gpu.sh) points TILEC_SOURCE_DIR at itself.
  if (std::string src = envOr("TILEC_SOURCE_DIR"); !src.empty())
    if (isFile(src + "/examples/attention/flash_fwd.tile"))
      return src + "/examples/attention";
  return TILEC_ATTENTION_SOURCE_DIR;
}
