//===- Json.cpp - a small JSON reader/writer for the manifest -------------===//

#include "Json.h"

#include <cstdio>
#include <cstdlib>
#include <unordered_set>

namespace tile::json {

const char *Value::kindName() const {
  static const char *names[] = {"null",   "boolean", "number",
                                "string", "array",   "object"};
  return names[kind];
}

const Value *Value::get(const std::string &key) const {
  for (const auto &m : members)
    if (m.first == key)
      return &m.second;
  return nullptr;
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
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

namespace {

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
    error = "line " + std::to_string(line) + ", column " + std::to_string(col) +
            ": " + err_;
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
    // Duplicates are found by hash, not by Value::get's scan: linear in the
    // number of keys (a scan made 100 000 keys take over a minute).
    std::unordered_set<std::string> seen;
    while (true) {
      skipSpace();
      if (!peek('"'))
        return error("expected a string key");
      std::size_t keyPos = pos_;
      std::string key;
      if (!parseString(key))
        return false;
      if (!seen.insert(key).second) {
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
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
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

} // namespace

bool parse(const std::string &text, Value &out, std::string &error) {
  return Parser(text).parseDocument(out, error);
}

} // namespace tile::json
