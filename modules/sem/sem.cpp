#include "modules/sem/sem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/group_for.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::sem {

Column<std::int32_t>& add_sem_columns(World& world) {
  if (auto* existing = dynamic_cast<Column<std::int32_t>*>(world.elements.find(kTypeColumn)))
    return *existing;
  return world.elements.add_column<std::int32_t>(kTypeColumn);
}

std::int32_t add_element_host(World& world, std::int32_t c, float x, float y, float z, std::int32_t type) {
  const std::int32_t e = world.add_element_host(c, x, y, z);
  element_types(world).host(static_cast<std::size_t>(e)) = type;
  return e;
}

double InterPair::effective_cutoff() const {
  return cutoff > 0.0 ? cutoff : morse_minimum(morse);
}

double SemParams::effective_inter_cutoff() const {
  double rc = inter_cutoff > 0.0 ? inter_cutoff : morse_minimum(inter);
  if (!cell_types.empty()) {
    rc = 0.0;
    for (const auto& pair : pairs) rc = std::max(rc, pair.effective_cutoff());
  }
  return rc;
}

void SemParams::set_cell_types(std::vector<std::string> names) {
  if (names.size() > static_cast<std::size_t>(kMaxCellTypes))
    throw std::invalid_argument("at most " + std::to_string(kMaxCellTypes) + " cell types");
  cell_types = std::move(names);
  intra_by_type.assign(cell_types.size(), intra);
  InterPair seed;
  seed.morse = inter;
  seed.cutoff = inter_cutoff;
  pairs.assign(cell_types.size() * cell_types.size(), seed);
}

double SemParams::effective_bin_size() const {
  // the cutoff and a skin of 0.2 cutoffs: the midpoint stage searches the first stage's bins, one bin per
  // side while nothing moved more than the skin in the half step (CellList::View::for_each_moved_candidate)
  return bin_size > 0.0 ? bin_size : 1.2 * effective_inter_cutoff();
}

double SemParams::effective_substrate_reach() const {
  return substrate_reach > 0.0 ? substrate_reach : 8.0 * std::max(adhesion.xi1, adhesion.xi2);
}

KernelParams SemParams::kernel_params() const {
  KernelParams k{};
  k.intra = MorseForce::of(intra);
  k.inter = MorseForce::of(inter);
  k.adhesion = MorseForce::of(adhesion);
  k.intra_cutoff2 = intra_cutoff > 0.0 ? static_cast<float>(intra_cutoff * intra_cutoff)
                                       : std::numeric_limits<float>::infinity();
  const double rc = effective_inter_cutoff();
  k.inter_cutoff2 = static_cast<float>(rc * rc);
  k.mobility = static_cast<float>(1.0 / friction);
  k.adhesive_type = kAdhesiveElement;
  k.adhesion_on = basement_adhesion;
  k.cell_types = static_cast<std::int32_t>(cell_types.size());  // the tables are attached by SemSystem
  return k;
}

namespace {
Morse<double> read_morse(const io::ScenarioTable& t, const Morse<double>& d, bool needs_minimum) {
  Morse<double> m{
      t.number("u0", d.u0, io::Range::non_negative()), t.number("xi1", d.xi1, io::Range::positive()),
      t.number("w0", d.w0, io::Range::non_negative()), t.number("xi2", d.xi2, io::Range::positive())};
  if (needs_minimum && !(m.xi1 < m.xi2 && m.u0 / m.xi1 > m.w0 / m.xi2 && m.w0 > 0.0))
    t.fail("",
           "needs xi1 < xi2, w0 > 0 and u0/xi1 > w0/xi2 (a repulsive core and a minimum), or an "
           "explicit sem.inter_cutoff");
  return m;
}
}  // namespace

