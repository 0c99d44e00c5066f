#pragma once
/// @file world.hpp
/// The World: the entity tables every model shares, the domain and the clock.
///
/// Cells and subcellular elements are two SoA tables. The elements of a cell are a contiguous range
/// [first, first + count) of the element table, in cell order; World::commit() restores that order
/// after a hook has added or removed entities. The engine knows only the columns every cell/element world
/// has (ids, ranges, positions, centres, flags); modules add their own columns (the SEM's element type, a
/// gene network's species, sampled fields) with Table::add_column(), their own flag bits with flag_bit(),
/// and say what the tissue writer writes with add_output().

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/box.hpp"
#include "engine/core/field.hpp"
#include "engine/core/table.hpp"

namespace tissue {

/// Bits of the cells' `flags` column the engine itself uses; modules take further bits by name
/// (World::flag_bit).
namespace cell_flags {
inline constexpr std::uint32_t dead = 1u << 0;  ///< set by a hook; removed by commit()
}  // namespace cell_flags

/// An array the tissue writer (engine/io/tissue_output.hpp) writes, as a module declared it
/// (World::add_output); the writer groups them by kind, in declaration order within a kind.
struct TissueOutput {
  enum class Kind {
    flag,             ///< per cell: 1 where `bit` of the cells' flags is set, else 0 (uint8)
    cell_column,      ///< per cell: the float column `column`, one array of its components (a vector when 3)
    cell_components,  ///< per cell: one scalar array per component of the float column `column`, named
                      ///< by the column's component_names()
    element_column,   ///< per element (elements file only): the int32 column `column` of the elements
    element_count,    ///< per cell (cells file only): how many of the cell's elements have `value` in the
                      ///< int32 element column `column`
    cell_int_column,  ///< per cell: the int32 column `column` of the cells (e.g. the cell type)
  };
  Kind kind = Kind::cell_column;
  std::string name;        ///< array name in the .vtu files (unused for cell_components)
  std::string column;      ///< source column
  std::uint32_t bit = 0;   ///< flag: the bit
  std::int32_t value = 0;  ///< element_count: the value counted
};

class World {
 public:
  /// @param box  domain (an entity set may set it later, before the first step)
  explicit World(Box box = Box{});
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
  Column<std::uint32_t>& flags;   ///< cell_flags::dead and the bits modules took (flag_bit)

  Table elements{"elements"};
  Column<float>& x;            ///< position x [length], wrapped into [0, lx) when periodic
  Column<float>& y;            ///< position y [length]
  Column<float>& z;            ///< position z [length], >= 0 with the floor
  Column<std::int32_t>& cell;  ///< owning cell (dense index into cells)

  /// The bit of the cells' flags named `name`, taken on first request (bit 0 is cell_flags::dead).
  /// @throws std::length_error when all 32 bits are taken.
  std::uint32_t flag_bit(const std::string& name);
  /// Names of the flag bits taken, bit k - 1 at index k - 1 (bit 0, "dead", excluded).
  const std::vector<std::string>& flag_names() const { return flag_names_; }

  /// Declares an array for the tissue writer (grouped by kind, in declaration order within a kind).
  void add_output(TissueOutput output) { outputs_.push_back(std::move(output)); }
  const std::vector<TissueOutput>& outputs() const { return outputs_; }

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
  /// Bumped by every commit(): a system that keeps something derived from the tables between steps (a
  /// neighbour list tagged with owning cells) rebuilds it when this changed, since a hook may have moved,
  /// added or reassigned elements without changing any table's size.
  std::uint64_t revision = 0;
  std::uint64_t seed = 1;  ///< random seed of the run

  /// Numbers the daughters of divisions (add_daughters_host): given the mothers' stable ids, one per new
  /// cell in row order, writes the new cells' ids into `ids` (same length) and advances next_cell_id past
  /// every id it handed out. Empty (one rank): next_cell_id onwards, in row order. A decomposed run installs
  /// domain::number_daughters_globally, which numbers all ranks' daughters as one rank would; it is
  /// collective, so a hook that divides calls add_daughters_host on every rank each time, with no mothers
  /// too.
  std::function<void(World&, const std::vector<std::int64_t>& mother_ids, std::vector<std::int64_t>& ids)>
      daughter_ids;

  // ---- host-side structure edits (inside hooks, on host mirrors; finish with commit()) ----

  /// Appends a cell on the host mirror with a fresh stable id; returns its dense index.
  std::int32_t add_cell_host();
  /// Appends `n` cells on the host mirror (other columns zero) with consecutive fresh stable ids, the
  /// same as `n` calls of add_cell_host(); returns the dense index of the first. For hooks that give
  /// daughters their rows by prefix sum and fill them in parallel.
  std::size_t add_cells_host(std::size_t n);
  /// Appends one new cell per entry of `mothers` (their dense indices) on the host mirror, numbered by
  /// daughter_ids (by default as add_cells_host does); returns the dense index of the first. The cells'
  /// other columns are zero (split_cell fills them). Collective in a decomposed run (daughter_ids).
  /// @throws what daughter_ids throws (std::invalid_argument for a mother listed twice, in a decomposed run).
  std::size_t add_daughters_host(const std::vector<std::int32_t>& mothers);
  /// Appends one element of cell `c` at (x, y, z) on the host mirror (wrapped into the box; other columns
  /// of the new row are zero); returns its dense index. The cell's first/count and the element order are
  /// fixed up by compact_host()/commit().
  std::int32_t add_element_host(std::int32_t c, float x, float y, float z);
  /// Appends `n` zero element rows on the host mirror; returns the dense index of the first. Each row
  /// is then given its cell and position with set_element_host() (rows may be filled in parallel).
  std::size_t add_elements_host(std::size_t n);
  /// Element row e (host mirror) belongs to cell `c` at (x, y, z), wrapped into the box as add_element_host.
  void set_element_host(std::size_t e, std::int32_t c, float x, float y, float z);

  /// Host mirrors <- device: both tables and every field.
  void download();
  /// Host mirrors only: drops cells flagged dead and their elements, and elements whose owning cell a hook
  /// set to -1 (an element removed from its cell), sorts elements by owning cell
  /// (stable), recomputes first/count. A hook may call it to get contiguous ranges back mid-way. Runs on
  /// the host's threads; the result does not depend on their number.
  void compact_host();
  /// compact_host(), then uploads both tables. The schedule calls it after every round of hooks.
  void commit();

  /// Checks the cell <-> element invariants on the host mirror.
  /// @return empty string if consistent, else a description of the first violation.
  std::string check_consistency() const;

 private:
  std::vector<std::string> flag_names_;
  std::vector<TissueOutput> outputs_;
};

/// Throws NumericalError (with the step and the likely cause) if an element coordinate is NaN or
/// infinite; a reduction on the device, no download.
void check_element_positions(World& world);

}  // namespace tissue
