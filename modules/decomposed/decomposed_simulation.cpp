#include "modules/decomposed/decomposed_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/cell_centres.hpp"
#include "engine/domain/migration.hpp"
#include "engine/exec/error.hpp"
#include "modules/coupling/signal_field.hpp"
#include "modules/coupling/signal_field_decomposed.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/gene_network_decomposed.hpp"
#include "modules/sem/sem.hpp"
#include "modules/sem/sem_decomposed.hpp"

namespace tissue {

namespace {

/// System "sem" of a decomposed run: sem::DecomposedSem's step.
class DecomposedSemSystem final : public System {
 public:
  DecomposedSemSystem(AccessList access, const sem::SemParams& params,
                      std::shared_ptr<const domain::Decomposition> decomposition, domain::Communicator& comm,
                      domain::DeviceTransport* transport)
      : access_(std::move(access)),
        decomposition_(std::move(decomposition)),
        sem_(params, *decomposition_, comm, transport) {}
  std::string name() const override { return "sem"; }
  AccessList access() const override { return access_; }
  void run(World& world, const StepContext& ctx) override { sem_.step(world, ctx); }
  const sem::DecomposedSem& sem() const { return sem_; }

 private:
  AccessList access_;
  std::shared_ptr<const domain::Decomposition> decomposition_;  ///< before sem_, which keeps a reference
  sem::DecomposedSem sem_;
};

/// System "gene_network" of a decomposed run: grn::DecomposedGeneNetwork's step.
class DecomposedGeneNetworkSystem final : public System {
 public:
  DecomposedGeneNetworkSystem(AccessList access, const grn::GeneNetworkParams& params,
                              std::shared_ptr<const domain::Decomposition> decomposition,
                              domain::Communicator& comm, domain::DeviceTransport* transport)
      : access_(std::move(access)),
        decomposition_(std::move(decomposition)),
        network_(params, *decomposition_, comm, transport) {}
  std::string name() const override { return "gene_network"; }
  AccessList access() const override { return access_; }
  void run(World& world, const StepContext& ctx) override { network_.step(world, ctx); }
  const grn::DecomposedGeneNetwork& network() const { return network_; }

 private:
  AccessList access_;
  std::shared_ptr<const domain::Decomposition> decomposition_;
  grn::DecomposedGeneNetwork network_;
};

/// A signal field's system ("<name>") in a decomposed run: coupling::DecomposedSignalField's step; the
/// stability check is the undecomposed system's.
class DecomposedSignalFieldSystem final : public System {
 public:
  DecomposedSignalFieldSystem(const coupling::SignalFieldSystem<float>& original, GridField<float>& field,
                              std::shared_ptr<const domain::Decomposition> decomposition,
                              domain::Communicator& comm, domain::DeviceTransport* transport)
      : checks_(original.params(), field),
        access_(original.access()),
        decomposition_(std::move(decomposition)),
        field_(original.params(), field, *decomposition_, comm, transport) {}
  std::string name() const override { return checks_.name(); }
  AccessList access() const override { return access_; }
  void run(World& world, const StepContext& ctx) override { field_.step(world, ctx); }
  void check_step_length(double h) const override { checks_.check_step_length(h); }
  const coupling::DecomposedSignalField<float>& field() const { return field_; }
  coupling::DecomposedSignalField<float>& field() { return field_; }

 private:
  coupling::SignalFieldSystem<float> checks_;  ///< never run: its name and stability check
  AccessList access_;
  std::shared_ptr<const domain::Decomposition> decomposition_;
  coupling::DecomposedSignalField<float> field_;
};

/// A signal field's sampling system ("sample.<name>") in a decomposed run: the samples of the rank's cells
/// from the window its DecomposedSignalField holds.
class DecomposedFieldSamplingSystem final : public System {
 public:
  DecomposedFieldSamplingSystem(const System& original, DecomposedSignalFieldSystem& signal)
      : name_(original.name()), access_(original.access()), signal_(signal) {}
  std::string name() const override { return name_; }
  AccessList access() const override { return access_; }
  void run(World& world, const StepContext&) override { signal_.field().sample(world); }

