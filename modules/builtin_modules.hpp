#pragma once
/// @file builtin_modules.hpp
/// The modules compiled into this build, registered: each module folder's registration function
/// (`tissue::modules::register_<folder>`), listed by its CMakeLists.txt line `tissue_register_module(...)`
/// and called in that order by a file the build generates (modules/CMakeLists.txt).

#include <memory>

#include "engine/io/scenario.hpp"
#include "engine/schedule/module_registry.hpp"

namespace tissue {

/// The registry of every module compiled into this build (built once, on first use; thread-safe).
const ModuleRegistry& builtin_modules();

/// builtin_modules().build_simulation(scenario): the simulation a scenario describes.
/// @throws InputError with file:line:column on any invalid input.
std::unique_ptr<Simulation> build_simulation(const io::Scenario& scenario);

}  // namespace tissue
