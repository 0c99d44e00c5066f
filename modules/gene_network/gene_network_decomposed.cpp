#include "modules/gene_network/gene_network_decomposed.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/group_for.hpp"
#include "engine/exec/memory.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::grn {
namespace {

constexpr const char* kIdColumn = "id";

/// The cell columns a ghost carries: centre, id, species, and the signal G when it comes from a field.
std::vector<std::string> ghost_columns(const GeneNetworkParams& params) {
  std::vector<std::string> c = {"cx", "cy", "cz", kIdColumn, kSpeciesColumn};
  if (!params.tgf_beta_field.empty()) c.push_back(params.tgf_beta_field);
  return c;
}

/// Component c of row i of a column's host mirror.
inline float& at(Column<float>& column, std::size_t c, std::size_t i) {
  return column.host_data()[c * column.capacity() + i];
}

/// The owned cells' centres, species (species-major, component k of row i at k * stride + i), signal and
/// suprabasal bit into their merged rows.
struct OwnedToMerged {
  Span<const std::int32_t> rows;
  Span<const float> cx, cy, cz, species, g;
  Span<const std::uint32_t> flags;
  std::size_t stride, merged_stride;
  int ns;
  std::uint32_t bit, merged_bit;
  Span<float> mcx, mcy, mcz, mspecies, mg;
  Span<std::uint32_t> mflags;
  TISSUE_HD void operator()(std::size_t c) const {
    const auto r = static_cast<std::size_t>(rows[c]);
    mcx[r] = cx[c];
    mcy[r] = cy[c];
    mcz[r] = cz[c];
    for (int k = 0; k < ns; ++k)
      mspecies[static_cast<std::size_t>(k) * merged_stride + r] =
          species[static_cast<std::size_t>(k) * stride + c];
    if (g.size() > 0) mg[r] = g[c];
    mflags[r] = (flags[c] & bit) != 0 ? merged_bit : 0u;
  }
};

/// The owned cells' new species and suprabasal bits from their merged rows.
struct MergedToOwned {
  Span<const std::int32_t> rows;
  Span<const float> mspecies;
  Span<const std::uint32_t> mflags;
  std::size_t stride, merged_stride;
  int ns;
  std::uint32_t bit, merged_bit;
  Span<float> species;
  Span<std::uint32_t> flags;
  TISSUE_HD void operator()(std::size_t c) const {
    const auto r = static_cast<std::size_t>(rows[c]);
    for (int k = 0; k < ns; ++k)
      species[static_cast<std::size_t>(k) * stride + c] =
          mspecies[static_cast<std::size_t>(k) * merged_stride + r];
    flags[c] = (flags[c] & ~bit) | ((mflags[r] & merged_bit) != 0 ? bit : 0u);
  }
};

}  // namespace

/// Between the stages: the ghosts' midpoint species from their owners, over the device halo.
class DecomposedGeneNetwork::Midpoints final : public SpeciesMidpointExchange {
 public:
  explicit Midpoints(DecomposedGeneNetwork& owner) : owner_(owner) {}

  void exchange(World& world, Span<float> mid, std::size_t stride) override {
    const auto ns = static_cast<std::size_t>(species_column(world).components());
    std::vector<Span<float>> columns;
    for (std::size_t k = 0; k < ns; ++k) columns.push_back(mid.subspan(k * stride, stride));
    owner_.exchange(columns);
  }

 private:
  DecomposedGeneNetwork& owner_;
};

DecomposedGeneNetwork::DecomposedGeneNetwork(const GeneNetworkParams& params,
                                             const domain::Decomposition& decomposition,
                                             domain::Communicator& comm, domain::DeviceTransport* transport)
    : params_(params),
      decomposition_(decomposition),
      comm_(comm),
      halo_(std::make_unique<domain::HaloExchange>(decomposition, comm, ghost_columns(params),
                                                   domain::HaloMode::distinct)),
      staged_(transport == nullptr ? std::make_unique<domain::StagedTransport>(comm) : nullptr),
      device_halo_(transport == nullptr ? *staged_ : *transport) {
  if (!(decomposition.halo_width() >= params.neighbour_distance))
    throw std::invalid_argument("decomposed gene network: halo width " +
                                std::to_string(decomposition.halo_width()) +
                                " below the neighbour distance " + std::to_string(params.neighbour_distance));
}

DecomposedGeneNetwork::~DecomposedGeneNetwork() = default;

