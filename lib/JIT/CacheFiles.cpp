//===- CacheFiles.cpp - file-system guards of the JIT disk cache ----------===//

#include "CacheFiles.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace tile::cachefs {

namespace {
std::string errnoText() { return std::strerror(errno); }

std::string uidText(uid_t uid) { return "uid " + std::to_string(uid); }

std::string modeText(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", unsigned(mode & 07777));
  return buf;
}

/// Closes a file descriptor at scope exit.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

const char *const kEntryExtensions[] = {".manifest.json", ".ptx", ".cubin",
                                        ".meta"};

/// "KEY" for "KEY.ext" with a cache extension, else "".
std::string entryKeyOf(const std::string &name) {
  if (name.find(".tmp.") != std::string::npos)
    return std::string();
  for (const char *ext : kEntryExtensions) {
    std::size_t n = std::strlen(ext);
    if (name.size() > n && name.compare(name.size() - n, n, ext) == 0) {
      std::string key = name.substr(0, name.size() - n);
      return key.find('.') == std::string::npos ? key : std::string();
    }
  }
  return std::string();
}

bool older(const timespec &a, const timespec &b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec;
}
} // namespace

std::string openCacheDir(const std::string &dir) {
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty())
    std::filesystem::create_directories(parent, ec); // mkdir reports failure
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create it: " + errnoText();

  uid_t me = ::geteuid();
  struct stat link;
  if (::lstat(dir.c_str(), &link) != 0)
    return "cannot inspect it: " + errnoText();
  if (S_ISLNK(link.st_mode) && link.st_uid != me)
    return "it is a symbolic link owned by " + uidText(link.st_uid) +
           ", not by the current user (" + uidText(me) + ")";
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return "cannot inspect it: " + errnoText();
  if (!S_ISDIR(st.st_mode))
    return "it is not a directory";
  if (st.st_uid != me)
    return "it is owned by " + uidText(st.st_uid) +
           ", not by the current user (" + uidText(me) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "it is writable by group or others (mode " + modeText(st.st_mode) +
           "; 'chmod go-w' makes it usable)";

  // Writable? Root passes access(2) checks, so try it: a name of its own
  // per call, since caches of one process may open the directory at once
  // on several threads (a shared name fails with EEXIST).
  static std::atomic<unsigned> probes{0};
  std::string probe = dir + "/.probe.tmp." + std::to_string(::getpid()) +
                      "." + std::to_string(probes++);
  int fd = ::open(probe.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return "cannot write in it: " + errnoText();
  ::close(fd);
  ::unlink(probe.c_str());
  return std::string();
}

ReadStatus readCacheFile(const std::string &path, std::uint64_t maxBytes,
                         std::string &out, std::string &why) {
  // O_NONBLOCK: opening a FIFO returns at once; O_NOFOLLOW: a symlink fails.
  Fd f{::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno == ENOENT)
      return ReadStatus::Missing;
    why = errno == ELOOP ? "'" + path + "' is a symbolic link"
                         : "cannot read '" + path + "': " + errnoText();
    return ReadStatus::Refused;
  }
  struct stat st;
  if (::fstat(f.fd, &st) != 0) {
    why = "cannot inspect '" + path + "': " + errnoText();
    return ReadStatus::Refused;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "'" + path + "' is not a regular file";
    return ReadStatus::Refused;
  }
  if (st.st_uid != ::geteuid()) {
    why = "'" + path + "' is owned by " + uidText(st.st_uid) +
          ", not by the current user";
    return ReadStatus::Refused;
  }
  auto tooLarge = [&] {
    why = "'" + path + "' is larger than " + std::to_string(maxBytes) +
          " bytes";
    return ReadStatus::Refused;
  };
  if (std::uint64_t(st.st_size) > maxBytes)
    return tooLarge();

  out.clear();
  out.reserve(std::size_t(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(f.fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      why = "error reading '" + path + "': " + errnoText();
      return ReadStatus::Refused;
    }
    if (n == 0)
      return ReadStatus::Ok;
    if (out.size() + std::size_t(n) > maxBytes) // grew since fstat
      return tooLarge();
    out.append(buf, std::size_t(n));
  }
}

bool removeIfNotRegular(const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode))
    return false;
  std::error_code ec;
  return std::filesystem::remove_all(path, ec) > 0; // never follows links
}

void touch(const std::string &path) {
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

unsigned removeStaleTemps(const std::string &dir, std::int64_t maxAgeSeconds) {
  std::time_t cutoff = std::time(nullptr) - std::time_t(maxAgeSeconds);
  unsigned removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.find(".tmp.") == std::string::npos)
      continue;
    struct stat st;
    std::string path = it->path().string();
    if (::lstat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode))
      continue;
    if (st.st_mtime < cutoff && ::unlink(path.c_str()) == 0)
      ++removed;
  }
  return removed;
}

std::uint64_t cacheLimitBytes(std::string &warning) {
  const char *env = std::getenv("TILEC_CACHE_MAX_MB");
  if (!env || !*env)
    return kDefaultCacheMaxMB << 20;
  char *end = nullptr;
  errno = 0;
  unsigned long long mb = std::strtoull(env, &end, 10);
  if (errno != 0 || *end != '\0' || env[0] == '-' || mb > (1ull << 40)) {
    warning = "TILEC_CACHE_MAX_MB='" + std::string(env) +
              "' is not a number of MiB; using " +
              std::to_string(kDefaultCacheMaxMB);
    return kDefaultCacheMaxMB << 20;
  }
  return std::uint64_t(mb) << 20;
}

std::vector<std::string> evictOldestEntries(const std::string &dir,
                                            std::uint64_t limitBytes,
                                            const std::string &keepKey) {
  struct Entry {
    std::uint64_t bytes = 0;
    timespec used{0, 0}; ///< the .meta's mtime, else the newest file's
    bool hasMeta = false;
    std::vector<std::string> files;
  };
  std::map<std::string, Entry> entries;
  std::uint64_t total = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::string key = entryKeyOf(name);
    struct stat st;
    std::string path = it->path().string();
    if (key.empty() || ::lstat(path.c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    Entry &e = entries[key];
    e.bytes += std::uint64_t(st.st_size);
    total += std::uint64_t(st.st_size);
    bool isMeta = name.size() > 5 && name.compare(name.size() - 5, 5, ".meta") == 0;
    if (isMeta || (!e.hasMeta && older(e.used, st.st_mtim)))
      e.used = st.st_mtim;
    e.hasMeta |= isMeta;
    // The meta file first: once it is gone the entry is a plain miss.
    if (isMeta)
      e.files.insert(e.files.begin(), path);
    else
      e.files.push_back(path);
  }

  std::vector<std::string> removed;
  if (limitBytes == 0 || total <= limitBytes)
    return removed;
  std::vector<std::pair<std::string, const Entry *>> byAge;
  for (const auto &[key, e] : entries)
    if (key != keepKey)
      byAge.emplace_back(key, &e);
  std::stable_sort(byAge.begin(), byAge.end(), [](const auto &a, const auto &b) {
    return older(a.second->used, b.second->used);
  });
  for (const auto &[key, e] : byAge) {
    if (total <= limitBytes)
      break;
    for (const std::string &f : e->files)
      ::unlink(f.c_str());
    total -= std::min(total, e->bytes);
    removed.push_back(key);
  }
  return removed;
}

} // namespace tile::cachefs
