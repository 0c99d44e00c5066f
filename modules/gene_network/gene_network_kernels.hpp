#pragma once
/// @file gene_network_kernels.hpp
/// The epidermal gene network of Christley et al. (2010), "Intracellular Gene Network" equations and
/// Table 2: Notch N, Delta D, bound Notch/Delta B, Ovol2 O2, Ovol1 O1, c-Myc M, and the basement-
/// membrane adhesion A (an input computed from geometry), with Hill-type regulation
///   H(x) = a + b / (1 + (c x)^h)        (h > 0 represses, h < 0 activates; the seed's HILL()).
///
///   dN/dt  = -k_a N <D> + k_d B - d_N N + H_bn(B) H_on(O2)
///   dD/dt  = -k_a D <N> + k_d <B> - d_D D + H_nd(N)
///   dB/dt  =  k_a N <D> - k_d B - d_B B
///   dO2/dt = -d_O O2 + H_vo(O1) H_go(G)
///   dO1/dt = -d_V O1 + H_ov(O2) H_av(A)
///   dM/dt  = -d_M M + H_om(O2)
///   dA/dt  = 0 (A = sum of the heights of the cell's adhesive elements above the membrane, set every step)
/// <X> is the mean of X over neighbouring cells (0 without neighbours), G the TGF-beta level: a constant,
/// or each cell's sample of a diffusible TGF-beta field (GeneNetworkParams::tgf_beta_field).

#include <cstdint>

#include "engine/core/box.hpp"
#include "engine/exec/math.hpp"
#include "engine/exec/span.hpp"
#include "engine/spatial/cell_list.hpp"
#include "engine/spatial/triangle_index.hpp"
#include "engine/util/random.hpp"

