#include "engine/schedule/composition.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "engine/core/state_checks.hpp"
#include "engine/io/grid_output.hpp"

namespace tissue {

Composition::Composition(const io::ScenarioTable& root, const ModelSettings& settings)
    : root_(root), settings_(settings), sim_(std::make_unique<Simulation>()) {}

World& Composition::world() {
  if (!sim_->world) {
    sim_->world = std::make_unique<World>();
    sim_->world->seed = settings_.seed;
  }
  return *sim_->world;
}

bool Composition::has_entity_set(const std::string& name) const {
  return std::find(entity_sets_.begin(), entity_sets_.end(), name) != entity_sets_.end();
}

void Composition::add_system(std::unique_ptr<System> system, int every, int substeps) {
  sim_->schedule.add(std::move(system), every, substeps);
}

void Composition::add_hook(std::string name, int every, Hook hook, AccessList access) {
  sim_->schedule.add_hook(std::move(name), every, std::move(hook), std::move(access));
}

void Composition::add_writer(WriterFactory factory) {
  writers_.push_back(std::move(factory));
}

void Composition::add_summary(std::function<std::string(World&)> summary) {
  summaries_.push_back(std::move(summary));
}

void Composition::add_check(std::function<void(World&)> check) {
  checks_.push_back(std::move(check));
}

void Composition::add_metric(std::string name, std::string description,
                             std::function<double(World&)> measure) {
  const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!valid) throw std::logic_error("metric name '" + name + "': letters, digits and '_' only");
  for (const auto& m : metrics_)
    if (m.name == name) throw std::logic_error("metric '" + name + "' added twice");
  metrics_.push_back(Metric{std::move(name), std::move(description), std::move(measure)});
}

void Composition::add_description(const std::string& text) {
  if (!text.empty()) description_.push_back(text);
}

void Composition::set_converged(std::function<bool(World&)> converged) {
  if (sim_->converged) throw std::logic_error("composition: two modules set a convergence test");
  sim_->converged = std::move(converged);
}

void Composition::set_derived_dt(double dt) {
  if (derived_dt_ > 0.0) throw std::logic_error("composition: two modules derive the time step");
  derived_dt_ = dt;
}

void Composition::reserve_memory(const io::ScenarioTable& table, const std::string& key,
                                 const std::string& what, const exec::MemoryEstimate& need) {
  const bool gpu = exec::backend() == exec::Backend::cuda;
  if (host_available_ < 0.0) {
    host_available_ = static_cast<double>(exec::host_memory_bytes());
    device_available_ = gpu ? static_cast<double>(exec::available_memory_bytes()) : host_available_;
  }
  const exec::MemoryEstimate total = exec::MemoryEstimate(reserved_) += need;
  const auto gb = [](double bytes) {
    std::ostringstream s;
    s << std::setprecision(3) << bytes / 1e9;
    return s.str();
  };
  const auto refuse = [&](double mine, double all, double available, const char* where) {
    std::ostringstream msg;
    msg << what << " need about " << gb(mine) << " GB";
    if (all > mine) msg << " (" << gb(all) << " GB with what the scenario's earlier tables need)";
    msg << ", more than the " << gb(available) << " GB available " << where;
    table.fail(key, msg.str());
  };
  if (gpu) {
    if (total.device > device_available_) refuse(need.device, total.device, device_available_, "on the GPU");
    if (total.host > host_available_) refuse(need.host, total.host, host_available_, "in host memory");
  } else if (total.host + total.device > host_available_) {
    refuse(need.host + need.device, total.host + total.device, host_available_, "on the cpu backend");
  }
  reserved_ = total;
}

std::unique_ptr<Simulation> Composition::finish() {
  sim_->memory = reserved_;
  world();  // a scenario of modules without entity sets still steps a (empty) world
  if (derived_dt_ > 0.0) sim_->dt = derived_dt_;
  auto writers = writers_;
  sim_->make_writer = [writers](const std::filesystem::path& dir,
                                const io::OutputPiece& piece) -> std::unique_ptr<SnapshotWriter> {
    std::vector<std::unique_ptr<SnapshotWriter>> parts;
    for (const auto& make : writers) parts.push_back(make(dir, piece));
    if (parts.size() == 1) return std::move(parts.front());
    return std::make_unique<io::CompositeWriter>(std::move(parts));
  };
  auto summaries = summaries_;
  sim_->summary = [summaries](World& w) {
    std::string text;
    for (const auto& s : summaries) {
      const std::string line = s(w);
      if (line.empty()) continue;
      text += (text.empty() ? "" : "\n") + line;
    }
    return text;
  };
  // the modules' own checks first (their messages are the most specific), then every float column of the
  // tables, whatever module added it
  auto checks = checks_;
  auto flag = std::make_shared<DeviceBuffer<std::int32_t>>();  // the check's scratch, kept between checks
  checks.push_back([flag](World& w) { check_table_values(w, *flag); });
  sim_->check = [checks](World& w) {
    for (const auto& c : checks) c(w);
  };
  std::string description;
  for (const auto& d : description_) description += (description.empty() ? "" : "; ") + d;
  sim_->description = description;
  // the engine's metrics, then the modules'
  World& w = *sim_->world;
  std::vector<Metric> metrics;
  metrics.push_back({"step", "the step", [](World& world) { return static_cast<double>(world.step); }});
  metrics.push_back({"time", "simulated time [time units]", [](World& world) { return world.time; }});
  if (w.cells.size() > 0)  // tables the scenario's entity sets filled
    metrics.push_back({"cells", "rows of the cells table",
                       [](World& world) { return static_cast<double>(world.cells.size()); }});
  if (w.elements.size() > 0)
    metrics.push_back({"elements", "rows of the elements table (subcellular elements)",
                       [](World& world) { return static_cast<double>(world.elements.size()); }});
  for (auto& m : metrics_) {
    for (const auto& e : metrics)
      if (e.name == m.name) throw std::logic_error("metric '" + m.name + "' is one of the engine's");
    metrics.push_back(std::move(m));
  }
  sim_->metrics = std::move(metrics);
  return std::move(sim_);
}

}  // namespace tissue
