#pragma once
/// @file sem_kernels.hpp
/// Subcellular element method (SEM): the pointwise math, pure TISSUE_HD functions and functors.
///
/// Source: Christley, Lee, Nie, Zhao, "Integrative multicellular biological modeling: a case study of
/// 3D epidermal development using GPU algorithms", BMC Syst. Biol. 4:107 (2010), section "Cell Shape
/// and Movement", equations of motion and Table 1; Newman, Math. Biosci. Eng. 2:613 (2005).
///
/// Overdamped motion of element i of cell a:
///   eta dX_ai/dt = - sum_{j != i} grad V_intra(|X_ai - X_aj|)
///                  - sum_{b != a} sum_j grad PV_inter(|X_ai - X_bj|)
///                  - [type(i) = adhesive] grad V_adh(z_ai)
/// V(r) = u0 exp(-r/xi1) - w0 exp(-r/xi2) (Morse); PV keeps only the repulsive part of the force.

#include <cstdint>

#include "engine/core/box.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/span.hpp"
#include "engine/spatial/cell_list.hpp"
#include "engine/spatial/triangle_index.hpp"
#include "engine/spatial/verlet_list.hpp"
#include "engine/util/random.hpp"

namespace tissue::sem {

/// Morse potential V(r) = u0 exp(-r/xi1) - w0 exp(-r/xi2).
/// u0, w0 [energy]; xi1, xi2 [length]; with xi1 < xi2 and u0/xi1 > w0/xi2 it has a repulsive core and
/// a single minimum.
template <class Real>
struct Morse {
  Real u0, xi1, w0, xi2;
  template <class Other>
  TISSUE_HD Morse<Other> as() const {
    return {static_cast<Other>(u0), static_cast<Other>(xi1), static_cast<Other>(w0), static_cast<Other>(xi2)};
  }
};

/// V(r) [energy], r >= 0 [length].
template <class Real>
TISSUE_HD Real morse_potential(Real r, const Morse<Real>& p) {
  return p.u0 * math::exp(-r / p.xi1) - p.w0 * math::exp(-r / p.xi2);
}

/// Force magnitude along the separation, -dV/dr [energy/length]: positive = repulsive.
template <class Real>
TISSUE_HD Real morse_force(Real r, const Morse<Real>& p) {
  return p.u0 / p.xi1 * math::exp(-r / p.xi1) - p.w0 / p.xi2 * math::exp(-r / p.xi2);
}

/// Distance of the potential's minimum, where morse_force = 0 [length]:
/// r* = ln(u0 xi2 / (w0 xi1)) / (1/xi1 - 1/xi2). Requires xi1 < xi2 and u0/xi1 > w0/xi2.
template <class Real>
TISSUE_HD Real morse_minimum(const Morse<Real>& p) {
  return math::log((p.u0 * p.xi2) / (p.w0 * p.xi1)) / (Real(1) / p.xi1 - Real(1) / p.xi2);
}

/// "Positive Morse" force of the seed (PV): the repulsive part only, max(0, -dV/dr). Continuous; zero
/// beyond morse_minimum(). Its potential is V(r) - V(r*) for r < r*, 0 beyond.
template <class Real>
TISSUE_HD Real positive_morse_force(Real r, const Morse<Real>& p) {
  const Real f = morse_force(r, p);
  return f > Real(0) ? f : Real(0);
}

/// Potential of positive_morse_force: V(r) - V(r*) for r < r* = morse_minimum(p), else 0 [energy].
template <class Real>
TISSUE_HD Real positive_morse_potential(Real r, const Morse<Real>& p) {
  const Real r_min = morse_minimum(p);
  return r < r_min ? morse_potential(r, p) - morse_potential(r_min, p) : Real(0);
}

/// A Morse force prepared for kernels: -dV/dr = a 2^(-r k1) - b 2^(-r k2) with a = u0/xi1, k1 = log2(e)/xi1,
/// b = w0/xi2, k2 = log2(e)/xi2 (no divisions in the pair loop; powers of 2 are one GPU instruction each).
struct MorseForce {
  float a, k1, b, k2;
  static MorseForce of(const Morse<double>& m) {
    constexpr double log2e = 1.44269504088896340736;
    return {static_cast<float>(m.u0 / m.xi1), static_cast<float>(log2e / m.xi1),
            static_cast<float>(m.w0 / m.xi2), static_cast<float>(log2e / m.xi2)};
  }
};

/// -dV/dr [energy/length] from prepared coefficients; equals morse_force(r, m) to float rounding (the
/// exponent's relative rounding, ~r/xi 2^-24, is the only difference). Exponentials below 2^-126 (r beyond
/// 87 xi) count as 0 (math::exp2_ftz: one instruction each on the GPU).
TISSUE_HD inline float morse_force(float r, const MorseForce& c) {
  return c.a * math::exp2_ftz(-r * c.k1) - c.b * math::exp2_ftz(-r * c.k2);
}

/// Most cell types a scenario may declare (the pair table is kMaxCellTypes^2 entries).
inline constexpr int kMaxCellTypes = 8;

/// The intercellular force between elements of cells of two given types, prepared for kernels.
/// -dV/dr of `force` is clamped from below at `min_force`: 0 keeps the repulsive part only (the seed's
/// positive Morse), the lowest float keeps the whole Morse force (attraction: differential adhesion).
struct PairForce {
  MorseForce force;
  float cutoff2;    ///< squared cutoff [length^2]: no force at or beyond it
  float min_force;  ///< 0 (repulsive part only) or the lowest float (attractive tail kept) [energy/length]
};

/// Parameters as kernels use them (single precision, squared cutoffs).
struct KernelParams {
  MorseForce intra;            ///< same-cell pairs
  MorseForce inter;            ///< pairs of different cells (repulsive part only)
  MorseForce adhesion;         ///< element - basement membrane (plane z = 0 or a mesh), adhesive types only
  float intra_cutoff2;         ///< squared cutoff for same-cell pairs [length^2] (infinity = none)
  float inter_cutoff2;         ///< squared cutoff for other-cell pairs [length^2]
  float mobility;              ///< 1 / friction [length/(force time)]
  std::int32_t adhesive_type;  ///< element type that adheres to the membrane
  bool adhesion_on;            ///< basement-membrane adhesion enabled
  bool substrate_on;           ///< the membrane is the mesh in `substrate`, not the plane z = 0
  TriangleIndex::View substrate;  ///< closest points on the membrane mesh (when substrate_on)
  /// Declared cell types (<= kMaxCellTypes); 0: none, and `intra`/`inter` act on every cell (the seed).
  std::int32_t cell_types;
  /// With cell types: V_intra of each type, #cell_types.
  Span<const MorseForce> intra_by_type;
  /// With cell types: the symmetric pair table, entry a * cell_types + b for types a and b, #cell_types^2.
  Span<const PairForce> pairs;
};

/// Adhesion of an element at p to a membrane mesh: V_adh in the signed distance r to the closest point q
/// of the mesh (positive on the side the triangle's normal points to), acting along the outward direction:
/// the triangle's normal when q is inside the face (r = (p - q) . n, exact in float however close p is), or
/// u = sign(r) (p - q) / |p - q| when q is on an edge or a vertex. For the plane z = 0 this is the seed's
/// f_z = -V_adh'(z). Elements farther than the index's reach feel none (choose the reach where V_adh has
/// decayed). [force]
TISSUE_HD inline math::Vec3<float> substrate_adhesion(float px, float py, float pz,
                                                      const TriangleIndex::View& mesh,
                                                      const MorseForce& adhesion) {
  math::Vec3<float> f;
  const SurfaceHit hit = mesh.closest(px, py, pz);
  if (hit.triangle < 0) return f;
  const float dx = px - hit.point[0], dy = py - hit.point[1], dz = pz - hit.point[2];
  const float r = signed_distance(hit, px, py, pz);
  float ux = hit.normal[0], uy = hit.normal[1], uz = hit.normal[2];
  if (!hit.on_face && hit.distance > 1e-6f) {
    const float inv = (r < 0.0f ? -1.0f : 1.0f) / hit.distance;
    ux = dx * inv;
    uy = dy * inv;
    uz = dz * inv;
  }
  const float magnitude = morse_force(r, adhesion);
  f.x = magnitude * ux;
  f.y = magnitude * uy;
  f.z = magnitude * uz;
  return f;
}

/// Force on one element [force], gathered over its own cell's elements (all of them, as the seed),
/// the other cells' elements in the cell list, and the membrane. Summation order is fixed, so the
/// result does not depend on threads or scheduling. With cell types (p.cell_types > 0) the intracellular
/// potential is the own cell's type's and each intercellular pair takes its pair of types' entry of the
/// pair table; without them the code is the seed's (one potential each).
struct ElementForce {
  Span<const float> x, y, z;              ///< positions at which forces are evaluated, #elements
  Span<const std::int32_t> type, cell;    ///< #elements
  Span<const std::int32_t> first, count;  ///< #cells: element range of each cell
  CellList::View bins;                    ///< built on x, y, z with tag = owning cell
  KernelParams p;
  Box box;
  Span<const std::int32_t> cell_type;  ///< #cells: type index in [0, p.cell_types) (empty without types)
  /// Verlet lists built with `bins` (other cells' elements within the bins' width at the build), or empty.
  /// With one lane, an element whose list holds its neighbours (VerletList::View::holds) visits its list
  /// instead of searching the bins: the same pairs within the cutoff in the same order, so the same force.
  VerletList::View near;
  /// #elements: how far each element is from where `bins` was built (a bound) [length]; empty: nowhere (a
  /// fresh build). With `near`.
  Span<const float> moved_each;

