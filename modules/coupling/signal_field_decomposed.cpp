#include "modules/coupling/signal_field_decomposed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/parallel_for.hpp"
#include "modules/coupling/grid_coupling_kernels.hpp"

namespace tissue::coupling {
namespace {

constexpr const char* kIdColumn = "id";

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

/// Per node of the block: its source (DepositGather::at), in block order.
template <class Real>
struct BlockDeposit {
  BlockNodes block;
  DepositGather<Real> gather;
  Span<Real> source;
  TISSUE_HD void operator()(std::size_t b) const {
    int i = 0, j = 0, k = 0;
    block.node(b, i, j, k);
    source[b] = gather.at(i, j, k);
  }
};

/// Per node of the block: the explicit step, in the window's local layout (sources in block order).
template <class Real>
struct BlockEuler {
  BlockNodes block;
  SignalEuler<Real, GridWindow<Real>> euler;
  TISSUE_HD void operator()(std::size_t b) const {
    int i = 0, j = 0, k = 0;
    block.node(b, i, j, k);
    euler.step(euler.grid.index(i, j, k), b, i, j, k);
  }
};

/// Index i into [0, n) on a periodic axis; false when it lies outside a non-periodic one.
bool wrap_index(int& i, int n, bool periodic) {
  if (i >= 0 && i < n) return true;
  if (!periodic) return false;
  i = i < 0 ? i + n : i - n;
  return true;
}

/// Calls f(local, whole) for the nodes li in [a0, a1), lj in [c0, c1) of a window (block-relative, every
/// k) that lie in the grid, in k, j, i order, with their local and whole-grid indices.
template <class Real, class F>
void for_each_window_node(const GridWindow<Real>& w, int a0, int a1, int c0, int c1, F&& f) {
  const GridGeometry<Real>& g = w.grid;
  for (int k = 0; k < g.nz; ++k)
    for (int lj = c0; lj < c1; ++lj)
      for (int li = a0; li < a1; ++li) {
        int i = w.i0 + li, j = w.j0 + lj;
        if (!wrap_index(i, g.nx, g.face[0] == GridBoundary::periodic) ||
            !wrap_index(j, g.ny, g.face[2] == GridBoundary::periodic))
          continue;
        f(w.local_index(li, lj, k), g.index(i, j, k));
      }
}

/// The owned cells' centres and states (1 with the state bit, else 0) into their merged rows.
struct OwnedToMerged {
  Span<const std::int32_t> rows;
  Span<const float> cx, cy, cz;
  Span<const std::uint32_t> flags;
  std::uint32_t state_bit;
  Span<float> mx, my, mz, state;
  TISSUE_HD void operator()(std::size_t c) const {
    const auto r = static_cast<std::size_t>(rows[c]);
    mx[r] = cx[c];
    my[r] = cy[c];
    mz[r] = cz[c];
    state[r] = (flags[c] & state_bit) != 0 ? 1.0f : 0.0f;
  }
};

/// Per merged cell: CellRelease's rate and clamped position, with the state from a float column. A ghost's
/// rate reads the field at its centre: where the ghost deposits into the block, its nodes lie in the frame;
/// elsewhere the rate is not used (its deposit weight on every node of the block is 0; the window reads 0
/// for the nodes it does not hold).
template <class Real>
struct MergedRelease {
  GridWindow<Real> grid;
  double h;
  const Real* u;
  Span<const float> cx, cy, cz, state;
  double secretion[2];
  double uptake[2];
  Span<double> rate;
  Span<float> px, py, pz;
  TISSUE_HD void operator()(std::size_t c) const {
    const int s = state[c] != 0.0f ? 1 : 0;
    const auto st = cic_stencil(grid, h, cx[c], cy[c], cz[c]);
    double r = secretion[s];
    if (uptake[s] != 0.0) r -= uptake[s] * cic_sample(grid, st, u, 0, nullptr);
    rate[c] = r;
    clamp_into_grid(grid.grid, h, cx[c], cy[c], cz[c], px[c], py[c], pz[c]);
  }
};

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

/// The window's two device buffers (local layout) and the nodes of it that hold the field's values.
template <class Real>
struct DecomposedSignalField<Real>::Storage final : GridStorage<Real> {
  DeviceBuffer<Real> current, next;
  std::vector<std::size_t> local, whole;  ///< the held nodes: local and whole-grid indices

