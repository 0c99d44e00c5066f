#include "modules/sem/sem_decomposed.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/core/cell_centres.hpp"
#include "engine/domain/migration.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/memory.hpp"

namespace tissue::sem {
namespace {

constexpr const char* kCellIdColumn = "cell_id";
constexpr const char* kSlotColumn = "slot";
constexpr const char* kGhostCellTypeColumn = "cell_type_of_cell";

/// The element columns a ghost carries: position, type, its cell's id and its slot in the cell, and with cell
/// types its cell's type.
std::vector<std::string> ghost_columns(bool typed) {
  std::vector<std::string> c = {"x", "y", "z", kTypeColumn, kCellIdColumn, kSlotColumn};
  if (typed) c.push_back(kGhostCellTypeColumn);
  return c;
}

/// Device span <-> host vector (the span's memory is the active backend's).
void to_host(Span<const float> from, std::vector<float>& to) {
  to.resize(from.size());
  exec::copy_bytes(to.data(), exec::Backend::cpu, from.data(), exec::backend(), from.size() * sizeof(float));
}
void to_device(const std::vector<float>& from, Span<float> to) {
  exec::copy_bytes(to.data(), exec::backend(), from.data(), exec::Backend::cpu, to.size() * sizeof(float));
}

/// Where a row of the merged world comes from.
struct Source {
  std::int64_t cell;
  std::int32_t slot;
  bool ghost;
  std::size_t row;  ///< row of the owned elements or of the ghosts
};

}  // namespace

/// The step's merged world and the midpoint exchange between its stages.
class DecomposedSem::Midpoints final : public MidpointExchange {
 public:
  Midpoints(DecomposedSem& owner, World& owned, std::vector<Source>& sources)
      : owner_(owner), owned_(owned), sources_(sources) {}

  float exchange(World& merged, Span<float> xm, Span<float> ym, Span<float> zm,
                 Span<const float> moved) override {
    const std::size_t n = merged.elements.size();
    std::vector<float> hx, hy, hz, hm;
    to_host(xm, hx);
    to_host(ym, hy);
    to_host(zm, hz);
    to_host(moved, hm);
    // the owned elements' midpoints go out in the owned table's position columns (the step's new positions
    // are taken from the merged world afterwards), the ghosts' come back
    double reach = 0.0;
    for (std::size_t r = 0; r < n; ++r) {
      const Source& s = sources_[r];
      if (s.ghost) continue;
      owned_.x.host(s.row) = hx[r];
      owned_.y.host(s.row) = hy[r];
      owned_.z.host(s.row) = hz[r];
      reach = std::max(reach, static_cast<double>(hm[r]));
    }
    owner_.halo_.refresh(owned_.elements, owner_.ghost_elements_);
    Table& g = owner_.ghost_elements_;
    for (std::size_t r = 0; r < n; ++r) {
      const Source& s = sources_[r];
      if (!s.ghost) continue;
      hx[r] = g.column<float>("x").host(s.row);
      hy[r] = g.column<float>("y").host(s.row);
      hz[r] = g.column<float>("z").host(s.row);
    }
    to_device(hx, xm);
    to_device(hy, ym);
    to_device(hz, zm);
    return static_cast<float>(owner_.comm_.max(reach));
  }