  /// The force on element i; kTyped must equal p.cell_types > 0, kMoved that `bins` is a moved_view()
  /// (CellList::refresh). The cases are compiled apart so that the seed's kernel (no types) carries none of
  /// the pair table's registers and loads, and each kernel one neighbour search.
  /// With lanes > 1, lane `lane` in [0, lanes) sums every lanes-th term of the own cell and of each bin
  /// run of the neighbour search, and lane 0 adds the membrane's (exec::group_for sums the lanes).
  template <bool kTyped, bool kMoved = false>
  TISSUE_HD math::Vec3<float> evaluate(std::size_t i, int lane = 0, int lanes = 1) const {
    const float px = x[i], py = y[i], pz = z[i];
    const std::int32_t c = cell[i];
    math::Vec3<float> f;
    const std::int32_t own_type = kTyped ? cell_type[static_cast<std::size_t>(c)] : 0;
    const MorseForce intra = kTyped ? p.intra_by_type[static_cast<std::size_t>(own_type)] : p.intra;
    // intracellular: Morse over every other element of the same cell
    const std::int32_t begin = first[static_cast<std::size_t>(c)];
    const std::int32_t end = begin + count[static_cast<std::size_t>(c)];
    for (std::int32_t k = begin + lane; k < end; k += lanes) {
      const auto kk = static_cast<std::size_t>(k);
      if (kk == i) continue;
      const float dx = box.min_image_x(px - x[kk]);
      const float dy = box.min_image_y(py - y[kk]);
      const float dz = pz - z[kk];
      const float r2 = dx * dx + dy * dy + dz * dz;
      if (r2 >= p.intra_cutoff2 || r2 <= 0.0f) continue;
      const float r_inv = math::rsqrt_ftz(r2);  // r2 > 0: distinct points
      const float s = morse_force(r2 * r_inv, intra) * r_inv;
      f.x += s * dx;
      f.y += s * dy;
      f.z += s * dz;
    }
    // intercellular: Morse over elements of other cells within the cutoff, clamped from below at the
    // pair's min_force: the seed's repulsive part only (min_force 0), or with cell types the pair of types'
    // entry of the table
    const PairForce seed_pair{p.inter, p.inter_cutoff2, 0.0f};
    const std::size_t row = static_cast<std::size_t>(own_type) * static_cast<std::size_t>(p.cell_types);
    const auto add_pair = [&](int, const PointTag& q) {
      if (q.tag == c) return;
      PairForce pair = seed_pair;
      if constexpr (kTyped)
        pair = p.pairs[row + static_cast<std::size_t>(cell_type[static_cast<std::size_t>(q.tag)])];
      const float dx = box.min_image_x(px - q.x);
      const float dy = box.min_image_y(py - q.y);
      const float dz = pz - q.z;
      const float r2 = dx * dx + dy * dy + dz * dz;
      if (r2 >= pair.cutoff2 || r2 <= 0.0f) return;
      const float r_inv = math::rsqrt_ftz(r2);  // r2 > 0: distinct points
      const float magnitude = morse_force(r2 * r_inv, pair.force);
      const float s = (magnitude > pair.min_force ? magnitude : pair.min_force) * r_inv;
      f.x += s * dx;
      f.y += s * dy;
      f.z += s * dz;
    };
    const float moved_max = kMoved ? bins.moved[0] : 0.0f;
    if (lanes == 1 && !near.empty() &&
        near.holds(i, px, py, pz, moved_each.empty() ? 0.0f : moved_each[i], moved_max, box))
      near.for_each(i, bins, add_pair);
    else if constexpr (kMoved)
      bins.for_each_moved_candidate(px, py, pz, add_pair, lane, lanes);
    else
      bins.for_each_built_candidate(px, py, pz, add_pair, lane, lanes);
    // basement membrane: Morse in the distance to the plane z = 0 (acting along z), or to a mesh
    if (lane == 0 && p.adhesion_on && type[i] == p.adhesive_type) {
      if (p.substrate_on)
        f += substrate_adhesion(px, py, pz, p.substrate, p.adhesion);
      else
        f.z += morse_force(pz, p.adhesion);
    }
    return f;
  }

