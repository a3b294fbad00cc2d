//===- Schedule.cpp - the schedule's fields, checks and text form ---------===//
//
// One table lists every field with its name, kind and range; validate(),
// str(), set() and the help all walk it, so a new field is one row.
//
//===----------------------------------------------------------------------===//
#include "tile/Schedule.h"

#include <cstdlib>
#include <string>

using namespace tile;

namespace {
struct Field {
  const char *name;
  bool Schedule::*flag;   ///< a boolean field, or
  int64_t Schedule::*num; ///< an integer field in [lo, hi]
  int64_t lo, hi;
  bool powerOfTwo;
};

const Field kFields[] = {
    {"num_warps", nullptr, &Schedule::numWarps, 1, 32, true},
    {"min_blocks", nullptr, &Schedule::minBlocks, 0, 32, false},
    {"num_stages", nullptr, &Schedule::numStages, 2, 4, false},
    {"tma", &Schedule::tma, nullptr, 0, 1, false},
    {"tma_a", &Schedule::tmaA, nullptr, 0, 1, false},
    {"tma_store", &Schedule::tmaStore, nullptr, 0, 1, false},
    {"pingpong", &Schedule::pingpong, nullptr, 0, 1, false},
    {"producer", &Schedule::producer, nullptr, 0, 1, false},
    {"persistent", &Schedule::persistent, nullptr, 0, 1, false},
    {"cta_programs", nullptr, &Schedule::ctaPrograms, 1, 8, false},
    {"l2_group", nullptr, &Schedule::l2Group, 0, 1 << 20, false},
    {"reverse_x", &Schedule::reverseX, nullptr, 0, 1, false},
    {"index_ahead", &Schedule::indexAhead, nullptr, 0, 1, false},
    {"cp_async", &Schedule::cpAsync, nullptr, 0, 1, false},
};

std::string rangeError(const Field &f, int64_t v) {
  std::string what = f.powerOfTwo ? "a power of two" : "an integer";
  return std::string(f.name) + " must be " + what + " in [" +
         std::to_string(f.lo) + ", " + std::to_string(f.hi) + "], got " +
         std::to_string(v);
}
} // namespace

const char *tile::scheduleFieldNames() {
  return "num_warps, min_blocks, num_stages, tma, tma_a, tma_store, pingpong, "
         "producer, persistent, cta_programs, l2_group, reverse_x, index_ahead, "
         "cp_async";
}

std::string Schedule::validate() const {
  for (const Field &f : kFields) {
    if (!f.num)
      continue;
    int64_t v = this->*f.num;
    if (v < f.lo || v > f.hi || (f.powerOfTwo && (v & (v - 1))))
      return rangeError(f, v);
  }
  // A CTA holds ctaPrograms programs of numWarps warps, plus a producer
  // warpgroup: at most 32 warps (1024 threads).
  int64_t warps = ctaPrograms * numWarps + (producer ? 4 : 0);
  if (warps > 32)
    return "cta_programs = " + std::to_string(ctaPrograms) +
           " with num_warps = " + std::to_string(numWarps) +
           (producer ? " and a producer warpgroup" : "") + " needs " +
           std::to_string(warps) + " warps; a CTA has at most 32";
  if (ctaPrograms > 1 && l2Group > 0)
    return "cta_programs > 1 with l2_group > 0: the programs of a CTA "
           "(consecutive along x) must share their grid y, which L2 groups "
           "change along x";
  if (ctaPrograms > 1 && !persistent)
    return "cta_programs > 1 needs persistent = true (the programs of a CTA "
           "take their tiles from the persistent loop)";
  if (ctaPrograms > 1 && !producer)
    return "cta_programs > 1 needs producer = true (the programs of a CTA "
           "share a producer warpgroup's copies)";
  return "";
}

std::string Schedule::str() const {
  std::string s;
  for (const Field &f : kFields) {
    if (!s.empty())
      s += ",";
    s += f.name;
    s += "=";
    s += f.flag ? ((this->*f.flag) ? "true" : "false")
                : std::to_string(this->*f.num);
  }
  return s;
}

std::string Schedule::set(const std::string &name, const std::string &value) {
  for (const Field &f : kFields) {
    if (name != f.name)
      continue;
    if (f.flag) {
      if (value == "true" || value == "1")
        this->*f.flag = true;
      else if (value == "false" || value == "0")
        this->*f.flag = false;
      else
        return name + " expects true or false, got '" + value + "'";
      return "";
    }
    char *end = nullptr;
    long long v = value.empty() ? 0 : std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end)
      return name + " expects an integer, got '" + value + "'";
    if (v < f.lo || v > f.hi || (f.powerOfTwo && (v & (v - 1))))
      return rangeError(f, v);
    this->*f.num = v;
    return "";
  }
  return "unknown schedule field '" + name + "' (known: " +
         scheduleFieldNames() + ")";
}

std::string Schedule::parse(const std::string &pairs) {
  size_t pos = 0;
  while (pos < pairs.size()) {
    size_t comma = pairs.find(',', pos);
    std::string item = pairs.substr(pos, comma == std::string::npos
                                             ? std::string::npos
                                             : comma - pos);
    pos = comma == std::string::npos ? pairs.size() : comma + 1;
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    std::string err = eq == std::string::npos
                          ? set(item, "true") // a bare name: a flag turned on
                          : set(item.substr(0, eq), item.substr(eq + 1));
    if (!err.empty())
      return err;
  }
  return "";
}
