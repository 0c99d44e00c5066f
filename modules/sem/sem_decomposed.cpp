#include "modules/sem/sem_decomposed.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "engine/core/cell_centres.hpp"
#include "engine/domain/migration.hpp"
#include "engine/exec/algorithms.hpp"
#include "engine/exec/backend.hpp"
#include "engine/exec/error.hpp"
#include "engine/exec/memory.hpp"
#include "engine/exec/parallel_for.hpp"

namespace tissue::sem {
namespace {

constexpr const char* kCellIdColumn = "cell_id";
constexpr const char* kSlotColumn = "slot";
constexpr const char* kGhostCellTypeColumn = "cell_type_of_cell";

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// The element columns a ghost carries: position, type, its cell's id and its slot in the cell, and with cell
/// types its cell's type.
std::vector<std::string> ghost_columns(bool typed) {
  std::vector<std::string> c = {"x", "y", "z", kTypeColumn, kCellIdColumn, kSlotColumn};
  if (typed) c.push_back(kGhostCellTypeColumn);
  return c;
}

/// Per merged row, in two blocks of out (each n long), on owned rows (0 on ghost rows): the half step's move
/// `moved` [length], and how far the step's start (x, y) or the midpoint (xm, ym), whichever is farther, lies
/// from the rebuild's positions along x or y (minimum image on periodic axes) [length]. NaN becomes +infinity
/// (for exec::max_into, and so that the bound check reports it).
struct StageMoves {
  Span<const float> moved, x, y, xm, ym, x0, y0;
  Span<const std::uint8_t> owned;
  float lx, ly;
  bool periodic_x, periodic_y;
  std::size_t n;
  Span<float> out;
  TISSUE_HD float apart(float a, float b, float l, bool periodic) const {
    float d = a - b;
    if (periodic) d -= l * floorf(d / l + 0.5f);
    return fabsf(d);
  }
  TISSUE_HD static float finite_or_inf(float v) { return v == v ? v : INFINITY; }
  TISSUE_HD void operator()(std::size_t r) const {
    if (owned[r] == 0) {
      out[r] = out[n + r] = 0.0f;
      return;
    }
    const float start =
        finite_or_inf(fmaxf(apart(x[r], x0[r], lx, periodic_x), apart(y[r], y0[r], ly, periodic_y)));
    const float mid =
        finite_or_inf(fmaxf(apart(xm[r], x0[r], lx, periodic_x), apart(ym[r], y0[r], ly, periodic_y)));
    out[r] = finite_or_inf(moved[r]);
    out[n + r] = start > mid ? start : mid;
  }
};

/// The owned elements' rows of the merged world: element e of owned cell c goes to row
/// first[merged_cell[c]] + (e - world_first[c]) with its position and type; records the row and the mask.
struct OwnedToMerged {
  Span<const std::int32_t> cell, world_first, merged_cell, merged_first;
  Span<const float> x, y, z;
  Span<const std::int32_t> type;
  Span<float> mx, my, mz;
  Span<std::int32_t> mtype, mcell, owned_rows;
  Span<std::uint8_t> mask;
  TISSUE_HD void operator()(std::size_t e) const {
    const auto c = static_cast<std::size_t>(cell[e]);
    const std::int32_t k = merged_cell[c];
    const auto r = static_cast<std::size_t>(merged_first[static_cast<std::size_t>(k)] +
                                            (static_cast<std::int32_t>(e) - world_first[c]));
    mx[r] = x[e];
    my[r] = y[e];
    mz[r] = z[e];
    mtype[r] = type[e];
    mcell[r] = k;
    mask[r] = 1;
    owned_rows[e] = static_cast<std::int32_t>(r);
  }
};

/// The ghosts' rows of the merged world, from the rebuild's arrays.
struct GhostsToMerged {
  Span<const float> x, y, z;
  Span<const std::int32_t> type, cell, row;
  Span<float> mx, my, mz;
  Span<std::int32_t> mtype, mcell;
  Span<std::uint8_t> mask;
  TISSUE_HD void operator()(std::size_t g) const {
    const auto r = static_cast<std::size_t>(row[g]);
    mx[r] = x[g];
    my[r] = y[g];
    mz[r] = z[g];
    mtype[r] = type[g];
    mcell[r] = cell[g];
    mask[r] = 0;
  }
};

/// The owned elements' positions from the merged rows into the rank's world (world row order).
struct CopyOwned {
  Span<const std::int32_t> rows;
  Span<const float> mx, my, mz;
  Span<float> x, y, z;
  TISSUE_HD void operator()(std::size_t e) const {
    const auto r = static_cast<std::size_t>(rows[e]);
    x[e] = mx[r];
    y[e] = my[r];
    z[e] = mz[r];
  }
};

}  // namespace

/// Between the RK2 stages: the ghosts' midpoints from their owners; the tissue's moves (file comment of the
/// header) in one reduction over the ranks.
class DecomposedSem::Midpoints final : public MidpointExchange {
 public:
  explicit Midpoints(DecomposedSem& owner) : owner_(owner) {}

