#include "modules/gene_network/gene_network_decomposed.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "engine/exec/backend.hpp"
#include "engine/exec/group_for.hpp"
#include "engine/exec/memory.hpp"

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

}  // namespace

/// Between the stages: the owned cells' midpoints go out, the ghosts' come in (host-staged).
class DecomposedGeneNetwork::Midpoints final : public SpeciesMidpointExchange {
 public:
  Midpoints(DecomposedGeneNetwork& owner, World& owned, const std::vector<std::size_t>& owned_rows,
            const std::vector<std::size_t>& ghost_rows)
      : owner_(owner), owned_(owned), owned_rows_(owned_rows), ghost_rows_(ghost_rows) {}

  void exchange(World&, Span<float> mid, std::size_t stride) override {
    Column<float>& species = species_column(owned_);
    const auto ns = static_cast<std::size_t>(species.components());
    std::vector<float> host(ns * stride);
    exec::copy_bytes(host.data(), exec::Backend::cpu, mid.data(), exec::backend(),
                     host.size() * sizeof(float));
    for (std::size_t r = 0; r < owned_rows_.size(); ++r)
      for (std::size_t c = 0; c < ns; ++c) at(species, c, r) = host[c * stride + owned_rows_[r]];
    owner_.halo_->refresh(owned_.cells, owner_.ghosts_);
    Column<float>& ghost_species = owner_.ghosts_.column<float>(kSpeciesColumn);
    for (std::size_t g = 0; g < ghost_rows_.size(); ++g)
      for (std::size_t c = 0; c < ns; ++c) host[c * stride + ghost_rows_[g]] = at(ghost_species, c, g);
    exec::copy_bytes(mid.data(), exec::backend(), host.data(), exec::Backend::cpu,
                     host.size() * sizeof(float));
  }

 private:
  DecomposedGeneNetwork& owner_;
  World& owned_;
  const std::vector<std::size_t>& owned_rows_;
  const std::vector<std::size_t>& ghost_rows_;
};

DecomposedGeneNetwork::DecomposedGeneNetwork(const GeneNetworkParams& params,
                                             const domain::Decomposition& decomposition,
                                             domain::Communicator& comm)
    : params_(params),
      decomposition_(decomposition),
      comm_(comm),
      halo_(std::make_unique<domain::HaloExchange>(decomposition, comm, ghost_columns(params),
                                                   domain::HaloMode::distinct)) {
  if (!(decomposition.halo_width() >= params.neighbour_distance))
    throw std::invalid_argument("decomposed gene network: halo width " +
                                std::to_string(decomposition.halo_width()) +
                                " below the neighbour distance " + std::to_string(params.neighbour_distance));
}

DecomposedGeneNetwork::~DecomposedGeneNetwork() = default;

void DecomposedGeneNetwork::step(World& world, const StepContext& ctx) {
  const int rank = comm_.rank();
  if (!owned_system_) owned_system_ = std::make_unique<GeneNetworkSystem>(params_);
  owned_system_->prepare_inputs(world, ctx);
  world.cells.download();
  const std::size_t cells = world.cells.size();
  for (std::size_t c = 1; c < cells; ++c)
    if (!(world.cell_id.host(c - 1) < world.cell_id.host(c)))
      throw std::invalid_argument("decomposed gene network: the cells are not in ascending id order");
  // the halo must reach every neighbour of every owned cell
  const double outside =
      comm_.max(decomposition_.outside(rank, Span<const float>(world.cx.host_data().data(), cells),
                                       Span<const float>(world.cy.host_data().data(), cells)));
  if (params_.neighbour_distance + outside > decomposition_.halo_width())
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
  World merged(world.box);
  add_species_column(merged, species.component_names());
  Column<float>* merged_g = nullptr;
  if (!params_.tgf_beta_field.empty()) merged_g = &merged.cells.add_column<float>(params_.tgf_beta_field);
  merged.cells.resize(cells + ghosts);
  Column<float>& merged_species = species_column(merged);
  const std::uint32_t owned_bit = world.flag_bit(kSuprabasalFlag),
                      merged_bit = merged.flag_bit(kSuprabasalFlag);
  std::vector<std::size_t> owned_rows(cells), ghost_rows(ghosts);
  std::size_t o = 0, g = 0;
  for (std::size_t r = 0; r < cells + ghosts; ++r) {
    const bool own = g == ghosts || (o < cells && world.cell_id.host(o) < ghost_id.host(by_id[g]));
    Table& from = own ? world.cells : ghosts_;
    const std::size_t row = own ? o++ : by_id[g++];
    (own ? owned_rows[row] : ghost_rows[row]) = r;
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

  // the neighbour search's z bins and the lanes as the undecomposed run's
  const auto tissue_cells = static_cast<std::size_t>(comm_.sum(static_cast<std::int64_t>(cells)));
  if (!merged_system_ || merged_system_->params().z_bin_points != tissue_cells) {
    GeneNetworkParams p = params_;
    p.z_bin_points = tissue_cells;
    if (p.lanes <= 0) p.lanes = exec::lanes_for(tissue_cells);
    merged_system_ = std::make_unique<GeneNetworkSystem>(p);
  }
  Midpoints midpoints(*this, world, owned_rows, ghost_rows);
  merged_system_->set_midpoint_exchange(&midpoints);
  try {
    merged_system_->stages(merged, ctx);
  } catch (...) {
    merged_system_->set_midpoint_exchange(nullptr);
    throw;
  }
  merged_system_->set_midpoint_exchange(nullptr);

  // the owned cells' new species and suprabasal flags
  merged.cells.download();
  for (std::size_t row = 0; row < cells; ++row) {
    const std::size_t r = owned_rows[row];
    for (std::size_t c = 0; c < ns; ++c) at(species, c, row) = at(merged_species, c, r);
    const bool suprabasal = (merged.flags.host(r) & merged_bit) != 0;
    world.flags.host(row) = (world.flags.host(row) & ~owned_bit) | (suprabasal ? owned_bit : 0u);
  }
  world.cells.upload();
}

}  // namespace tissue::grn
