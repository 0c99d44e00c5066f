#include "modules/gene_network/gene_network.hpp"

#include "engine/exec/group_for.hpp"
#include "engine/exec/parallel_for.hpp"

#include <stdexcept>
#include <string>

namespace tissue::grn {

namespace {
Hill<double> read_hill(const io::ScenarioTable& t, const std::string& suffix, const Hill<double>& d) {
  return {t.number("a_" + suffix, d.a, io::Range::non_negative()),
          t.number("b_" + suffix, d.b, io::Range::non_negative()),
          t.number("c_" + suffix, d.c, io::Range::non_negative()), t.number("h_" + suffix, d.h)};
}
}  // namespace

Column<float>& add_species_column(World& world, const std::vector<std::string>& names) {
  if (world.cells.find(kSpeciesColumn))
    throw std::logic_error("the cells already have a column '" + std::string(kSpeciesColumn) + "'");
  auto& column = world.cells.add_column<float>(kSpeciesColumn, static_cast<int>(names.size()));
  column.set_component_names(names);
  world.flag_bit(kSuprabasalFlag);
  return column;
}

GeneNetworkParams read_gene_network_params(const io::ScenarioTable& t) {
  GeneNetworkParams p;
  auto& r = p.rates;
  const auto rate = [&](const char* key, double& v) { v = t.number(key, v, io::Range::non_negative()); };
  rate("k_a", r.k_a);
  rate("k_d", r.k_d);
  rate("d_b", r.d_b);
  rate("d_n", r.d_n);
  rate("d_d", r.d_d);
  rate("d_o", r.d_o);
  rate("d_v", r.d_v);
  rate("d_m", r.d_m);
  r.bn = read_hill(t, "bn", r.bn);
  r.on = read_hill(t, "on", r.on);
  r.nd = read_hill(t, "nd", r.nd);
  r.vo = read_hill(t, "vo", r.vo);
  r.go = read_hill(t, "go", r.go);
  r.ov = read_hill(t, "ov", r.ov);
  r.av = read_hill(t, "av", r.av);
  r.om = read_hill(t, "om", r.om);
  r.tgf_beta = t.number("tgf_beta", r.tgf_beta, io::Range::non_negative());
  p.tgf_beta_field = t.string("tgf_beta_field", "");
  if (!p.tgf_beta_field.empty() && t.has("tgf_beta"))
    t.fail("tgf_beta_field", "give either a constant tgf_beta or a tgf_beta_field, not both");
  p.neighbour_distance = t.number("neighbour_distance", p.neighbour_distance, io::Range::positive());
  p.noise = read_noise_params(t);
  const auto init = t.table("initial");
  for (int k = 0; k < kAdhesion; ++k)
    p.initial[static_cast<std::size_t>(k)] = init.number(kSpeciesNames[k], 0.0, io::Range::non_negative());
  return p;
}

NoiseParams read_noise_params(const io::ScenarioTable& t) {
  NoiseParams noise;
  noise.sigma = t.number("noise", 0.0, io::Range::non_negative());
  const std::string kind = t.string("noise_kind", "additive", {"additive", "langevin", "multiplicative"});
  noise.kind = kind == "langevin"         ? NoiseKind::langevin
               : kind == "multiplicative" ? NoiseKind::multiplicative
                                          : NoiseKind::additive;
  if (t.has("noise_kind") && !noise.enabled())
    t.fail("noise_kind", "needs gene_network.noise > 0 (noise in the network's equations)");
  return noise;
}

void add_gene_noise(World& w, std::size_t rows, const NoiseParams& noise, const StepContext& ctx) {
  if (!noise.enabled() || w.cells.size() == 0) return;
  if (rows > kMaxNoiseSpecies || ctx.substep < 0 || ctx.substep >= kMaxNoiseSubsteps)
    throw std::length_error("gene network noise: " + std::to_string(rows) + " species (at most " +
                            std::to_string(kMaxNoiseSpecies) + "), sub-step " + std::to_string(ctx.substep) +
                            " (at most " + std::to_string(kMaxNoiseSubsteps - 1) + ")");
  exec::parallel_for(w.cells.size(),
                     GeneNoise{species_column(w).span(), w.cells.capacity(), rows, w.cell_id.span(), w.seed,
                               ctx.step, ctx.substep, noise.sigma, ctx.dt, noise.kind});
}

void declare_gene_noise_access(AccessList& a, const NoiseParams& noise) {
  if (noise.enabled()) a.read("cells", "id");
}

void compute_adhesion_input(World& w, std::size_t row, const TriangleIndex* membrane,
                            DeviceBuffer<float>& scratch) {
  const Span<const std::int32_t> type = w.elements.column<std::int32_t>(kElementTypeColumn).span();
  Span<const float> height = w.z.span();
  if (membrane) {
    scratch.ensure(w.elements.size());
    exec::parallel_for(w.elements.size(),
                       MembraneHeight{w.x.span(), w.y.span(), w.z.span(), type, kAdhesiveElementType,
                                      membrane->view(), scratch.span()});
    height = scratch.span();
  }
  exec::parallel_for(w.cells.size(),
                     AdhesionInput{height, type, w.first.span(), w.count.span(), kAdhesiveElementType,
                                   species_column(w).span(), w.cells.capacity(), row});
}

GeneNetworkSystem::GeneNetworkSystem(const GeneNetworkParams& params)
    : params_(params), rates_(params.rates.as<float>()) {}

AccessList adhesion_input_access(bool membrane) {
  AccessList a;
  if (membrane) a.read("elements", "x", "y");
  return a.read("elements", "z", "type").read("cells", "first", "count");
}

AccessList GeneNetworkSystem::access() const {
  AccessList a = adhesion_input_access(membrane_ != nullptr);
  a.read("cells", "cx", "cy", "cz", "species", "flags");  // flags: the other bits are kept
  if (!params_.tgf_beta_field.empty()) a.read("cells", params_.tgf_beta_field);
  declare_gene_noise_access(a, params_.noise);
  return a.write("cells", "species", "flags");
}

void GeneNetworkSystem::run(World& w, const StepContext& ctx) {
  if (w.cells.size() == 0) return;
  prepare_inputs(w, ctx);
  stages(w, ctx);
}

void GeneNetworkSystem::prepare_inputs(World& w, const StepContext& ctx) {
  if (w.cells.size() == 0) return;
  compute_adhesion_input(w, kAdhesion, membrane_.get(), heights_);
  // the noise first (Lie splitting), so that the stages below set the suprabasal bit from the final state
  add_gene_noise(w, kAdhesion, params_.noise, ctx);
}

void GeneNetworkSystem::stages(World& w, const StepContext& ctx) {
  const std::size_t n = w.cells.size();
  if (n == 0) return;
  const std::size_t stride = w.cells.capacity();
  const Span<float> species = species_column(w).span();
  const auto d = static_cast<float>(params_.neighbour_distance);
  bins_.build(w.cx.span(), w.cy.span(), w.cz.span(), Span<const std::int32_t>(), n, w.box, d, 8.0f * d,
              params_.z_bin_points);
  mid_.ensure(species.size());
  const auto dt = static_cast<float>(ctx.dt);
  NetworkStage stage{species,
                     species,
                     mid_.span(),
                     stride,
                     w.cx.span(),
                     w.cy.span(),
                     w.cz.span(),
                     bins_.view(),
                     d * d,
                     w.box,
                     rates_,
                     0.5f * dt,
                     Span<std::uint32_t>(),
                     w.flag_bit(kSuprabasalFlag),
                     params_.tgf_beta_field.empty()
                         ? Span<const float>()
                         : Span<const float>(w.cells.column<float>(params_.tgf_beta_field).span()),
                     params_.lanes > 0 ? params_.lanes : exec::lanes_for(n)};
  exec::group_for(stage.lanes, n, stage);  // mid = S + dt/2 f(S)
  if (midpoint_exchange_ != nullptr) midpoint_exchange_->exchange(w, mid_.span(), stride);
  stage.eval = mid_.span();
  stage.out = species;
  stage.h = dt;
  stage.flags = w.flags.span();
  exec::group_for(stage.lanes, n, stage);  // S <- S + dt f(mid)
}

}  // namespace tissue::grn
