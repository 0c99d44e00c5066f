#include "engine/schedule/schedule.hpp"

#include <chrono>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "engine/exec/backend.hpp"
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

namespace {

/// FNV-1a over 64-bit words.
struct Fnv {
  std::uint64_t h = 1469598103934665603ull;
  void add(std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xffu;
      h *= 1099511628211ull;
    }
  }
};

/// What a recorded step depends on: the due systems, dt, and each table's size, capacity and column
/// buffers (a resize, a hook's compaction or a reallocation changes it). Never 0.
std::uint64_t layout_key(World& w, std::uint64_t due, double dt) {
  Fnv f;
  f.add(due);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &dt, sizeof bits);
  f.add(bits);
  for (Table* t : {&w.cells, &w.elements}) {
    f.add(t->size());
    f.add(t->capacity());
    for (const auto& c : t->columns()) f.add(reinterpret_cast<std::uintptr_t>(c->device_bytes()));
  }
  f.add(w.fields.size());
  return f.h == 0 ? 1 : f.h;
}

}  // namespace

void Schedule::set_step_graphs(bool on) {
  step_graphs_ = on;
  warm_key_ = recorded_key_ = 0;
  recording_.reset();
}

void Schedule::run_due(World& world, double dt) {
  for (auto& entry : systems_) {
    if (world.step % entry.every != 0) continue;
    const double h = dt * entry.every / entry.substeps;
    for (int sub = 0; sub < entry.substeps; ++sub)
      entry.system->run(world, StepContext{world.step, world.time + sub * h, h, sub});
  }
}

void Schedule::step(World& world, double dt) {
  bool replayed = false;
  if (step_graphs_ && exec::backend() == exec::Backend::cuda && systems_.size() <= 64) {
    std::uint64_t due = 0;
    bool replayable = true;
    for (std::size_t i = 0; i < systems_.size(); ++i) {
      if (world.step % systems_[i].every != 0) continue;
      due |= std::uint64_t{1} << i;
      replayable = replayable && systems_[i].system->replayable();
    }
    if (due != 0 && replayable) {
      const std::uint64_t key = layout_key(world, due, dt);
      if (recording_ && recorded_key_ == key) {
        recording_->replay();
      } else if (warm_key_ == key) {
        // the second step on this layout: every buffer the systems size has its size, so the recording
        // allocates nothing; what it bakes in (spans, sizes, dt) is the key
        if (!recording_) recording_ = std::make_unique<exec::Recording>();
        bool captured = true;
        try {
          recording_->record([&] { run_due(world, dt); });
        } catch (const BackendError&) {
          // a system that synchronises or allocates inside its run cannot be captured: step as before (a
          // device failure shows again in run_due)
          captured = false;
          set_step_graphs(false);
        }
        if (captured) {
          recorded_key_ = key;
          recording_->replay();
        } else {
          run_due(world, dt);
        }
      } else {
        run_due(world, dt);
        warm_key_ = key;
      }
      replayed = true;
    }
  }
  if (!replayed) run_due(world, dt);
  world.step += 1;
  world.time += dt;

  bool downloaded = false;
  std::chrono::steady_clock::time_point start;
  for (auto& h : hooks_) {
    if (world.step % h.every != 0) continue;
    if (!downloaded) {
      exec::synchronize();  // the step's queued work is the step's time, not the hook's
      start = std::chrono::steady_clock::now();
      world.download();
      downloaded = true;
    }
    h.hook(world, StepContext{world.step, world.time, dt});
  }
  if (downloaded) {
    world.commit();
    hook_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
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
