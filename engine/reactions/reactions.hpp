#pragma once
/// @file reactions.hpp
/// Two-species reaction terms f(A, B), g(A, B), shared by the reaction-diffusion modules (grid_rd on grids,
/// surface_rd on surfaces): Gray-Scott with the seed's named presets, and a general sum of polynomial/Hill
/// terms in which Schnakenberg, Brusselator, FitzHugh-Nagumo and Gray-Scott itself are written in the
/// scenario.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/exec/config.hpp"
#include "engine/exec/math.hpp"
#include "engine/io/scenario.hpp"

namespace tissue::reactions {

/// Gray-Scott (Pearson, Science 261:189, 1993; the grid seed `001_*`):
///   f = -A B^2 + F (1 - A),   g = A B^2 - (k + F) B      [concentration/time]
template <class Real>
struct GrayScott {
  Real F, k;
  TISSUE_HD void operator()(Real a, Real b, Real& fa, Real& fb) const {
    const Real ab2 = a * b * b;
    fa = F * (Real(1) - a) - ab2;
    fb = ab2 - (k + F) * b;
  }
};

/// A named Gray-Scott parameter set.
struct Preset {
  const char* name;
  double F, k;
};
/// The seed's presets (Munafo's names): negatons, bubbles, fledgling_spirals, gamma, theta, mu, xi, sigma.
const std::vector<Preset>& gray_scott_presets();
/// Preset by name, or nullptr.
const Preset* find_preset(std::string_view name);

/// Most terms per equation in a Polynomial.
inline constexpr int kMaxTerms = 12;

/// One term c A^pa B^pb [H(x)] with an optional Hill factor of x = A (hill_of = 0) or B (1):
/// activation x^n / (K^n + x^n), or repression K^n / (K^n + x^n). pa, pb are small non-negative integers.
template <class Real>
struct Term {
  Real c = 0;
  std::int32_t pa = 0, pb = 0;
  std::int32_t hill_of = -1;  ///< -1: no Hill factor
  std::int32_t repress = 0;
  Real hill_k = 1, hill_n = 1;

  TISSUE_HD Real operator()(Real a, Real b) const {
    Real v = c;
    for (std::int32_t p = 0; p < pa; ++p) v *= a;
    for (std::int32_t p = 0; p < pb; ++p) v *= b;
    if (hill_of >= 0) {
      const Real x = hill_of == 0 ? a : b;
      const Real kn = math::pow(hill_k, hill_n), xn = math::pow(x > Real(0) ? x : Real(0), hill_n);
      v *= (repress ? kn : xn) / (kn + xn);
    }
    return v;
  }
  template <class Other>
  Term<Other> as() const {
    return {static_cast<Other>(c),     pa, pb, hill_of, repress, static_cast<Other>(hill_k),
            static_cast<Other>(hill_n)};
  }
};

/// f = sum of f terms, g = sum of g terms (in the order given).
template <class Real>
struct Polynomial {
  Term<Real> f[kMaxTerms], g[kMaxTerms];
  std::int32_t nf = 0, ng = 0;
  TISSUE_HD void operator()(Real a, Real b, Real& fa, Real& fb) const {
    Real sf = 0, sg = 0;
    for (std::int32_t t = 0; t < nf; ++t) sf += f[t](a, b);
    for (std::int32_t t = 0; t < ng; ++t) sg += g[t](a, b);
    fa = sf;
    fb = sg;
  }
  template <class Other>
  Polynomial<Other> as() const {
    Polynomial<Other> out;
    out.nf = nf;
    out.ng = ng;
    for (int t = 0; t < nf; ++t) out.f[t] = f[t].template as<Other>();
    for (int t = 0; t < ng; ++t) out.g[t] = g[t].template as<Other>();
    return out;
  }
};

/// Which reaction a scenario chose, with its parameters in double precision.
struct ReactionSpec {
  enum class Kind { gray_scott, polynomial } kind = Kind::gray_scott;
  std::string preset;  ///< Gray-Scott preset name ("" when F, k are given)
  GrayScott<double> gray_scott{0.058, 0.065};
  Polynomial<double> polynomial;
  double diffusion[2] = {1.0, 0.5};  ///< D_A, D_B [length^2/time] (seed's kernel: Karl Sims' 1.0, 0.5)
  /// One line, e.g. "Gray-Scott mu (F = 0.058, k = 0.065), D = 1, 0.5".
  std::string describe() const;
};

/// Reads [reaction]: model = "gray_scott" (preset = NAME or F, k) or "polynomial" (f, g = arrays of
/// terms {c, a, b, hill = {of = "a"|"b", k, n, repress}}), diffusion = {a, b} (see docs/scenarios.md).
/// @throws InputError on unknown presets, negative diffusivities, too many terms, invalid powers.
ReactionSpec read_reaction(const io::ScenarioTable& table);

}  // namespace tissue::reactions
