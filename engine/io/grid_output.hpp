#pragma once
/// @file grid_output.hpp
/// ParaView/PNG output of grid fields, shared by every model that owns a GridField.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/grid/grid.hpp"
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
template <class Real>
class GridWriter final : public SnapshotWriter {
 public:
  GridWriter(std::filesystem::path dir, GridField<Real>& field, GridOutputOptions options)
      : dir_(std::move(dir)),
        field_(field),
        options_(std::move(options)),
        series_(dir_ / (field.name() + ".pvd")) {}

  void write(World& world) override {
    field_.download();
    char tag[32];
    std::snprintf(tag, sizeof tag, "%09lld", static_cast<long long>(world.step));
    const GridShape& s = field_.shape();
    const std::size_t n = field_.cells();
    if (options_.vti) {
      std::vector<VtkArray> arrays;
      for (int sp = 0; sp < field_.species_count(); ++sp) {
        arrays.push_back(VtkArray::of(field_.species_names()[static_cast<std::size_t>(sp)],
                                      field_.host().data() + static_cast<std::size_t>(sp) * n, n));
      }
      const double origin[3] = {0.5 * s.h, 0.5 * s.h, s.nz > 1 ? 0.5 * s.h : 0.0};
      const std::string file = field_.name() + "_" + tag + ".vti";
      write_vti(dir_ / file, s.nx, s.ny, s.nz, origin, s.h, arrays);
      series_.add(world.time, file);
      const std::array<double, 6> bounds{origin[0], origin[0] + (s.nx - 1) * s.h,
                                         origin[1], origin[1] + (s.ny - 1) * s.h,
                                         origin[2], origin[2] + (s.nz - 1) * s.h};
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
  std::filesystem::path dir_;
  GridField<Real>& field_;
  GridOutputOptions options_;
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
