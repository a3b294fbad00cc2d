//===- Cache.cpp - cache keys and the memory + disk kernel cache ----------===//
//
// Post-condition of KernelCache::getOrBuild: the returned entry either was
// just built, or came from memory, or came from a disk entry whose meta file
// names this key and whose ptx / cubin / manifest checksums and manifest
// parse all verified. Anything else on disk is reported (debug) and rebuilt.
// The file-system guards (directory ownership and mode, regular files only,
// size bounds, stale temporaries, the size limit) are in CacheFiles.cpp; a
// directory that fails them is not used, with one warning on stderr.
//
//===----------------------------------------------------------------------===//

#include "tile/JIT.h"

#include "CacheFiles.h"

#include <cstdio>
#include <cstdlib>
#include <set>

namespace tile {

namespace {
constexpr const char *kMetaMagic = "tilec-cache 1";

void appendField(std::string &out, const char *tag, const std::string &v) {
  out += tag;
  out += ':';
  out += std::to_string(v.size());
  out += ':';
  out += v;
  out += '\n';
}

/// Prints a cache warning on stderr once per message and process: a program
/// that opens many JITs on one bad directory is told once.
void warnOnce(const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(message).second)
    std::fprintf(stderr, "tilec-jit: warning: %s\n", message.c_str());
}

const char *const kEntryFiles[] = {".meta", ".ptx", ".cubin",
                                   ".manifest.json"};
} // namespace