  float exchange(World& merged, Span<float> xm, Span<float> ym, Span<float> zm,
                 Span<const float> moved) override {
    DecomposedSem& o = owner_;
    o.device_halo_.exchange({xm, ym, zm});
    const auto t0 = Clock::now();
    const std::size_t n = merged.elements.size();
    o.scratch_.ensure(2 * n);
    o.scratch_max_.ensure(2);
    exec::parallel_for(n, StageMoves{moved, merged.x.span(), merged.y.span(), xm, ym, o.x0_.span(),
                                     o.y0_.span(), o.owned_mask_.span(), merged.box.lx, merged.box.ly,
                                     merged.box.periodic_x, merged.box.periodic_y, n, o.scratch_.span()});
    float local[2] = {0.0f, 0.0f};
    if (n > 0) {
      exec::max_into(Span<const float>(o.scratch_.data(), n), o.scratch_max_.span().subspan(0, 1),
                     o.reduce_temp_);
      exec::max_into(Span<const float>(o.scratch_.data() + n, n), o.scratch_max_.span().subspan(1, 1),
                     o.reduce_temp_);
      exec::copy_bytes(local, exec::Backend::cpu, o.scratch_max_.data(), exec::backend(), sizeof(local));
    }
    const std::vector<double> all = o.comm_.max(std::vector<double>{local[0], local[1]});
    const double reach = all[0], moved_xy = all[1];
    if (o.timing_) o.timings_.check += seconds_since(t0);
    if (!(moved_xy <= 0.5 * o.margin_))
      throw NumericalError(
          "decomposed SEM: an element moved " + std::to_string(moved_xy) +
          " along x or y since the last rebuild of the halo, more than half its margin " +
          std::to_string(o.margin_) +
          " (halo width less the cut-off less how far elements lie outside their subdomains): "
          "reduce dt or widen the halo");
    o.rebuild_next_ = moved_xy + 4.0 * reach > 0.5 * o.margin_;
    return static_cast<float>(reach);
  }

