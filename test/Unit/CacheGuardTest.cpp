//===- CacheGuardTest.cpp - the disk cache refuses what it cannot trust ---===//
//
// Directories another user owns or can write, entries that are not the
// user's regular files (symlink to /dev/zero, FIFO, directory, oversized),
// stale temporary files, the size limit, an unwritable directory. Each case
// must end in a compile from source (or a rebuilt entry), never a hang, and
// the JIT keeps working from memory.
//
//===----------------------------------------------------------------------===//

#include "FakeCompiler.h"
#include "TestUtil.h"
#include "tile/JIT.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace tile;
using tiletest::jitOptions;
using tiletest::contains;
using tiletest::FakeCompiler;
using tiletest::ScopedEnv;
using tiletest::TempDir;
namespace fs = std::filesystem;

namespace {

const char *kSource = "kernel k<D = 64>(x: ptr<f32>) {}";
constexpr uid_t kOtherUid = 65534; // nobody

/// Stores the entry of kSource in `dir`; returns DIR/KEY.
std::string storeEntry(const std::string &dir, FakeCompiler &compiler) {
  JIT jit(jitOptions(dir), compiler.fn());
  auto a = jit.compileSource(kSource, "k.tile");
  EXPECT_TRUE(a) << a.error();
  EXPECT_EQ(jit.stats().compilations, 1u);
  return a ? dir + "/" + (*a)->key : std::string();
}

/// Kills the test (SIGALRM) instead of letting a hang pass unnoticed.
struct Watchdog {
  explicit Watchdog(unsigned seconds) { ::alarm(seconds); }
  ~Watchdog() { ::alarm(0); }
};

/// Compiles kSource with a fresh JIT on `dir`, expecting the damaged entry
/// to be refused for `reason` (unread: not as a checksum mismatch) and
/// rebuilt, and the rebuilt entry to be a disk hit.
void expectRefusedAndHealed(const std::string &dir, FakeCompiler &compiler,
                            const char *what, const char *reason) {
  Watchdog dog(20);
  std::vector<std::string> log;
  JITOptions o = jitOptions(dir);
  o.debug = [&](const std::string &m) { log.push_back(m); };
  JIT jit(o, compiler.fn());
  auto b = jit.compileSource(kSource, "k.tile");
  ASSERT_TRUE(b) << what << ": " << b.error();
  EXPECT_EQ(jit.stats().diskHits, 0u) << what;
  EXPECT_EQ(jit.stats().diskRejected, 1u) << what;
  EXPECT_EQ(jit.stats().compilations, 1u) << what;
  EXPECT_TRUE(contains((*b)->ptx, kSource)) << what;
  bool reported = false;
  for (const std::string &m : log)
    reported |= contains(m, "is corrupt") && contains(m, reason);
  EXPECT_TRUE(reported) << what << ": no message says '" << reason << "'";

  JIT healed(jitOptions(dir), compiler.fn());
  ASSERT_TRUE(healed.compileSource(kSource, "k.tile")) << what;
  EXPECT_EQ(healed.stats().diskHits, 1u) << what;
}

bool isRoot() { return ::geteuid() == 0; }

} // namespace

//===----------------------------------------------------------------------===//
// The directory
//===----------------------------------------------------------------------===//

TEST(CacheGuard, NewDirectoryIsPrivateWhateverTheUmask) {
  TempDir tmp;
  std::string dir = tmp.path() + "/a/tilec";
  ScopedEnv env("TILEC_CACHE_DIR", dir.c_str());
  mode_t old = ::umask(0);
  FakeCompiler compiler;
  JITOptions o = jitOptions("");
  JIT jit(o, compiler.fn());
  ::umask(old);
  EXPECT_EQ(jit.cacheDir(), dir);
  struct stat st;
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_TRUE(jit.compileSource(kSource, "k.tile"));
  EXPECT_FALSE(fs::is_empty(dir)); // and it is used
}