  /// The force on element i (either case, chosen per call; kernels use evaluate<>() directly).
  TISSUE_HD math::Vec3<float> operator()(std::size_t i) const {
    if (!bins.moved.empty()) return p.cell_types > 0 ? evaluate<true, true>(i) : evaluate<false, true>(i);
    return p.cell_types > 0 ? evaluate<true>(i) : evaluate<false>(i);
  }
};

/// A force summed over exec::group_for's lanes [force].
struct ForceSum {
  float x = 0.0f, y = 0.0f, z = 0.0f;
  TISSUE_HD friend ForceSum operator+(const ForceSum& a, const ForceSum& b) {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
  }
};

/// One explicit stage: out = base + h * mobility * F(eval), wrapped into the box and above the floor.
/// With (eval = X, base = X, h = dt/2) then (eval = X_mid, base = X, h = dt) it is the seed's
/// 2nd-order Runge-Kutta (midpoint) step. `out` may alias `base` (each index reads and writes only
/// its own entry of both), never `eval`. With `moved` non-empty it also records how far each element
/// moved, h mobility |F| [length] (infinity for a non-finite force), for the cell list's refresh.
/// kMoved: force.bins is a moved_view() (the midpoint stage). Launched by exec::group_for<G> with
/// lanes = G: each lane sums its share of the element's force (ElementForce::evaluate), finish() moves it.
template <bool kTyped, bool kMoved = false>
struct ElementStage {
  using Value = ForceSum;
  ElementForce force;
  Span<const float> bx, by, bz;  ///< base positions
  Span<float> ox, oy, oz;        ///< output positions
  float h;                       ///< stage length [time]
  Span<float> moved = {};        ///< #elements, or empty: distance moved [length]
  /// With `moved`: add the stage's move to what moved[i] holds (the distance from where the cell list was
  /// built, DisplacementSinceBuild) instead of overwriting it, so that it bounds the distance from the build.
  bool accumulate = false;
  int lanes = 1;  ///< the group_for launch's G
  /// Item t is the element in slot t of the cell list (force.bins.index[t]) instead of element t: threads
  /// side by side then search the same bins. Each element's force is the same either way.
  bool by_bins = false;

