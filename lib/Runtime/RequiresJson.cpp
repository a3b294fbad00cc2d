//===- RequiresJson.cpp - a manifest's "requires" array ------------------===//
//
// The manifest's record of a kernel's require(...) expressions: written as
// an array of {expr, text, loc} objects, read back with each expression
// checked (validRequirement, Requires.cpp: it parses, and reads only scalar
// arguments), so a launch never meets a malformed one.
//
//===----------------------------------------------------------------------===//
#include "Requires.h"

#include "Json.h"

namespace tile::detail {
std::string requirementsJSON(const std::vector<Requirement> &rs) {
  std::string j;
  for (std::size_t i = 0; i < rs.size(); ++i)
    j += std::string(i ? "," : "") + "\n    {\"expr\": " + json::quote(rs[i].expr) +
         ", \"text\": " + json::quote(rs[i].text) +
         ", \"loc\": " + json::quote(rs[i].loc) + "}";
  return "[" + j + (rs.empty() ? "]" : "\n  ]");
}

bool parseRequirements(const json::Value &v,
                       const std::vector<KernelParam> &params,
                       std::vector<Requirement> &out, std::string &error) {
  if (v.kind != json::Value::Array) {
    error = "\"requires\" must be an array";
    return false;
  }
  for (std::size_t i = 0; i < v.items.size(); ++i) {
    const json::Value &r = v.items[i];
    std::string where = "\"requires\"[" + std::to_string(i) + "]";
    Requirement q;
    const json::Value *e = r.get("expr"), *t = r.get("text"), *l = r.get("loc");
    if (r.kind != json::Value::Object || !e || !t || !l ||
        e->kind != json::Value::String || t->kind != json::Value::String ||
        l->kind != json::Value::String || r.members.size() != 3) {
      error = where + " must be an object of three strings: expr, text, loc";
      return false;
    }
    q.expr = e->text;
    q.text = t->text;
    q.loc = l->text;
    std::string why;
    if (!validRequirement(q.expr, params, why)) {
      error = where + ": " + why;
      return false;
    }
    out.push_back(std::move(q));
  }
  return true;
}
} // namespace tile::detail