TEST(CacheGuard, DefaultDirWithoutHomeIsPrivate) {
  ScopedEnv a("TILEC_CACHE_DIR", nullptr), b("XDG_CACHE_HOME", nullptr),
      c("HOME", nullptr);
  std::string dir = defaultCacheDir();
  EXPECT_EQ(dir, "/tmp/tilec-cache-" + std::to_string(::getuid()));
  bool existed = fs::exists(fs::symlink_status(dir));
  FakeCompiler compiler;
  JITOptions o = jitOptions("");
  o.diskCache = true;
  testing::internal::CaptureStderr();
  JIT jit(o, compiler.fn());
  std::string err = testing::internal::GetCapturedStderr();
  struct stat st;
  ASSERT_EQ(::lstat(dir.c_str(), &st), 0);
  ASSERT_TRUE(S_ISDIR(st.st_mode));
  if (!existed) {
    EXPECT_EQ(st.st_mode & 07777, 0700u);
  }
  if (st.st_uid == ::geteuid() && !(st.st_mode & 022)) {
    EXPECT_EQ(err, ""); // ours: used silently
  } else {
    EXPECT_TRUE(contains(err, "caching in memory only")) << err;
  }
}

TEST(CacheGuard, GroupWritableDirectoryIsBypassedWithOneWarning) {
  TempDir tmp;
  FakeCompiler compiler;
  storeEntry(tmp.path(), compiler); // a valid entry, then anyone may write
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0777), 0);

  testing::internal::CaptureStderr();
  JIT first(jitOptions(tmp.path()), compiler.fn());
  JIT second(jitOptions(tmp.path()), compiler.fn());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err, "tilec-jit: warning: cache directory '" +
                                tmp.path() + "' is not used"))
      << err;
  EXPECT_TRUE(contains(err, "writable by group or others (mode 0777")) << err;
  EXPECT_TRUE(contains(err, "caching in memory only")) << err;
  EXPECT_EQ(err.find("warning"), err.rfind("warning")) << "one warning: " << err;

  ASSERT_TRUE(first.compileSource(kSource, "k.tile"));
  ASSERT_TRUE(first.compileSource(kSource, "k.tile"));
  EXPECT_EQ(first.stats().diskHits, 0u); // the planted entry is not read
  EXPECT_EQ(first.stats().compilations, 1u);
  EXPECT_EQ(first.stats().memoryHits, 1u);
}

TEST(CacheGuard, DirectoryOwnedByAnotherUserIsBypassed) {
  if (!isRoot())
    GTEST_SKIP() << "needs root to chown";
  TempDir tmp;
  FakeCompiler compiler;
  std::string base = storeEntry(tmp.path(), compiler);
  // As if another user had made the directory and planted the entry.
  for (const auto &f : fs::directory_iterator(tmp.path()))
    ASSERT_EQ(::chown(f.path().c_str(), kOtherUid, kOtherUid), 0);
  ASSERT_EQ(::chown(tmp.path().c_str(), kOtherUid, kOtherUid), 0);
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0700), 0);

  testing::internal::CaptureStderr();
  JIT jit(jitOptions(tmp.path()), compiler.fn());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err, "owned by uid 65534, not by the current user"))
      << err;
  ASSERT_TRUE(jit.compileSource(kSource, "k.tile"));
  EXPECT_EQ(jit.stats().diskHits, 0u);
  EXPECT_EQ(jit.stats().compilations, 1u);
  struct stat st;
  ASSERT_EQ(::stat((base + ".meta").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kOtherUid); // not overwritten either
}

TEST(CacheGuard, SymlinkedDirectoryOfAnotherUserIsBypassed) {
  if (!isRoot())
    GTEST_SKIP() << "needs root to chown";
  TempDir tmp;
  std::string real = tmp.path() + "/real", link = tmp.path() + "/link";
  ASSERT_EQ(::mkdir(real.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  ASSERT_EQ(::lchown(link.c_str(), kOtherUid, kOtherUid), 0);
  FakeCompiler compiler;
  testing::internal::CaptureStderr();
  JIT jit(jitOptions(link), compiler.fn());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err, "symbolic link owned by uid 65534")) << err;
  ASSERT_TRUE(jit.compileSource(kSource, "k.tile"));
  EXPECT_TRUE(fs::is_empty(real));
}

