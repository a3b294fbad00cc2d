//===- SourcePath.h - where a GPU test finds its .tile source -*- C++ -*-===//
//
// A test binary holds the build machine's path of its kernel source (a
// compile definition). A relocated bundle (scripts/run-gpu.sh) sets
// TILEC_SOURCE_DIR to its copy of the tree; an explicit variable naming
// the file wins over both.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tilegpu {

/// $envVar if set; else $TILEC_SOURCE_DIR/relPath if that file exists; else
/// `builtIn` (the source tree the test was built from).
inline std::string sourcePath(const char *envVar, const std::string &relPath,
                              const std::string &builtIn) {
  if (const char *e = std::getenv(envVar); e && *e)
    return e;
  if (const char *dir = std::getenv("TILEC_SOURCE_DIR"); dir && *dir) {
    std::string p = std::string(dir) + "/" + relPath;
    std::error_code ec;
    if (std::filesystem::exists(p, ec))
      return p;
  }
  return builtIn;
}

} // namespace tilegpu
