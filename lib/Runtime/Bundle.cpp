//===- Bundle.cpp - AOT bundles (PREFIX.manifest.json/.ptx/.cubin), files -===//

#include "tile/Runtime.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace tile {

bool readFile(const std::string &path, std::string &out, std::string &error) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  out.clear();
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    out.append(buf, n);
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) {
    error = "error reading '" + path + "'";
    return false;
  }
  return true;
}

Status writeFileAtomic(const std::string &path, const std::string &data) {
  static std::atomic<unsigned> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(counter++);
  FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return Status::error("cannot write '" + tmp + "': " + std::strerror(errno));
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  ok = (std::fflush(f) == 0) && ok;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    int err = errno;
    std::remove(tmp.c_str());
    return Status::error("cannot write '" + tmp + "': " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    return Status::error("cannot rename '" + tmp + "' to '" + path +
                         "': " + std::strerror(err));
  }
  return Status();
}

Status writeBundle(const std::string &prefix, const Manifest &manifest,
                   const std::string &ptx, const std::string &cubin) {
  if (Status s = writeFileAtomic(prefix + ".ptx", ptx); !s.ok())
    return s;
  if (!cubin.empty())
    if (Status s = writeFileAtomic(prefix + ".cubin", cubin); !s.ok())
      return s;
  return writeFileAtomic(prefix + ".manifest.json", manifest.toJSON());
}

Expected<Kernel> loadBundle(const Device &device, const std::string &prefix) {
  std::string json, error;
  std::string manifestPath = prefix + ".manifest.json";
  if (!readFile(manifestPath, json, error))
    return Status::error("loading bundle '" + prefix + "': " + error);
  Manifest manifest;
  if (!Manifest::fromJSON(json, manifest, error))
    return Status::error("loading bundle '" + prefix + "': " + manifestPath +
                         ": " + error);

  // The PTX is read too when the cubin is used: Kernel::load falls back to
  // it if the driver rejects the cubin.
  std::string cubin, ptx;
  struct stat st;
  bool haveCubin = ::stat((prefix + ".cubin").c_str(), &st) == 0;
  bool havePTX = ::stat((prefix + ".ptx").c_str(), &st) == 0;
  bool useCubin = haveCubin && manifest.arch == device.archString();
  if (useCubin && !readFile(prefix + ".cubin", cubin, error))
    return Status::error("loading bundle '" + prefix + "': " + error);
  if ((havePTX || !useCubin) && !readFile(prefix + ".ptx", ptx, error)) {
    std::string why = haveCubin
                          ? " (the cubin is for " + manifest.arch +
                                ", the device is " + device.archString() + ")"
                          : "";
    return Status::error("loading bundle '" + prefix + "': " + error + why);
  }
  Expected<Kernel> k = Kernel::load(device, manifest, ptx, cubin);
  if (!k)
    return Status::error("loading bundle '" + prefix + "': " + k.error());
  return k;
}

} // namespace tile
