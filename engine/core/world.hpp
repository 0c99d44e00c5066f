#pragma once
/// @file world.hpp
/// The World: the entity tables every model shares, the domain and the clock.
///
/// Cells and subcellular elements are two SoA tables. The elements of a cell are a contiguous range
/// [first, first + count) of the element table, in cell order; World::commit() restores that order
/// after a hook has added or removed entities. Module-specific components (gene-network species,
/// ...) are further columns on these tables.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/box.hpp"
#include "engine/core/field.hpp"
#include "engine/core/table.hpp"

namespace tissue {

/// Bits of the cells' `flags` column.
namespace cell_flags {
inline constexpr std::uint32_t dead = 1u << 0;        ///< set by a hook; removed by commit()
inline constexpr std::uint32_t suprabasal = 1u << 1;  ///< gene-network state: high Ovol1 / low Ovol2
inline constexpr std::uint32_t growing = 1u << 2;     ///< lifecycle: grew at the last growth hook
}  // namespace cell_flags

/// Element type of basement-membrane adhesive elements (the seed's type C_i = 1).
inline constexpr std::int32_t kAdhesiveElement = 1;

class World {
 public:
  /// @param box            domain
  /// @param species_count  gene-network species per cell (0 when no network runs)
  World(Box box, int species_count);
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Box box;

  Table cells{"cells"};
  Column<std::int64_t>& cell_id;  ///< stable id, never reused
  Column<std::int32_t>& first;    ///< first element (dense index into elements)
  Column<std::int32_t>& count;    ///< number of elements
  Column<float>& cx;              ///< centre x [length] (mean of elements, periodic-aware)
  Column<float>& cy;              ///< centre y [length]
  Column<float>& cz;              ///< centre z [length]
  Column<std::uint32_t>& flags;   ///< cell_flags bits
  Column<float>& species;         ///< species_count components, species-major [concentration]

  Table elements{"elements"};
  Column<float>& x;            ///< position x [length], wrapped into [0, lx) when periodic
  Column<float>& y;            ///< position y [length]
  Column<float>& z;            ///< position z [length], >= 0 with the floor
  Column<std::int32_t>& type;  ///< element type (kAdhesiveElement or 0)
  Column<std::int32_t>& cell;  ///< owning cell (dense index into cells)

  int species_count() const { return species_count_; }

  /// Fields besides the tables (grids, ...), in the order added.
  std::vector<std::unique_ptr<FieldBase>> fields;
  /// Adds a field; the reference stays valid for the world's lifetime.
  template <class F>
  F& add_field(std::unique_ptr<F> field) {
    F& ref = *field;
    fields.push_back(std::move(field));
    return ref;
  }

  std::int64_t step = 0;          ///< completed time steps
  double time = 0.0;              ///< simulated time [time units]
  std::int64_t next_cell_id = 0;  ///< next stable id to hand out
  std::uint64_t seed = 1;         ///< random seed of the run

  // ---- host-side structure edits (inside hooks, on host mirrors; finish with commit()) ----

  /// Appends a cell on the host mirror with a fresh stable id; returns its dense index.
  std::int32_t add_cell_host();
  /// Appends one element of cell `c` on the host mirror; returns its dense index. The cell's
  /// first/count and the element order are fixed up by compact_host()/commit().
  std::int32_t add_element_host(std::int32_t c, float x, float y, float z, std::int32_t type);

  /// Host mirrors <- device: both tables and every field.
  void download();
  /// Host mirrors only: drops cells flagged dead and their elements, sorts elements by owning cell
  /// (stable), recomputes first/count. A hook may call it to get contiguous ranges back mid-way.
  void compact_host();
  /// compact_host(), then uploads both tables. The schedule calls it after every round of hooks.
  void commit();

  /// Checks the cell <-> element invariants on the host mirror.
  /// @return empty string if consistent, else a description of the first violation.
  std::string check_consistency() const;

 private:
  int species_count_;
};

/// Throws NumericalError (with the step and the likely cause) if an element coordinate is NaN or
/// infinite; a reduction on the device, no download.
void check_element_positions(World& world);

}  // namespace tissue
