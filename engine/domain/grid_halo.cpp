#include "engine/domain/grid_halo.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "engine/core/world.hpp"
#include "engine/exec/error.hpp"

namespace tissue::domain {
namespace {

/// Message tags of the two phases: the direction the message travels in.
enum Tag : int { to_low_x = 1, to_high_x = 2, to_low_y = 3, to_high_y = 4 };

/// [first, last + 1) of the nodes 0..n-1 whose coordinate (i + 1/2) h lies in the column (or row) `part`, by
/// `part_of`, a non-decreasing function of the coordinate; {0, 0} when there are none.
template <class PartOf>
std::array<int, 2> node_range(int n, double h, int part, PartOf&& part_of) {
  int first = -1, last = -1;
  for (int i = 0; i < n; ++i)
    if (part_of((static_cast<double>(i) + 0.5) * h) == part) {
      if (first < 0) first = i;
      last = i;
    }
  if (first < 0) return {0, 0};
  return {first, last + 1};
}

}  // namespace

GridBlock grid_block(const Decomposition& decomposition, const GridShape& shape, int rank) {
  const Box& box = decomposition.box();
  const auto spans = [&](bool periodic, int n, double l, const char* axis) {
    if (periodic && std::abs(static_cast<double>(n) * shape.h - l) > 1e-6 * l)
      throw InputError(std::string("a grid decomposed with the tissue must span its periodic box: ") + axis +
                       ": " + std::to_string(n) + " nodes x h " + std::to_string(shape.h) + " = " +
                       std::to_string(static_cast<double>(n) * shape.h) + ", box " + std::to_string(l));
  };
  spans(box.periodic_x, shape.nx, static_cast<double>(box.lx), "x");
  spans(box.periodic_y, shape.ny, static_cast<double>(box.ly), "y");
  const auto [ix, iy] = decomposition.coords(rank);
  const auto x = node_range(shape.nx, shape.h, ix,
                            [&](double c) { return decomposition.coords(decomposition.owner(c, 0.0))[0]; });
  const auto y = node_range(shape.ny, shape.h, iy,
                            [&](double c) { return decomposition.coords(decomposition.owner(0.0, c))[1]; });
  const auto none = [&](const char* axis, int n, int parts) {
    return InputError(std::string("rank ") + std::to_string(rank) + " would own no " + axis +
                      " of the grid's " + std::to_string(n) + " nodes along " + (axis[0] == 'c' ? "x" : "y") +
                      " split over " + std::to_string(parts) + " ranks: use fewer ranks or a finer grid");
  };
  if (x[1] <= x[0]) throw none("column", shape.nx, decomposition.grid().px);
  if (y[1] <= y[0]) throw none("row", shape.ny, decomposition.grid().py);
  return GridBlock{x[0], x[1], y[0], y[1]};
}

template <class Real>
GridHalo<Real>::GridHalo(const Decomposition& decomposition, Communicator& comm, const GridShape& shape,
                         const GridGeometry<Real>& geometry, int species, int width)
    : decomposition_(decomposition),
      comm_(comm),
      shape_(shape),
      geometry_(geometry),
      species_(species),
      width_(width),
      nz_(shape.nz) {
  if (comm_.size() != decomposition_.ranks())
    throw std::invalid_argument("grid halo: " + std::to_string(comm_.size()) +
                                " ranks for a decomposition of " + std::to_string(decomposition_.ranks()));
  if (species < 1 || species > kMaxGridSpecies)
    throw std::invalid_argument("grid halo: " + std::to_string(species) + " species");
  if (width < 1) throw std::invalid_argument("grid halo: ghost width " + std::to_string(width));
  const Box& box = decomposition_.box();
  if ((geometry_.face[0] == GridBoundary::periodic) != box.periodic_x ||
      (geometry_.face[2] == GridBoundary::periodic) != box.periodic_y)
    throw InputError(
        "a grid decomposed with the tissue must be periodic along x and y exactly where the box is");
  block_ = grid_block(decomposition_, shape_, comm_.rank());
  if (block_.nx() < width_ || block_.ny() < width_)
    throw InputError("rank " + std::to_string(comm_.rank()) + " owns " + std::to_string(block_.nx()) + " x " +
                     std::to_string(block_.ny()) + " nodes of the grid, fewer than its " +
                     std::to_string(width_) + " ghost layers: use fewer ranks or a finer grid");
}

template <class Real>
GridGeometry<Real> GridHalo<Real>::local_geometry() const {
  GridGeometry<Real> g = geometry_;
  g.nx = local_nx();
  g.ny = local_ny();
  g.nz = nz_;
  for (int f = 0; f < 4; ++f) g.face[f] = GridBoundary::periodic;  // never consulted (file comment)
  return g;
}

template <class Real>
void GridHalo<Real>::scatter(const std::vector<Real>& global, std::vector<Real>& local) const {
  if (global.size() != static_cast<std::size_t>(species_) * shape_.cells())
    throw std::invalid_argument("grid halo: a global field of " + std::to_string(global.size()) + " values");
  local.assign(static_cast<std::size_t>(species_) * local_cells(), Real(0));
  const GridGeometry<Real>& g = geometry_;
  for (int s = 0; s < species_; ++s)
    for (int k = 0; k < nz_; ++k)
      for (int lj = 0; lj < block_.ny(); ++lj)
        for (int li = 0; li < block_.nx(); ++li)
          local[static_cast<std::size_t>(s) * local_cells() + local_index(li, lj, k)] =
              global[static_cast<std::size_t>(s) * shape_.cells() +
                     g.index(block_.i0 + li, block_.j0 + lj, k)];
}

template <class Real>
void GridHalo<Real>::pack(const std::vector<Real>& local, int a0, int a1, int b0, int b1, Bytes& out) const {
  const std::size_t run = static_cast<std::size_t>(a1 - a0) * sizeof(Real);
  out.resize(static_cast<std::size_t>(species_) * static_cast<std::size_t>(nz_) *
             static_cast<std::size_t>(b1 - b0) * run);
  std::byte* at = out.data();
  for (int s = 0; s < species_; ++s)
    for (int k = 0; k < nz_; ++k)
      for (int lj = b0; lj < b1; ++lj, at += run)
        std::memcpy(at, local.data() + static_cast<std::size_t>(s) * local_cells() + local_index(a0, lj, k),
                    run);
}

template <class Real>
void GridHalo<Real>::unpack(std::vector<Real>& local, int a0, int a1, int b0, int b1, const Bytes& in) const {
  const std::size_t run = static_cast<std::size_t>(a1 - a0) * sizeof(Real);
  if (in.size() != static_cast<std::size_t>(species_) * static_cast<std::size_t>(nz_) *
                       static_cast<std::size_t>(b1 - b0) * run)
    throw std::logic_error("grid halo: a message of " + std::to_string(in.size()) + " bytes for " +
                           std::to_string(a1 - a0) + " x " + std::to_string(b1 - b0) + " nodes");
  const std::byte* at = in.data();
  for (int s = 0; s < species_; ++s)
    for (int k = 0; k < nz_; ++k)
      for (int lj = b0; lj < b1; ++lj, at += run)
        std::memcpy(local.data() + static_cast<std::size_t>(s) * local_cells() + local_index(a0, lj, k), at,
                    run);
}

template <class Real>
void GridHalo<Real>::apply_boundary(std::vector<Real>& local, int face) const {
  const bool x_axis = face < 2, low = face % 2 == 0;
  const int n = x_axis ? block_.nx() : block_.ny();
  const GridBoundary rule = geometry_.face[face];
  // the other axis: interior rows for x (phase 1), the whole width for y (phase 2)
  const int o0 = x_axis ? 0 : -width_, o1 = x_axis ? block_.ny() : block_.nx() + width_;
  for (int s = 0; s < species_; ++s) {
    Real* u = local.data() + static_cast<std::size_t>(s) * local_cells();
    for (int k = 0; k < nz_; ++k)
      for (int o = o0; o < o1; ++o)
        for (int m = 0; m < width_; ++m) {
          const int ghost = low ? -1 - m : n + m, mirror = low ? m : n - 1 - m;
          Real& to = x_axis ? u[local_index(ghost, o, k)] : u[local_index(o, ghost, k)];
          if (rule == GridBoundary::neumann) {
            to = x_axis ? u[local_index(mirror, o, k)] : u[local_index(o, mirror, k)];
          } else {
            // Dirichlet; a corner outside a Dirichlet x face too keeps that face's value, as sample()
            // resolves x first
            const int gi = block_.i0 + o;
            const bool x_outside = !x_axis && (gi < 0 || gi >= shape_.nx) &&
                                   geometry_.face[gi < 0 ? 0 : 1] == GridBoundary::dirichlet;
            to = x_outside ? geometry_.dirichlet[gi < 0 ? 0 : 1][s] : geometry_.dirichlet[face][s];
          }
        }
  }
}

template <class Real>
void GridHalo<Real>::exchange(std::vector<Real>& local) {
  if (local.size() != static_cast<std::size_t>(species_) * local_cells())
    throw std::invalid_argument("grid halo: a local field of " + std::to_string(local.size()) +
                                " values, expected " +
                                std::to_string(static_cast<std::size_t>(species_) * local_cells()));
  const auto [ix, iy] = decomposition_.coords(comm_.rank());
  const int g = width_, nx = block_.nx(), ny = block_.ny();
  // phase 1, x: the interior rows; phase 2, y: the whole width, x ghosts included
  for (int phase = 0; phase < 2; ++phase) {
    const bool x = phase == 0;
    const int low = x ? decomposition_.rank_at(ix - 1, iy) : decomposition_.rank_at(ix, iy - 1);
    const int high = x ? decomposition_.rank_at(ix + 1, iy) : decomposition_.rank_at(ix, iy + 1);
    const int n = x ? nx : ny;
    const int tag_low = x ? to_low_x : to_low_y, tag_high = x ? to_high_x : to_high_y;
    // the slab [a, a + g) along the axis, the other axis over its range
    const auto slab_pack = [&](int a, Bytes& out) {
      if (x)
        pack(local, a, a + g, 0, ny, out);
      else
        pack(local, -g, nx + g, a, a + g, out);
    };
    const auto slab_unpack = [&](int a, const Bytes& in) {
      if (x)
        unpack(local, a, a + g, 0, ny, in);
      else
        unpack(local, -g, nx + g, a, a + g, in);
    };
    Bytes to_low, to_high;
    std::vector<Outgoing> sends;
    std::vector<Incoming> receives;
    if (low >= 0) {
      slab_pack(0, to_low);
      sends.push_back({low, tag_low, Span<const std::byte>(to_low.data(), to_low.size())});
      receives.push_back({low, tag_high});  // what the low neighbour sends up
    }
    if (high >= 0) {
      slab_pack(n - g, to_high);
      sends.push_back({high, tag_high, Span<const std::byte>(to_high.data(), to_high.size())});
      receives.push_back({high, tag_low});
    }
    const std::vector<Bytes> got = comm_.exchange(sends, receives);
    std::size_t m = 0;
    if (low >= 0) slab_unpack(-g, got[m++]);
    if (high >= 0) slab_unpack(n, got[m++]);
    if (low < 0) apply_boundary(local, x ? 0 : 2);
    if (high < 0) apply_boundary(local, x ? 1 : 3);
  }
}

template <class Real>
void gather_blocks_to_root(const Decomposition& decomposition, Communicator& comm, GridField<Real>& field) {
  const GridShape& shape = field.shape();
  const GridGeometry<Real>& g = field.geometry();
  const auto species = static_cast<std::size_t>(field.species_count());
  // a block's values, species, k, j, then i fastest
  const auto block_values = [&](const GridBlock& b) {
    return species * static_cast<std::size_t>(shape.nz) * static_cast<std::size_t>(b.ny()) *
           static_cast<std::size_t>(b.nx());
  };
  const auto copy_block = [&](const GridBlock& b, auto&& copy_run) {
    std::size_t at = 0;
    const auto run = static_cast<std::size_t>(b.nx());
    for (std::size_t s = 0; s < species; ++s)
      for (int k = 0; k < shape.nz; ++k)
        for (int j = b.j0; j < b.j1; ++j, at += run)
          copy_run(s * shape.cells() + g.index(b.i0, j, k), at, run);
  };
  std::vector<Real>& host = field.host();
  if (comm.rank() != 0) {
    const GridBlock b = grid_block(decomposition, shape, comm.rank());
    Bytes out(block_values(b) * sizeof(Real));
    copy_block(b, [&](std::size_t from, std::size_t at, std::size_t run) {
      std::memcpy(out.data() + at * sizeof(Real), host.data() + from, run * sizeof(Real));
    });
    comm.exchange({Outgoing{0, 0, Span<const std::byte>(out.data(), out.size())}}, {});
    return;
  }
  std::vector<Incoming> receives;
  for (int r = 1; r < comm.size(); ++r) receives.push_back({r, 0});
  const std::vector<Bytes> got = comm.exchange({}, receives);
  for (int r = 1; r < comm.size(); ++r) {
    const GridBlock b = grid_block(decomposition, shape, r);
    const Bytes& in = got[static_cast<std::size_t>(r - 1)];
    if (in.size() != block_values(b) * sizeof(Real))
      throw std::logic_error("grid gather: rank " + std::to_string(r) + " sent " + std::to_string(in.size()) +
                             " bytes of the field '" + field.name() + "'");
    copy_block(b, [&](std::size_t to, std::size_t at, std::size_t run) {
      std::memcpy(host.data() + to, in.data() + at * sizeof(Real), run * sizeof(Real));
    });
  }
  field.upload();
}

void gather_grid_fields_to_root(const Decomposition& decomposition, Communicator& comm, World& world) {
  for (auto& f : world.fields) {
    if (auto* single = dynamic_cast<GridField<float>*>(f.get()))
      gather_blocks_to_root(decomposition, comm, *single);
    else if (auto* dbl = dynamic_cast<GridField<double>*>(f.get()))
      gather_blocks_to_root(decomposition, comm, *dbl);
    else
      throw std::invalid_argument("grid gather: the field '" + f->name() + "' is not a grid field");
  }
}

template void gather_blocks_to_root<float>(const Decomposition&, Communicator&, GridField<float>&);
template void gather_blocks_to_root<double>(const Decomposition&, Communicator&, GridField<double>&);

template class GridHalo<float>;
template class GridHalo<double>;

}  // namespace tissue::domain
