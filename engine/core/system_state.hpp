#pragma once
/// @file system_state.hpp
/// What a system carries from one step to the next outside the World's tables and fields, when its later
/// results depend on it: for example the positions a reused cell list was built on (the order in which
/// neighbours are summed follows that build, so a restart that rebuilt the list at once would continue
/// only to float rounding). Checkpoints hold each system's state under /systems/<name> and a restart hands
/// it back (System::save_state, System::restore_state; engine/io/checkpoint.hpp), so that a restarted run
/// continues with the bytes of an uninterrupted one.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tissue {

/// A system's state: named integers and named float arrays (e.g. one value per element, in the elements'
/// row order at the time it was saved). Empty for a system that keeps nothing across steps.
struct SystemState {
  std::map<std::string, std::int64_t> integers;
  std::map<std::string, std::vector<float>> arrays;
  bool empty() const { return integers.empty() && arrays.empty(); }
};

/// The states of a schedule's systems, by system name (Schedule::save_states).
using SystemStates = std::vector<std::pair<std::string, SystemState>>;

}  // namespace tissue
