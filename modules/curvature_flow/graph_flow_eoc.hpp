#pragma once
/// @file graph_flow_eoc.hpp
/// Errors against the manufactured solution and experimental orders of convergence, as in section 5 of
/// Oberhuber, Suzuki & Zabka (2011): norms (31)-(33) over M + 1 sampled times, EOC (34).

#include <string>
#include <vector>

#include "modules/curvature_flow/graph_flow.hpp"

namespace tissue::curvature_flow {

/// One refinement level: errors in the norms (31) L1, (32) L2, (33) Linf over [0, T], and its cost.
struct ManufacturedErrors {
  int n = 0;       ///< intervals per axis
  double h = 0.0;  ///< grid spacing
  double l1 = 0.0, l2 = 0.0, linf = 0.0;
  double seconds = 0.0;  ///< wall time of the integration (sampling downloads included)
  long long accepted = 0, rejected = 0;
};

/// Runs `params` (forcing must be manufactured; its n1 = n2 is overwritten by `n`) from zeta(0) to T in
/// `samples` equal intervals theta = T / samples, and accumulates
///   L1   = sum_k theta sum_ij |phi_ij(k theta) - zeta_ij(k theta)| h1 h2                       (31)
///   L2   = (sum_k theta sum_ij (phi_ij(k theta) - zeta_ij(k theta))^2 h1 h2)^(1/2)              (32)
///   Linf = max_k max_ij |phi_ij(k theta) - zeta_ij(k theta)|                                     (33)
/// over every node, boundary included, k = 0..samples.
/// @throws InputError for T <= 0, samples < 1, or params without the manufactured forcing.
template <class Real>
ManufacturedErrors manufactured_errors(GraphFlowParams params, int n, double end_time, int samples);

/// EOC (34) between consecutive rows: log(e_a / e_b) / log(h_a / h_b).
double experimental_order(double error_coarse, double error_fine, double h_coarse, double h_fine);

/// The seed's table layout (Tables 2-4): one row per mesh, error and EOC per norm, plus the wall time
/// and the accepted/rejected step counts of each row.
std::string eoc_table(const std::vector<ManufacturedErrors>& rows);

}  // namespace tissue::curvature_flow
