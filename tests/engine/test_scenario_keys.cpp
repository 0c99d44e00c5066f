// Whole classes of bad values, tried on every key of every shipped scenario (issue "Hostile input"): each
// numeric key set to inf, -inf and nan must be refused as invalid input naming the key, never accepted to
// fail later (exit 3) or to give meaningless results.
#include <toml++/toml.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/exec/error.hpp"
#include "engine/io/scenario.hpp"
#include "modules/builtin_modules.hpp"

using namespace tissue;
namespace fs = std::filesystem;

namespace {

/// Every numeric leaf of `node` (tables, arrays and arrays of tables), as the path of keys/indices to it.
void numeric_leaves(toml::node& node, std::vector<std::string>& path,
                    std::vector<std::vector<std::string>>& out) {
  if (auto* t = node.as_table()) {
    for (auto&& [k, v] : *t) {
      path.emplace_back(k.str());
      numeric_leaves(v, path, out);
      path.pop_back();
    }
  } else if (auto* a = node.as_array()) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      path.push_back("#" + std::to_string(i));
      numeric_leaves(*a->get(i), path, out);
      path.pop_back();
    }
  } else if (node.is_number()) {
    out.push_back(path);
  }
}

/// Replaces the leaf at `path` of `root` by the floating-point `value`.
void set_leaf(toml::table& root, const std::vector<std::string>& path, double value) {
  toml::node* node = &root;
  for (std::size_t i = 0; i + 1 < path.size(); ++i)
    node = path[i][0] == '#' ? node->as_array()->get(std::stoul(path[i].substr(1)))
                             : node->as_table()->get(path[i]);
  const std::string& last = path.back();
  if (last[0] == '#')
    node->as_array()->replace(
        node->as_array()->begin() + static_cast<std::ptrdiff_t>(std::stoul(last.substr(1))), value);
  else
    node->as_table()->insert_or_assign(last, value);
}

std::string join(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& p : path) s += (s.empty() || p[0] == '#' ? "" : ".") + p;
  return s;
}

}  // namespace

TEST_CASE("every numeric key of every shipped scenario refuses inf, -inf and nan as invalid input",
          "[scenario][hostile]") {
  const fs::path dir = fs::path(TISSUE_SOURCE_DIR) / "scenarios";
  std::size_t tried = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    const std::string file = entry.path().string();
    toml::table original = toml::parse_file(file);
    std::vector<std::string> path;
    std::vector<std::vector<std::string>> leaves;
    numeric_leaves(original, path, leaves);
    for (const auto& leaf : leaves) {
      for (const double bad : {INFINITY, -INFINITY, NAN}) {
        toml::table edited = original;
        set_leaf(edited, leaf, bad);
        std::ostringstream text;
        text << edited;
        INFO(file << ": " << join(leaf) << " = " << bad);
        std::string what = "(accepted)";
        try {
          builtin_modules().build_simulation(io::Scenario::from_string(text.str(), file));
        } catch (const InputError& e) {
          what = e.what();
        }
        // the key is named, at its place in the file; a key read as an integer refuses the float first
        CHECK_THAT(what,
                   Catch::Contains(file + ":") && Catch::Contains(leaf.back()[0] == '#' ? "" : leaf.back()) &&
                       (Catch::Contains("expected a finite number") ||
                        Catch::Contains("expected an integer") || Catch::Contains("expected an array")));
        ++tried;
      }
    }
  }
  CHECK(tried > 500);
}