  TISSUE_HD std::size_t element(std::size_t t) const {
    return by_bins ? static_cast<std::size_t>(force.bins.index[t]) : t;
  }
  TISSUE_HD ForceSum partial(std::size_t t, int lane) const {
    const math::Vec3<float> f = force.template evaluate<kTyped, kMoved>(element(t), lane, lanes);
    return {f.x, f.y, f.z};
  }
  TISSUE_HD void finish(std::size_t t, const ForceSum& f) const {
    const std::size_t i = element(t);
    const float k = h * force.p.mobility;
    const Box& box = force.box;
    ox[i] = box.wrap_x(bx[i] + k * f.x);
    oy[i] = box.wrap_y(by[i] + k * f.y);
    oz[i] = box.clamp_z(bz[i] + k * f.z);
    if (!moved.empty()) {
      const float d = (accumulate ? moved[i] : 0.0f) + k * math::sqrt(f.x * f.x + f.y * f.y + f.z * f.z);
      moved[i] = d <= 3.0e38f ? d : 3.4e38f;
    }
  }
};

/// How far each element is from where it was when the cell list was built [length]: |X - X_build| with the
/// periodic axes' minimum image, 3.4e38 (which CellList::View::for_each_moved_candidate reads as "not
/// finite") for a non-finite position. Whatever moved the elements since (the SEM's stages, noise, motility,
/// a user's edit), the list's moved view stays exact.
struct DisplacementSinceBuild {
  Span<const float> x, y, z;     ///< positions now, #elements
  Span<const float> bx, by, bz;  ///< positions at the build, #elements
  Span<float> moved;             ///< out, #elements
  Box box;
  TISSUE_HD void operator()(std::size_t i) const {
    const float dx = box.min_image_x(x[i] - bx[i]);
    const float dy = box.min_image_y(y[i] - by[i]);
    const float dz = z[i] - bz[i];
    const float d = math::sqrt(dx * dx + dy * dy + dz * dz);
    moved[i] = d <= 3.0e38f ? d : 3.4e38f;
  }
};

/// Copies positions (the cell list's build positions for DisplacementSinceBuild).
struct CopyPositions {
  Span<const float> x, y, z;
  Span<float> ox, oy, oz;
  TISSUE_HD void operator()(std::size_t i) const {
    ox[i] = x[i];
    oy[i] = y[i];
    oz[i] = z[i];
  }
};

/// Thermal noise of Newman's SEM (Math. Biosci. Eng. 2:613, 2005, eq. 1; the seed leaves it out): after the
/// deterministic step each element moves by sqrt(2 kT dt / eta) N(0, 1) per coordinate (Euler-Maruyama
/// for the Brownian term, by operator splitting), wrapped into the box and above the floor. The normals
/// come from the counter-based RNG keyed by (seed, kNoise, step << 32 ^ the cell's stable id, the
/// element's index in its cell), by Box-Muller: independent of threads, backend and storage order.
struct ElementNoise {
  Span<float> x, y, z;               ///< positions [length], #elements
  Span<const std::int32_t> cell;     ///< #elements
  Span<const std::int32_t> first;    ///< #cells
  Span<const std::int64_t> cell_id;  ///< #cells: stable ids (< 2^32)
  std::uint64_t seed;                ///< the run's seed
  std::int64_t step;                 ///< the step being taken
  float amplitude;                   ///< sqrt(2 kT dt / eta) [length]
  Box box;

