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

template <class T>
void upload(const std::vector<T>& host, DeviceBuffer<T>& device) {
  device.resize(host.size());
  if (!host.empty())
    exec::copy_bytes(device.data(), exec::backend(), host.data(), exec::Backend::cpu,
                     host.size() * sizeof(T));
}

/// Where a row of the merged world comes from.
struct Source {
  std::int64_t cell;
  std::int32_t slot;
  bool ghost;
  std::size_t row;  ///< row of the owned elements or of the ghosts
};

/// out[r] = values[r] on owned rows, 0 on ghost rows.
struct MaskedValues {
  Span<const float> values;
  Span<const std::uint8_t> owned;
  Span<float> out;
  TISSUE_HD void operator()(std::size_t r) const { out[r] = owned[r] != 0 ? values[r] : 0.0f; }
};

/// out[r] = |X_r - X0_r| (minimum image on periodic axes) on owned rows, 0 on ghost rows [length].
struct DisplacementSinceRebuild {
  Span<const float> x, y, z, x0, y0, z0;
  Span<const std::uint8_t> owned;
  float lx, ly;
  bool periodic_x, periodic_y;
  Span<float> out;
  TISSUE_HD void operator()(std::size_t r) const {
    if (owned[r] == 0) {
      out[r] = 0.0f;
      return;
    }
    float dx = x[r] - x0[r], dy = y[r] - y0[r];
    const float dz = z[r] - z0[r];
    if (periodic_x) dx -= lx * floorf(dx / lx + 0.5f);
    if (periodic_y) dy -= ly * floorf(dy / ly + 0.5f);
    out[r] = sqrtf(dx * dx + dy * dy + dz * dz);
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

/// Between the RK2 stages: the ghosts' midpoints from their owners, the tissue's largest move.
class DecomposedSem::Midpoints final : public MidpointExchange {
 public:
  explicit Midpoints(DecomposedSem& owner) : owner_(owner) {}

  float exchange(World&, Span<float> xm, Span<float> ym, Span<float> zm, Span<const float> moved) override {
    DecomposedSem& o = owner_;
    o.device_halo_.exchange({xm, ym, zm});
    const auto t0 = Clock::now();
    const auto reach = static_cast<float>(o.comm_.max(static_cast<double>(o.owned_max(moved))));
    if (o.timing_) o.timings_.check += seconds_since(t0);
    // the midpoints are at most moved_ + reach from the rebuild's positions
    if (!(static_cast<double>(o.moved_) + reach <= 0.5 * o.margin_))
      throw NumericalError(
          "decomposed SEM: an element moved " + std::to_string(o.moved_ + reach) +
          " since the last rebuild of the halo, more than half its margin " + std::to_string(o.margin_) +
          " (halo width less the cut-off less how far elements lie outside their subdomains): "
          "reduce dt or widen the halo");
    return reach;
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

void DecomposedSem::set_timing(bool on) {
  timing_ = on;
  device_halo_.set_timing(on);
}

void DecomposedSem::reset_timings() {
  timings_ = Timings{};
  device_halo_.reset_timings();
}

float DecomposedSem::owned_max(Span<const float> values) {
  const std::size_t n = merged_->elements.size();
  scratch_.ensure(n);
  exec::parallel_for(n, MaskedValues{values, owned_mask_.span(), scratch_.span()});
  return std::max(0.0f, exec::max_value(Span<const float>(scratch_.data(), n)));
}

void DecomposedSem::rebuild(World& world) {
  const bool typed = !params_.cell_types.empty();
  if (typed && world.elements.find(kGhostCellTypeColumn) == nullptr)
    world.elements.add_column<std::int32_t>(kGhostCellTypeColumn);
  update_cell_centres(world);
  world.download();
  domain::migrate_to_owners(decomposition_, comm_, world);

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
  merged_ = std::make_unique<World>(world.box);
  World& merged = *merged_;
  add_sem_columns(merged);
  Column<std::int32_t>* merged_type = nullptr;
  if (typed) merged_type = &merged.cells.add_column<std::int32_t>(kCellTypeColumn);
  std::int64_t last = -1;
  std::int32_t c = -1;
  std::vector<std::int32_t> owned_rows(world.elements.size()), ghost_rows(ghost_count_);
  std::vector<std::uint8_t> mask(sources.size(), 0);
  for (std::size_t r = 0; r < sources.size(); ++r) {
    const Source& s = sources[r];
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
    (s.ghost ? ghost_rows : owned_rows)[s.row] = static_cast<std::int32_t>(r);
    if (!s.ghost) mask[r] = 1;
  }
  merged.commit();
  upload(owned_rows, owned_rows_);
  upload(mask, owned_mask_);

  // the device halo: the same messages between merged rows
  std::vector<domain::HaloRows> sends, receives;
  for (domain::HaloExchange::SentRows& s : halo_.sent_rows()) {
    for (std::int32_t& row : s.rows) row = owned_rows[static_cast<std::size_t>(row)];
    sends.push_back(domain::HaloRows{s.to, s.tag, std::move(s.rows)});
  }
  for (std::size_t m = 0; m < halo_.receives().size(); ++m) {
    const domain::GhostRange& range = halo_.ranges()[m];
    domain::HaloRows r{halo_.receives()[m].from, halo_.receives()[m].tag, {}};
    for (std::size_t g = range.first; g < range.first + range.count; ++g) r.rows.push_back(ghost_rows[g]);
    receives.push_back(std::move(r));
  }
  device_halo_.set_plan(sends, receives);

  // the margin: the halo width less the cut-off less the farthest an element lies outside its subdomain
  double outside = 0.0;
  const int rank = comm_.rank();
  for (std::size_t e = 0; e < world.elements.size(); ++e)
    outside = std::max(outside, decomposition_.outside(rank, world.x.host(e), world.y.host(e)));
  outside = comm_.max(outside);
  margin_ = decomposition_.halo_width() - params_.effective_inter_cutoff() - outside;
  if (!(margin_ > 0.0))
    throw std::invalid_argument(
        "decomposed SEM: the halo width " + std::to_string(decomposition_.halo_width()) +
        " leaves no margin: the intercellular cut-off is " +
        std::to_string(params_.effective_inter_cutoff()) + " and elements lie up to " +
        std::to_string(outside) + " outside their owners' subdomains; widen the halo");
  const std::size_t n = merged.elements.size();
  for (DeviceBuffer<float>* b : {&x0_, &y0_, &z0_}) b->resize(n);
  exec::copy(Span<const float>(merged.x.span().data(), n), x0_.span(), n);
  exec::copy(Span<const float>(merged.y.span().data(), n), y0_.span(), n);
  exec::copy(Span<const float>(merged.z.span().data(), n), z0_.span(), n);

  // the cell list's z bins as the undecomposed list's: capped by the whole tissue's element count
  const auto tissue_elements =
      static_cast<std::size_t>(comm_.sum(static_cast<std::int64_t>(world.elements.size())));
  if (!system_ || system_->params().z_bin_points != tissue_elements) {
    params_.z_bin_points = tissue_elements;
    system_ = std::make_unique<SemSystem>(params_);
  }
  revision_ = world.revision;
  rows_ = world.elements.size();
  ++timings_.rebuilds;
}

void DecomposedSem::step(World& world, const StepContext& ctx) {
  const auto t_step = Clock::now();
  const domain::DeviceHalo::Timings halo_before = device_halo_.timings();
  const double check_before = timings_.check;

  // rebuild when this rank's world changed or something in the tissue moved more than a quarter of the margin
  const bool changed = !merged_ || world.revision != revision_ || world.elements.size() != rows_;
  auto t0 = Clock::now();
  double moved = std::numeric_limits<double>::infinity();
  if (!changed) {
    World& m = *merged_;
    const std::size_t n = m.elements.size();
    scratch_.ensure(n);
    exec::parallel_for(n, DisplacementSinceRebuild{m.x.span(), m.y.span(), m.z.span(), x0_.span(), y0_.span(),
                                                   z0_.span(), owned_mask_.span(), m.box.lx, m.box.ly,
                                                   m.box.periodic_x, m.box.periodic_y, scratch_.span()});
    moved = std::max(0.0f, exec::max_value(Span<const float>(scratch_.data(), n)));
  }
  moved = comm_.max(moved);
  if (timing_) timings_.check += seconds_since(t0);
  double rebuild_time = 0.0;
  if (!(moved <= 0.25 * margin_)) {
    t0 = Clock::now();
    rebuild(world);
    moved_ = 0.0f;
    if (timing_) {
      exec::synchronize();
      rebuild_time = seconds_since(t0);
      timings_.rebuild += rebuild_time;
    }
  } else {
    moved_ = static_cast<float>(moved);
    World& m = *merged_;
    const std::size_t n = m.elements.size();
    device_halo_.exchange({m.x.span().subspan(0, n), m.y.span().subspan(0, n), m.z.span().subspan(0, n)});
  }

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