  void download(std::vector<Real>& host) override {
    std::vector<Real> window(current.size());
    current.download(window.data(), window.size());
    for (std::size_t n = 0; n < local.size(); ++n) host[whole[n]] = window[local[n]];
  }
  void upload(const std::vector<Real>& host) override {
    std::vector<Real> window(current.size(), Real(0));
    for (std::size_t n = 0; n < local.size(); ++n) window[local[n]] = host[whole[n]];
    current.upload(window.data(), window.size());
  }
  std::size_t bytes() const override { return (current.size() + next.size()) * sizeof(Real); }
};

template <class Real>
DecomposedSignalField<Real>::DecomposedSignalField(const SignalFieldParams& params, GridField<Real>& field,
                                                   const domain::Decomposition& decomposition,
                                                   domain::Communicator& comm,
                                                   domain::DeviceTransport* transport)
    : params_(params),
      field_(field),
      decomposition_(decomposition),
      comm_(comm),
      halo_(decomposition, comm, field.shape(), field.geometry(), field.species_count(),
            frame_of(decomposition, field.shape())),
      cell_halo_(decomposition, comm, {"cx", "cy", "cz", kIdColumn}, domain::HaloMode::distinct),
      staged_(transport == nullptr ? std::make_unique<domain::StagedTransport>(comm) : nullptr),
      device_halo_(transport == nullptr ? *staged_ : *transport),
      frame_x_(transport == nullptr ? *staged_ : *transport),
      frame_y_(transport == nullptr ? *staged_ : *transport) {
  if (params.exclude_cells)
    throw InputError("signal." + params.name +
                     ": a field that excludes the cells' volume (exclude_cells) does not run decomposed yet");
  if (!(decomposition.halo_width() > field.shape().h))
    throw std::invalid_argument("decomposed signal field: halo width " +
                                std::to_string(decomposition.halo_width()) + " not above the grid spacing " +
                                std::to_string(field.shape().h));
  if (field.species_count() != 1)
    throw std::invalid_argument("decomposed signal field '" + params.name + "': one species, not " +
                                std::to_string(field.species_count()));
  const domain::GridBlock& b = halo_.block();
  // a frame along the split axes only: along the others the block spans the grid
  const int frame = halo_.width();
  window_ = GridWindow<Real>{field.geometry(),
                             b.i0,
                             b.j0,
                             b.nx(),
                             b.ny(),
                             decomposition.grid().px > 1 ? frame : 0,
                             decomposition.grid().py > 1 ? frame : 0};
  // the window's share of the whole field, which every rank holds; the field keeps only its host mirror
  storage_ = std::make_shared<Storage>();
  storage_->current.resize(window_.cells());
  storage_->next.resize(window_.cells());
  storage_->next.zero();
  set_held_nodes();
  field.download();
  storage_->upload(field.host());
  field.hold_elsewhere(storage_);
  set_frame_plans();
  for (Table* t : {&own_, &ghosts_}) {
    t->add_column<float>("cx");
    t->add_column<float>("cy");
    t->add_column<float>("cz");
    t->add_column<std::int64_t>(kIdColumn);
  }
}

template <class Real>
DecomposedSignalField<Real>::~DecomposedSignalField() = default;

template <class Real>
void DecomposedSignalField<Real>::rebuild(World& w) {
  const std::size_t n = w.cells.size();
  own_.resize(n);
  if (n > 0) {
    w.cx.download(n);
    w.cy.download(n);
    w.cz.download(n);
    w.cell_id.download(n);
  }
  // the frame must hold the samples of the rank's cells
  outside_ = comm_.max(decomposition_.outside(comm_.rank(), Span<const float>(w.cx.host_data().data(), n),
                                              Span<const float>(w.cy.host_data().data(), n)));
  if (frame_needed(outside_, field_.shape().h) > halo_.width())
    throw std::invalid_argument("decomposed signal field: cell centres lie up to " +
                                std::to_string(outside_) +
                                " outside their subdomains, farther than the field's ghost frame of " +
                                std::to_string(halo_.width()) + " nodes reaches: use fewer ranks");
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
  std::vector<std::int32_t> owned_rows(n), ghost_rows(g);
  std::size_t o = 0, k = 0;
  for (std::size_t r = 0; r < m; ++r) {
    const bool own = k == g || (o < n && id.host(o) < ghost_id.host(by_id[k]));
    Table& from = own ? own_ : ghosts_;
    const std::size_t row = own ? o++ : by_id[k++];
    (own ? owned_rows[row] : ghost_rows[row]) = static_cast<std::int32_t>(r);
    x[r] = from.column<float>("cx").host(row);
    y[r] = from.column<float>("cy").host(row);
    z[r] = from.column<float>("cz").host(row);
  }
  merged_ = m;
  mx_.assign(x);
  my_.assign(y);
  mz_.assign(z);
  state_.resize(std::max<std::size_t>(m, 1));
  owned_rows_.assign(owned_rows);

  // the device halo: the same messages between merged rows
  device_halo_.set_plan(
      cell_halo_, [&](std::int32_t row) { return owned_rows[static_cast<std::size_t>(row)]; }, ghost_rows);

  // where the owned centres were, for the moves since
  moves_.reset(w.cx.span(), w.cy.span(), n);
  tissue_cells_ = static_cast<std::size_t>(comm_.sum(static_cast<std::int64_t>(n)));
  revision_ = w.revision;
  rows_ = n;
  built_ = true;
  ++rebuilds_;
}

template <class Real>
void DecomposedSignalField<Real>::step(World& w, const StepContext& ctx) {
  const std::size_t n = w.cells.size();
  const GridGeometry<Real> g = field_.geometry();
  const GridWindow<Real>& win = window_;
  Storage& u = *storage_;
  const double h = field_.shape().h;
  const domain::GridBlock& b = halo_.block();
  const BlockNodes block{b.i0, b.j0, b.nx(), b.ny()};
  const std::size_t block_nodes = static_cast<std::size_t>(b.nx()) * static_cast<std::size_t>(b.ny()) *
                                  static_cast<std::size_t>(field_.shape().nz);

  // rebuild after a change of any rank's cells, or once a cell of another rank could have come within a
  // grid spacing of the block unseen (the halo sent every cell within its width: a move of width - h), or
  // an owned centre could lie beyond what the frame holds; one reduction, a change counting as an infinite
  // move (the rounding allowance as grn::DecomposedGeneNetwork's)
  const bool changed = !built_ || w.revision != revision_ || n != rows_;
  double moved = changed ? std::numeric_limits<double>::infinity() : 0.0;
  if (!changed) moved = moves_.largest(w.cx.span(), w.cy.span(), n);
  moved = comm_.max(moved);
  const double margin = decomposition_.halo_width() - h;
  const double allowance = margin * 2.44140625e-4 + std::max(w.box.lx, w.box.ly) * 3.814697265625e-6;
  if (!(moved <= margin - allowance) || frame_needed(outside_ + moved, h) > halo_.width()) rebuild(w);

  // the merged cells' releases and positions: the owned centres and states into their rows, the ghosts'
  // from their owners; the deposits of the undecomposed run, where it has cells (a node no cell reaches
  // gathers 0 there, which leaves its step as it is without a source)
  const std::size_t m = merged_;
  const bool sources = tissue_cells_ > 0 && has_sources(params_);
  if (sources) {
    if (n > 0)
      exec::parallel_for(
          n, OwnedToMerged{owned_rows_.span(), w.cx.span(), w.cy.span(), w.cz.span(), w.flags.span(),
                           w.flag_bit(kStateFlag), mx_.span(), my_.span(), mz_.span(), state_.span()});
    device_halo_.exchange({mx_.span().subspan(0, m), my_.span().subspan(0, m), mz_.span().subspan(0, m),
                           state_.span().subspan(0, m)});
  }
  if (sources && m > 0) {
    rate_.ensure(m);
    px_.ensure(m);
    py_.ensure(m);
    pz_.ensure(m);
    exec::parallel_for(m, MergedRelease<Real>{win,
                                              h,
                                              u.current.data(),
                                              mx_.span(),
                                              my_.span(),
                                              mz_.span(),
                                              state_.span(),
                                              {params_.secretion[0], params_.secretion[1]},
                                              {params_.uptake[0], params_.uptake[1]},
                                              rate_.span(),
                                              px_.span(),
                                              py_.span(),
                                              pz_.span()});
    source_.ensure(block_nodes);
    const auto extent = static_cast<float>(g.nz * h);
    bins_.build(px_.span(), py_.span(), pz_.span(), Span<const std::int32_t>(), m, w.box,
                static_cast<float>(h), std::max(extent, 3.0f * static_cast<float>(h)), tissue_cells_);
    exec::parallel_for(
        block_nodes,
        BlockDeposit<Real>{block,
                           DepositGather<Real>{g, h, 1.0 / std::pow(h, field_.shape().dims()), bins_.view(),
                                               Span<const double>(rate_.span().data(), m), Span<Real>()},
                           source_.span()});
  }
  const auto inv_h2 = static_cast<Real>(1.0 / (h * h));
  const grid::Stencil stencil = field_.shape().dims() == 3 ? grid::Stencil::seven : grid::Stencil::five;
  exec::parallel_for(
      block_nodes,
      BlockEuler<Real>{
          block,
          SignalEuler<Real, GridWindow<Real>>{
              win, stencil, inv_h2, static_cast<Real>(params_.diffusivity), static_cast<Real>(params_.decay),
              static_cast<Real>(ctx.dt), u.current.data(),
              sources && m > 0 ? Span<const Real>(source_.span()) : Span<const Real>(), u.next.data()}});
  u.current.swap(u.next);
  refresh_frame();
}

template <class Real>
void DecomposedSignalField<Real>::sample(World& w) {
  const std::size_t n = w.cells.size();
  if (n == 0) return;
  auto& value = w.cells.column<float>(field_.name());
  auto& gradient = w.cells.column<float>(field_.name() + "_gradient");
  exec::parallel_for(n, SampleAtCells<Real, GridWindow<Real>>{
                            window_, field_.shape().h, storage_->current.data(), 0, w.cx.span(), w.cy.span(),
                            w.cz.span(), value.span(), gradient.span(), w.cells.capacity()});
}

template <class Real>
void DecomposedSignalField<Real>::set_held_nodes() {
  // the block, and the frame along the split axes (with the corners where both are): what the frame's
  // exchange fills; along an axis that is not split the frame is never read
  const domain::GridBlock& b = halo_.block();
  storage_->local.clear();
  storage_->whole.clear();
  for_each_window_node(window_, -window_.wx, b.nx() + window_.wx, -window_.wy, b.ny() + window_.wy,
                       [&](std::size_t local, std::size_t whole) {
                         storage_->local.push_back(local);
                         storage_->whole.push_back(whole);
                       });
}

template <class Real>
void DecomposedSignalField<Real>::set_frame_plans() {
  // GridHalo's two phases as device halos between nodes of the window: x (the block's rows),
  // then y (the block's width, and the x frame's when x is split, so that the corners arrive). Only split
  // axes exchange: along an axis that is not split the frame's nodes are the rank's own (periodic) or lie
  // beyond a face (whose rule the whole grid applies). Messages are tagged by the direction they travel.
  enum Tag : int { to_low_x = 1, to_high_x = 2, to_low_y = 3, to_high_y = 4 };
  const domain::GridBlock& b = halo_.block();
  const int w = halo_.width();
  const auto [ix, iy] = decomposition_.coords(comm_.rank());
  const domain::ProcessGrid grid = decomposition_.grid();
  // the window's nodes li in [a0, a1), lj in [c0, c1) that lie in the grid, as local indices
  const auto rows = [&](int a0, int a1, int c0, int c1) {
    std::vector<std::int32_t> out;
    for_each_window_node(window_, a0, a1, c0, c1, [&](std::size_t local, std::size_t) {
      out.push_back(static_cast<std::int32_t>(local));
    });
    return out;
  };
  for (int phase = 0; phase < 2; ++phase) {
    const bool x = phase == 0;
    if ((x ? grid.px : grid.py) < 2) continue;
    const int low = x ? decomposition_.rank_at(ix - 1, iy) : decomposition_.rank_at(ix, iy - 1);
    const int high = x ? decomposition_.rank_at(ix + 1, iy) : decomposition_.rank_at(ix, iy + 1);
    const int n = x ? b.nx() : b.ny();
    const int across0 = x ? 0 : (grid.px > 1 ? -w : 0),
              across1 = x ? b.ny() : (grid.px > 1 ? b.nx() + w : b.nx());
    const auto slab = [&](int a0, int a1) {
      return x ? rows(a0, a1, across0, across1) : rows(across0, across1, a0, a1);
    };
    const int tag_low = x ? to_low_x : to_low_y, tag_high = x ? to_high_x : to_high_y;
    std::vector<domain::HaloRows> sends, receives;
    if (low >= 0) {
      sends.push_back({low, tag_low, slab(0, w)});
      receives.push_back({low, tag_high, slab(-w, 0)});  // what the low neighbour sends up
    }
    if (high >= 0) {
      sends.push_back({high, tag_high, slab(n - w, n)});
      receives.push_back({high, tag_low, slab(n, n + w)});
    }
    (x ? frame_x_ : frame_y_).set_plan(sends, receives);
    (x ? exchange_x_ : exchange_y_) = true;
  }
}

template <class Real>
void DecomposedSignalField<Real>::refresh_frame() {
  // on the device, phase by phase (the y messages carry the x frame's corners)
  const std::vector<Span<float>> values{storage_->current.span()};
  if (exchange_x_) frame_x_.exchange(values);
  if (exchange_y_) frame_y_.exchange(values);
}

template class DecomposedSignalField<float>;

}  // namespace tissue::coupling
