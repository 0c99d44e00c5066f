#include "modules/gene_network/user_network.hpp"

#include "engine/exec/backend.hpp"
#include "engine/exec/group_for.hpp"
#include "engine/exec/parallel_for.hpp"
#include "modules/gene_network/gene_network.hpp"

#if defined(TISSUE_BACKEND_CUDA)
#include "cuda/runtime_kernel.hpp"
#endif

namespace tissue::grn {

namespace {

/// means[j * stride + c] = mean of species[j] over the neighbours of cell c (0 without), summed in the
/// order and precision of the built-in NetworkStage so that the two networks see the same means.
struct NeighbourMeans {
  using Value = NeighbourSum<kMaxMeanSpecies>;
  Span<const float> eval;
  Span<float> means;
  std::size_t stride;
  Span<const float> cx, cy, cz;
  CellList::View bins;
  float neighbour_distance2;
  Box box;
  std::int32_t species[kMaxMeanSpecies];
  std::int32_t count;
  int lanes = 1;  ///< exec::group_for's G, the built-in stage's (exec::lanes_for of the cell count)

  TISSUE_HD Value partial(std::size_t c, int lane) const {
    Value sum;
    for_each_neighbour_cell(bins, box, cx, cy, cz, c, neighbour_distance2, lane, lanes,
                            [&](std::size_t other) {
                              for (int j = 0; j < count; ++j)
                                sum.s[j] += eval[static_cast<std::size_t>(species[j]) * stride + other];
                              ++sum.count;
                            });
    return sum;
  }
  TISSUE_HD void finish(std::size_t c, const Value& sum) const {
    const float inv = sum.count > 0 ? 1.0f / static_cast<float>(sum.count) : 0.0f;
    for (int j = 0; j < count; ++j) means[static_cast<std::size_t>(j) * stride + c] = sum.s[j] * inv;
  }
};

/// to[c] = max(0, from[c]): the adhesion input passes through the network's stages as the built-in's
/// seventh species does (zero rate, clamped), so both networks read the same A at each stage.
struct ClampedCopy {
  Span<const float> from;
  Span<float> to;
  TISSUE_HD void operator()(std::size_t c) const { to[c] = from[c] > 0.0f ? from[c] : 0.0f; }
};

/// volume[c] = count[c] * element_volume: the cell's volume, its elements each an equal share of cytoplasm
/// (Newman 2005).
struct VolumeFromCount {
  Span<const std::int32_t> count;
  Span<float> volume;
  float element_volume;
  TISSUE_HD void operator()(std::size_t c) const {
    volume[c] = static_cast<float>(count[c]) * element_volume;
  }
};

/// Layout of the generated kernel's UserNetworkFields argument.
struct FieldPointers {
  const float* p[kMaxNetworkFields];
};

}  // namespace

UserNetworkSystem::UserNetworkSystem(UserNetworkSpec spec, NoiseParams noise)
    : spec_(std::move(spec)), noise_(noise) {
#if defined(TISSUE_BACKEND_CUDA)
  if (exec::backend() == exec::Backend::cuda) {
    kernel_ =
        std::make_unique<cuda::RuntimeKernel>(cuda_source(spec_), "user_network_stage", "gene_network.cu");
    if (!spec_.events.empty())
      events_kernel_ = std::make_unique<cuda::RuntimeKernel>(events_cuda_source(spec_), "user_network_events",
                                                             "gene_network_events.cu");
    return;
  }
#endif
  host_ = std::make_unique<HostNetworkEvaluator>(spec_);
  if (!spec_.events.empty()) host_events_ = std::make_unique<HostEventEvaluator>(spec_);
}

UserNetworkSystem::~UserNetworkSystem() = default;

AccessList UserNetworkSystem::access() const {
  AccessList a = adhesion_input_access(membrane_ != nullptr);
  a.read("cells", "species");
  if (!spec_.mean_species.empty()) a.read("cells", "cx", "cy", "cz");  // the neighbours
  a.read("cells", spec_.fields);
  declare_gene_noise_access(a, noise_);
  a.write("cells", "species");
  if (!spec_.events.empty()) a.read_write("cells", kEventColumn);
  if (element_volume_ > 0.0) {
    a.read("cells", "count");
    a.write("cells", kVolumeInput);
  }
  if (!spec_.suprabasal.empty()) a.read_write("cells", "flags");  // the other bits are kept
  return a;
}

void UserNetworkSystem::stage(World& w, Span<const float> eval, Span<const float> base, Span<float> out,
                              double h, Span<std::uint32_t> flags) {
  const std::size_t n = w.cells.size(), stride = w.cells.capacity();
  if (!spec_.mean_species.empty()) {
    const auto d = static_cast<float>(spec_.neighbour_distance);
    NeighbourMeans means{
        eval, means_.span(), stride, w.cx.span(), w.cy.span(), w.cz.span(), bins_.view(), d * d, w.box, {},
        0};
    for (int species : spec_.mean_species) means.species[means.count++] = species;
    means.lanes = exec::lanes_for(n);
    exec::group_for(means.lanes, n, means);
  }
  std::vector<const float*>& fields = field_columns_;  // reused: no allocation per stage
  fields.clear();
  for (const auto& f : spec_.fields) fields.push_back(w.cells.column<float>(f).span().data());
  if (host_) {
    host_->stage(eval.data(), base.data(), out.data(), means_.span().data(), fields, flags.data(),
                 w.flag_bit(kSuprabasalFlag), stride, n, h);
    return;
  }
#if defined(TISSUE_BACKEND_CUDA)
  const float* e = eval.data();
  const float* b = base.data();
  float* o = out.data();
  const float* m = means_.span().data();
  FieldPointers f{};
  for (std::size_t i = 0; i < fields.size(); ++i) f.p[i] = fields[i];
  unsigned* fl = flags.empty() ? nullptr : flags.data();
  unsigned bit = w.flag_bit(kSuprabasalFlag);
  unsigned long long st = stride, count = n;
  void* args[] = {&e, &b, &o, &m, &f, &fl, &bit, &st, &count, &h};
  kernel_->launch(n, args);
#endif
}

void UserNetworkSystem::run(World& w, const StepContext& ctx) {
  const std::size_t n = w.cells.size();
  if (n == 0) return;
  const std::size_t stride = w.cells.capacity();
  const Span<float> species = species_column(w).span();
  if (element_volume_ > 0.0)
    exec::parallel_for(n, VolumeFromCount{w.count.span(), w.cells.column<float>(kVolumeInput).span(),
                                          static_cast<float>(element_volume_)});
  compute_adhesion_input(w, spec_.species.size(), membrane_.get(), heights_);
  // the noise first (Lie splitting), so that the last stage sets the suprabasal bit from the final state
  add_gene_noise(w, spec_.species.size(), noise_, ctx);
  if (!spec_.mean_species.empty()) {
    const auto d = static_cast<float>(spec_.neighbour_distance);
    bins_.build(w.cx.span(), w.cy.span(), w.cz.span(), Span<const std::int32_t>(), n, w.box, d, 8.0f * d);
    means_.ensure(spec_.mean_species.size() * stride);
  }
  mid_.ensure(species.size());
  // mid = S + dt/2 f(S), then S <- S + dt f(mid); the adhesion row is an input carried along, clamped
  const Span<float> mid = mid_.span();
  const std::size_t a = spec_.species.size() * stride;
  const Span<float> adhesion(species.data() + a, n), mid_adhesion(mid.data() + a, n);
  exec::parallel_for(n, ClampedCopy{adhesion, mid_adhesion});
  stage(w, species, species, mid, 0.5 * ctx.dt, Span<std::uint32_t>());
  stage(w, mid, species, species, ctx.dt, spec_.suprabasal.empty() ? Span<std::uint32_t>() : w.flags.span());
  exec::parallel_for(n, ClampedCopy{mid_adhesion, adhesion});
  if (!spec_.events.empty()) run_events(w, ctx);
}

void UserNetworkSystem::run_events(World& w, const StepContext& ctx) {
  const std::size_t n = w.cells.size(), stride = w.cells.capacity();
  const Span<float> species = species_column(w).span();
  const Span<float> prev = w.cells.column<float>(kEventColumn).span();
  if (!spec_.mean_species.empty()) {  // the means of the final state (the bins of this step's centres)
    const auto d = static_cast<float>(spec_.neighbour_distance);
    NeighbourMeans means{
        species, means_.span(), stride, w.cx.span(), w.cy.span(), w.cz.span(), bins_.view(), d * d, w.box, {},
        0};
    for (int s : spec_.mean_species) means.species[means.count++] = s;
    means.lanes = exec::lanes_for(n);
    exec::group_for(means.lanes, n, means);
  }
  std::vector<const float*>& fields = field_columns_;
  fields.clear();
  for (const auto& f : spec_.fields) fields.push_back(w.cells.column<float>(f).span().data());
  const double time = ctx.time + ctx.dt;  // the end of the step
  if (host_events_) {
    host_events_->run(species.data(), prev.data(), means_.span().data(), fields, stride, n, time);
    return;
  }
#if defined(TISSUE_BACKEND_CUDA)
  float* s = species.data();
  float* p = prev.data();
  const float* m = means_.span().data();
  FieldPointers f{};
  for (std::size_t i = 0; i < fields.size(); ++i) f.p[i] = fields[i];
  unsigned long long st = stride, count = n;
  double t = time;
  void* args[] = {&s, &p, &m, &f, &st, &count, &t};
  events_kernel_->launch(n, args);
#endif
}

}  // namespace tissue::grn
