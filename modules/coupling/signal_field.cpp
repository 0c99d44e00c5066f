#include "modules/coupling/signal_field.hpp"

#include <cmath>
#include <sstream>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/parallel_for.hpp"
#include "modules/coupling/grid_coupling_kernels.hpp"

namespace tissue::coupling {

namespace {
/// out[n] = a[n] b[n].
template <class Real>
struct Product {
  const Real* a;
  const Real* b;
  Span<Real> out;
  TISSUE_HD void operator()(std::size_t n) const { out[n] = a[n] * b[n]; }
};

/// The second-order Laplacian of the grid's dimension: 7-point in 3D, 5-point in 2D.
grid::Stencil stencil_of(const GridShape& shape) {
  return shape.dims() == 3 ? grid::Stencil::seven : grid::Stencil::five;
}
}  // namespace

double SignalFieldParams::stability_limit() const {
  const int dims = shape.dims();
  const double h = shape.h;
  const double rho = grid::laplacian_spectral_radius(stencil_of(shape), h);
  const double k_max =
      std::max(uptake[0], uptake[1]) / std::pow(h, dims) / (exclude_cells ? min_free_fraction : 1.0);
  return 2.0 / (diffusivity * rho + decay + k_max);
}

template <class Real>
GridGeometry<Real> SignalFieldParams::geometry() const {
  return make_grid_geometry<Real>(shape, faces, exclude_cells ? 2 : 1, [this](int f, int s) {
    return s == 0 ? dirichlet[static_cast<std::size_t>(f)] : 1.0;  // alpha's ghosts are mirrored (README)
  });
}
template GridGeometry<float> SignalFieldParams::geometry<float>() const;
template GridGeometry<double> SignalFieldParams::geometry<double>() const;

namespace {

/// Reads { boundary = "neumann"|"dirichlet", value = v } of one z face.
void read_face(const io::ScenarioTable& t, const std::string& key, SignalFieldParams& p, int face,
               const std::string& fallback) {
  const auto f = t.table(key);
  const std::string b = f.string("boundary", fallback, {"neumann", "dirichlet"});
  p.faces[static_cast<std::size_t>(face)] = b == "neumann" ? GridBoundary::neumann : GridBoundary::dirichlet;
  const double v = f.number("value", 0.0, io::Range::non_negative());
  if (b == "neumann" && f.has("value"))
    f.fail("value", "a zero-flux (neumann) face takes no value; use boundary = \"dirichlet\"");
  p.dirichlet[static_cast<std::size_t>(face)] = v;
}

/// Whole number of nodes of spacing h in length L, or an error at `key`.
int whole_nodes(const io::ScenarioTable& t, const std::string& key, double length, double h) {
  const double n = length / h;
  const double rounded = std::round(n);
  if (rounded < 2.0 || std::abs(n - rounded) > 1e-6 * n) {
    std::ostringstream msg;
    msg << "the periodic length " << length << " must be a whole number (>= 2) of grid spacings, got " << n
        << " spacings of " << h;
    t.fail(key, msg.str());
  }
  return static_cast<int>(rounded);
}

}  // namespace

SignalFieldParams read_signal_field_params(const io::ScenarioTable& t, const std::string& name,
                                           const Box& box) {
  SignalFieldParams p;
  p.name = name;
  p.where = t.where();
  const double h = t.number("spacing", 0.2, io::Range::positive());
  const double height = t.number("height", 4.0, io::Range::positive());
  p.shape.h = h;
  if (box.periodic_x) {
    p.shape.nx = whole_nodes(t, "spacing", static_cast<double>(box.lx), h);
    p.shape.ny = whole_nodes(t, "spacing", static_cast<double>(box.ly), h);
  } else {
    p.shape.nx = std::max(2, static_cast<int>(std::lround(box.lx / h)));
    p.shape.ny = std::max(2, static_cast<int>(std::lround(box.ly / h)));
    for (int f = 0; f < 4; ++f) p.faces[static_cast<std::size_t>(f)] = GridBoundary::neumann;
  }
  p.shape.nz = std::max(2, static_cast<int>(std::lround(height / h)));
  const double nodes = static_cast<double>(p.shape.nx) * p.shape.ny * p.shape.nz;
  if (nodes > 2e9) t.fail("spacing", "the grid would have more than 2e9 nodes");
  read_face(t, "bottom", p, 4, "neumann");
  read_face(t, "top", p, 5, "dirichlet");
  p.diffusivity = t.number("diffusivity", p.diffusivity, io::Range::non_negative());
  p.decay = t.number("decay", p.decay, io::Range::non_negative());
  p.initial = t.number("initial", p.initial, io::Range::non_negative());
  const auto secretion = t.table("secretion"), uptake = t.table("uptake");
  p.secretion = {secretion.number("basal", 0.0, io::Range::non_negative()),
                 secretion.number("suprabasal", 0.0, io::Range::non_negative())};
  p.uptake = {uptake.number("basal", 0.0, io::Range::non_negative()),
              uptake.number("suprabasal", 0.0, io::Range::non_negative())};
  p.exclude_cells = t.boolean("exclude_cells", false);
  p.element_volume = t.number("element_volume", p.element_volume, io::Range::positive());
  p.min_free_fraction = t.number("min_free_fraction", p.min_free_fraction, io::Range::closed(1e-6, 1.0));
  if (!p.exclude_cells && (t.has("element_volume") || t.has("min_free_fraction")))
    t.fail(t.has("element_volume") ? "element_volume" : "min_free_fraction", "needs exclude_cells = true");
  return p;
}

template <class Real>
GridField<Real>& add_signal_field(World& world, const SignalFieldParams& params) {
  std::vector<std::string> species{params.name};
  if (params.exclude_cells) species.push_back(params.name + "_free");
  auto& field = world.add_field(
      std::make_unique<GridField<Real>>(params.name, params.shape, species, params.geometry<Real>()));
  const std::size_t nodes = field.cells();
  for (Span<Real> buffer : {field.current(), field.next()}) {
    exec::fill(buffer.subspan(0, nodes), static_cast<Real>(params.initial));
    if (params.exclude_cells) exec::fill(buffer.subspan(nodes, nodes), Real(1));
  }
  const std::size_t rows = world.cells.size();
  // the new columns' device rows start as their (zero) host mirrors; the other columns are left as they are
  world.cells.add_column<float>(params.name).upload(rows);
  world.cells.add_column<float>(params.name + "_gradient", 3).upload(rows);
  return field;
}
template GridField<float>& add_signal_field<float>(World&, const SignalFieldParams&);
template GridField<double>& add_signal_field<double>(World&, const SignalFieldParams&);

// ---- sampling ----

template <class Real>
FieldSamplingSystem<Real>::FieldSamplingSystem(GridField<Real>& field) : field_(field) {}

template <class Real>
AccessList FieldSamplingSystem<Real>::access() const {
  return AccessList()
      .read("cells", "cx", "cy", "cz")
      .read_previous("grid", field_.name())
      .write("cells", field_.name(), field_.name() + "_gradient");
}

template <class Real>
void FieldSamplingSystem<Real>::run(World& w, const StepContext&) {
  const std::size_t n = w.cells.size();
  if (n == 0) return;
  auto& value = w.cells.column<float>(field_.name());
  auto& gradient = w.cells.column<float>(field_.name() + "_gradient");
  exec::parallel_for(
      n, SampleAtCells<Real>{field_.geometry(), field_.shape().h, field_.current().data(), 0, w.cx.span(),
                             w.cy.span(), w.cz.span(), value.span(), gradient.span(), w.cells.capacity()});
}

// ---- the signal ----

template <class Real>
SignalFieldSystem<Real>::SignalFieldSystem(const SignalFieldParams& params, GridField<Real>& field)
    : params_(params), field_(field) {}

template <class Real>
AccessList SignalFieldSystem<Real>::access() const {
  AccessList a;
  a.read("grid", params_.name);
  if (has_sources()) a.read("cells", "cx", "cy", "cz", "flags");
  if (params_.exclude_cells) a.read("elements", "x", "y", "z");
  return a.write("grid", params_.name);
}

template <class Real>
bool SignalFieldSystem<Real>::has_sources() const {
  return params_.secretion[0] != 0.0 || params_.secretion[1] != 0.0 || params_.uptake[0] != 0.0 ||
         params_.uptake[1] != 0.0;
}

template <class Real>
void SignalFieldSystem<Real>::check_step_length(double h) const {
  const double limit = params_.stability_limit();
  if (h <= limit) return;
  std::ostringstream msg;
  msg << params_.where << ": signal." << params_.name << ": the step " << h
      << " exceeds the explicit stability limit " << limit
      << " = 2 / (D rho + decay + uptake / h^3) of this grid; sub-cycle the field with [schedule] "
      << params_.name << " = { substeps = " << static_cast<long long>(std::ceil(h / limit))
      << " } or coarsen its spacing";
  throw InputError(msg.str());
}

template <class Real>
void SignalFieldSystem<Real>::run(World& w, const StepContext& ctx) {
  const std::size_t nodes = field_.cells();
  const std::size_t n = w.cells.size();
  const GridGeometry<Real> g = field_.geometry();
  const double h = field_.shape().h;
  const bool sources = n > 0 && has_sources();
  if (sources) {
    rate_.ensure(n);
    px_.ensure(n);
    py_.ensure(n);
    pz_.ensure(n);
    source_.ensure(nodes);
    CellRelease<Real> release{g,
                              h,
                              field_.current().data(),
                              0,
                              w.cx.span(),
                              w.cy.span(),
                              w.cz.span(),
                              w.flags.span(),
                              w.flag_bit(kStateFlag),
                              {params_.secretion[0], params_.secretion[1]},
                              {params_.uptake[0], params_.uptake[1]},
                              rate_.span(),
                              px_.span(),
                              py_.span(),
                              pz_.span()};
    exec::parallel_for(n, release);
    const auto extent = static_cast<float>(g.nz * h);
    bins_.build(px_.span(), py_.span(), pz_.span(), Span<const std::int32_t>(), n, w.box,
                static_cast<float>(h), std::max(extent, 3.0f * static_cast<float>(h)));
    exec::parallel_for(nodes,
                       DepositGather<Real>{g, h, 1.0 / std::pow(h, field_.shape().dims()), bins_.view(),
                                           Span<const double>(rate_.span().data(), n), source_.span()});
  }
  const auto inv_h2 = static_cast<Real>(1.0 / (h * h));
  if (params_.exclude_cells) {
    // the free fraction alpha of each node from the elements' volumes (cloud-in-cell, as the deposits)
    const std::size_t elements = w.elements.size();
    occupied_.ensure(nodes);
    if (elements > 0) {
      ex_.ensure(elements);
      ey_.ensure(elements);
      ez_.ensure(elements);
      if (element_volume_.size() < elements) {
        element_volume_.resize(elements);
        exec::fill(element_volume_.span(), params_.element_volume);
      }
      exec::parallel_for(elements, ElementClamp<Real>{g, h, w.x.span(), w.y.span(), w.z.span(), ex_.span(),
                                                      ey_.span(), ez_.span()});
      const auto extent = static_cast<float>(g.nz * h);
      element_bins_.build(ex_.span(), ey_.span(), ez_.span(), Span<const std::int32_t>(), elements, w.box,
                          static_cast<float>(h), std::max(extent, 3.0f * static_cast<float>(h)));
      exec::parallel_for(
          nodes,
          DepositGather<Real>{g, h, 1.0 / std::pow(h, field_.shape().dims()), element_bins_.view(),
                              Span<const double>(element_volume_.span().data(), elements), occupied_.span()});
    } else {
      exec::fill(occupied_.span(), Real(0));
    }
    exec::parallel_for(nodes, FreeFraction<Real>{Span<const Real>(occupied_.span()),
                                                 static_cast<Real>(params_.min_free_fraction),
                                                 field_.current().data() + nodes});
    GridGeometry<Real> mirror = g;
    for (auto& f : mirror.face)
      if (f == GridBoundary::dirichlet) f = GridBoundary::neumann;
    exec::parallel_for(
        nodes, SignalEulerExcluded<Real>{
                   g, mirror, inv_h2, static_cast<Real>(params_.diffusivity),
                   static_cast<Real>(params_.decay), static_cast<Real>(ctx.dt), field_.current().data(),
                   sources ? Span<const Real>(source_.span()) : Span<const Real>(), field_.next().data()});
    field_.swap();
    return;
  }
  exec::parallel_for(
      nodes, SignalEuler<Real>{
                 g, stencil_of(field_.shape()), inv_h2, static_cast<Real>(params_.diffusivity),
                 static_cast<Real>(params_.decay), static_cast<Real>(ctx.dt), field_.current().data(),
                 sources ? Span<const Real>(source_.span()) : Span<const Real>(), field_.next().data()});
  field_.swap();
}

template <class Real>
double field_amount(GridField<Real>& field) {
  const double volume = std::pow(field.shape().h, field.shape().dims());
  const std::size_t nodes = field.cells();
  // a field decomposed over ranks holds no device state: its host mirror (whole on rank 0 after a gather)
  DeviceBuffer<Real> copy;
  if (!field.resident()) copy.assign(field.host());
  const Span<Real> u = field.resident() ? field.current() : copy.span();
  if (field.species_count() < 2) return exec::sum(Span<const Real>(u.subspan(0, nodes))) * volume;
  DeviceBuffer<Real> product(nodes);  // alpha u
  exec::parallel_for(nodes, Product<Real>{u.data(), u.data() + nodes, product.span()});
  return exec::sum(Span<const Real>(product.span())) * volume;
}
template double field_amount<float>(GridField<float>&);
template double field_amount<double>(GridField<double>&);

template class FieldSamplingSystem<float>;
template class FieldSamplingSystem<double>;
template class SignalFieldSystem<float>;
template class SignalFieldSystem<double>;

}  // namespace tissue::coupling
