#pragma once
/// @file user_network.hpp
/// System running a gene network defined in the scenario (network_expressions.hpp): the same RK2
/// (midpoint) step, neighbour means at each stage and non-negativity clamp as the built-in epidermis
/// network (gene_network.hpp), with the right-hand sides evaluated by muParser on the CPU backend and by a
/// kernel compiled from the scenario with NVRTC on the CUDA backend.

#include <memory>
#include <string>
#include <vector>

#include "engine/exec/device_buffer.hpp"
#include "engine/schedule/schedule.hpp"
#include "engine/spatial/cell_list.hpp"
#include "engine/spatial/triangle_index.hpp"
#include "modules/gene_network/gene_network.hpp"
#include "modules/gene_network/network_events.hpp"
#include "modules/gene_network/network_expressions.hpp"

namespace tissue::cuda {
class RuntimeKernel;
}

namespace tissue::grn {

/// The cells' float column and field name of the volume input ([gene_network.inputs] v = "volume").
inline constexpr const char* kVolumeInput = "volume";

/// System "gene_network" for a scenario-defined network. The world's species column holds the spec's
/// species in order, then the adhesion input (row spec.species.size(), computed every step); the sampled
/// fields the expressions read are cell columns of the same names. Needs current cell centres. With
/// noise on, each step starts with the noise step on the species rows (add_gene_noise), as the built-in's.
class UserNetworkSystem final : public System {
 public:
  /// Compiles the expressions for the active backend (NVRTC on CUDA: about a second, once).
  /// @throws BackendError when the generated kernel does not compile (a bug: expressions are checked when
  ///         the scenario is read).
  explicit UserNetworkSystem(UserNetworkSpec spec, NoiseParams noise = {});
  ~UserNetworkSystem() override;
  std::string name() const override { return "gene_network"; }
  AccessList access() const override;
  void run(World& world, const StepContext& ctx) override;
  const UserNetworkSpec& spec() const { return spec_; }
  const NoiseParams& noise() const { return noise_; }
  /// Measures the adhesion input from a membrane mesh instead of the plane z = 0 (null: the plane).
  void set_membrane(std::shared_ptr<const TriangleIndex> membrane) { membrane_ = std::move(membrane); }
  /// Fills the cells' float column kVolumeInput (a field the expressions read) at the start of every step
  /// with the cell's volume: its element count times `element_volume` [length^3] (network_volume.hpp).
  void set_volume_input(double element_volume) { element_volume_ = element_volume; }

 private:
  /// out = max(0, base + h f(eval)) for the first n cells; flags updated when not empty.
  void stage(World& w, Span<const float> eval, Span<const float> base, Span<float> out, double h,
             Span<std::uint32_t> flags);

  /// The SBML events on the step's final state (network_events.hpp), after the integration and clamp.
  void run_events(World& w, const StepContext& ctx);

  UserNetworkSpec spec_;
  NoiseParams noise_;
  double element_volume_ = 0.0;  ///< > 0: the volume input is filled (set_volume_input)
  std::shared_ptr<const TriangleIndex> membrane_;
  CellList bins_;
  DeviceBuffer<float> mid_, means_, heights_;
  std::vector<const float*> field_columns_;     ///< the sampled fields' columns, looked up per stage
  std::unique_ptr<HostNetworkEvaluator> host_;  ///< the CPU backend's
  std::unique_ptr<HostEventEvaluator> host_events_;  ///< the CPU backend's events (null without events)
#if defined(TISSUE_BACKEND_CUDA)
  std::unique_ptr<cuda::RuntimeKernel> kernel_;  ///< the CUDA backend's compiled expressions
  std::unique_ptr<cuda::RuntimeKernel> events_kernel_;  ///< the CUDA backend's events (null without)
#endif
};

}  // namespace tissue::grn
