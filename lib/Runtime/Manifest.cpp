//===- Manifest.cpp - manifest JSON writer / parser, FNV-1a hash ----------===//
//
// A small JSON reader for exactly the manifest schema: a general value parser
// (objects, arrays, strings with escapes, numbers, true/false/null) with
// line:column errors, then a schema pass that names the missing or mistyped
// key. No LLVM: the runtime links without it.
//
//===----------------------------------------------------------------------===//

#include "tile/Manifest.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace tile {

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

namespace {

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  return out + "\"";
}

} // namespace

std::string Manifest::toJSON() const {
  std::string j = "{\n";
  j += "  \"kernelName\": " + quote(kernelName) + ",\n";
  j += "  \"params\": [";
  for (std::size_t i = 0; i < params.size(); ++i)
    j += std::string(i ? "," : "") + "\n    {\"name\": " + quote(params[i].name) +
         ", \"type\": " + quote(params[i].type) + "}";
  j += params.empty() ? "],\n" : "\n  ],\n";
  j += "  \"constants\": {";
  bool first = true;
  for (const auto &[k, v] : constants) {
    j += std::string(first ? "" : ",") + "\n    " + quote(k) + ": " + quote(v);
    first = false;
  }
  j += constants.empty() ? "},\n" : "\n  },\n";
  j += "  \"blockSize\": " + std::to_string(blockSize) + ",\n";
  j += "  \"sharedMemoryBytes\": " + std::to_string(sharedMemoryBytes) + ",\n";
  j += "  \"arch\": " + quote(arch) + ",\n";
  j += "  \"tilecVersion\": " + quote(tilecVersion) + ",\n";
  j += "  \"llvmVersion\": " + quote(llvmVersion) + ",\n";
  j += "  \"cudaVersion\": " + quote(cudaVersion) + ",\n";
  j += "  \"sourceHash\": " + quote(sourceHash) + "\n";
  return j + "}\n";
}

//===----------------------------------------------------------------------===//
// JSON values and parser
//===----------------------------------------------------------------------===//

namespace {

struct Value {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0;
  std::string text; ///< String: the decoded string; Number: the literal
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;

  const char *kindName() const {
    static const char *names[] = {"null",   "boolean", "number",
                                  "string", "array",   "object"};
    return names[kind];
  }
  const Value *get(const std::string &key) const {
    for (const auto &m : members)
      if (m.first == key)
        return &m.second;
    return nullptr;
  }
};

class Parser {
public:
  explicit Parser(const std::string &s) : s_(s) {}

  bool parseDocument(Value &out, std::string &error) {
    skipSpace();
    if (!parseValue(out, 0))
      return fail(error);
    skipSpace();
    if (pos_ != s_.size()) {
      err_ = "unexpected text after the JSON value";
      return fail(error);
    }
    return true;
  }

private:
  bool fail(std::string &error) {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    error = "line " + std::to_string(line) + ", column " +
            std::to_string(col) + ": " + err_;
    return false;
  }

  bool error(std::string message) {
    err_ = std::move(message);
    return false;
  }

  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' ||
                                s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }

