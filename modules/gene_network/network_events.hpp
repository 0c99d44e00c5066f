#pragma once
/// @file network_events.hpp
/// SBML events of a gene network (UserNetworkSpec::events), evaluated per cell at the end of every network
/// step, after the integration and the clamp: an event fires in a cell when its trigger is true on the
/// step's final state and was false at the end of the previous step (the trigger's `initialValue` before
/// t = 0). Firing events run in document order; each computes all its assignments from the state before
/// any of them is applied, then applies them (values below 0 are clamped to 0, as every species of the
/// network). The trigger's previous value is kept per cell in the hidden float column kEventColumn (one
/// component per event, 0 or 1; not written to the outputs, kept by checkpoints, copied to both daughters
/// at division). After the assignments the triggers are evaluated again: the value kept is "true before
/// and after", so an event re-arms when its own assignment makes its trigger false, and an event whose
/// trigger another event's assignment made true fires at the end of the next step if still true then.
/// docs/sbml.md, "Events".

#include <memory>
#include <string>
#include <vector>

#include "engine/io/scenario.hpp"
#include "modules/gene_network/network_expressions.hpp"

namespace tissue::grn {

/// The cells' column of the events' previous trigger values (one float component per event, 0 or 1).
inline constexpr const char* kEventColumn = "gene_network_events";

/// Checks every event expression of `spec` (triggers and assignments may read the species, mean_<species>,
/// adhesion, the sampled fields, the parameters and `time`, the time at the end of the step) and adds the
/// neighbour means and fields they read to spec.mean_species and spec.fields.
/// @throws InputError naming the event's place and the token for any expression error; at the key
///         "species" of `t` when the means or fields read exceed kMaxMeanSpecies or kMaxNetworkFields.
void check_network_events(UserNetworkSpec& spec, const io::ScenarioTable& t,
                          const std::vector<std::string>& available_fields);

/// CUDA C++ source of the kernel
///   extern "C" __global__ void user_network_events(float* species, float* prev, const float* means,
///       UserNetworkFields fields, unsigned long long stride, unsigned long long n, double time)
/// that runs the events on cell c < n: `species` the species column (rows of `stride` floats, row S =
/// adhesion, read only), `prev` the kEventColumn (one row per event), `means` one row per mean_species
/// entry, evaluated on the final state. Arithmetic in double, as on the host path.
std::string events_cuda_source(const UserNetworkSpec& spec);

/// The host path of the events: every trigger and assignment compiled to muParser bytecode and evaluated
/// over all cells at once; same arithmetic and order as events_cuda_source().
class HostEventEvaluator {
 public:
  explicit HostEventEvaluator(const UserNetworkSpec& spec);
  ~HostEventEvaluator();
  HostEventEvaluator(const HostEventEvaluator&) = delete;
  HostEventEvaluator& operator=(const HostEventEvaluator&) = delete;

  /// Runs the events on cells [0, n), host memory, the layout of events_cuda_source().
  void run(float* species, float* prev, const float* means, const std::vector<const float*>& fields,
           std::size_t stride, std::size_t n, double time);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tissue::grn
