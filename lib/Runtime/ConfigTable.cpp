//===- ConfigTable.cpp - read a kernel's per-shape configuration table ----===//

#include "tile/ConfigTable.h"

#include "lib/Runtime/Json.h"

#include <fstream>
#include <set>
#include <sstream>

using namespace tile;

namespace {
/// A scalar JSON value as the text a define or key would hold.
bool scalarText(const json::Value &v, std::string &out) {
  switch (v.kind) {
  case json::Value::Bool: out = v.boolean ? "true" : "false"; return true;
  case json::Value::Number: out = v.text; return true;
  case json::Value::String: out = v.text; return true;
  default: return false;
  }
}

bool readMap(const json::Value &v, const std::string &where,
             std::map<std::string, std::string> &out, std::string &error) {
  if (v.kind != json::Value::Object)
    return error = where + ": expected an object", false;
  for (const auto &[k, item] : v.members)
    if (!scalarText(item, out[k]))
      return error = where + "." + k + ": expected a number, string or "
                                       "boolean",
             false;
  return true;
}

bool readSchedule(const json::Value &v, const std::string &where, Schedule &s,
                  std::string &error) {
  std::map<std::string, std::string> fields;
  if (!readMap(v, where, fields, error))
    return false;
  for (const auto &[k, text] : fields) {
    std::string why = s.set(k, text);
    if (!why.empty())
      return error = where + ": " + why, false;
  }
  std::string why = s.validate();
  if (!why.empty())
    return error = where + ": " + why, false;
  return true;
}

bool readConfig(const json::Value &v, const std::string &where,
                KernelConfig &c, std::string &error) {
  if (v.kind != json::Value::Object)
    return error = where + ": expected an object", false;
  if (const json::Value *d = v.get("defines"))
    if (!readMap(*d, where + ".defines", c.defines, error))
      return false;
  if (const json::Value *s = v.get("schedule"))
    if (!readSchedule(*s, where + ".schedule", c.schedule, error))
      return false;
  return true;
}

std::string describe(const std::map<std::string, std::string> &m) {
  std::string s;
  for (const auto &[k, v] : m)
    s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}
} // namespace

bool tile::parseScheduleJSON(const std::string &text, Schedule &s,
                             std::string &error) {
  json::Value root;
  if (!json::parse(text, root, error))
    return false;
  return readSchedule(root, "schedule", s, error);
}

bool ConfigTable::parse(const std::string &text, const std::string &name,
                        ConfigTable &out, std::string &error) {
  json::Value root;
  std::string why;
  if (!json::parse(text, root, why))
    return error = name + ": " + why, false;
  auto fail = [&](const std::string &what) {
    error = name + ": " + what;
    return false;
  };
  if (root.kind != json::Value::Object)
    return fail("expected an object");
  ConfigTable t;
  for (auto [key, field] : {std::pair{"kernel", &t.kernel_},
                            std::pair{"arch", &t.arch_},
                            std::pair{"size", &t.sizeName_}}) {
    const json::Value *v = root.get(key);
    if (!v || v->kind != json::Value::String)
      return fail(std::string("\"") + key + "\" must be a string");
    *field = v->text;
  }
  const json::Value *keys = root.get("keys");
  if (!keys || keys->kind != json::Value::Array)
    return fail("\"keys\" must be an array of names");
  for (const json::Value &k : keys->items) {
    if (k.kind != json::Value::String)
      return fail("\"keys\" must be an array of names");
    t.keys_.push_back(k.text);
  }
  if (const json::Value *d = root.get("default")) {
    if (!readConfig(*d, "default", t.default_, why))
      return fail(why);
  }
  t.default_.origin = "default";
  const json::Value *entries = root.get("entries");
  if (!entries || entries->kind != json::Value::Array)
    return fail("\"entries\" must be an array");
  for (size_t i = 0; i < entries->items.size(); ++i) {
    const json::Value &e = entries->items[i];
    std::string where = "entries[" + std::to_string(i) + "]";
    Entry entry;
    if (!readConfig(e, where, entry.config, why))
      return fail(why);
    const json::Value *match = e.get("match");
    if (!match || !readMap(*match, where + ".match", entry.match, why))
      return fail(match ? why : where + ": no \"match\" object");
    for (const std::string &k : t.keys_)
      if (!entry.match.count(k))
        return fail(where + ".match: no value for key \"" + k + "\"");
    const json::Value *size = e.get(t.sizeName_);
    if (!size || size->kind != json::Value::Number)
      return fail(where + ": \"" + t.sizeName_ + "\" must be a number");
    entry.size = int64_t(size->number);
    entry.config.origin = "entry " + std::to_string(i) + " (" +
                          describe(entry.match) + " " + t.sizeName_ + "=" +
                          std::to_string(entry.size) + ")";
    t.entries_.push_back(std::move(entry));
  }
  out = std::move(t);
  return true;
}

bool ConfigTable::load(const std::string &path, ConfigTable &out,
                       std::string &error) {
  std::ifstream in(path);
  if (!in)
    return error = "cannot read config table '" + path + "'", false;
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path, out, error);
}

bool ConfigTable::lookupIfPresent(
    const std::string &path, const std::map<std::string, std::string> &keys,
    int64_t size, KernelConfig &out, std::string &error) {
  if (!std::ifstream(path).good()) {
    out = KernelConfig();
    out.origin = "no table";
    return true;
  }
  ConfigTable table;
  if (!load(path, table, error))
    return false;
  out = table.lookup(keys, size);
  return true;
}

KernelConfig ConfigTable::lookup(const std::map<std::string, std::string> &keys,
                                 int64_t size) const {
  const Entry *below = nullptr, *smallest = nullptr;
  for (const Entry &e : entries_) {
    bool same = true;
    for (const std::string &k : keys_) {
      auto it = keys.find(k);
      same &= it != keys.end() && it->second == e.match.at(k);
    }
    if (!same)
      continue;
    if (e.size <= size && (!below || e.size > below->size))
      below = &e;
    if (!smallest || e.size < smallest->size)
      smallest = &e;
  }
  if (below)
    return below->config;
  if (smallest)
    return smallest->config;
  return default_;
}

std::vector<KernelConfig> ConfigTable::distinct() const {
  std::vector<KernelConfig> out{default_};
  std::set<std::string> seen{describe(default_.defines) + "|" +
                             default_.schedule.str()};
  for (const Entry &e : entries_)
    if (seen.insert(describe(e.config.defines) + "|" + e.config.schedule.str())
            .second)
      out.push_back(e.config);
  return out;
}