std::string cacheKey(const CacheKeyInputs &in) {
  std::string s = "tilec-cache-key-v5\n";
  appendField(s, "source", in.source);
  appendField(s, "imports", in.imports);
  appendField(s, "defines", std::to_string(in.defines.size()));
  for (const auto &[name, value] : in.defines) {
    appendField(s, "D.name", name);
    appendField(s, "D.value", value);
  }
  appendField(s, "kernel", in.kernel);
  appendField(s, "arch", in.arch);
  appendField(s, "schedule", in.schedule);
  appendField(s, "tilec", in.tilecVersion);
  appendField(s, "llvm", in.llvmVersion);
  appendField(s, "cuda", in.cudaVersion);
  return hashHex(s);
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

KernelCache::KernelCache(Options options) : options_(std::move(options)) {
  if (options_.dir.empty())
    options_.dir = defaultCacheDir();
  if (!options_.debug && std::getenv("TILEC_JIT_DEBUG"))
    options_.debug = [](const std::string &m) {
      std::fprintf(stderr, "tilec-jit: %s\n", m.c_str());
    };
  if (options_.disk) {
    std::string why = cachefs::openCacheDir(options_.dir);
    diskUsable_ = why.empty();
    if (!diskUsable_) {
      warnOnce("cache directory '" + options_.dir + "' is not used (" + why +
               "); caching in memory only");
      return;
    }
    if (unsigned n = cachefs::removeStaleTemps(options_.dir,
                                               cachefs::kStaleTempSeconds))
      debug("removed " + std::to_string(n) + " stale temporary file(s) in " +
            options_.dir);
  }
}

void KernelCache::debug(const std::string &message) const {
  if (options_.debug)
    options_.debug(message);
}

std::string KernelCache::entryPath(const std::string &key,
                                   const char *ext) const {
  return options_.dir + "/" + key + ext;
}

JITStats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void KernelCache::clearMemory() {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.clear();
}

namespace {
std::string metaLine(const char *what, const std::string &data) {
  return std::string(what) + " " + hashHex(data) + " " +
         std::to_string(data.size()) + "\n";
}
} // namespace

bool KernelCache::readDisk(const std::string &key, CompiledKernel &out) {
  auto reject = [&](const std::string &why) {
    ++stats_.diskRejected;
    debug("cache entry " + entryPath(key, "") + " is corrupt (" + why +
          "); rebuilding");
    // A directory (or FIFO, symlink) in place of a file would block the
    // rename that stores the rebuilt entry.
    for (const char *ext : kEntryFiles)
      cachefs::removeIfNotRegular(entryPath(key, ext));
    return false;
  };
  std::string error;
  auto read = [&](const char *ext, std::string &into) {
    cachefs::ReadStatus r = cachefs::readCacheFile(
        entryPath(key, ext), cachefs::kMaxCacheFileBytes, into, error);
    if (r == cachefs::ReadStatus::Missing)
      error = "cannot read '" + entryPath(key, ext) + "': no such file";
    return r;
  };

  std::string meta;
  cachefs::ReadStatus metaStatus = read(".meta", meta);
  if (metaStatus == cachefs::ReadStatus::Missing)
    return false; // no entry: a plain miss, not corruption
  if (metaStatus != cachefs::ReadStatus::Ok)
    return reject(error);

  CompiledKernel e;
  e.key = key;
  std::string manifestJSON;
  if (read(".ptx", e.ptx) != cachefs::ReadStatus::Ok)
    return reject(error);
  if (read(".manifest.json", manifestJSON) != cachefs::ReadStatus::Ok)
    return reject(error);
  std::string expected = std::string(kMetaMagic) + "\nkey " + key + "\n" +
                         metaLine("ptx", e.ptx) +
                         metaLine("manifest", manifestJSON);
  bool wantsCubin = meta.find("\ncubin ") != std::string::npos;
  if (wantsCubin) {
    if (read(".cubin", e.cubin) != cachefs::ReadStatus::Ok)
      return reject(error);
    expected += metaLine("cubin", e.cubin);
  }
  if (meta != expected)
    return reject("checksums in " + key + ".meta do not match the files");
  if (!Manifest::fromJSON(manifestJSON, e.manifest, error))
    return reject(error);
  cachefs::touch(entryPath(key, ".meta")); // used now: evicted last
  out = std::move(e);
  return true;
}

void KernelCache::writeDisk(const CompiledKernel &e) {
  std::string manifestJSON = e.manifest.toJSON();
  std::string meta = std::string(kMetaMagic) + "\nkey " + e.key + "\n" +
                     metaLine("ptx", e.ptx) +
                     metaLine("manifest", manifestJSON);
  Status s = writeFileAtomic(entryPath(e.key, ".ptx"), e.ptx);
  if (s.ok() && !e.cubin.empty()) {
    s = writeFileAtomic(entryPath(e.key, ".cubin"), e.cubin);
    meta += metaLine("cubin", e.cubin);
  }
  if (s.ok())
    s = writeFileAtomic(entryPath(e.key, ".manifest.json"), manifestJSON);
  if (s.ok()) // last: the meta file commits the entry
    s = writeFileAtomic(entryPath(e.key, ".meta"), meta);
  if (!s.ok()) {
    // Unwritable after all (read-only file system, quota, permissions).
    diskUsable_ = false;
    warnOnce("cannot store entries in cache directory '" + options_.dir +
             "' (" + s.message() + "); caching in memory only");
    return;
  }
  std::string warning;
  std::uint64_t limit = cachefs::cacheLimitBytes(warning);
  if (!warning.empty())
    warnOnce(warning);
  for (const std::string &key :
       cachefs::evictOldestEntries(options_.dir, limit, e.key))
    debug("evicted cache entry " + entryPath(key, "") + " (over " +
          std::to_string(limit >> 20) + " MiB)");
}

Expected<CompiledKernelRef> KernelCache::getOrBuild(const std::string &key,
                                                    const BuildFn &build) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = memory_.find(key); it != memory_.end()) {
    ++stats_.memoryHits;
    return it->second;
  }
  CompiledKernel entry;
  if (diskUsable_ && readDisk(key, entry)) {
    ++stats_.diskHits;
    debug("disk hit " + entryPath(key, ""));
    auto ref = std::make_shared<const CompiledKernel>(std::move(entry));
    memory_[key] = ref;
    return CompiledKernelRef(ref);
  }

  ++stats_.compilations;
  debug("compiling " + key);
  Expected<CompiledKernel> built = build();
  if (!built)
    return built.status();
  built->key = key;
  if (diskUsable_)
    writeDisk(*built);
  auto ref = std::make_shared<const CompiledKernel>(built.take());
  memory_[key] = ref;
  return CompiledKernelRef(ref);
}

} // namespace tile
