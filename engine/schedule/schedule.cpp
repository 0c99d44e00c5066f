#include "engine/schedule/schedule.hpp"

#include <sstream>
#include <stdexcept>

#include "engine/exec/error.hpp"

namespace tissue {

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out.empty() ? "-" : out;
}

std::string join(const std::vector<ColumnRef>& v) {
  std::vector<std::string> names;
  for (const auto& c : v) names.push_back(c.str());
  return join(names);
}

/// @throws std::invalid_argument for every < 1 or substeps < 1 of system `name`.
void check_cadence(const std::string& name, int every, int substeps) {
  if (every < 1) throw std::invalid_argument("system '" + name + "': every must be >= 1");
  if (substeps < 1) throw std::invalid_argument("system '" + name + "': substeps must be >= 1");
}
}  // namespace

void Schedule::add(std::unique_ptr<System> system, int every, int substeps) {
  check_cadence(system->name(), every, substeps);
  systems_.push_back({std::move(system), every, substeps});
}

void Schedule::set_cadence(const std::string& name, int every, int substeps) {
  for (auto& e : systems_) {
    if (e.system->name() != name) continue;
    check_cadence(name, every, substeps);
    e.every = every;
    e.substeps = substeps;
    return;
  }
  throw std::invalid_argument("no system named '" + name +
                              "' in the schedule (systems: " + join(system_names()) + ")");
}

void Schedule::check_step_lengths(double dt) const {
  for (const auto& e : systems_) e.system->check_step_length(dt * e.every / e.substeps);
}

void Schedule::check_access() const {
  std::vector<AccessList> access;
  for (const auto& e : systems_) access.push_back(e.system->access());
  for (std::size_t i = 0; i < systems_.size(); ++i)
    for (std::size_t j = i + 1; j < systems_.size(); ++j) {
      const std::string a = systems_[i].system->name(), b = systems_[j].system->name();
      for (const auto& c : access[i].columns(AccessMode::read))
        if (access[j].has(AccessMode::write, c))
          throw InputError("schedule: system '" + a + "' reads " + c.str() + " before the later system '" +
                           b + "' writes it in the same step: run '" + b + "' before '" + a +
                           "', or declare that '" + a + "' reads the previous step's " + c.str() +
                           " (AccessList::read_previous)");
      for (const auto& c : access[j].columns(AccessMode::read_previous))
        if (access[i].has(AccessMode::write, c))
          throw InputError("schedule: system '" + b + "' reads the previous step's " + c.str() +
                           ", but the earlier system '" + a + "' writes it in the same step: run '" + b +
                           "' before '" + a + "', or declare that '" + b + "' reads " + c.str() +
                           " as the earlier systems leave it (AccessList::read)");
    }
}

std::vector<std::string> Schedule::system_names() const {
  std::vector<std::string> out;
  for (const auto& e : systems_) out.push_back(e.system->name());
  return out;
}

void Schedule::add_hook(std::string name, int every, Hook hook, AccessList access) {
  if (every < 1) throw std::invalid_argument("hook '" + name + "': every must be >= 1");
  hooks_.push_back({std::move(name), every, std::move(hook), std::move(access)});
}

void Schedule::step(World& world, double dt) {
  for (auto& entry : systems_) {
    if (world.step % entry.every != 0) continue;
    const double h = dt * entry.every / entry.substeps;
    for (int sub = 0; sub < entry.substeps; ++sub)
      entry.system->run(world, StepContext{world.step, world.time + sub * h, h, sub});
  }
  world.step += 1;
  world.time += dt;

  bool downloaded = false;
  for (auto& h : hooks_) {
    if (world.step % h.every != 0) continue;
    if (!downloaded) {
      world.download();
      downloaded = true;
    }
    h.hook(world, StepContext{world.step, world.time, dt});
  }
  if (downloaded) world.commit();
}

std::string Schedule::describe() const {
  std::ostringstream out;
  out << "each step, in order:\n";
  for (const auto& e : systems_) {
    out << "  system " << e.system->name();
    if (e.every > 1) out << " (every " << e.every << " steps, step length " << e.every << " dt)";
    if (e.substeps > 1)
      out << " (" << e.substeps << " sub-steps of " << e.every << " dt / " << e.substeps << " per run)";
    const AccessList access = e.system->access();
    out << "\n    reads:  " << join(access.columns(AccessMode::read)) << "\n";
    const auto previous = access.columns(AccessMode::read_previous);
    if (!previous.empty()) out << "    reads previous step: " << join(previous) << "\n";
    out << "    writes: " << join(access.columns(AccessMode::write)) << "\n";
  }
  out << "between steps, on host mirrors (then compact and re-upload):\n";
  if (hooks_.empty()) out << "  (no hooks)\n";
  for (const auto& h : hooks_) {
    out << "  hook " << h.name << " (every " << h.every << " steps)\n";
    if (h.access.empty()) continue;
    out << "    reads:  " << join(h.access.columns(AccessMode::read)) << "\n";
    out << "    writes: " << join(h.access.columns(AccessMode::write)) << "\n";
  }
  return out.str();
}

}  // namespace tissue