 private:
  std::string name_;
  AccessList access_;
  DecomposedSignalFieldSystem& signal_;  ///< owned by the schedule, as this system
};

/// The largest x-y distance of an element from its cell's centre (host mirrors, minimum image) [length].
double largest_cell_extent(World& w) {
  update_cell_centres(w);
  w.download();
  double largest = 0.0;
  for (std::size_t c = 0; c < w.cells.size(); ++c)
    for (std::int32_t k = 0; k < w.count.host(c); ++k) {
      const auto e = static_cast<std::size_t>(w.first.host(c) + k);
      const double dx = w.box.min_image_x(w.x.host(e) - w.cx.host(c));
      const double dy = w.box.min_image_y(w.y.host(e) - w.cy.host(c));
      largest = std::max(largest, std::sqrt(dx * dx + dy * dy));
    }
  return largest;
}

}  // namespace

std::shared_ptr<const domain::Decomposition> decompose_simulation(Simulation& sim, domain::Communicator& comm,
                                                                  double skin,
                                                                  domain::DeviceTransport* transport) {
  World& w = *sim.world;
  const sem::SemSystem* sem_system = nullptr;
  const grn::GeneNetworkSystem* network = nullptr;
  std::vector<const coupling::SignalFieldSystem<float>*> signals;
  std::vector<const System*> samplings;  // "sample.<name>" of the signal fields
  for (std::size_t i = 0; i < sim.schedule.system_count(); ++i) {
    System& s = sim.schedule.system(i);
    if (s.name() == "sem" && (sem_system = dynamic_cast<const sem::SemSystem*>(&s)) != nullptr) continue;
    if (s.name() == "gene_network" && (network = dynamic_cast<const grn::GeneNetworkSystem*>(&s)) != nullptr)
      continue;
    if (s.name() == "cell_centres") continue;
    if (const auto* signal = dynamic_cast<const coupling::SignalFieldSystem<float>*>(&s)) {
      signals.push_back(signal);
      continue;
    }
    if (dynamic_cast<const coupling::FieldSamplingSystem<float>*>(&s) != nullptr) {
      samplings.push_back(&s);
      continue;
    }
    throw InputError("a decomposed run cannot step the system '" + s.name() +
                     "' yet (decomposed: sem, the built-in gene_network, cell_centres, the signal fields "
                     "and their sampling)");
  }
  // every field is a signal field, stepped by its system
  std::vector<GridField<float>*> signal_fields;
  for (const auto* signal : signals) {
    GridField<float>* field = nullptr;
    for (auto& f : w.fields)
      if (f->name() == signal->params().name) field = dynamic_cast<GridField<float>*>(f.get());
    if (field == nullptr)
      throw InputError("signal." + signal->params().name + ": no grid field of that name");
    if (signal->params().exclude_cells)
      throw InputError(
          "signal." + signal->params().name +
          ": a field that excludes the cells' volume (exclude_cells) does not run decomposed yet");
    signal_fields.push_back(field);
  }
  for (auto& f : w.fields)
    if (std::find(signal_fields.begin(), signal_fields.end(), f.get()) == signal_fields.end())
      throw InputError("a decomposed run cannot step the field '" + f->name() +
                       "' yet (decomposed: the signal fields)");
  if (sem_system == nullptr) throw InputError("a decomposed run needs the system 'sem'");

  // the halo: the SEM's cut-off plus twice the cells' extent (they grow), the network's neighbour distance
  sem::SemParams sem_params = sem_system->params();
  sem_params.lanes = 1;
  sem_params.rebuild_every = 1;
  double width = sem_params.effective_inter_cutoff() + 2.0 * largest_cell_extent(w);
  grn::GeneNetworkParams network_params;
  if (network != nullptr) {
    network_params = network->params();
    network_params.lanes = 1;
    width = std::max(width, network_params.neighbour_distance);
  }
  for (const auto* field : signal_fields) width = std::max(width, field->shape().h);  // a deposit's reach
  width += skin;
  auto decomposition = std::make_shared<const domain::Decomposition>(
      domain::choose_process_grid(comm.size(), w.box, width), w.box, width);

  // every rank composed the whole tissue: rank 0 keeps it and spreads it, the others start empty
  sem::DecomposedSem::add_columns(w);
  w.download();
  if (comm.rank() != 0) {
    for (std::size_t c = 0; c < w.cells.size(); ++c) w.flags.host(c) |= cell_flags::dead;
    w.compact_host();
  }
  domain::migrate_to_owners(*decomposition, comm, w);
  w.cells.shrink_to_fit();  // every rank composed the whole tissue: keep the capacity of its share
  w.elements.shrink_to_fit();
  domain::number_daughters_globally(comm, w);

  const AccessList sem_access = sem_system->access();
  auto decomposed_sem =
      std::make_unique<DecomposedSemSystem>(sem_access, sem_params, decomposition, comm, transport);
  const DecomposedSemSystem* sem_part = decomposed_sem.get();  // owned by the schedule from here on
  sim.schedule.replace("sem", std::move(decomposed_sem));
  const DecomposedGeneNetworkSystem* network_part = nullptr;
  if (network != nullptr) {
    const AccessList network_access = network->access();
    auto decomposed_network = std::make_unique<DecomposedGeneNetworkSystem>(network_access, network_params,
                                                                            decomposition, comm, transport);
    network_part = decomposed_network.get();
    sim.schedule.replace("gene_network", std::move(decomposed_network));
  }
  // each field's window is held by its decomposed system; its samples read it there
  std::vector<DecomposedSignalFieldSystem*> signal_parts;
  for (std::size_t i = 0; i < signals.size(); ++i) {
    const std::string name = signals[i]->name();
    auto system = std::make_unique<DecomposedSignalFieldSystem>(*signals[i], *signal_fields[i], decomposition,
                                                                comm, transport);
    signal_parts.push_back(system.get());
    sim.schedule.replace(name, std::move(system));
  }
  for (const System* sampling : samplings) {
    const std::string name = sampling->name();
    const auto part = std::find_if(signal_parts.begin(), signal_parts.end(),
                                   [&](const auto* p) { return "sample." + p->name() == name; });
    if (part == signal_parts.end())
      throw InputError("a decomposed run samples the field of '" + name +
                       "' only with its signal system (signal_transport)");
    sim.schedule.replace(name, std::make_unique<DecomposedFieldSamplingSystem>(*sampling, **part));
  }
  sim.schedule.set_step_graphs(false);

  // the summary says how often the halos were rebuilt (the same on every rank: the decisions are collective)
  sim.summary = [summary = sim.summary, sem_part, network_part, signal_parts, ranks = comm.size(),
                 grid = decomposition->grid()](World& world) {
    std::string text = summary ? summary(world) : "";
    text += std::string(text.empty() ? "" : "\n") + "one tissue over " + std::to_string(ranks) + " ranks (" +
            std::to_string(grid.px) + " x " + std::to_string(grid.py) + "): halo rebuilds: sem " +
            std::to_string(sem_part->sem().rebuilds());
    if (network_part != nullptr)
      text += ", gene_network " + std::to_string(network_part->network().rebuilds());
    for (const auto* part : signal_parts)
      text += ", " + part->name() + " " + std::to_string(part->field().rebuilds());
    return text;
  };
  return decomposition;
}

}  // namespace tissue