void DecomposedGeneNetwork::exchange(const std::vector<Span<float>>& columns) {
  for (std::size_t first = 0; first < columns.size(); first += domain::DeviceHalo::kMaxColumns) {
    const std::size_t last = std::min(columns.size(), first + domain::DeviceHalo::kMaxColumns);
    device_halo_.exchange(std::vector<Span<float>>(columns.begin() + static_cast<std::ptrdiff_t>(first),
                                                   columns.begin() + static_cast<std::ptrdiff_t>(last)));
  }
}

void DecomposedGeneNetwork::rebuild(World& world) {
  const int rank = comm_.rank();
  world.cells.download();
  const std::size_t cells = world.cells.size();
  for (std::size_t c = 1; c < cells; ++c)
    if (!(world.cell_id.host(c - 1) < world.cell_id.host(c)))
      throw std::invalid_argument("decomposed gene network: the cells are not in ascending id order");
  // the halo must reach every neighbour of every owned cell; what it reaches beyond is the margin
  const double outside =
      comm_.max(decomposition_.outside(rank, Span<const float>(world.cx.host_data().data(), cells),
                                       Span<const float>(world.cy.host_data().data(), cells)));
  margin_ = decomposition_.halo_width() - params_.neighbour_distance - outside;
  if (margin_ < 0.0)
    throw std::invalid_argument("decomposed gene network: cell centres lie up to " + std::to_string(outside) +
                                " outside their subdomains, more than the halo width " +
                                std::to_string(decomposition_.halo_width()) +
                                " less the neighbour distance " + std::to_string(params_.neighbour_distance) +
                                " allows: migrate first");

  Column<float>& species = species_column(world);
  const auto ns = static_cast<std::size_t>(species.components());
  if (ghosts_.find(kSpeciesColumn) == nullptr) {
    ghosts_.add_column<float>("cx");
    ghosts_.add_column<float>("cy");
    ghosts_.add_column<float>("cz");
    ghosts_.add_column<std::int64_t>(kIdColumn);
    ghosts_.add_column<float>(kSpeciesColumn, species.components());
    if (!params_.tgf_beta_field.empty()) ghosts_.add_column<float>(params_.tgf_beta_field);
  }
  halo_->build(world.cells, ghosts_);
  const std::size_t ghosts = ghosts_.size();

  // owned and ghost cells by id (each sender's ghosts come in its row order, ascending ids)
  std::vector<std::size_t> by_id(ghosts);
  std::iota(by_id.begin(), by_id.end(), std::size_t{0});
  const auto& ghost_id = ghosts_.column<std::int64_t>(kIdColumn);
  std::stable_sort(by_id.begin(), by_id.end(),
                   [&](std::size_t a, std::size_t b) { return ghost_id.host(a) < ghost_id.host(b); });
  merged_ = std::make_unique<World>(world.box);
  World& merged = *merged_;
  add_species_column(merged, species.component_names());
  Column<float>* merged_g = nullptr;
  if (!params_.tgf_beta_field.empty()) merged_g = &merged.cells.add_column<float>(params_.tgf_beta_field);
  merged.cells.resize(cells + ghosts);
  Column<float>& merged_species = species_column(merged);
  const std::uint32_t owned_bit = world.flag_bit(kSuprabasalFlag),
                      merged_bit = merged.flag_bit(kSuprabasalFlag);
  std::vector<std::int32_t> owned_rows(cells), ghost_rows(ghosts);
  std::size_t o = 0, g = 0;
  for (std::size_t r = 0; r < cells + ghosts; ++r) {
    const bool own = g == ghosts || (o < cells && world.cell_id.host(o) < ghost_id.host(by_id[g]));
    Table& from = own ? world.cells : ghosts_;
    const std::size_t row = own ? o++ : by_id[g++];
    (own ? owned_rows[row] : ghost_rows[row]) = static_cast<std::int32_t>(r);
    merged.cell_id.host(r) = from.column<std::int64_t>(kIdColumn).host(row);
    merged.cx.host(r) = from.column<float>("cx").host(row);
    merged.cy.host(r) = from.column<float>("cy").host(row);
    merged.cz.host(r) = from.column<float>("cz").host(row);
    merged.flags.host(r) = own && (world.flags.host(row) & owned_bit) != 0 ? merged_bit : 0u;
    Column<float>& s = from.column<float>(kSpeciesColumn);
    for (std::size_t c = 0; c < ns; ++c) at(merged_species, c, r) = at(s, c, row);
    if (merged_g != nullptr) merged_g->host(r) = from.column<float>(params_.tgf_beta_field).host(row);
  }
  merged.cells.upload();
  owned_rows_.assign(owned_rows);

  // the device halo: the same messages between merged rows
  device_halo_.set_plan(
      *halo_, [&](std::int32_t row) { return owned_rows[static_cast<std::size_t>(row)]; }, ghost_rows);

  // where the owned centres were, for the moves since
  moves_.reset(world.cx.span(), world.cy.span(), cells);

  // the neighbour search's z bins and the lanes as the undecomposed run's
  const auto tissue_cells = static_cast<std::size_t>(comm_.sum(static_cast<std::int64_t>(cells)));
  if (!merged_system_ || merged_system_->params().z_bin_points != tissue_cells) {
    GeneNetworkParams p = params_;
    p.z_bin_points = tissue_cells;
    if (p.lanes <= 0) p.lanes = exec::lanes_for(tissue_cells);
    merged_system_ = std::make_unique<GeneNetworkSystem>(p);
  }
  revision_ = world.revision;
  rows_ = cells;
  ++rebuilds_;
}