namespace tissue::grn {

/// Species indices (species-major rows of the cells' `species` column).
enum Species : int { kNotch = 0, kDelta, kBound, kOvol2, kOvol1, kMyc, kAdhesion, kSpeciesCount };

/// Output names of the species, in index order.
inline constexpr const char* kSpeciesNames[kSpeciesCount] = {"notch", "delta", "bound",   "ovol2",
                                                             "ovol1", "cmyc",  "adhesion"};

/// One Hill regulation term a + b / (1 + (c x)^h).
template <class Real>
struct Hill {
  Real a, b, c, h;
  template <class Other>
  TISSUE_HD Hill<Other> as() const {
    return {static_cast<Other>(a), static_cast<Other>(b), static_cast<Other>(c), static_cast<Other>(h)};
  }
};

/// H(x) = a + b / (1 + (c x)^h); x >= 0. For x = 0 and h < 0, (c x)^h = inf and H = a (IEEE).
template <class Real>
TISSUE_HD Real hill(Real x, const Hill<Real>& t) {
  return t.a + t.b / (Real(1) + math::pow(t.c * x, t.h));
}

/// Rate constants of the network (Table 2 names; rates in 1/time, k_a in 1/(concentration time)).
template <class Real>
struct Rates {
  Real k_a, k_d, d_b, d_n, d_d, d_o, d_v, d_m;
  Hill<Real> bn, on, nd, vo, go, ov, av, om;
  Real tgf_beta;  ///< G, constant environmental TGF-beta
  template <class Other>
  TISSUE_HD Rates<Other> as() const {
    auto c = [](Real v) { return static_cast<Other>(v); };
    return {c(k_a),
            c(k_d),
            c(d_b),
            c(d_n),
            c(d_d),
            c(d_o),
            c(d_v),
            c(d_m),
            bn.template as<Other>(),
            on.template as<Other>(),
            nd.template as<Other>(),
            vo.template as<Other>(),
            go.template as<Other>(),
            ov.template as<Other>(),
            av.template as<Other>(),
            om.template as<Other>(),
            c(tgf_beta)};
  }
};

/// Right-hand side of the network for one cell.
/// @param s          species of the cell, kSpeciesCount values (index by Species)
/// @param mean_notch <N> over neighbours; mean_delta <D>; mean_bound <B>
/// @param ds         output, kSpeciesCount derivatives [concentration/time] (ds[kAdhesion] = 0)
template <class Real>
TISSUE_HD void gene_network_rhs(const Real* s, Real mean_notch, Real mean_delta, Real mean_bound,
                                const Rates<Real>& p, Real* ds) {
  const Real n = s[kNotch], d = s[kDelta], b = s[kBound], o2 = s[kOvol2], o1 = s[kOvol1], m = s[kMyc];
  const Real a = s[kAdhesion];
  const Real binding = p.k_a * n * mean_delta;
  ds[kNotch] = -binding + p.k_d * b - p.d_n * n + hill(b, p.bn) * hill(o2, p.on);
  ds[kDelta] = -p.k_a * d * mean_notch + p.k_d * mean_bound - p.d_d * d + hill(n, p.nd);
  ds[kBound] = binding - p.k_d * b - p.d_b * b;
  ds[kOvol2] = -p.d_o * o2 + hill(o1, p.vo) * hill(p.tgf_beta, p.go);
  ds[kOvol1] = -p.d_v * o1 + hill(o2, p.ov) * hill(a, p.av);
  ds[kMyc] = -p.d_m * m + hill(o2, p.om);
  ds[kAdhesion] = Real(0);
}

/// A = sum over the cell's adhesive elements of their height above the basement membrane (the seed's
/// membrane "molecule"), written to species row `row` (kAdhesion for the built-in network, after the
/// species of a scenario-defined one). `height` is z for the plane z = 0, or MembraneHeight's output.
struct AdhesionInput {
  Span<const float> height;
  Span<const std::int32_t> type, first, count;
  std::int32_t adhesive_type;
  Span<float> species;
  std::size_t stride;  ///< species-major stride = cells capacity
  std::size_t row;
  TISSUE_HD void operator()(std::size_t c) const {
    float sum = 0.0f;
    const std::int32_t begin = first[c];
    for (std::int32_t k = begin; k < begin + count[c]; ++k)
      if (type[static_cast<std::size_t>(k)] == adhesive_type) sum += height[static_cast<std::size_t>(k)];
    species[row * stride + c] = sum;
  }
};

/// Per element: the signed distance of an adhesive element to a membrane mesh (the index's reach when
/// none lies within it), 0 for other elements [length]. One query per thread: the cells' sums are
/// AdhesionInput's.
struct MembraneHeight {
  Span<const float> x, y, z;
  Span<const std::int32_t> type;
  std::int32_t adhesive_type;
  TriangleIndex::View membrane;
  Span<float> height;
  TISSUE_HD void operator()(std::size_t e) const {
    if (type[e] != adhesive_type) {
      height[e] = 0.0f;
      return;
    }
    const SurfaceHit hit = membrane.closest(x[e], y[e], z[e]);
    height[e] = hit.triangle >= 0 ? signed_distance(hit, x[e], y[e], z[e]) : membrane.reach;
  }
};

/// Sums over a cell's neighbours split over exec::group_for's lanes: K sums and the neighbour count.
template <int K>
struct NeighbourSum {
  float s[K] = {};
  std::int32_t count = 0;
  TISSUE_HD friend NeighbourSum operator+(const NeighbourSum& a, const NeighbourSum& b) {
    NeighbourSum r;
    for (int k = 0; k < K; ++k) r.s[k] = a.s[k] + b.s[k];
    r.count = a.count + b.count;
    return r;
  }
};

/// Calls add(j) for every other cell j whose centre lies closer than sqrt(distance2) to cell c's (minimum
/// image), in the cell list's order; lane `lane` of `lanes` takes its share of the search (exec::group_for).
/// The one neighbour loop of the built-in network and of written ones (NeighbourMeans), so that both sum
/// their neighbours in the same order.
template <class F>
TISSUE_HD void for_each_neighbour_cell(const CellList::View& bins, const Box& box, Span<const float> cx,
                                       Span<const float> cy, Span<const float> cz, std::size_t c,
                                       float distance2, int lane, int lanes, F&& add) {
  const float px = cx[c], py = cy[c], pz = cz[c];
  bins.for_each_candidate(
      px, py, pz,
      [&](int, const PointTag& q) {
        if (q.tag == static_cast<std::int32_t>(c)) return;
        const float dx = box.min_image_x(px - q.x), dy = box.min_image_y(py - q.y), dz = pz - q.z;
        if (dx * dx + dy * dy + dz * dz >= distance2) return;
        add(static_cast<std::size_t>(q.tag));
      },
      lane, lanes);
}

/// One explicit stage for cell c: out = max(0, base + h f(eval, <eval>)), neighbours = other cells
/// whose centres lie within the neighbour distance (minimum image). `out` may alias `base`, never
/// `eval`. When `flags` is not empty the cell's suprabasal bit is set from the result (O1 > O2). When
/// `tgf_beta` is not empty, G is the cell's own value tgf_beta[c] (a sampled signal field,
/// modules/coupling) instead of the constant rates.tgf_beta.
struct NetworkStage {
  using Value = NeighbourSum<3>;  ///< Notch, Delta, Bound of the neighbours, and their count
  Span<const float> eval, base;
  Span<float> out;
  std::size_t stride;
  Span<const float> cx, cy, cz;
  CellList::View bins;  ///< on the centres, tag = cell index
  float neighbour_distance2;
  Box box;
  Rates<float> rates;
  float h;
  Span<std::uint32_t> flags;
  std::uint32_t suprabasal_bit;
  Span<const float> tgf_beta;
  int lanes = 1;  ///< exec::group_for's G: each lane sums its share of the neighbour search

