#include "engine/reactions/reactions.hpp"

#include <sstream>

namespace tissue::reactions {

const std::vector<Preset>& gray_scott_presets() {
  // the seed's table ("Interesting Examples"); fledgling_spirals repeats bubbles' values as printed there
  static const std::vector<Preset> presets{
      {"negatons", 0.0460, 0.0594}, {"bubbles", 0.0620, 0.0609}, {"fledgling_spirals", 0.0620, 0.0609},
      {"gamma", 0.022, 0.051},      {"theta", 0.038, 0.061},     {"mu", 0.058, 0.065},
      {"xi", 0.014, 0.047},         {"sigma", 0.110, 0.0523}};
  return presets;
}

const Preset* find_preset(std::string_view name) {
  for (const auto& p : gray_scott_presets())
    if (name == p.name) return &p;
  return nullptr;
}

std::string ReactionSpec::describe() const {
  std::ostringstream s;
  if (kind == Kind::gray_scott)
    s << "Gray-Scott " << (preset.empty() ? "" : preset + " ") << "(F = " << gray_scott.F
      << ", k = " << gray_scott.k << ")";
  else
    s << "polynomial (" << polynomial.nf << " + " << polynomial.ng << " terms)";
  s << ", D = " << diffusion[0] << ", " << diffusion[1];
  return s.str();
}

namespace {

void read_terms(const io::ScenarioTable& table, const char* key, Term<double>* terms, std::int32_t& count) {
  const auto entries = table.tables(key);
  if (entries.size() > static_cast<std::size_t>(kMaxTerms))
    table.fail(key, "at most " + std::to_string(kMaxTerms) + " terms, got " + std::to_string(entries.size()));
  count = static_cast<std::int32_t>(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    Term<double>& t = terms[i];
    t.c = e.number("c", 0.0);
    t.pa = static_cast<std::int32_t>(e.integer("a", 0, io::Range::closed(0, 8)));
    t.pb = static_cast<std::int32_t>(e.integer("b", 0, io::Range::closed(0, 8)));
    if (e.has("hill")) {
      const auto h = e.table("hill");
      t.hill_of = h.string("of", "a", {"a", "b"}) == "a" ? 0 : 1;
      t.hill_k = h.number("k", 1.0, io::Range::positive());
      t.hill_n = h.number("n", 1.0, io::Range::positive());
      t.repress = h.boolean("repress", false) ? 1 : 0;
    }
  }
}

}  // namespace

ReactionSpec read_reaction(const io::ScenarioTable& t) {
  ReactionSpec r;
  const std::string reaction = t.string("model", "gray_scott", {"gray_scott", "polynomial"});
  const auto d = t.table("diffusion");
  r.diffusion[0] = d.number("a", r.diffusion[0], io::Range::non_negative());
  r.diffusion[1] = d.number("b", r.diffusion[1], io::Range::non_negative());
  if (reaction == "gray_scott") {
    r.kind = ReactionSpec::Kind::gray_scott;
    std::vector<std::string> names;
    for (const auto& p : gray_scott_presets()) names.emplace_back(p.name);
    r.preset = t.string("preset", t.has("F") || t.has("k") ? "" : "mu",
                        t.has("preset") ? names : std::vector<std::string>{});
    if (!r.preset.empty()) {
      const Preset* p = find_preset(r.preset);
      r.gray_scott = {p->F, p->k};
    }
    r.gray_scott.F = t.number("F", r.gray_scott.F, io::Range::non_negative());
    r.gray_scott.k = t.number("k", r.gray_scott.k, io::Range::non_negative());
    if (!r.preset.empty() && (t.has("F") || t.has("k")))
      t.fail("preset", "give either a preset or F and k, not both");
  } else {
    r.kind = ReactionSpec::Kind::polynomial;
    read_terms(t, "f", r.polynomial.f, r.polynomial.nf);
    read_terms(t, "g", r.polynomial.g, r.polynomial.ng);
    if (r.polynomial.nf + r.polynomial.ng == 0) t.fail("f", "a polynomial reaction needs terms in f or g");
  }
  return r;
}

}  // namespace tissue::reactions
