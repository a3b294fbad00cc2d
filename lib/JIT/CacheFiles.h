//===- CacheFiles.h - file-system guards of the JIT disk cache -*- C++ -*-===//
//
// The disk cache trusts what it reads only as far as these checks go:
//   * the directory belongs to the current user and no one else can write it
//     (openCacheDir; a new one is created with mode 0700);
//   * an entry file is read only when it is a regular file owned by the
//     current user and no larger than kMaxCacheFileBytes (readCacheFile: a
//     symlink, FIFO, device or directory in its place is refused at once);
//   * temporary files left by killed writers are removed after an hour
//     (removeStaleTemps);
//   * the total size stays under a limit, oldest entries first
//     (evictOldestEntries).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tile::cachefs {

/// Largest entry file the cache reads (a PTX of flash_fwd is ~1 MiB).
constexpr std::uint64_t kMaxCacheFileBytes = 256ull << 20;
/// Temporary files older than this are a killed writer's leftovers.
constexpr std::int64_t kStaleTempSeconds = 3600;
/// Default of $TILEC_CACHE_MAX_MB.
constexpr std::uint64_t kDefaultCacheMaxMB = 1024;

/// Creates `dir` (parents as needed, the directory itself with mode 0700)
/// and checks that it is a directory owned by the effective user, writable
/// by it, and not writable by group or others. "" when usable, else why not.
std::string openCacheDir(const std::string &dir);

enum class ReadStatus { Ok, Missing, Refused };

/// Reads `path` into `out` when it is a regular file owned by the effective
/// user of at most `maxBytes`; never follows a symlink, never blocks on a
/// FIFO. Missing: no such file. Refused: anything else (`why` says what).
ReadStatus readCacheFile(const std::string &path, std::uint64_t maxBytes,
                         std::string &out, std::string &why);

/// Removes `path` when it exists and is not a regular file (a directory,
/// with its contents; a symlink itself, never its target), so that an
/// atomic rename can put an entry there. True when something was removed.
bool removeIfNotRegular(const std::string &path);

/// Sets the modification time of `path` to now (the entry was used).
void touch(const std::string &path);

/// Deletes `*.tmp.*` files in `dir` older than `maxAgeSeconds`; returns how
/// many.
unsigned removeStaleTemps(const std::string &dir, std::int64_t maxAgeSeconds);

/// $TILEC_CACHE_MAX_MB in bytes (default kDefaultCacheMaxMB; 0: no limit).
/// A value that is not a whole number sets `warning` and gives the default.
std::uint64_t cacheLimitBytes(std::string &warning);

/// While the cache entries in `dir` (KEY.ptx/.cubin/.manifest.json/.meta)
/// total more than `limitBytes`, deletes the entry used least recently (the
/// oldest .meta modification time), never `keepKey`. Returns the keys
/// removed, oldest first.
std::vector<std::string> evictOldestEntries(const std::string &dir,
                                            std::uint64_t limitBytes,
                                            const std::string &keepKey);

} // namespace tile::cachefs
