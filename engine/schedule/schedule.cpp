#include "engine/schedule/schedule.hpp"

#include <sstream>
#include <stdexcept>

namespace tissue {

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out.empty() ? "-" : out;
}
}  // namespace

void Schedule::add(std::unique_ptr<System> system, int every) {
  if (every < 1) throw std::invalid_argument("system '" + system->name() + "': every must be >= 1");
  systems_.push_back({std::move(system), every});
}

void Schedule::add_hook(std::string name, int every, Hook hook) {
  if (every < 1) throw std::invalid_argument("hook '" + name + "': every must be >= 1");
  hooks_.push_back({std::move(name), every, std::move(hook)});
}

void Schedule::step(World& world, double dt) {
  for (auto& entry : systems_) {
    if (world.step % entry.every != 0) continue;
    const StepContext ctx{world.step, world.time, dt * entry.every};
    entry.system->run(world, ctx);
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
    out << "\n    reads:  " << join(e.system->reads()) << "\n    writes: " << join(e.system->writes())
        << "\n";
  }
  out << "between steps, on host mirrors (then compact and re-upload):\n";
  if (hooks_.empty()) out << "  (no hooks)\n";
  for (const auto& h : hooks_) out << "  hook " << h.name << " (every " << h.every << " steps)\n";
  return out.str();
}

}  // namespace tissue
