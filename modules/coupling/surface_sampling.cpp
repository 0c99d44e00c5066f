#include "modules/coupling/surface_sampling.hpp"

#include <stdexcept>

#include "engine/exec/parallel_for.hpp"

namespace tissue::coupling {

namespace {

/// Kernel: the samples of cell c (see SurfaceSamplingSystem).
template <class Real>
struct SampleSurfaceAtCells {
  TriangleIndex::View membrane;
  const Real* field;  ///< species-major, `vertices` per species
  std::size_t vertices;
  int species;
  float* out[kMaxSampledSpecies];  ///< cell columns
  Span<const float> cx, cy, cz;
  TISSUE_HD void operator()(std::size_t c) const {
    const SurfaceHit hit = membrane.closest(cx[c], cy[c], cz[c]);
    if (hit.triangle < 0) {
      for (int s = 0; s < species; ++s) out[s][c] = 0.0f;
      return;
    }
    const auto t = static_cast<std::size_t>(hit.triangle);
    const float* v = membrane.corners.data() + 9 * t;
    float w[3];
    barycentric(hit.point, v, v + 3, v + 6, w);
    for (int s = 0; s < species; ++s) {
      const Real* u = field + static_cast<std::size_t>(s) * vertices;
      Real sum = Real(0);
      for (int k = 0; k < 3; ++k)
        sum += static_cast<Real>(w[k]) *
               u[static_cast<std::size_t>(membrane.faces[3 * t + static_cast<std::size_t>(k)])];
      out[s][c] = static_cast<float>(sum);
    }
  }
};

}  // namespace

std::string surface_sample_column(const std::string& field, const std::string& species) {
  return field + "_" + species;
}

template <class Real>
std::vector<std::string> add_surface_sample_columns(World& world, const SurfaceField<Real>& field) {
  if (field.species_count() > kMaxSampledSpecies)
    throw std::invalid_argument("surface field " + field.name() + ": at most " +
                                std::to_string(kMaxSampledSpecies) + " species can be sampled by cells");
  std::vector<std::string> names;
  for (const auto& s : field.species_names()) {
    names.push_back(surface_sample_column(field.name(), s));
    // the new column's device rows start as its (zero) host mirror; the other columns are left as they are
    world.cells.add_column<float>(names.back()).upload(world.cells.size());
  }
  return names;
}
template std::vector<std::string> add_surface_sample_columns<float>(World&, const SurfaceField<float>&);
template std::vector<std::string> add_surface_sample_columns<double>(World&, const SurfaceField<double>&);

template <class Real>
SurfaceSamplingSystem<Real>::SurfaceSamplingSystem(SurfaceField<Real>& field,
                                                   std::shared_ptr<const TriangleIndex> membrane)
    : field_(field), membrane_(std::move(membrane)) {
  if (!membrane_) throw std::invalid_argument("surface sampling needs the membrane's index");
  for (const auto& s : field_.species_names()) columns_.push_back(surface_sample_column(field_.name(), s));
}

template <class Real>
AccessList SurfaceSamplingSystem<Real>::access() const {
  return AccessList().read("surface", field_.name()).read("cells", "cx", "cy", "cz").write("cells", columns_);
}

template <class Real>
void SurfaceSamplingSystem<Real>::run(World& w, const StepContext&) {
  const std::size_t n = w.cells.size();
  if (n == 0) return;
  SampleSurfaceAtCells<Real> k{membrane_->view(),
                               field_.current().data(),
                               field_.vertices(),
                               field_.species_count(),
                               {},
                               w.cx.span(),
                               w.cy.span(),
                               w.cz.span()};
  for (std::size_t s = 0; s < columns_.size(); ++s)
    k.out[s] = w.cells.column<float>(columns_[s]).span().data();
  exec::parallel_for(n, k);
}

template class SurfaceSamplingSystem<float>;
template class SurfaceSamplingSystem<double>;

}  // namespace tissue::coupling
