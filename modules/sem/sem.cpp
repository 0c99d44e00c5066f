#include "modules/sem/sem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

double SemParams::effective_inter_cutoff() const {
  return inter_cutoff > 0.0 ? inter_cutoff : morse_minimum(inter);
}

double SemParams::effective_bin_size() const {
  return bin_size > 0.0 ? bin_size : std::max(effective_inter_cutoff(), 0.25);
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

SemParams read_sem_params(const io::ScenarioTable& t) {
  SemParams p;
  p.intra = read_morse(t.table("intra"), p.intra, false);
  p.adhesion = read_morse(t.table("adhesion"), p.adhesion, false);
  p.friction = t.number("friction", p.friction, io::Range::positive());
  p.intra_cutoff = t.number("intra_cutoff", p.intra_cutoff, io::Range::non_negative());
  p.inter_cutoff = t.number("inter_cutoff", p.inter_cutoff, io::Range::non_negative());
  p.inter = read_morse(t.table("inter"), p.inter, p.inter_cutoff == 0.0);
  p.bin_size = t.number("bin_size", p.bin_size, io::Range::non_negative());
  p.z_extent = t.number("z_extent", p.z_extent, io::Range::positive());
  p.basement_adhesion = t.boolean("basement_adhesion", p.basement_adhesion);
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
}

AccessList SemSystem::access() const {
  return AccessList()
      .read("elements", "x", "y", "z", "type", "cell")
      .read("cells", "first", "count")
      .write("elements", "x", "y", "z");
}

ElementForce SemSystem::make_force(World& w, Span<const float> x, Span<const float> y, Span<const float> z) {
  bins_.build(x, y, z, w.cell.span(), w.elements.size(), w.box,
              static_cast<float>(params_.effective_bin_size()), static_cast<float>(params_.z_extent));
  return ElementForce{
      x,       y,    z, element_types(w).span(), w.cell.span(), w.first.span(), w.count.span(), bins_.view(),
      kernel_, w.box};
}

void SemSystem::run(World& w, const StepContext& ctx) {
  const std::size_t n = w.elements.size();
  if (n == 0) return;
  const std::size_t cap = w.elements.capacity();
  xm_.ensure(cap);
  ym_.ensure(cap);
  zm_.ensure(cap);
  const auto dt = static_cast<float>(ctx.dt);
  // stage 1: X_mid = X + dt/2 F(X)
  exec::parallel_for(n, ElementStage{make_force(w, w.x.span(), w.y.span(), w.z.span()), w.x.span(),
                                     w.y.span(), w.z.span(), xm_.span(), ym_.span(), zm_.span(), 0.5f * dt});
  // stage 2: X <- X + dt F(X_mid), in place (each index reads only its own base entry)
  exec::parallel_for(n, ElementStage{make_force(w, xm_.span(), ym_.span(), zm_.span()), w.x.span(),
                                     w.y.span(), w.z.span(), w.x.span(), w.y.span(), w.z.span(), dt});
}

void SemSystem::compute_forces(World& w, Span<float> fx, Span<float> fy, Span<float> fz) {
  exec::parallel_for(w.elements.size(),
                     ElementForceOut{make_force(w, w.x.span(), w.y.span(), w.z.span()), fx, fy, fz});
}

}  // namespace tissue::sem