 private:
  DecomposedSem& owner_;
  World& owned_;
  std::vector<Source>& sources_;
};

DecomposedSem::DecomposedSem(const SemParams& params, const domain::Decomposition& decomposition,
                             domain::Communicator& comm)
    : params_(params),
      decomposition_(decomposition),
      comm_(comm),
      halo_(decomposition, comm, ghost_columns(!params.cell_types.empty()), domain::HaloMode::distinct) {
  params_.rebuild_every = 1;
  if (decomposition.halo_width() < params_.effective_inter_cutoff())
    throw std::invalid_argument("decomposed SEM: halo width " + std::to_string(decomposition.halo_width()) +
                                " below the intercellular cut-off " +
                                std::to_string(params_.effective_inter_cutoff()));
  ghost_elements_.add_column<float>("x");
  ghost_elements_.add_column<float>("y");
  ghost_elements_.add_column<float>("z");
  ghost_elements_.add_column<std::int32_t>(kTypeColumn);
  ghost_elements_.add_column<std::int64_t>(kCellIdColumn);
  ghost_elements_.add_column<std::int32_t>(kSlotColumn);
  if (!params_.cell_types.empty()) ghost_elements_.add_column<std::int32_t>(kGhostCellTypeColumn);
}

DecomposedSem::~DecomposedSem() = default;

void DecomposedSem::add_columns(World& world) {
  world.elements.add_column<std::int64_t>(kCellIdColumn);
  world.elements.add_column<std::int32_t>(kSlotColumn);
}

void DecomposedSem::step(World& world, const StepContext& ctx) {
  const bool typed = !params_.cell_types.empty();
  if (typed && world.elements.find(kGhostCellTypeColumn) == nullptr)
    world.elements.add_column<std::int32_t>(kGhostCellTypeColumn);
  world.download();
  auto& cell_id = world.elements.column<std::int64_t>(kCellIdColumn);
  auto& slot = world.elements.column<std::int32_t>(kSlotColumn);
  for (std::size_t c = 0; c < world.cells.size(); ++c)
    for (std::int32_t e = 0; e < world.count.host(c); ++e) {
      const auto row = static_cast<std::size_t>(world.first.host(c) + e);
      cell_id.host(row) = world.cell_id.host(c);
      slot.host(row) = e;
      if (typed)
        world.elements.column<std::int32_t>(kGhostCellTypeColumn).host(row) =
            world.cells.column<std::int32_t>(kCellTypeColumn).host(c);
    }
  halo_.build(world.elements, ghost_elements_);
  ghost_count_ = ghost_elements_.size();

  // owned and ghost elements in the undecomposed order
  std::vector<Source> sources;
  sources.reserve(world.elements.size() + ghost_count_);
  for (std::size_t e = 0; e < world.elements.size(); ++e)
    sources.push_back({cell_id.host(e), slot.host(e), false, e});
  for (std::size_t g = 0; g < ghost_count_; ++g)
    sources.push_back({ghost_elements_.column<std::int64_t>(kCellIdColumn).host(g),
                       ghost_elements_.column<std::int32_t>(kSlotColumn).host(g), true, g});
  std::sort(sources.begin(), sources.end(), [](const Source& a, const Source& b) {
    return a.cell != b.cell ? a.cell < b.cell : a.slot < b.slot;
  });
  World merged(world.box);
  add_sem_columns(merged);
  Column<std::int32_t>* merged_type = nullptr;
  if (typed) merged_type = &merged.cells.add_column<std::int32_t>(kCellTypeColumn);
  std::int64_t last = -1;
  std::int32_t c = -1;
  for (const Source& s : sources) {
    Table& t = s.ghost ? ghost_elements_ : world.elements;
    if (s.cell != last) {
      c = merged.add_cell_host();
      merged.cell_id.host(static_cast<std::size_t>(c)) = s.cell;
      if (typed)
        merged_type->host(static_cast<std::size_t>(c)) =
            t.column<std::int32_t>(kGhostCellTypeColumn).host(s.row);
      last = s.cell;
    }
    add_element_host(merged, c, t.column<float>("x").host(s.row), t.column<float>("y").host(s.row),
                     t.column<float>("z").host(s.row), t.column<std::int32_t>(kTypeColumn).host(s.row));
  }
  merged.commit();

  // the cell list's z bins as the undecomposed list's: capped by the whole tissue's element count
  const auto tissue_elements =
      static_cast<std::size_t>(comm_.sum(static_cast<std::int64_t>(world.elements.size())));
  if (!system_ || system_->params().z_bin_points != tissue_elements) {
    params_.z_bin_points = tissue_elements;
    system_ = std::make_unique<SemSystem>(params_);
  }
  Midpoints midpoints(*this, world, sources);
  system_->set_midpoint_exchange(&midpoints);
  system_->run(merged, ctx);
  system_->set_midpoint_exchange(nullptr);

  // the owned elements' new positions
  merged.elements.download();
  for (std::size_t r = 0; r < sources.size(); ++r) {
    if (sources[r].ghost) continue;
    world.x.host(sources[r].row) = merged.x.host(r);
    world.y.host(sources[r].row) = merged.y.host(r);
    world.z.host(sources[r].row) = merged.z.host(r);
  }
  world.elements.upload();
  update_cell_centres(world);
  world.cells.download();
  domain::migrate_to_owners(decomposition_, comm_, world);
}

}  // namespace tissue::sem
