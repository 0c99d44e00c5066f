#include "modules/coupling/signal_field_decomposed.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "engine/exec/error.hpp"
#include "engine/exec/parallel_for.hpp"
#include "modules/coupling/grid_coupling_kernels.hpp"

namespace tissue::coupling {
namespace {

constexpr const char* kIdColumn = "id";
constexpr const char* kRateColumn = "rate";

/// The nodes of a block, [i0, i1) x [j0, j1) x [0, nz), as a range of 0-based indices, x fastest.
struct BlockNodes {
  int i0, j0, nx, ny;
  TISSUE_HD void node(std::size_t b, int& i, int& j, int& k) const {
    const auto row = static_cast<std::size_t>(nx);
    const std::size_t plane = row * static_cast<std::size_t>(ny);
    i = i0 + static_cast<int>(b % row);
    j = j0 + static_cast<int>((b / row) % static_cast<std::size_t>(ny));
    k = static_cast<int>(b / plane);
  }
};

/// Runs a per-node functor of the whole grid on the block's nodes only.
template <class Real, class F>
struct OnBlock {
  GridGeometry<Real> grid;
  BlockNodes block;
  F f;
  TISSUE_HD void operator()(std::size_t b) const {
    int i = 0, j = 0, k = 0;
    block.node(b, i, j, k);
    f(grid.index(i, j, k));
  }
};

/// Copies listed nodes of every species between the whole grid's array and a compact buffer, species-major:
/// to_compact compact[s count + r] = whole[s cells + node[r]], else the reverse.
template <class Real>
struct CopyNodes {
  Span<const std::int64_t> node;
  std::size_t count, cells;
  int species;
  bool to_compact;
  Real* whole;
  Real* compact;
  TISSUE_HD void operator()(std::size_t r) const {
    const auto n = static_cast<std::size_t>(node[r]);
    for (int s = 0; s < species; ++s) {
      Real& w = whole[static_cast<std::size_t>(s) * cells + n];
      Real& c = compact[static_cast<std::size_t>(s) * count + r];
      if (to_compact)
        c = w;
      else
        w = c;
    }
  }
};

/// Index i into [0, n) on a periodic axis; false when it lies outside a non-periodic one.
bool wrap_index(int& i, int n, bool periodic) {
  if (i >= 0 && i < n) return true;
  if (!periodic) return false;
  i = i < 0 ? i + n : i - n;
  return true;
}

bool has_sources(const SignalFieldParams& p) {
  return p.secretion[0] != 0.0 || p.secretion[1] != 0.0 || p.uptake[0] != 0.0 || p.uptake[1] != 0.0;
}

/// Ghost layers a rank's cells read at most, sampling at their centres up to `outside` beyond the block's
/// nodes: the bracket's outer node (1), one more for the ceiling of the distance, and one for the move of
/// the next step (less than a spacing), so that the samples of the next step find their nodes.
int frame_needed(double outside, double h) {
  return 2 + static_cast<int>(std::ceil(outside / h));
}

/// The frame: what centres up to the halo width outside the subdomain read (frame_needed()), or, if some
/// rank's block along a split axis is narrower, that width (the GridHalo's limit); at least 2.
int frame_of(const domain::Decomposition& d, const GridShape& shape) {
  int frame = frame_needed(d.halo_width(), shape.h);
  for (int r = 0; r < d.ranks(); ++r) {
    const domain::GridBlock b = domain::grid_block(d, shape, r);
    if (d.grid().px > 1) frame = std::min(frame, b.nx());
    if (d.grid().py > 1) frame = std::min(frame, b.ny());
  }
  return std::max(frame, 2);
}

}  // namespace

template <class Real>
DecomposedSignalField<Real>::DecomposedSignalField(const SignalFieldParams& params, GridField<Real>& field,
                                                   const domain::Decomposition& decomposition,
                                                   domain::Communicator& comm)
    : params_(params),
      field_(field),
      decomposition_(decomposition),
      comm_(comm),
      halo_(decomposition, comm, field.shape(), field.geometry(), field.species_count(),
            frame_of(decomposition, field.shape())),
      cell_halo_(decomposition, comm, {"cx", "cy", "cz", kIdColumn, kRateColumn},
                 domain::HaloMode::distinct) {
  if (params.exclude_cells)
    throw InputError("signal." + params.name +
                     ": a field that excludes the cells' volume (exclude_cells) does not run decomposed yet");
  if (!(decomposition.halo_width() >= field.shape().h))
    throw std::invalid_argument("decomposed signal field: halo width " +
                                std::to_string(decomposition.halo_width()) + " below the grid spacing " +
                                std::to_string(field.shape().h));
  // the nodes the frame exchange reads (the block's within `width` of its sides, which GridHalo packs) and
  // writes (the frame's that lie in the grid, wrapped; beyond a face that is not periodic the whole grid's
  // boundary rule serves)
  const domain::GridBlock& b = halo_.block();
  const GridGeometry<Real>& g = field.geometry();
  const int width = halo_.width();
  std::vector<std::int64_t> ring_whole, frame_whole;
  for (int k = 0; k < halo_.nz(); ++k)
    for (int lj = -width; lj < b.ny() + width; ++lj)
      for (int li = -width; li < b.nx() + width; ++li) {
        const bool inside = li >= 0 && li < b.nx() && lj >= 0 && lj < b.ny();
        if (inside) {
          if (li < width || li >= b.nx() - width || lj < width || lj >= b.ny() - width) {
            ring_local_.push_back(halo_.local_index(li, lj, k));
            ring_whole.push_back(static_cast<std::int64_t>(g.index(b.i0 + li, b.j0 + lj, k)));
          }
          continue;
        }
        int i = b.i0 + li, j = b.j0 + lj;
        if (!wrap_index(i, g.nx, g.face[0] == GridBoundary::periodic) ||
            !wrap_index(j, g.ny, g.face[2] == GridBoundary::periodic))
          continue;
        frame_local_.push_back(halo_.local_index(li, lj, k));
        frame_whole.push_back(static_cast<std::int64_t>(g.index(i, j, k)));
      }
  ring_nodes_.assign(ring_whole);
  frame_nodes_.assign(frame_whole);
  for (Table* t : {&own_, &ghosts_}) {
    t->add_column<float>("cx");
    t->add_column<float>("cy");
    t->add_column<float>("cz");
    t->add_column<std::int64_t>(kIdColumn);
    t->add_column<double>(kRateColumn);
  }
}

template <class Real>
std::size_t DecomposedSignalField<Real>::merge_cells(World& w) {
  const std::size_t n = w.cells.size();
  own_.resize(n);
  if (n > 0) {
    w.cz.download(n);
    w.cell_id.download(n);
    rate_.download(own_.column<double>(kRateColumn).host_data().data(), n);
  }
  auto& cx = own_.column<float>("cx");
  auto& cy = own_.column<float>("cy");
  auto& cz = own_.column<float>("cz");
  auto& id = own_.column<std::int64_t>(kIdColumn);
  for (std::size_t c = 0; c < n; ++c) {
    cx.host(c) = w.cx.host(c);
    cy.host(c) = w.cy.host(c);
    cz.host(c) = w.cz.host(c);
    id.host(c) = w.cell_id.host(c);
    if (c > 0 && !(id.host(c - 1) < id.host(c)))
      throw std::invalid_argument("decomposed signal field: the cells are not in ascending id order");
  }
  cell_halo_.build(own_, ghosts_);

  // owned and ghost cells by id (each sender's ghosts come in its row order, ascending ids)
  const std::size_t g = ghosts_.size(), m = n + g;
  const auto& ghost_id = ghosts_.column<std::int64_t>(kIdColumn);
  std::vector<std::size_t> by_id(g);
  std::iota(by_id.begin(), by_id.end(), std::size_t{0});
  std::stable_sort(by_id.begin(), by_id.end(),
                   [&](std::size_t a, std::size_t b) { return ghost_id.host(a) < ghost_id.host(b); });
  std::vector<float> x(m), y(m), z(m);
  std::vector<double> rate(m);
  std::size_t o = 0, k = 0;
  for (std::size_t r = 0; r < m; ++r) {
    const bool own = k == g || (o < n && id.host(o) < ghost_id.host(by_id[k]));
    Table& from = own ? own_ : ghosts_;
    const std::size_t row = own ? o++ : by_id[k++];
    x[r] = from.column<float>("cx").host(row);
    y[r] = from.column<float>("cy").host(row);
    z[r] = from.column<float>("cz").host(row);
    rate[r] = from.column<double>(kRateColumn).host(row);
  }
  if (m == 0) return 0;
  mx_.assign(x);
  my_.assign(y);
  mz_.assign(z);
  merged_rate_.assign(rate);
  px_.ensure(m);
  py_.ensure(m);
  pz_.ensure(m);
  const GridGeometry<Real> geometry = field_.geometry();
  exec::parallel_for(m, ElementClamp<Real>{geometry, field_.shape().h, mx_.span(), my_.span(), mz_.span(),
                                           px_.span(), py_.span(), pz_.span()});
  return m;
}

template <class Real>
void DecomposedSignalField<Real>::step(World& w, const StepContext& ctx) {
  const std::size_t n = w.cells.size();
  const GridGeometry<Real> g = field_.geometry();
  const double h = field_.shape().h;
  const domain::GridBlock& b = halo_.block();
  const BlockNodes block{b.i0, b.j0, b.nx(), b.ny()};
  const std::size_t block_nodes = static_cast<std::size_t>(b.nx()) * static_cast<std::size_t>(b.ny()) *
                                  static_cast<std::size_t>(field_.shape().nz);
  // the undecomposed run deposits when it has cells; a node no cell reaches gathers 0 there, which leaves
  // its step as it is without a source
  const auto tissue_cells = static_cast<std::size_t>(comm_.sum(static_cast<std::int64_t>(n)));
  // how far the centres lie outside the subdomains: the frame must hold their samples (the deposits of the
  // other ranks' cells come with the ghosts, which hold every cell within the halo width >= h of a subdomain)
  if (n > 0) {
    w.cx.download(n);
    w.cy.download(n);
  }
  const double outside =
      comm_.max(decomposition_.outside(comm_.rank(), Span<const float>(w.cx.host_data().data(), n),
                                       Span<const float>(w.cy.host_data().data(), n)));
  if (frame_needed(outside, h) > halo_.width())
    throw std::invalid_argument("decomposed signal field: cell centres lie up to " + std::to_string(outside) +
                                " outside their subdomains, farther than the field's ghost frame of " +
                                std::to_string(halo_.width()) + " nodes reaches: use fewer ranks");
  bool sources = tissue_cells > 0 && has_sources(params_);
  if (sources) {
    rate_.ensure(std::max<std::size_t>(n, 1));
    px_.ensure(std::max<std::size_t>(n, 1));
    py_.ensure(std::max<std::size_t>(n, 1));
    pz_.ensure(std::max<std::size_t>(n, 1));
    if (n > 0)
      exec::parallel_for(n, CellRelease<Real>{g,
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
                                              pz_.span()});
    const std::size_t m = merge_cells(w);
    sources = m > 0;
    if (sources) {
      source_.ensure(field_.cells());
      const auto extent = static_cast<float>(g.nz * h);
      bins_.build(px_.span(), py_.span(), pz_.span(), Span<const std::int32_t>(), m, w.box,
                  static_cast<float>(h), std::max(extent, 3.0f * static_cast<float>(h)), tissue_cells);
      exec::parallel_for(
          block_nodes,
          OnBlock<Real, DepositGather<Real>>{
              g, block,
              DepositGather<Real>{g, h, 1.0 / std::pow(h, field_.shape().dims()), bins_.view(),
                                  Span<const double>(merged_rate_.span().data(), m), source_.span()}});
    }
  }
  const auto inv_h2 = static_cast<Real>(1.0 / (h * h));
  const grid::Stencil stencil = field_.shape().dims() == 3 ? grid::Stencil::seven : grid::Stencil::five;
  exec::parallel_for(
      block_nodes,
      OnBlock<Real, SignalEuler<Real>>{
          g, block,
          SignalEuler<Real>{
              g, stencil, inv_h2, static_cast<Real>(params_.diffusivity), static_cast<Real>(params_.decay),
              static_cast<Real>(ctx.dt), field_.current().data(),
              sources ? Span<const Real>(source_.span()) : Span<const Real>(), field_.next().data()}});
  field_.swap();
  refresh_frame();
}

template <class Real>
void DecomposedSignalField<Real>::refresh_frame() {
  // only the block's sides cross to the host, and only the frame back
  const int species = field_.species_count();
  const std::size_t ring = ring_local_.size(), frame = frame_local_.size(), cells = field_.cells();
  const std::size_t local_cells = halo_.local_cells();
  compact_.ensure(static_cast<std::size_t>(species) * std::max(ring, frame));
  host_.resize(static_cast<std::size_t>(species) * std::max(ring, frame));
  local_.resize(static_cast<std::size_t>(species) * local_cells);
  if (ring > 0) {
    exec::parallel_for(ring, CopyNodes<Real>{ring_nodes_.span(), ring, cells, species, true,
                                             field_.current().data(), compact_.span().data()});
    compact_.download(host_.data(), static_cast<std::size_t>(species) * ring);
  }
  for (int s = 0; s < species; ++s)
    for (std::size_t r = 0; r < ring; ++r)
      local_[static_cast<std::size_t>(s) * local_cells + ring_local_[r]] =
          host_[static_cast<std::size_t>(s) * ring + r];
  halo_.exchange(local_);
  for (int s = 0; s < species; ++s)
    for (std::size_t r = 0; r < frame; ++r)
      host_[static_cast<std::size_t>(s) * frame + r] =
          local_[static_cast<std::size_t>(s) * local_cells + frame_local_[r]];
  if (frame > 0) {
    compact_.upload(host_.data(), static_cast<std::size_t>(species) * frame);
    exec::parallel_for(frame, CopyNodes<Real>{frame_nodes_.span(), frame, cells, species, false,
                                              field_.current().data(), compact_.span().data()});
  }
}

template class DecomposedSignalField<float>;
template class DecomposedSignalField<double>;

}  // namespace tissue::coupling