namespace {
/// Index of `name` among the declared cell types, or a failure at `key` of `t`.
std::size_t type_index(const io::ScenarioTable& t, std::string_view key, const std::string& name,
                       const std::vector<std::string>& types) {
  const auto it = std::find(types.begin(), types.end(), name);
  if (it == types.end()) {
    std::string known;
    for (const auto& n : types) known += (known.empty() ? "\"" : ", \"") + n + "\"";
    t.fail(key, "unknown cell type \"" + name + "\" (declared in [[cell_types]]: " + known + ")");
  }
  return static_cast<std::size_t>(it - types.begin());
}

/// [sem] cell_types (per-type intra) and inter_pairs (the symmetric pair table) into p.
void read_cell_type_params(const io::ScenarioTable& t, SemParams& p) {
  const std::size_t n = p.cell_types.size();
  const auto per_type = t.table("cell_types");
  for (const auto& name : per_type.keys()) {
    const std::size_t a = type_index(per_type, name, name, p.cell_types);
    p.intra_by_type[a] = read_morse(per_type.table(name).table("intra"), p.intra, false);
  }
  std::vector<bool> given(n * n, false);
  for (const auto& entry : t.tables("inter_pairs")) {
    const auto names = entry.strings("types", {});
    if (names.size() != 2) entry.fail("types", "needs two cell type names, e.g. [\"a\", \"b\"]");
    const std::size_t a = type_index(entry, "types", names[0], p.cell_types);
    const std::size_t b = type_index(entry, "types", names[1], p.cell_types);
    if (given[a * n + b])
      entry.fail("types", "the pair (\"" + names[0] + "\", \"" + names[1] +
                              "\") is given twice (the pair table is symmetric: (a, b) is (b, a))");
    InterPair pair;
    pair.attractive = entry.boolean("attractive", false);
    pair.cutoff = entry.number("cutoff", 0.0, io::Range::positive());
    if (pair.attractive && !entry.has("cutoff"))
      entry.fail("attractive", "an attractive pair needs a cutoff [length] (its tail never vanishes)");
    pair.morse = read_morse(entry, p.inter, !entry.has("cutoff"));
    if (pair.morse.u0 > 0.0 && pair.morse.w0 > 0.0 && pair.morse.xi1 >= pair.morse.xi2)
      entry.fail("xi1", "needs xi1 < xi2 (a repulsive core inside the attractive tail)");
    p.pairs[a * n + b] = p.pairs[b * n + a] = pair;
    given[a * n + b] = given[b * n + a] = true;
  }
}
}  // namespace

SemParams read_sem_params(const io::ScenarioTable& t, const std::vector<std::string>& cell_types) {
  SemParams p;
  p.intra = read_morse(t.table("intra"), p.intra, false);
  p.adhesion = read_morse(t.table("adhesion"), p.adhesion, false);
  p.friction = t.number("friction", p.friction, io::Range::positive());
  p.intra_cutoff = t.number("intra_cutoff", p.intra_cutoff, io::Range::non_negative());
  p.inter_cutoff = t.number("inter_cutoff", p.inter_cutoff, io::Range::non_negative());
  p.inter = read_morse(t.table("inter"), p.inter, p.inter_cutoff == 0.0);
  p.bin_size = t.number("bin_size", p.bin_size, io::Range::non_negative());
  p.rebuild_every = static_cast<int>(t.integer("rebuild_every", p.rebuild_every, io::Range::closed(1, 1000)));
  p.z_extent = t.number("z_extent", p.z_extent, io::Range::positive());
  p.basement_adhesion = t.boolean("basement_adhesion", p.basement_adhesion);
  p.temperature = t.number("temperature", p.temperature, io::Range::non_negative());
  if (cell_types.empty()) {
    for (const char* key : {"cell_types", "inter_pairs"})
      if (t.has(key)) t.fail(key, "needs cell types, declared with [[cell_types]] (entity set \"tissue\")");
  } else {
    p.set_cell_types(cell_types);
    read_cell_type_params(t, p);
  }
  if (p.bin_size > 0.0 && p.bin_size < p.effective_inter_cutoff())
    t.fail("bin_size",
           "must be at least the intercellular cutoff " + std::to_string(p.effective_inter_cutoff()));
  return p;
}