TEST(CacheGuard, JITsOpeningOneDirectoryAtOnceAllUseIt) {
  // Threads of one process construct their JITs on one directory at the
  // same moment: each must find it writable (its entry reaches the disk),
  // none may fall back to memory over another's write probe.
  TempDir tmp;
  constexpr int kThreads = 8, kRounds = 40;
  testing::internal::CaptureStderr();
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    std::vector<FakeCompiler> compilers(kThreads);
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        ready++;
        while (ready.load() < kThreads) {
        }
        JIT jit(jitOptions(tmp.path()), compilers[t].fn());
        std::string src = "kernel k<D = " + std::to_string(round * kThreads + t) +
                          ">(x: ptr<f32>) {}";
        EXPECT_TRUE(jit.compileSource(src, "k.tile"));
      });
    for (std::thread &th : threads)
      th.join();
  }
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(contains(err, "is not used")) << err;
  int ptx = 0;
  for (const fs::directory_entry &e : fs::directory_iterator(tmp.path()))
    ptx += e.path().extension() == ".ptx";
  EXPECT_EQ(ptx, kThreads * kRounds);
}

TEST(CacheGuard, UnwritableDirectoryDegradesToMemoryWithOneWarning) {
  FakeCompiler compiler;
  const std::string dir = "/proc/tilec-cache-guard-test";
  testing::internal::CaptureStderr();
  JIT jit(jitOptions(dir), compiler.fn());
  JIT again(jitOptions(dir), compiler.fn());
  ASSERT_TRUE(jit.compileSource(kSource, "k.tile"));
  ASSERT_TRUE(jit.compileSource(kSource, "k.tile"));
  ASSERT_TRUE(again.compileSource(kSource, "k.tile"));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err, "cache directory '" + dir + "' is not used (cannot "
                                                         "create it"))
      << err;
  EXPECT_EQ(err.find("warning"), err.rfind("warning")) << "one warning: " << err;
  EXPECT_EQ(compiler.calls, 2); // one per JIT: memory caches are per JIT
  EXPECT_EQ(jit.stats().memoryHits, 1u);
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

TEST(CacheGuard, EntryOwnedByAnotherUserIsRebuilt) {
  if (!isRoot())
    GTEST_SKIP() << "needs root to chown";
  TempDir tmp;
  FakeCompiler compiler;
  std::string base = storeEntry(tmp.path(), compiler);
  ASSERT_EQ(::chown((base + ".ptx").c_str(), kOtherUid, kOtherUid), 0);
  expectRefusedAndHealed(tmp.path(), compiler, "ptx of uid 65534",
                         "is owned by uid 65534, not by the current user");
}

TEST(CacheGuard, SymlinkToDevZeroIsRefused) {
  for (const char *ext : {".ptx", ".meta", ".manifest.json"}) {
    TempDir tmp;
    FakeCompiler compiler;
    std::string path = storeEntry(tmp.path(), compiler) + ext;
    fs::remove(path);
    ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
    expectRefusedAndHealed(tmp.path(), compiler, ext, "is a symbolic link");
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path))) << ext;
  }
}

TEST(CacheGuard, FifoIsRefusedWithoutHanging) {
  for (const char *ext : {".ptx", ".meta", ".manifest.json"}) {
    TempDir tmp;
    FakeCompiler compiler;
    std::string path = storeEntry(tmp.path(), compiler) + ext;
    fs::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    expectRefusedAndHealed(tmp.path(), compiler, ext, "not a regular file");
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path))) << ext;
  }
}

TEST(CacheGuard, DirectoryInPlaceOfAnEntryIsReplaced) {
  for (const char *ext : {".ptx", ".meta"}) {
    TempDir tmp;
    FakeCompiler compiler;
    std::string path = storeEntry(tmp.path(), compiler) + ext;
    fs::remove(path);
    fs::create_directories(path + "/inner");
    std::ofstream(path + "/inner/file") << "x";
    expectRefusedAndHealed(tmp.path(), compiler, ext, "not a regular file");
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path))) << ext;
  }
}

TEST(CacheGuard, OversizedEntryIsRefusedUnread) {
  TempDir tmp;
  FakeCompiler compiler;
  std::string path = storeEntry(tmp.path(), compiler) + ".ptx";
  fs::resize_file(path, 300ull << 20); // sparse: costs no disk
  expectRefusedAndHealed(tmp.path(), compiler, "300 MiB ptx",
                         "is larger than 268435456 bytes");
}

