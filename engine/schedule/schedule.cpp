#include "engine/schedule/schedule.hpp"

#include <algorithm>
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

void Schedule::replace(const std::string& name, std::unique_ptr<System> system) {
  for (auto& e : systems_) {
    if (e.system->name() != name) continue;
    e.system = std::move(system);
    graphs_.clear();
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

SystemStates Schedule::save_states(World& world) const {
  SystemStates out;
  for (const auto& e : systems_) {
    SystemState state = e.system->save_state(world);
    if (state.empty()) continue;
    for (const auto& [name, other] : out)
      if (name == e.system->name())
        throw std::logic_error("schedule: two systems named '" + name + "' keep state between steps");
    out.emplace_back(e.system->name(), std::move(state));
  }
  return out;
}

void Schedule::restore_states(World& world, const SystemStates& states) {
  for (std::size_t k = 0; k < states.size(); ++k) {
    const std::string& name = states[k].first;
    for (std::size_t j = 0; j < k; ++j)
      if (states[j].first == name) throw InputError("the state of system '" + name + "' is given twice");
    const auto it = std::find_if(systems_.begin(), systems_.end(),
                                 [&](const SystemEntry& e) { return e.system->name() == name; });
    if (it == systems_.end())
      throw InputError("state of a system '" + name +
                       "', which this model does not have (systems: " + join(system_names()) + ")");
    it->system->restore_state(world, states[k].second);
  }
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

/// What the buffers of a recorded step depend on: dt, and each table's size, capacity and column buffers (a
/// resize, a hook's compaction or a reallocation changes it). Never 0. When it changes every recording goes:
/// the systems' scratch buffers may have been reallocated with it.
std::uint64_t layout_key(World& w, double dt) {
  Fnv f;
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
  graphs_.clear();
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
      // the layout, then which sequence this step is: the due systems and each one's variant
      const std::uint64_t layout = layout_key(world, dt);
      if (layout != layout_) {
        graphs_.clear();
        layout_ = layout;
      }
      Fnv f;
      f.add(due);
      for (std::size_t i = 0; i < systems_.size(); ++i)
        if (due & (std::uint64_t{1} << i))
          f.add(systems_[i].system->prepare(world, StepContext{world.step, world.time, dt}));
      const std::uint64_t key = f.h;
      auto graph =
          std::find_if(graphs_.begin(), graphs_.end(), [&](const StepGraph& g) { return g.key == key; });
      if (graph == graphs_.end()) {
        // the first step of this sequence runs normally: every buffer it sizes gets its size, so that the
        // recording at its next occurrence allocates nothing
        if (graphs_.size() >= kStepGraphs)
          graphs_.erase(std::min_element(
              graphs_.begin(), graphs_.end(),
              [](const StepGraph& a, const StepGraph& b) { return a.last_used < b.last_used; }));
        graphs_.push_back(StepGraph{key, nullptr, ++graph_clock_});
        run_due(world, dt);
      } else if (graph->recording) {
        graph->last_used = ++graph_clock_;
        graph->recording->replay();
      } else {
        graph->last_used = ++graph_clock_;
        auto recording = std::make_unique<exec::Recording>();
        bool captured = true;
        try {
          recording->record([&] { run_due(world, dt); });
        } catch (const BackendError&) {
          // a system that synchronises or allocates inside its run cannot be captured: step as before (a
          // device failure shows again in run_due)
          captured = false;
          set_step_graphs(false);
        }
        if (captured) {
          recording->replay();
          graph->recording = std::move(recording);
        } else {
          run_due(world, dt);
        }
      }
      replayed = true;
    }
  }
  if (!replayed) {
    for (auto& entry : systems_)
      if (world.step % entry.every == 0)
        entry.system->prepare(world, StepContext{world.step, world.time, dt});
    run_due(world, dt);
  }
  world.step += 1;
  world.time += dt;

  bool downloaded = false;
  std::chrono::steady_clock::time_point start;
  const auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  for (auto& h : hooks_) {
    if (world.step % h.every != 0) continue;
    if (!downloaded) {
      exec::synchronize();  // the step's queued work is the step's time, not the hook's
      start = std::chrono::steady_clock::now();
      world.download();
      add_hook_time("download", since(start));
      downloaded = true;
    }
    const auto hook_start = std::chrono::steady_clock::now();
    h.hook(world, StepContext{world.step, world.time, dt});
    add_hook_time(h.name, since(hook_start));
  }
  if (downloaded) {
    const auto commit_start = std::chrono::steady_clock::now();
    world.commit();
    add_hook_time("commit", since(commit_start));
    hook_seconds_ += since(start);
  }
}

void Schedule::add_hook_time(const std::string& name, double seconds) {
  for (auto& [part, total] : hook_split_)
    if (part == name) {
      total += seconds;
      return;
    }
  // "commit" stays last: parts are kept in the order download, hooks, commit
  const bool before_commit = !hook_split_.empty() && hook_split_.back().first == "commit" && name != "commit";
  hook_split_.insert(before_commit ? hook_split_.end() - 1 : hook_split_.end(), {name, seconds});
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