  bool parseValue(Value &v, int depth) {
    if (depth > 64)
      return error("nesting deeper than 64 levels");
    if (pos_ >= s_.size())
      return error("unexpected end of input, expected a value");
    char c = s_[pos_];
    if (c == '{')
      return parseObject(v, depth);
    if (c == '[')
      return parseArray(v, depth);
    if (c == '"') {
      v.kind = Value::String;
      return parseString(v.text);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(v);
    for (const char *word : {"true", "false", "null"}) {
      std::string w = word;
      if (s_.compare(pos_, w.size(), w) == 0) {
        pos_ += w.size();
        v.kind = w == "null" ? Value::Null : Value::Bool;
        v.boolean = w == "true";
        return true;
      }
    }
    return error(std::string("unexpected character '") + c +
                 "', expected a value");
  }

  bool parseObject(Value &v, int depth) {
    v.kind = Value::Object;
    ++pos_; // {
    skipSpace();
    if (peek('}')) {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      if (!peek('"'))
        return error("expected a string key");
      std::size_t keyPos = pos_;
      std::string key;
      if (!parseString(key))
        return false;
      if (v.get(key)) {
        pos_ = keyPos;
        return error("duplicate key \"" + key + "\"");
      }
      skipSpace();
      if (!peek(':'))
        return error("expected ':' after key \"" + key + "\"");
      ++pos_;
      skipSpace();
      Value member;
      if (!parseValue(member, depth + 1))
        return false;
      v.members.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      if (peek('}')) {
        ++pos_;
        return true;
      }
      return error("expected ',' or '}' in object");
    }
  }

  bool parseArray(Value &v, int depth) {
    v.kind = Value::Array;
    ++pos_; // [
    skipSpace();
    if (peek(']')) {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      Value item;
      if (!parseValue(item, depth + 1))
        return false;
      v.items.push_back(std::move(item));
      skipSpace();
      if (peek(',')) {
        ++pos_;
        continue;
      }
      if (peek(']')) {
        ++pos_;
        return true;
      }
      return error("expected ',' or ']' in array");
    }
  }

  bool parseHex4(unsigned &out) {
    if (pos_ + 4 > s_.size())
      return error("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        out |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        out |= unsigned(c - 'A' + 10);
      else
        return error("bad hex digit in \\u escape");
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xc0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += char(0xe0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    } else {
      out += char(0xf0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3f));
      out += char(0x80 | ((cp >> 6) & 0x3f));
      out += char(0x80 | (cp & 0x3f));
    }
  }

  bool parseString(std::string &out) {
    ++pos_; // "
    out.clear();
    while (true) {
      if (pos_ >= s_.size())
        return error("unterminated string");
      char c = s_[pos_++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        return error("control character in string (escape it)");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size())
        return error("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xd800 && cp < 0xdc00) { // high surrogate: needs a low one
          unsigned lo;
          if (s_.compare(pos_, 2, "\\u") != 0)
            return error("unpaired surrogate in \\u escape");
          pos_ += 2;
          if (!parseHex4(lo))
            return false;
          if (lo < 0xdc00 || lo >= 0xe000)
            return error("unpaired surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp < 0xe000) {
          return error("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos_;
        return error(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  bool parseNumber(Value &v) {
    std::size_t start = pos_;
    if (peek('-'))
      ++pos_;
    if (!(pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'))
      return error("expected a digit");
    auto digits = [&] {
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
        ++pos_;
    };
    if (peek('0'))
      ++pos_;
    else
      digits();
    if (peek('.')) {
      ++pos_;
      if (!(pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'))
        return error("expected a digit after '.'");
      digits();
    }
    if (peek('e') || peek('E')) {
      ++pos_;
      if (peek('+') || peek('-'))
        ++pos_;
      if (!(pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'))
        return error("expected a digit in the exponent");
      digits();
    }
    v.kind = Value::Number;
    v.text = s_.substr(start, pos_ - start);
    v.number = std::strtod(v.text.c_str(), nullptr);
    return true;
  }

  const std::string &s_;
  std::size_t pos_ = 0;
  std::string err_;
};

//===----------------------------------------------------------------------===//
// Schema
//===----------------------------------------------------------------------===//

bool typeError(const std::string &what, const char *expected, const Value &v,
               std::string &error) {
  error = what + " must be " + expected + ", got " + v.kindName();
  return false;
}

bool getString(const Value &obj, const char *key, std::string &out,
               std::string &error) {
  const Value *v = obj.get(key);
  if (!v) {
    error = std::string("missing key \"") + key + "\"";
    return false;
  }
  if (v->kind != Value::String)
    return typeError(std::string("\"") + key + "\"", "a string", *v, error);
  out = v->text;
  return true;
}

bool getInt(const Value &obj, const char *key, int &out, std::string &error) {
  const Value *v = obj.get(key);
  if (!v) {
    error = std::string("missing key \"") + key + "\"";
    return false;
  }
  std::string what = std::string("\"") + key + "\"";
  if (v->kind != Value::Number)
    return typeError(what, "an integer", *v, error);
  if (v->number != std::floor(v->number) || v->number < 0 ||
      v->number > 2147483647.0) {
    error = what + " must be an integer in 0..2^31-1, got " + v->text;
    return false;
  }
  out = int(v->number);
  return true;
}

} // namespace

bool Manifest::fromJSON(const std::string &json, Manifest &out,
                        std::string &error) {
  Value root;
  std::string why;
  if (!Parser(json).parseDocument(root, why)) {
    error = "malformed manifest JSON: " + why;
    return false;
  }
  auto bad = [&](const std::string &message) {
    error = "invalid manifest: " + message;
    return false;
  };
  if (root.kind != Value::Object)
    return bad(std::string("the top level must be an object, got ") +
               root.kindName());

  Manifest m;
  if (!getString(root, "kernelName", m.kernelName, why))
    return bad(why);

  const Value *params = root.get("params");
  if (!params)
    return bad("missing key \"params\"");
  if (params->kind != Value::Array)
    return typeError("\"params\"", "an array", *params, why), bad(why);
  for (std::size_t i = 0; i < params->items.size(); ++i) {
    const Value &p = params->items[i];
    std::string where = "params[" + std::to_string(i) + "]";
    if (p.kind != Value::Object)
      return typeError(where, "an object", p, why), bad(why);
    KernelParam kp;
    if (!getString(p, "name", kp.name, why) ||
        !getString(p, "type", kp.type, why))
      return bad(where + ": " + why);
    m.params.push_back(std::move(kp));
  }

  const Value *constants = root.get("constants");
  if (!constants)
    return bad("missing key \"constants\"");
  if (constants->kind != Value::Object)
    return typeError("\"constants\"", "an object", *constants, why), bad(why);
  for (const auto &[key, v] : constants->members) {
    if (v.kind == Value::String || v.kind == Value::Number)
      m.constants[key] = v.text;
    else if (v.kind == Value::Bool)
      m.constants[key] = v.boolean ? "true" : "false";
    else
      return typeError("constants[\"" + key + "\"]", "a string", v, why),
             bad(why);
  }

  if (!getInt(root, "blockSize", m.blockSize, why) ||
      !getInt(root, "sharedMemoryBytes", m.sharedMemoryBytes, why) ||
      !getString(root, "arch", m.arch, why) ||
      !getString(root, "tilecVersion", m.tilecVersion, why) ||
      !getString(root, "llvmVersion", m.llvmVersion, why) ||
      !getString(root, "cudaVersion", m.cudaVersion, why) ||
      !getString(root, "sourceHash", m.sourceHash, why))
    return bad(why);

  out = std::move(m);
  return true;
}

bool Manifest::operator==(const Manifest &o) const {
  return kernelName == o.kernelName && params == o.params &&
         constants == o.constants && blockSize == o.blockSize &&
         sharedMemoryBytes == o.sharedMemoryBytes && arch == o.arch &&
         tilecVersion == o.tilecVersion && llvmVersion == o.llvmVersion &&
         cudaVersion == o.cudaVersion && sourceHash == o.sourceHash;
}

std::string hashHex(const std::string &data) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

} // namespace tile