  TISSUE_HD Value partial(std::size_t c, int lane) const {
    Value sum;
    for_each_neighbour_cell(bins, box, cx, cy, cz, c, neighbour_distance2, lane, lanes, [&](std::size_t j) {
      sum.s[0] += eval[kNotch * stride + j];
      sum.s[1] += eval[kDelta * stride + j];
      sum.s[2] += eval[kBound * stride + j];
      ++sum.count;
    });
    return sum;
  }

  TISSUE_HD void finish(std::size_t c, const Value& sum) const {
    const float inv = sum.count > 0 ? 1.0f / static_cast<float>(sum.count) : 0.0f;
    float s[kSpeciesCount], ds[kSpeciesCount];
    for (int k = 0; k < kSpeciesCount; ++k) s[k] = eval[static_cast<std::size_t>(k) * stride + c];
    if (tgf_beta.empty()) {
      gene_network_rhs(s, sum.s[0] * inv, sum.s[1] * inv, sum.s[2] * inv, rates, ds);
    } else {
      Rates<float> local = rates;
      local.tgf_beta = tgf_beta[c];
      gene_network_rhs(s, sum.s[0] * inv, sum.s[1] * inv, sum.s[2] * inv, local, ds);
    }
    float result[kSpeciesCount];
    for (int k = 0; k < kSpeciesCount; ++k) {
      const std::size_t at = static_cast<std::size_t>(k) * stride + c;
      const float v = base[at] + h * ds[k];
      result[k] = v > 0.0f ? v : 0.0f;  // concentrations stay non-negative (the seed's clamp)
      out[at] = result[k];
    }
    if (!flags.empty()) {
      const std::uint32_t f = flags[c] & ~suprabasal_bit;
      flags[c] = result[kOvol1] > result[kOvol2] ? (f | suprabasal_bit) : f;
    }
  }
};

/// Amplitude law of the gene-network noise ([gene_network] noise_kind).
enum class NoiseKind : std::int32_t {
  additive = 0,  ///< x <- max(0, x + sigma sqrt(h) xi)
  langevin =
      1,  ///< x <- max(0, x + sigma sqrt(max(x, 0) h) xi): the chemical Langevin equation's sqrt(x) law
  /// x <- max(0, x + sigma max(x, 0) sqrt(h) xi): relative (extrinsic) noise, the same size in every species
  multiplicative = 2,
};

/// Most species rows the noise keys apart (12 bits of the Philox counter hold species / 4).
inline constexpr std::size_t kMaxNoiseSpecies = 4u << 12;
/// Most sub-steps per step the noise keys apart (the counter's other 20 bits; [schedule] allows 1e6).
inline constexpr std::int64_t kMaxNoiseSubsteps = std::int64_t(1) << 20;

/// Philox counter of the gene noise: the sub-step in the upper 20 bits, species / 4 in the lower 12.
TISSUE_HD inline std::uint32_t gene_noise_counter(std::int32_t substep, std::size_t species) {
  return (static_cast<std::uint32_t>(substep) << 12) | static_cast<std::uint32_t>(species / 4);
}

/// The standard normal xi of species row `species` (< kMaxNoiseSpecies) of the cell with stable id
/// `cell_id` (< 2^32) in sub-step `substep` (< kMaxNoiseSubsteps) of step `step`: number species % 4 of
/// random::normal4(seed, kGeneNoise, entity = (step << 32) ^ cell_id, gene_noise_counter(substep, species)).
/// A pure function of (seed, step, substep, cell id, species): the same on any thread count, on either
/// backend and after a restart; independent across cells, steps, sub-steps and species.
TISSUE_HD inline double gene_noise_normal(std::uint64_t seed, std::int64_t step, std::int32_t substep,
                                          std::int64_t cell_id, std::size_t species) {
  const std::uint64_t entity = (static_cast<std::uint64_t>(step) << 32) ^ static_cast<std::uint64_t>(cell_id);
  return random::normal4(seed, random::kGeneNoise, entity, gene_noise_counter(substep, species))
      .v[species % 4];
}

/// One Euler-Maruyama step of the noise of the gene network for cell c (Lie splitting with the
/// deterministic RK2 step: modules/gene_network/README.md, "Noise"): for each species row s < rows,
///   additive: x <- max(0, x + sigma sqrt(h) xi),   langevin: x <- max(0, x + sigma sqrt(max(x, 0) h) xi),
///   multiplicative: x <- max(0, x + sigma max(x, 0) sqrt(h) xi),
/// xi = gene_noise_normal(seed, step, substep, cell_id[c], s), computed in double and rounded to float.
/// Rows from `rows` on (the adhesion input) are left alone.
struct GeneNoise {
  Span<float> species;  ///< species-major, rows x stride [concentration]
  std::size_t stride;   ///< the cells' capacity
  std::size_t rows;     ///< species rows that get noise (<= kMaxNoiseSpecies; not the adhesion row)
  Span<const std::int64_t> cell_id;  ///< #cells: stable ids (< 2^32)
  std::uint64_t seed;                ///< the run's seed
  std::int64_t step;                 ///< the step being taken
  std::int32_t substep;              ///< its sub-step (< kMaxNoiseSubsteps)
  double sigma;  ///< additive: [concentration / sqrt(time)]; langevin: [sqrt(concentration / time)];
                 ///< multiplicative: [1 / sqrt(time)]
  double h;      ///< step length [time]
  NoiseKind kind;

  TISSUE_HD void operator()(std::size_t c) const {
    const std::uint64_t entity =
        (static_cast<std::uint64_t>(step) << 32) ^ static_cast<std::uint64_t>(cell_id[c]);
    const double additive = sigma * math::sqrt(h);
    random::Normal4 xi{};
    for (std::size_t s = 0; s < rows; ++s) {
      if (s % 4 == 0) xi = random::normal4(seed, random::kGeneNoise, entity, gene_noise_counter(substep, s));
      float& x = species[s * stride + c];
      const double v = static_cast<double>(x);
      const double positive = v > 0.0 ? v : 0.0;
      const double amplitude = kind == NoiseKind::additive   ? additive
                               : kind == NoiseKind::langevin ? sigma * math::sqrt(positive * h)
                                                             : additive * positive;
      const double next = v + amplitude * xi.v[s % 4];
      x = static_cast<float>(next > 0.0 ? next : 0.0);
    }
  }
};

}  // namespace tissue::grn