//===----------------------------------------------------------------------===//
// Housekeeping
//===----------------------------------------------------------------------===//

namespace {
void setAge(const std::string &path, long seconds) {
  struct timespec t[2];
  t[0].tv_sec = t[1].tv_sec = ::time(nullptr) - seconds;
  t[0].tv_nsec = t[1].tv_nsec = 0;
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), t, 0), 0) << path;
}
} // namespace

TEST(CacheGuard, StaleTemporaryFilesAreRemovedOnOpen) {
  TempDir tmp;
  std::string stale = tmp.path() + "/0123456789abcdef.ptx.tmp.4242.0";
  std::string fresh = tmp.path() + "/0123456789abcdef.ptx.tmp.4243.0";
  std::string other = tmp.path() + "/notes.txt";
  for (const std::string &p : {stale, fresh, other})
    std::ofstream(p) << "partial";
  setAge(stale, 2 * 3600);
  setAge(other, 2 * 3600);
  setAge(fresh, 60);
  FakeCompiler compiler;
  JIT jit(jitOptions(tmp.path()), compiler.fn());
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh)); // may be a live writer's
  EXPECT_TRUE(fs::exists(other)); // not ours to remove
}

TEST(CacheGuard, SizeLimitEvictsLeastRecentlyUsedEntries) {
  TempDir tmp;
  ScopedEnv limit("TILEC_CACHE_MAX_MB", "1");
  FakeCompiler compiler;
  auto source = [](char c) { // ~400 KiB of PTX each
    return std::string(kSource) + "\n//" + std::string(400 << 10, c);
  };
  std::string keyA, keyB, keyC;
  {
    JIT jit(jitOptions(tmp.path()), compiler.fn());
    keyA = (*jit.compileSource(source('a'), "a.tile"))->key;
    keyB = (*jit.compileSource(source('b'), "b.tile"))->key;
  }
  auto exists = [&](const std::string &key) {
    return fs::exists(tmp.path() + "/" + key + ".meta") ||
           fs::exists(tmp.path() + "/" + key + ".ptx");
  };
  ASSERT_TRUE(exists(keyA) && exists(keyB)); // 800 KiB: under the limit
  setAge(tmp.path() + "/" + keyA + ".meta", 200);
  setAge(tmp.path() + "/" + keyB + ".meta", 100);

  JIT jit(jitOptions(tmp.path()), compiler.fn());
  ASSERT_TRUE(jit.compileSource(source('a'), "a.tile")); // A used: now newest
  EXPECT_EQ(jit.stats().diskHits, 1u);
  keyC = (*jit.compileSource(source('c'), "c.tile"))->key;
  EXPECT_TRUE(exists(keyA));
  EXPECT_FALSE(exists(keyB)); // least recently used
  EXPECT_TRUE(exists(keyC));  // just stored: never its own victim
  std::uintmax_t total = 0;
  for (const auto &f : fs::directory_iterator(tmp.path()))
    total += f.file_size();
  EXPECT_LE(total, 1u << 20);
}

TEST(CacheGuard, NoLimitAndBadLimit) {
  TempDir tmp;
  FakeCompiler compiler;
  auto source = [](int i) {
    return std::string(kSource) + "\n//" + std::string(300 << 10, 'a' + i);
  };
  {
    ScopedEnv limit("TILEC_CACHE_MAX_MB", "0"); // no limit
    JIT jit(jitOptions(tmp.path()), compiler.fn());
    for (int i = 0; i < 5; ++i)
      ASSERT_TRUE(jit.compileSource(source(i), "k.tile"));
  }
  std::size_t metas = 0;
  for (const auto &f : fs::directory_iterator(tmp.path()))
    metas += f.path().extension() == ".meta";
  EXPECT_EQ(metas, 5u);

  ScopedEnv limit("TILEC_CACHE_MAX_MB", "lots");
  testing::internal::CaptureStderr();
  JIT jit(jitOptions(tmp.path()), compiler.fn());
  ASSERT_TRUE(jit.compileSource(source(9), "k.tile"));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err, "TILEC_CACHE_MAX_MB='lots' is not a number"))
      << err;
}
