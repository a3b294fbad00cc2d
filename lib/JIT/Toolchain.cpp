//===- Toolchain.cpp - versions and paths that go into cache keys ---------===//

#include "tile/JIT.h"
#include "tile/Version.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unistd.h>

namespace tile {

std::string builtTilecVersion() { return TILEC_VERSION_STRING; }
std::string builtLLVMVersion() { return TILEC_LLVM_VERSION_STRING; }

std::string defaultCacheDir() {
  if (const char *dir = std::getenv("TILEC_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tilec";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/tilec";
  return "/tmp/tilec-cache-" + std::to_string(::getuid());
}

namespace {
bool isExecutable(const std::string &path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0;
}
} // namespace

std::string findPtxas(const std::string &hint) {
  if (!hint.empty())
    return isExecutable(hint) ? hint : std::string();
  if (const char *path = std::getenv("PATH")) {
    std::string p = path;
    std::size_t start = 0;
    while (start <= p.size()) {
      std::size_t end = p.find(':', start);
      if (end == std::string::npos)
        end = p.size();
      std::string dir = p.substr(start, end - start);
      if (!dir.empty() && isExecutable(dir + "/ptxas"))
        return dir + "/ptxas";
      start = end + 1;
    }
  }
  if (const char *cuda = std::getenv("CUDA_HOME"); cuda && *cuda)
    if (isExecutable(std::string(cuda) + "/bin/ptxas"))
      return std::string(cuda) + "/bin/ptxas";
  if (isExecutable("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda/bin/ptxas";
  return std::string();
}

std::string ptxasVersion(const std::string &ptxasPath) {
  if (ptxasPath.empty())
    return "none";
  static std::mutex mutex;
  static std::map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = memo.find(ptxasPath); it != memo.end())
    return it->second;

  std::string version = "none";
  std::string quoted = "'";
  for (char c : ptxasPath)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  if (FILE *p = ::popen((quoted + " --version 2>/dev/null").c_str(), "r")) {
    std::string out;
    char buf[512];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0)
      out.append(buf, n);
    ::pclose(p);
    // "Cuda compilation tools, release 13.0, V13.0.48"
    std::size_t at = out.find(", V");
    if (at != std::string::npos) {
      std::size_t end = out.find_first_of(" \n\r", at + 3);
      version =
          out.substr(at + 3, end == std::string::npos ? end : end - at - 3);
    } else if (!out.empty()) {
      version = "unknown-" + hashHex(out); // still changes with the tool
    }
  }
  memo[ptxasPath] = version;
  return version;
}

} // namespace tile
