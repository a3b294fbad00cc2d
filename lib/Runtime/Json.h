//===- Json.h - a small JSON reader/writer for the manifest --- -*- C++ -*-===//
//
// Internal to TileRuntime. A general value parser (objects, arrays, strings
// with escapes and surrogate pairs, numbers, true/false/null) that reports
// "line L, column C: what"; and the string quoting the writer needs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tile::json {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string text; ///< String: the decoded string; Number: the literal
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members; ///< in source order

  const char *kindName() const;
  /// The member called `key`, or nullptr.
  const Value *get(const std::string &key) const;
};

/// Parses a whole document (one value, surrounded by whitespace only). On
/// failure returns false with `error` = "line L, column C: …".
bool parse(const std::string &text, Value &out, std::string &error);

/// `s` as a JSON string literal, quotes included.
std::string quote(const std::string &s);

} // namespace tile::json
