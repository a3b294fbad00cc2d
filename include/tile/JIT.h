//===- JIT.h - compile .tile at run time, cache, launch ------- -*- C++ -*-===//
//
// compile → cache (memory + disk, keyed by source, defines, kernel, arch and
// tool versions) → load → launch with typed argument checks.
//
//   tile::JIT jit;                                  // arch of GPU 0
//   auto dev = tile::Device::open();
//   auto kernel = jit.loadFile(*dev, "flash_fwd.tile", {{"D", "128"}});
//   kernel->launch({grid_x, bh, 1}, {...});
//
// The disk cache lives in $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else
// ~/.cache/tilec. An entry is KEY.ptx, KEY.cubin (when ptxas was found),
// KEY.manifest.json and KEY.meta (checksums, written last); every file is
// written to a temporary name and renamed, and an entry whose checksums or
// manifest do not verify is rebuilt. The directory must belong to the user
// and be writable by no one else (a new one is made with mode 0700), else the
// JIT caches in memory only, with one warning; entries are read only from the
// user's regular files of at most 256 MiB; temporary files older than an hour
// are removed; $TILEC_CACHE_MAX_MB (default 1024, 0: no limit) bounds the
// total, least recently used entries evicted first (lib/JIT/CacheFiles.h).
// Set TILEC_JIT_DEBUG=1 to see cache decisions on stderr.
//
// Library TileJITCore holds all of it and needs no compiler; TileJIT adds
// TileCompiler for the default constructor of JIT, which calls tile::compile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tile/Compiler.h"
#include "tile/Manifest.h"
#include "tile/Runtime.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tile {

using Defines = std::map<std::string, std::string>;

//===----------------------------------------------------------------------===//
// Cache key and toolchain
//===----------------------------------------------------------------------===//

/// Everything that can change the compiled kernel.
struct CacheKeyInputs {
  std::string source; ///< the .tile text
  std::string imports; ///< the files it imports (importedSources)
  Defines defines;    ///< -D NAME=VALUE (a map: always sorted)
  std::string kernel; ///< requested kernel name ("" = the file's only one)
  std::string arch;   ///< sm_80 / sm_90a
  std::string schedule; ///< Schedule::str() of the schedule compiled with
  std::string tilecVersion;
  std::string llvmVersion;
  std::string cudaVersion; ///< ptxas version, "none" without ptxas
};

/// 16 hex digits; equal inputs give equal keys, any changed field (or
/// define) gives a different key. Fields are length-prefixed, so moving text
/// between fields changes the key too.
std::string cacheKey(const CacheKeyInputs &inputs);

/// $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else $HOME/.cache/tilec,
/// else /tmp/tilec-cache-UID.
std::string defaultCacheDir();

/// `hint` when set, else ptxas on $PATH, else /usr/local/cuda/bin/ptxas;
/// "" when none is executable.
std::string findPtxas(const std::string &hint = std::string());

/// "13.0.48" from `ptxas --version`; "none" when `ptxasPath` is empty or
/// does not run. Memoised per path.
std::string ptxasVersion(const std::string &ptxasPath);

/// The tilec and LLVM versions this library was built with.
std::string builtTilecVersion();
std::string builtLLVMVersion();

//===----------------------------------------------------------------------===//
// KernelCache (no compiler)
//===----------------------------------------------------------------------===//

/// A compiled kernel as the cache holds it.
struct CompiledKernel {
  std::string key;
  Manifest manifest;
  std::string ptx;
  std::string cubin; ///< empty when no ptxas
};

/// Counters, so that tests can assert "a second run compiles nothing".
struct JITStats {
  unsigned compilations = 0; ///< builds run (cache misses)
  unsigned memoryHits = 0;
  unsigned diskHits = 0;
  unsigned diskRejected = 0; ///< corrupt / partial entries found and rebuilt
};

using CompiledKernelRef = std::shared_ptr<const CompiledKernel>;

class KernelCache {
public:
  struct Options {
    std::string dir;  ///< empty: defaultCacheDir()
    bool disk = true; ///< false: memory only
    /// Debug messages (cache decisions, rejected entries). Default: stderr
    /// when $TILEC_JIT_DEBUG is set, else dropped.
    std::function<void(const std::string &)> debug;
  };
  using BuildFn = std::function<Expected<CompiledKernel>()>;

