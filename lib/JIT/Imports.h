//===- Imports.h - the files a .tile source imports, for cache keys -*- C++ -*-===//
//
// A kernel's cache key must change when a file it imports changes. The JIT
// links no frontend, so it finds `import "path";` lines by a plain scan
// (an import inside a comment only makes the key more specific) and
// resolves them as the frontend does: beside the importing file, then in
// each include directory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace tile {

/// Each file `source` (named `name`) imports, transitively, once: its path
/// and contents, length-prefixed, in the order found. A file that cannot be
/// found or read adds its name only (the compile then reports it).
std::string importedSources(const std::string &source, const std::string &name,
                            const std::vector<std::string> &includeDirs);

} // namespace tile
