//===- Imports.cpp - the files a .tile source imports, for cache keys -----===//
#include "lib/JIT/Imports.h"

#include "tile/Runtime.h"

#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace tile {
namespace {
/// The quoted paths of `import "...";` statements in `text`.
std::vector<std::string> importPaths(const std::string &text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = text.find("import", pos)) != std::string::npos) {
    bool wordStart = pos == 0 || !(std::isalnum((unsigned char)text[pos - 1]) ||
                                   text[pos - 1] == '_');
    pos += 6;
    if (!wordStart)
      continue;
    size_t q = text.find_first_not_of(" \t\r\n", pos);
    if (q == std::string::npos || text[q] != '"')
      continue;
    size_t end = text.find_first_of("\"\n", q + 1);
    if (end == std::string::npos || text[end] != '"')
      continue;
    out.push_back(text.substr(q + 1, end - q - 1));
    pos = end;
  }
  return out;
}

std::string find(const std::string &path, const std::string &from,
                 const std::vector<std::string> &includeDirs) {
  std::error_code ec;
  std::vector<fs::path> candidates;
  if (fs::path(path).is_absolute()) {
    candidates.push_back(path);
  } else {
    candidates.push_back(fs::path(from).parent_path() / path);
    for (const std::string &d : includeDirs)
      candidates.push_back(fs::path(d) / path);
  }
  for (const fs::path &c : candidates)
    if (fs::is_regular_file(c, ec))
      return c.string();
  return {};
}

void append(std::string &out, const std::string &field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}
} // namespace

std::string importedSources(const std::string &source, const std::string &name,
                            const std::vector<std::string> &includeDirs) {
  std::string out;
  std::set<std::string> seen;
  std::vector<std::pair<std::string, std::string>> todo; // (text, file)
  todo.emplace_back(source, name);
  while (!todo.empty() && seen.size() < 256) {
    auto [text, file] = std::move(todo.back());
    todo.pop_back();
    for (const std::string &p : importPaths(text)) {
      std::string path = find(p, file, includeDirs);
      std::error_code ec;
      std::string real = path.empty() ? p : fs::weakly_canonical(path, ec).string();
      if (!seen.insert(real).second)
        continue;
      append(out, real);
      std::string contents, error;
      if (path.empty() || !readFile(path, contents, error))
        continue;
      append(out, contents);
      todo.emplace_back(std::move(contents), path);
    }
  }
  return out;
}

} // namespace tile