  TISSUE_HD void operator()(std::size_t i) const {
    const auto c = static_cast<std::size_t>(cell[i]);
    const std::uint64_t entity =
        (static_cast<std::uint64_t>(step) << 32) ^ static_cast<std::uint64_t>(cell_id[c]);
    const auto k = static_cast<std::uint32_t>(static_cast<std::int64_t>(i) - first[c]);
    const random::Uniform4 u = random::uniform4(seed, random::kNoise, entity, k);
    const float two_pi = 6.28318530717958647692f;
    const float r1 = amplitude * math::sqrt(-2.0f * math::log(u.v[0]));
    const float r2 = amplitude * math::sqrt(-2.0f * math::log(u.v[2]));
    x[i] = box.wrap_x(x[i] + r1 * math::cos(two_pi * u.v[1]));
    y[i] = box.wrap_y(y[i] + r1 * math::sin(two_pi * u.v[1]));
    z[i] = box.clamp_z(z[i] + r2 * math::cos(two_pi * u.v[3]));
  }
};

/// Writes the force on every element (tests, diagnostics, benchmarks).
struct ElementForceOut {
  ElementForce force;
  Span<float> fx, fy, fz;
  TISSUE_HD void operator()(std::size_t i) const {
    const math::Vec3<float> f = force(i);
    fx[i] = f.x;
    fy[i] = f.y;
    fz[i] = f.z;
  }
};

}  // namespace tissue::sem