SemSystem::SemSystem(const SemParams& params) : params_(params), kernel_(params.kernel_params()) {
  if (params_.substrate) {
    substrate_.build(*params_.substrate, static_cast<float>(params_.effective_substrate_reach()));
    kernel_.substrate = substrate_.view();
    kernel_.substrate_on = true;
  }
  if (!params_.cell_types.empty()) {
    std::vector<MorseForce> intra;
    for (const auto& m : params_.intra_by_type) intra.push_back(MorseForce::of(m));
    std::vector<PairForce> pairs;
    for (const auto& pair : params_.pairs) {
      const double rc = pair.effective_cutoff();
      pairs.push_back(PairForce{MorseForce::of(pair.morse), static_cast<float>(rc * rc),
                                pair.attractive ? std::numeric_limits<float>::lowest() : 0.0f});
    }
    intra_by_type_.assign(intra);
    pairs_.assign(pairs);
    kernel_.intra_by_type = std::as_const(intra_by_type_).span();
    kernel_.pairs = std::as_const(pairs_).span();
    // types that all take the seed's potentials (types declared for rules, not for mechanics) run the
    // seed's kernel: the same forces bit for bit, without the pair table's loads
    const auto same = [](const Morse<double>& a, const Morse<double>& b) {
      return a.u0 == b.u0 && a.xi1 == b.xi1 && a.w0 == b.w0 && a.xi2 == b.xi2;
    };
    const double seed_cutoff =
        params_.inter_cutoff > 0.0 ? params_.inter_cutoff : morse_minimum(params_.inter);
    bool uniform = true;
    for (const auto& m : params_.intra_by_type) uniform = uniform && same(m, params_.intra);
    for (const auto& pair : params_.pairs)
      uniform = uniform && same(pair.morse, params_.inter) && !pair.attractive &&
                pair.effective_cutoff() == seed_cutoff;
    if (uniform) kernel_.cell_types = 0;
  }
}

AccessList SemSystem::access() const {
  AccessList access;
  access.read("elements", "x", "y", "z", "type", "cell").read("cells", "first", "count");
  if (!params_.cell_types.empty()) access.read("cells", kCellTypeColumn);
  if (params_.temperature > 0.0) access.read("cells", "id");
  return access.write("elements", "x", "y", "z");
}

void SemSystem::build_list(World& w, Span<const float> x, Span<const float> y, Span<const float> z) {
  bins_.build(x, y, z, w.cell.span(), w.elements.size(), w.box,
              static_cast<float>(params_.effective_bin_size()), static_cast<float>(params_.z_extent),
              params_.z_bin_points, params_.bin_window);
  const std::size_t n = w.elements.size();
  const CellGrid& g = bins_.grid();
  if (params_.verlet_list && lanes_for(n) == 1 && params_.rebuild_every > 1 && g.n[0] >= 4 && g.n[1] >= 4 &&
      g.n[2] >= 4)
    near_.build(bins_.view(), x, y, z, w.cell.span(), n, w.box,
                static_cast<float>(params_.effective_bin_size()),
                static_cast<float>(params_.effective_inter_cutoff()));
  else
    near_.clear();
}

ElementForce SemSystem::make_force(World& w, Span<const float> x, Span<const float> y, Span<const float> z,
                                   bool refresh) {
  CellList::View bins;
  if (refresh) {
    bins_.refresh(x, y, z, w.elements.size());
    bins = bins_.moved_view(std::as_const(moved_max_).span(),
                            static_cast<float>(params_.effective_inter_cutoff()));
  } else {
    build_list(w, x, y, z);
    bins = bins_.view(static_cast<float>(params_.effective_inter_cutoff()));
  }
  Span<const std::int32_t> cell_type;
  if (kernel_.cell_types > 0) cell_type = w.cells.column<std::int32_t>(kCellTypeColumn).span();
  return ElementForce{
      x,
      y,
      z,
      element_types(w).span(),
      w.cell.span(),
      w.first.span(),
      w.count.span(),
      bins,
      kernel_,
      w.box,
      cell_type,
      near_.view(),
      refresh ? std::as_const(moved_).span().subspan(0, w.elements.size()) : Span<const float>()};
}

