#pragma once
/// @file grid_output.hpp
/// ParaView/PNG output of grid fields, shared by every model that owns a GridField.

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/grid/grid.hpp"
#include "engine/io/output_piece.hpp"
#include "engine/io/png.hpp"
#include "engine/io/vtk.hpp"
#include "engine/schedule/simulation.hpp"

namespace tissue::io {

/// What a GridWriter writes.
struct GridOutputOptions {
  bool vti = true;          ///< <field>_<step>.vti + <field>.pvd
  std::string png_species;  ///< species drawn to <species>_<step>.png (2D grids); "" = no PNG
  bool png_fixed_range = false;
  double png_lo = 0.0, png_hi = 1.0;
};

/// Snapshots of one GridField: VTK image data (all species as point data, nodes at (i + 1/2) h) indexed by
/// a .pvd series, and for 2D grids an optional viridis PNG of one species (fixed or min-max range).
/// In a decomposed run (OutputPiece with ranks > 1 and a grid_block) each rank writes the block of the grid
/// it owns as <field>_<step>_<rank>.vti, and rank 0 the <field>_<step>.pvti that names the pieces and the
/// .pvd series of those (its ParaView view's colour range is rank 0's piece's); PNGs are not written then.
template <class Real>
class GridWriter final : public SnapshotWriter {
 public:
  GridWriter(std::filesystem::path dir, GridField<Real>& field, GridOutputOptions options,
             OutputPiece piece = {})
      : dir_(std::move(dir)),
        field_(field),
        options_(std::move(options)),
        piece_(std::move(piece)),
        series_(dir_ / (field.name() + ".pvd")) {}
  void write(World& world) override {
    field_.download();
    char tag[32];
    std::snprintf(tag, sizeof tag, "%09lld", static_cast<long long>(world.step));
    const GridShape& s = field_.shape();
    const std::size_t n = field_.cells();
    const double origin[3] = {0.5 * s.h, 0.5 * s.h, s.nz > 1 ? 0.5 * s.h : 0.0};
    const std::array<double, 6> bounds{origin[0], origin[0] + (s.nx - 1) * s.h,
                                       origin[1], origin[1] + (s.ny - 1) * s.h,
                                       origin[2], origin[2] + (s.nz - 1) * s.h};
    if (piece_.ranks > 1 && piece_.grid_block) {
      if (options_.vti) write_piece(world, tag, origin, bounds);
      return;
    }
    if (options_.vti) {
      std::vector<VtkArray> arrays;
      for (int sp = 0; sp < field_.species_count(); ++sp) {
        arrays.push_back(VtkArray::of(field_.species_names()[static_cast<std::size_t>(sp)],
                                      field_.host().data() + static_cast<std::size_t>(sp) * n, n));
      }
      const std::string file = field_.name() + "_" + tag + ".vti";
      write_vti(dir_ / file, s.nx, s.ny, s.nz, origin, s.h, arrays);
      series_.add(world.time, file);
      series_.set_view(SeriesView::grid(s.nz, field_.species_names().front(),
                                        value_range(field_.host().data(), n), bounds));
    }
    if (!options_.png_species.empty() && s.nz == 1) {
      int sp = 0;
      while (field_.species_names()[static_cast<std::size_t>(sp)] != options_.png_species) ++sp;
      const Real* v = field_.host().data() + static_cast<std::size_t>(sp) * n;
      double lo = options_.png_lo, hi = options_.png_hi;
      if (!options_.png_fixed_range) {
        lo = static_cast<double>(*std::min_element(v, v + n));
        hi = static_cast<double>(*std::max_element(v, v + n));
      }
      write_field_png(dir_ / (options_.png_species + "_" + tag + ".png"), v, s.nx, s.ny, lo, hi);
    }
  }
  std::vector<PvdSeries*> series() override { return {&series_}; }

 private:
  /// This rank's piece, and on rank 0 the .pvti and the series (OutputPiece, class comment).
  void write_piece(World& world, const char* tag, const double origin[3],
                   const std::array<double, 6>& bounds) {
    const GridShape& s = field_.shape();
    const std::size_t n = field_.cells();
    const ImageExtent whole{0, s.nx - 1, 0, s.ny - 1, 0, s.nz - 1};
    const ImageExtent e = piece_.grid_block(s.nx, s.ny, s.nz, s.h, piece_.rank);
    const GridGeometry<Real>& g = field_.geometry();
    std::vector<VtkArray> arrays;
    std::vector<Real> values, first;  // the first species' values: the view's colour range
    for (int sp = 0; sp < field_.species_count(); ++sp) {
      values.clear();
      const Real* u = field_.host().data() + static_cast<std::size_t>(sp) * n;
      for (int k = e.k0; k <= e.k1; ++k)
        for (int j = e.j0; j <= e.j1; ++j)
          for (int i = e.i0; i <= e.i1; ++i) values.push_back(u[g.index(i, j, k)]);
      arrays.push_back(
          VtkArray::of(field_.species_names()[static_cast<std::size_t>(sp)], values.data(), values.size()));
      if (sp == 0) first = values;
    }
    const std::string base = field_.name() + "_" + tag;
    write_vti_piece(dir_ / (base + "_" + std::to_string(piece_.rank) + ".vti"), whole, e, origin, s.h,
                    arrays);
    if (piece_.rank != 0) {
      series_.append(world.time, base + ".pvti");  // rank 0 writes the series
      return;
    }
    std::vector<std::pair<std::string, ImageExtent>> pieces;
    for (int r = 0; r < piece_.ranks; ++r)
      pieces.emplace_back(base + "_" + std::to_string(r) + ".vti",
                          piece_.grid_block(s.nx, s.ny, s.nz, s.h, r));
    write_pvti(dir_ / (base + ".pvti"), whole, origin, s.h, arrays, pieces);
    series_.add(world.time, base + ".pvti");
    series_.set_view(SeriesView::grid(s.nz, field_.species_names().front(),
                                      value_range(first.data(), first.size()), bounds));
  }

  std::filesystem::path dir_;
  GridField<Real>& field_;
  GridOutputOptions options_;
  OutputPiece piece_;
  PvdSeries series_;
};

/// Several writers as one: write() calls each in order; series() concatenates theirs.
class CompositeWriter final : public SnapshotWriter {
 public:
  explicit CompositeWriter(std::vector<std::unique_ptr<SnapshotWriter>> parts) : parts_(std::move(parts)) {}
  void write(World& world) override {
    for (auto& p : parts_) p->write(world);
  }
  void wait() override {
    for (auto& p : parts_) p->wait();
  }
  std::vector<PvdSeries*> series() override {
    std::vector<PvdSeries*> out;
    for (auto& p : parts_)
      for (auto* s : p->series()) out.push_back(s);
    return out;
  }

 private:
  std::vector<std::unique_ptr<SnapshotWriter>> parts_;
};

}  // namespace tissue::io