void DecomposedGeneNetwork::step(World& world, const StepContext& ctx) {
  if (!owned_system_) owned_system_ = std::make_unique<GeneNetworkSystem>(params_);
  owned_system_->prepare_inputs(world, ctx);
  const std::size_t cells = world.cells.size();

  // rebuild after a change of any rank's cells, or once a pair of centres could have come within the
  // neighbour distance unseen: each moved up to `moved`, so 2 moved must stay below the margin, less a float
  // rounding allowance (2^-12 of it, and 2^-18 of the box: the centres' rounding is 2^-24 of the box). One
  // reduction: a change counts as an infinite move.
  const bool changed = !merged_ || world.revision != revision_ || cells != rows_;
  double moved = changed ? std::numeric_limits<double>::infinity() : 0.0;
  if (!changed) moved = moves_.largest(world.cx.span(), world.cy.span(), cells);
  moved = comm_.max(moved);
  const double allowance = margin_ * 2.44140625e-4 + std::max(world.box.lx, world.box.ly) * 3.814697265625e-6;
  if (!(2.0 * moved <= margin_ - allowance)) rebuild(world);

  World& merged = *merged_;
  const std::size_t n = merged.cells.size();
  Column<float>& species = species_column(world);
  Column<float>& merged_species = species_column(merged);
  const int ns = species.components();
  const bool field = !params_.tgf_beta_field.empty();
  // this step's owned values into their merged rows, the ghosts' from their owners
  exec::parallel_for(
      cells,
      OwnedToMerged{owned_rows_.span(), world.cx.span(), world.cy.span(), world.cz.span(), species.span(),
                    field ? Span<const float>(world.cells.column<float>(params_.tgf_beta_field).span())
                          : Span<const float>(),
                    world.flags.span(), world.cells.capacity(), merged.cells.capacity(), ns,
                    world.flag_bit(kSuprabasalFlag), merged.flag_bit(kSuprabasalFlag), merged.cx.span(),
                    merged.cy.span(), merged.cz.span(), merged_species.span(),
                    field ? merged.cells.column<float>(params_.tgf_beta_field).span() : Span<float>(),
                    merged.flags.span()});
  std::vector<Span<float>> columns = {merged.cx.span().subspan(0, n), merged.cy.span().subspan(0, n),
                                      merged.cz.span().subspan(0, n)};
  if (field) columns.push_back(merged.cells.column<float>(params_.tgf_beta_field).span().subspan(0, n));
  const std::size_t stride = merged.cells.capacity();
  for (int k = 0; k < ns; ++k)
    columns.push_back(merged_species.span().subspan(static_cast<std::size_t>(k) * stride, stride));
  exchange(columns);

  Midpoints midpoints(*this);
  merged_system_->set_midpoint_exchange(&midpoints);
  try {
    merged_system_->stages(merged, ctx);
  } catch (...) {
    merged_system_->set_midpoint_exchange(nullptr);
    throw;
  }
  merged_system_->set_midpoint_exchange(nullptr);

  // the owned cells' new species and suprabasal flags
  exec::parallel_for(cells,
                     MergedToOwned{owned_rows_.span(), merged_species.span(), merged.flags.span(),
                                   world.cells.capacity(), stride, ns, world.flag_bit(kSuprabasalFlag),
                                   merged.flag_bit(kSuprabasalFlag), species.span(), world.flags.span()});
}

}  // namespace tissue::grn