template <bool kTyped>
void SemSystem::rk2_stages(World& w, float dt, bool build) {
  const std::size_t n = w.elements.size();
  const int lanes = lanes_for(n);
  const auto moved = moved_.span().subspan(0, n);
  // stage 1: X_mid = X + dt/2 F(X), recording how far each element is from where it was binned. On a fresh
  // build, or on the last build's bins with the current positions (moved_max_: the farthest any element is
  // from its build position, which run() measured into moved_).
  if (build) {
    exec::group_for(lanes, n,
                    ElementStage<kTyped>{make_force(w, w.x.span(), w.y.span(), w.z.span(), false), w.x.span(),
                                         w.y.span(), w.z.span(), xm_.span(), ym_.span(), zm_.span(),
                                         0.5f * dt, moved, false, lanes, params_.by_bins});
  } else {
    exec::group_for(lanes, n,
                    ElementStage<kTyped, true>{make_force(w, w.x.span(), w.y.span(), w.z.span(), true),
                                               w.x.span(), w.y.span(), w.z.span(), xm_.span(), ym_.span(),
                                               zm_.span(), 0.5f * dt, moved, true, lanes, params_.by_bins});
  }
  exec::max_into(std::as_const(moved_).span().subspan(0, n), moved_max_.span(), reduce_temp_);
  if (midpoint_exchange_ != nullptr) {
    const float reach =
        midpoint_exchange_->exchange(w, xm_.span().subspan(0, n), ym_.span().subspan(0, n),
                                     zm_.span().subspan(0, n), std::as_const(moved_).span().subspan(0, n));
    moved_max_.upload(&reach, 1);
  }
  // stage 2: X <- X + dt F(X_mid), in place (each index reads only its own base entry), on the same bins
  // with the midpoint positions (no sort; the search widens if anything moved past the bins' slack)
  exec::group_for(lanes, n,
                  ElementStage<kTyped, true>{make_force(w, xm_.span(), ym_.span(), zm_.span(), true),
                                             w.x.span(), w.y.span(), w.z.span(), w.x.span(), w.y.span(),
                                             w.z.span(), dt, Span<float>(), false, lanes, params_.by_bins});
}

int SemSystem::lanes_for(std::size_t n) const {
  return params_.lanes > 0 ? params_.lanes : exec::lanes_for(n);
}

bool SemSystem::reuses_list_at(const World& w, std::int64_t step) const {
  return built_ && w.revision == built_revision_ && w.elements.size() == built_rows_ &&
         w.elements.capacity() == built_capacity_ && step >= built_step_ &&
         step - built_step_ < std::max(1, params_.rebuild_every);
}

std::uint64_t SemSystem::prepare(World& w, const StepContext& ctx) {
  const bool build = !reuses_list_at(w, ctx.step);
  if (build) note_build(w, ctx.step);
  build_next_ = build;
  return build ? 1 : (restored_ ? 2 : 0);
}

void SemSystem::note_build(const World& w, std::int64_t step) {
  built_ = true;
  built_revision_ = w.revision;
  built_rows_ = w.elements.size();
  built_capacity_ = w.elements.capacity();
  built_step_ = step;
  restored_ = false;
}

SystemState SemSystem::save_state(World& w) const {
  SystemState state;
  const std::size_t n = w.elements.size();
  if (params_.rebuild_every <= 1 || n == 0 || !reuses_list_at(w, w.step)) return state;
  state.integers["built_step"] = built_step_;
  const std::pair<const char*, const DeviceBuffer<float>*> saved[] = {{"x", &xb_}, {"y", &yb_}, {"z", &zb_}};
  for (const auto& [key, buffer] : saved) {
    std::vector<float> values(n);
    buffer->download(values.data(), n);
    state.arrays[key] = std::move(values);
  }
  return state;
}

