#pragma once
/// @file surface_rd_variants.hpp
/// The surface reaction-diffusion kernel paths that left modules/surface_rd for the benchmark (issue 31,
/// item 8: a module keeps its reference path and its fastest; surface RD keeps `baseline`, `stencil` and
/// `patches`): `fused`, `ring` and `ring_weights` (math: surface_rd_variants_kernels.hpp). Compiled into
/// bench_surface_rd, which times them next to the module's paths for BENCHMARKS.md, and into the test
/// binary, which checks them against the module's baseline (tests/modules/test_surface_rd_variants.cpp).
/// Explicit Euler only.

#include <memory>
#include <string>
#include <vector>

#include "bench/surface_rd_variants_kernels.hpp"
#include "engine/exec/device_buffer.hpp"
#include "engine/mesh/surface_field.hpp"
#include "engine/mesh/triangle_mesh.hpp"
#include "engine/schedule/schedule.hpp"
#include "modules/surface_rd/surface_rd.hpp"

namespace tissue::surface_rd::variants {

/// fused: one kernel per step over the baseline's stored operators (CSR Laplacian, vertex-face lists,
/// eq. 3 vectors); ring: one kernel recomputing the geometry from the one-ring positions (least traffic);
/// ring_weights: ring with the Laplacian weights and incident angles stored per ring slot.
enum class Variant { fused, ring, ring_weights };

/// The variant's name as the module's paths had it in scenarios ("fused", "ring", "ring_weights").
const char* variant_name(Variant variant);

/// The operators of the variants in precision Real on the active backend: the module's MeshOperators of
/// the same mesh (the baseline's operators, the ring layout, the boundary projections) and the variants'
/// own, the padded positions and the per-slot weights of `ring_weights`.
template <class Real>
class VariantOperators {
 public:
  /// @param operators  the module's operators of `mesh`
  VariantOperators(const mesh::TriangleMesh& mesh, const mesh::MeshTopology& topology,
                   std::shared_ptr<const MeshOperators<Real>> operators);
  VariantView<Real> view() const;
  const MeshOperators<Real>& operators() const { return *ops_; }

 private:
  std::shared_ptr<const MeshOperators<Real>> ops_;
  DeviceBuffer<Point<Real>> points_;
  DeviceBuffer<SlotWeights<Real>> ring_weights_;
};

/// System "surface_rd_<variant>": params.steps_per_launch explicit Euler steps of ctx.dt /
/// steps_per_launch on the field, one launch each, through the variant's kernel (the module's
/// SurfaceRdSystem with the variant in place of its path).
template <class Real>
class VariantSystem final : public System {
 public:
  /// @throws std::invalid_argument for params.integrator = rk4.
  VariantSystem(Variant variant, const SurfaceRdParams& params, SurfaceField<Real>& field,
                std::shared_ptr<const VariantOperators<Real>> operators);
  std::string name() const override { return std::string("surface_rd_") + variant_name(variant_); }
  AccessList access() const override { return AccessList().read_write("surface", field_.name()); }
  void run(World& world, const StepContext& ctx) override;

 private:
  Variant variant_;
  SurfaceRdParams params_;
  SurfaceField<Real>& field_;
  std::shared_ptr<const VariantOperators<Real>> ops_;
};

extern template class VariantOperators<float>;
extern template class VariantOperators<double>;
extern template class VariantSystem<float>;
extern template class VariantSystem<double>;

}  // namespace tissue::surface_rd::variants