  explicit KernelCache(Options options);

  /// The entry for `key`: from memory, else from disk (verified), else
  /// `build()`, which is then stored in both. Build errors are not cached.
  Expected<CompiledKernelRef> getOrBuild(const std::string &key,
                                         const BuildFn &build);

  JITStats stats() const;
  const std::string &dir() const { return options_.dir; }
  /// DIR/KEY + extension (".ptx", ".cubin", ".manifest.json", ".meta").
  std::string entryPath(const std::string &key, const char *ext) const;
  /// Drops the in-memory map (the disk entries stay).
  void clearMemory();

private:
  bool readDisk(const std::string &key, CompiledKernel &out);
  void writeDisk(const CompiledKernel &entry);
  void debug(const std::string &message) const;

  Options options_;
  bool diskUsable_ = false;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, CompiledKernelRef> memory_;
  JITStats stats_;
};

//===----------------------------------------------------------------------===//
// JIT (compiler + cache + runtime)
//===----------------------------------------------------------------------===//

using CompileFn = std::function<CompileResult(
    const std::string &source, const std::string &filename,
    const CompileOptions &options, EmitStage stopAt)>;

struct JITOptions {
  std::string cacheDir; ///< empty: defaultCacheDir()
  bool diskCache = true;
  std::string arch;      ///< empty: the arch of GPU 0 (Device::archString)
  bool cubin = true;     ///< also run ptxas when found (loads faster)
  std::string ptxasPath; ///< empty: findPtxas()
  /// Where `import "path";` looks after the importing file's directory.
  std::vector<std::string> includeDirs;
  CompileFn compiler;    ///< empty: tile::compile (tests inject fakes)
  std::function<void(const std::string &)> debug; ///< see KernelCache
};

class JIT {
public:
  /// Compiles with options.compiler, else tile::compile (inline here so that
  /// only programs that use it need the compiler library linked).
  explicit JIT(JITOptions options = JITOptions())
      : JIT(options,
            options.compiler ? options.compiler : CompileFn(&tile::compile)) {}
  /// Compiles with `compiler` (a fake in tests: no LLVM needed).
  JIT(JITOptions options, CompileFn compiler);

  /// Compiles `source` (called `name` in diagnostics) for `arch` (empty:
  /// JITOptions::arch, else GPU 0's). Errors carry the compiler's
  /// diagnostics.
  Expected<CompiledKernelRef> compileSource(const std::string &source,
                                            const std::string &name,
                                            const Defines &defines = {},
                                            const std::string &kernel = "",
                                            const std::string &arch = "",
                                            const Schedule &schedule = {});
  /// Reads `path` and compiles it as compileSource does.
  Expected<CompiledKernelRef> compileFile(const std::string &path,
                                          const Defines &defines = {},
                                          const std::string &kernel = "",
                                          const std::string &arch = "",
                                          const Schedule &schedule = {});

  /// Loads a compiled kernel on `device` (cubin when it matches, else PTX).
  Expected<Kernel> load(const Device &device, const CompiledKernel &compiled);
  /// compileFile for the device's arch, then load.
  Expected<Kernel> loadFile(const Device &device, const std::string &path,
                            const Defines &defines = {},
                            const std::string &kernel = "",
                            const Schedule &schedule = {});

  /// The key compileSource would use (for tools and tests); `name`, the
  /// source's file name, locates the files it imports.
  Expected<std::string> keyFor(const std::string &source,
                               const Defines &defines,
                               const std::string &kernel,
                               const std::string &arch = "",
                               const Schedule &schedule = {},
                               const std::string &name = "");

  JITStats stats() const { return cache_.stats(); }
  const std::string &cacheDir() const { return cache_.dir(); }
  KernelCache &cache() { return cache_; }

private:
  Expected<std::string> resolveArch(const std::string &arch);

  JITOptions options_;
  std::string ptxas_;
  std::string cudaVersion_;
  std::string deviceArch_; ///< memoised GPU 0 arch
  KernelCache cache_;
};

} // namespace tile