void SemSystem::restore_state(World& w, const SystemState& state) {
  const std::size_t n = w.elements.size();
  const auto step = state.integers.find("built_step");
  if (step == state.integers.end()) throw InputError("the state of system 'sem' has no built_step");
  if (params_.rebuild_every <= 1 || step->second > w.step ||
      w.step - step->second >= std::max(1, params_.rebuild_every))
    throw InputError("the state of system 'sem' holds a cell list built at step " +
                     std::to_string(step->second) + ", which step " + std::to_string(w.step) +
                     " cannot reuse with sem.rebuild_every = " + std::to_string(params_.rebuild_every));
  for (const char* key : {"x", "y", "z"}) {
    const auto a = state.arrays.find(key);
    if (a == state.arrays.end() || a->second.size() != n)
      throw InputError(std::string("the state of system 'sem' needs an array '") + key + "' of " +
                       std::to_string(n) + " values (one per element)");
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(a->second[i]))
        throw InputError(std::string("the state of system 'sem' holds a build position ") + key + " = " +
                         std::to_string(a->second[i]) + " of element " + std::to_string(i) +
                         ", not a finite number");
  }
  const std::size_t cap = w.elements.capacity();
  xb_.ensure(cap);
  yb_.ensure(cap);
  zb_.ensure(cap);
  xb_.upload(state.arrays.at("x").data(), n);
  yb_.upload(state.arrays.at("y").data(), n);
  zb_.upload(state.arrays.at("z").data(), n);
  note_build(w, step->second);
  restored_ = true;
}

void SemSystem::run(World& w, const StepContext& ctx) {
  const bool build = build_next_;
  build_next_ = true;  // a run() without prepare() builds
  const std::size_t n = w.elements.size();
  if (n == 0) return;
  const std::size_t cap = w.elements.capacity();
  xm_.ensure(cap);
  ym_.ensure(cap);
  zm_.ensure(cap);
  moved_.ensure(cap);
  moved_max_.ensure(1);
  const bool reuses = params_.rebuild_every > 1;
  if (reuses) {
    xb_.ensure(cap);
    yb_.ensure(cap);
    zb_.ensure(cap);
  }
  if (build) note_build(w, ctx.step);
  if (!build && restored_) {  // the first step after restore_state(): the list the saving run reused
    build_list(w, std::as_const(xb_).span(), std::as_const(yb_).span(), std::as_const(zb_).span());
    restored_ = false;
  }
  if (build && reuses)
    exec::parallel_for(n,
                       CopyPositions{w.x.span(), w.y.span(), w.z.span(), xb_.span(), yb_.span(), zb_.span()});
  if (!build) {
    exec::parallel_for(n,
                       DisplacementSinceBuild{w.x.span(), w.y.span(), w.z.span(), std::as_const(xb_).span(),
                                              std::as_const(yb_).span(), std::as_const(zb_).span(),
                                              moved_.span().subspan(0, n), w.box});
    exec::max_into(std::as_const(moved_).span().subspan(0, n), moved_max_.span(), reduce_temp_);
  }
  const auto dt = static_cast<float>(ctx.dt);
  if (kernel_.cell_types > 0)
    rk2_stages<true>(w, dt, build);
  else
    rk2_stages<false>(w, dt, build);
  if (params_.temperature > 0.0)
    exec::parallel_for(
        n, ElementNoise{w.x.span(), w.y.span(), w.z.span(), w.cell.span(), w.first.span(), w.cell_id.span(),
                        w.seed, ctx.step,
                        static_cast<float>(std::sqrt(2.0 * params_.temperature * ctx.dt / params_.friction)),
                        w.box});
}

void SemSystem::compute_forces(World& w, Span<float> fx, Span<float> fy, Span<float> fz) {
  built_ = false;  // the list is built here on positions the next step's reuse would not know
  exec::parallel_for(w.elements.size(),
                     ElementForceOut{make_force(w, w.x.span(), w.y.span(), w.z.span(), false), fx, fy, fz});
}

}  // namespace tissue::sem