 private:
  DecomposedSem& owner_;
};

DecomposedSem::DecomposedSem(const SemParams& params, const domain::Decomposition& decomposition,
                             domain::Communicator& comm, domain::DeviceTransport* transport)
    : params_(params),
      decomposition_(decomposition),
      comm_(comm),
      halo_(decomposition, comm, ghost_columns(!params.cell_types.empty()), domain::HaloMode::distinct),
      staged_(transport == nullptr ? std::make_unique<domain::StagedTransport>(comm) : nullptr),
      transport_(transport == nullptr ? staged_.get() : transport),
      device_halo_(*transport_),
      midpoints_(std::make_unique<Midpoints>(*this)) {
  params_.rebuild_every = 1;
  if (!(decomposition.halo_width() > params_.effective_inter_cutoff()))
    throw std::invalid_argument("decomposed SEM: halo width " + std::to_string(decomposition.halo_width()) +
                                " not above the intercellular cut-off " +
                                std::to_string(params_.effective_inter_cutoff()));
  // the cell list's bins: the subdomain widened by what the merged world's elements may reach, the halo
  // width plus half the margin (at most half the halo width), and a bin
  const domain::Subdomain b = decomposition.bounds(comm.rank());
  const double reach = 1.5 * decomposition.halo_width() + params_.effective_bin_size();
  const Box& box = decomposition.box();
  if (box.periodic_x && decomposition.grid().px > 1) {
    params_.bin_window.x = true;
    params_.bin_window.x0 = b.x0 - reach;
    params_.bin_window.x1 = b.x1 + reach;
  }
  if (box.periodic_y && decomposition.grid().py > 1) {
    params_.bin_window.y = true;
    params_.bin_window.y0 = b.y0 - reach;
    params_.bin_window.y1 = b.y1 + reach;
  }
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
  // derived at every rebuild: not checkpointed (a decomposed run's checkpoint restarts on one rank)
  world.elements.add_column<std::int64_t>(kCellIdColumn).set_transient(true);
  world.elements.add_column<std::int32_t>(kSlotColumn).set_transient(true);
}

void DecomposedSem::set_timing(bool on) {
  timing_ = on;
  device_halo_.set_timing(on);
}

void DecomposedSem::reset_timings() {
  timings_ = Timings{};
  device_halo_.reset_timings();
}

void DecomposedSem::rebuild(World& world) {
  const bool typed = !params_.cell_types.empty();
  const int rank = comm_.rank();
  if (typed && world.elements.find(kGhostCellTypeColumn) == nullptr)
    world.elements.add_column<std::int32_t>(kGhostCellTypeColumn);

  // migrate only where some cell's centre left its owner's subdomain
  update_cell_centres(world);
  world.cells.download();
  std::int64_t leaving = 0;
  for (std::size_t c = 0; c < world.cells.size(); ++c)
    if (decomposition_.owner(world.cx.host(c), world.cy.host(c)) != rank) ++leaving;
  const bool migrate = comm_.sum(leaving) > 0;
  if (migrate) {
    world.download();
    domain::migrate_to_owners(decomposition_, comm_, world);
    ids_current_ = false;
  } else {
    const std::size_t rows = world.elements.size();
    world.x.download(rows);
    world.y.download(rows);
    world.z.download(rows);
    element_types(world).download(rows);
    world.cell.download(rows);
    if (world.revision != revision_ || rows != rows_) ids_current_ = false;
  }
  const std::size_t cells = world.cells.size(), owned = world.elements.size();
  for (std::size_t c = 1; c < cells; ++c)
    if (!(world.cell_id.host(c - 1) < world.cell_id.host(c)))
      throw std::logic_error("decomposed SEM: the world's cells are not in ascending id order");

  auto& cell_id = world.elements.column<std::int64_t>(kCellIdColumn);
  auto& slot = world.elements.column<std::int32_t>(kSlotColumn);
  if (!ids_current_) {
    for (std::size_t c = 0; c < cells; ++c)
      for (std::int32_t e = 0; e < world.count.host(c); ++e) {
        const auto row = static_cast<std::size_t>(world.first.host(c) + e);
        cell_id.host(row) = world.cell_id.host(c);
        slot.host(row) = e;
        if (typed)
          world.elements.column<std::int32_t>(kGhostCellTypeColumn).host(row) =
              world.cells.column<std::int32_t>(kCellTypeColumn).host(c);
      }
    // on the device too, so that a download() between steps keeps them
    cell_id.upload(owned);
    slot.upload(owned);
    if (typed) world.elements.column<std::int32_t>(kGhostCellTypeColumn).upload(owned);
    ids_current_ = true;
  }
  halo_.build(world.elements, ghost_elements_);
  ghost_count_ = ghost_elements_.size();

  // the ghosts' cells: each cell's ghosts come from its owner, contiguous and in slot order
  struct GhostCell {
    std::int64_t id;
    std::size_t first, count;
    std::int32_t type;
  };
  std::vector<GhostCell> ghost_cells;
  const auto& gid = ghost_elements_.column<std::int64_t>(kCellIdColumn);
  for (std::size_t g = 0; g < ghost_count_; ++g) {
    if (ghost_cells.empty() || ghost_cells.back().id != gid.host(g))
      ghost_cells.push_back(GhostCell{
          gid.host(g), g, 0, typed ? ghost_elements_.column<std::int32_t>(kGhostCellTypeColumn).host(g) : 0});
    ++ghost_cells.back().count;
  }
  std::sort(ghost_cells.begin(), ghost_cells.end(),
            [](const GhostCell& a, const GhostCell& b) { return a.id < b.id; });
  for (std::size_t k = 1; k < ghost_cells.size(); ++k)
    if (ghost_cells[k - 1].id == ghost_cells[k].id)
      throw std::logic_error("decomposed SEM: the ghosts of cell " + std::to_string(ghost_cells[k].id) +
                             " came in two pieces");

  // the merged cells: owned and ghost cells merged by id (the undecomposed order), each cell's elements in
  // slot order
  if (!merged_) {
    merged_ = std::make_unique<World>(world.box);
    add_sem_columns(*merged_);
    if (typed) merged_->cells.add_column<std::int32_t>(kCellTypeColumn);
  }
  World& merged = *merged_;
  merged.cells.resize(cells + ghost_cells.size());
  std::vector<std::int32_t> merged_cell(cells);
  std::vector<std::int32_t> ghost_type(ghost_count_), ghost_cell(ghost_count_), ghost_row(ghost_count_);
  std::size_t oc = 0, gc = 0, k = 0;
  std::int32_t first = 0;
  while (oc < cells || gc < ghost_cells.size()) {
    const bool take_owned =
        gc == ghost_cells.size() || (oc < cells && world.cell_id.host(oc) < ghost_cells[gc].id);
    std::int32_t count = 0;
    if (take_owned) {
      merged.cell_id.host(k) = world.cell_id.host(oc);
      count = world.count.host(oc);
      if (typed)
        merged.cells.column<std::int32_t>(kCellTypeColumn).host(k) =
            world.cells.column<std::int32_t>(kCellTypeColumn).host(oc);
      merged_cell[oc++] = static_cast<std::int32_t>(k);
    } else {
      const GhostCell& g = ghost_cells[gc++];
      merged.cell_id.host(k) = g.id;
      count = static_cast<std::int32_t>(g.count);
      if (typed) merged.cells.column<std::int32_t>(kCellTypeColumn).host(k) = g.type;
      for (std::size_t i = 0; i < g.count; ++i) {
        ghost_cell[g.first + i] = static_cast<std::int32_t>(k);
        ghost_row[g.first + i] = first + static_cast<std::int32_t>(i);
        ghost_type[g.first + i] = ghost_elements_.column<std::int32_t>(kTypeColumn).host(g.first + i);
      }
    }
    merged.first.host(k) = first;
    merged.count.host(k) = count;
    merged.flags.host(k) = 0;
    first += count;
    ++k;
  }
  const auto n = static_cast<std::size_t>(first);
  merged.cells.upload();
  merged.elements.resize(n);
  merged_cell_.assign(merged_cell);
  owned_rows_.resize(owned);
  owned_mask_.resize(n);
  exec::parallel_for(
      owned, OwnedToMerged{world.cell.span(), world.first.span(), merged_cell_.span(), merged.first.span(),
                           world.x.span(), world.y.span(), world.z.span(), element_types(world).span(),
                           merged.x.span(), merged.y.span(), merged.z.span(), element_types(merged).span(),
                           merged.cell.span(), owned_rows_.span(), owned_mask_.span()});
  const auto host_column = [&](const char* name) {
    const auto& h = ghost_elements_.column<float>(name).host_data();
    return std::vector<float>(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(ghost_count_));
  };
  ghost_x_.assign(host_column("x"));
  ghost_y_.assign(host_column("y"));
  ghost_z_.assign(host_column("z"));
  ghost_type_.assign(ghost_type);
  ghost_cell_.assign(ghost_cell);
  ghost_row_.assign(ghost_row);
  exec::parallel_for(
      ghost_count_,
      GhostsToMerged{ghost_x_.span(), ghost_y_.span(), ghost_z_.span(), ghost_type_.span(),
                     ghost_cell_.span(), ghost_row_.span(), merged.x.span(), merged.y.span(), merged.z.span(),
                     element_types(merged).span(), merged.cell.span(), owned_mask_.span()});
  ++merged.revision;

  // the device halo: the same messages between merged rows
  const auto merged_row = [&](std::int32_t e) {
    const auto c = static_cast<std::size_t>(world.cell.host(static_cast<std::size_t>(e)));
    return merged.first.host(static_cast<std::size_t>(merged_cell[c])) + (e - world.first.host(c));
  };
  device_halo_.set_plan(halo_, merged_row, ghost_row);

  // the margin: the halo width less the cut-off less the farthest an element lies outside its subdomain
  const double outside =
      comm_.max(decomposition_.outside(rank, Span<const float>(world.x.host_data().data(), owned),
                                       Span<const float>(world.y.host_data().data(), owned)));
  margin_ = decomposition_.halo_width() - params_.effective_inter_cutoff() - outside;
  if (!(margin_ > 0.0))
    throw std::invalid_argument(
        "decomposed SEM: the halo width " + std::to_string(decomposition_.halo_width()) +
        " leaves no margin: the intercellular cut-off is " +
        std::to_string(params_.effective_inter_cutoff()) + " and elements lie up to " +
        std::to_string(outside) + " outside their owners' subdomains; widen the halo");
  x0_.resize(n);
  y0_.resize(n);
  exec::copy(Span<const float>(merged.x.span().data(), n), x0_.span(), n);
  exec::copy(Span<const float>(merged.y.span().data(), n), y0_.span(), n);

  // the cell list's z bins as the undecomposed list's: capped by the whole tissue's element count
  const auto tissue_elements = static_cast<std::size_t>(comm_.sum(static_cast<std::int64_t>(owned)));
  if (!system_ || system_->params().z_bin_points != tissue_elements) {
    params_.z_bin_points = tissue_elements;
    system_ = std::make_unique<SemSystem>(params_);
  }
  revision_ = world.revision;
  rows_ = owned;
  ++timings_.rebuilds;
}

void DecomposedSem::step(World& world, const StepContext& ctx) {
  const auto t_step = Clock::now();
  const domain::DeviceHalo::Timings halo_before = device_halo_.timings();
  const double check_before = timings_.check;

  // rebuild at the first step, after a change of the world on any rank, or where the last midpoint stage
  // asked for it (the same on every rank: its moves were reduced over the ranks)
  const bool changed = !merged_ || world.revision != revision_ || world.elements.size() != rows_;
  const bool rebuild_now = comm_.max(static_cast<std::int64_t>(changed ? 1 : 0)) > 0 || rebuild_next_;
  double rebuild_time = 0.0;
  if (rebuild_now) {
    const auto t0 = Clock::now();
    rebuild(world);
    if (timing_) {
      exec::synchronize();
      rebuild_time = seconds_since(t0);
      timings_.rebuild += rebuild_time;
    }
  } else {
    World& m = *merged_;
    const std::size_t n = m.elements.size();
    device_halo_.exchange({m.x.span().subspan(0, n), m.y.span().subspan(0, n), m.z.span().subspan(0, n)});
  }
  rebuild_next_ = true;  // unless the midpoint stage finds the halo still good for another step

  system_->set_midpoint_exchange(midpoints_.get());
  try {
    system_->run(*merged_, ctx);
  } catch (...) {
    system_->set_midpoint_exchange(nullptr);
    throw;
  }
  system_->set_midpoint_exchange(nullptr);
  World& m = *merged_;
  const std::size_t owned = world.elements.size();
  exec::parallel_for(owned, CopyOwned{owned_rows_.span(), m.x.span(), m.y.span(), m.z.span(), world.x.span(),
                                      world.y.span(), world.z.span()});
  update_cell_centres(world);

  if (timing_) {
    exec::synchronize();
    const domain::DeviceHalo::Timings& h = device_halo_.timings();
    const double pack = h.pack - halo_before.pack, transfer = h.transfer - halo_before.transfer,
                 unpack = h.unpack - halo_before.unpack;
    timings_.pack += pack;
    timings_.transfer += transfer;
    timings_.unpack += unpack;
    timings_.compute +=
        seconds_since(t_step) - rebuild_time - pack - transfer - unpack - (timings_.check - check_before);
  }
  ++timings_.steps;
}

}  // namespace tissue::sem
