#!/usr/bin/python3
"""Generates modules/curvature_flow/graph_flow_operators.hpp: the mean-curvature and Willmore operators of
a graph phi(x, y) as functions of its derivatives (its 4-jet), for the manufactured forcing terms F_MC and
F_W of Oberhuber, Suzuki & Zabka (Kybernetika 2011), problems 2.1 and 2.2:

    mean curvature flow   d_t phi =  Q div(grad phi / Q)                                    (6), (17)
    Willmore flow         d_t phi = -Q div( P grad w / Q - w^2 grad phi / (2 Q^3) ),        (10)
                          w = Q div(grad phi / Q)                                           (11)

with Q = sqrt(1 + |grad phi|^2) and P = I - grad phi (x) grad phi / Q^2. A manufactured solution zeta then
needs F = d_t zeta - (right-hand side at zeta); the operators here are exact symbolic derivatives
(sympy), printed as C++ after common-subexpression elimination.

The manufactured solution (30) is zeta = c(t) Z(x, y) with c = cos(pi t), so the operators are needed at
the jet c J of a fixed graph Z many times. Both operators are rational in c: with g = |grad Z|^2,

    operator(c J) = sum_k c^(2k+1) A_k(J) / (1 + c^2 g)^k      (k < 2 for MCF, k < 5 for Willmore)

(no odd powers of Q survive). The A_k, polynomials in J, are generated too: a grid stores them once per
node and each forcing evaluation is then a short Horner sum.

Run from the repository root with Debian's python3-sympy:  /usr/bin/python3 tools/gen_graph_flow_operators.py
"""
import sympy as sp
from sympy.printing.cxx import CXX17CodePrinter

x, y = sp.symbols("x y", real=True)
phi = sp.Function("phi")(x, y)

px, py = sp.diff(phi, x), sp.diff(phi, y)
Q = sp.sqrt(1 + px**2 + py**2)
H = sp.diff(px / Q, x) + sp.diff(py / Q, y)
w = Q * H
wx, wy = sp.diff(w, x), sp.diff(w, y)
flux_x = ((1 - px**2 / Q**2) * wx - px * py / Q**2 * wy) / Q - w**2 * px / (2 * Q**3)
flux_y = (-px * py / Q**2 * wx + (1 - py**2 / Q**2) * wy) / Q - w**2 * py / (2 * Q**3)
mean_curvature = Q * H                                   # right-hand side of (6) as discretised by (17)
willmore = -Q * (sp.diff(flux_x, x) + sp.diff(flux_y, y))  # right-hand side of (10)

# the 4-jet: j.d[a][b] = d^(a+b) phi / dx^a dy^b for a + b <= 4
names = {}
for order in range(4, 0, -1):
    for a in range(order, -1, -1):
        b = order - a
        names[(a, b)] = sp.Symbol(f"d{a}{b}")


def to_jet(expr):
    for (a, b), s in names.items():  # highest order first
        args = [(x, a)] if b == 0 else ([(y, b)] if a == 0 else [(x, a), (y, b)])
        expr = expr.subs(sp.Derivative(phi, *args), s)
    return expr


class RealPrinter(CXX17CodePrinter):
    """C++ for device code of either precision: numbers as Real, small powers as products, roots through
    tissue::math (std:: functions are not device functions)."""

    def _print_Integer(self, e):
        return f"Real({int(e)})"

    def _print_Rational(self, e):
        return f"(Real({e.p}) / Real({e.q}))"

    def _print_Float(self, e):
        return f"Real({float(e)!r})"

    def _print_Pow(self, e):
        b, p = self.parenthesize(e.base, 1000), e.exp
        if p.is_Integer and 1 <= p <= 4:
            return "(" + "*".join([b] * int(p)) + ")"
        if p.is_Integer and -4 <= p <= -1:
            return "(Real(1) / (" + "*".join([b] * int(-p)) + "))"
        if p == sp.Rational(1, 2):
            return f"math::sqrt({self._print(e.base)})"
        if p.is_Rational and p.q == 2:  # b^(k/2) = sqrt(b) * b^((k-1)/2)
            k = int(p.p)
            root = f"math::sqrt({self._print(e.base)})"
            if k > 0:
                return "(" + "*".join([root] + [b] * ((k - 1) // 2)) + ")"
            return "(Real(1) / (" + "*".join([root] + [b] * ((-k - 1) // 2)) + "))"
        return f"math::pow({self._print(e.base)}, {self._print(p)})"


printer = RealPrinter()


def emit(name, expr, doc):
    expr = to_jet(expr)
    subs, (main,) = sp.cse(expr, symbols=sp.numbered_symbols("c"))
    used = sorted({str(s) for s in expr.free_symbols})
    lines = [f"/// {doc}", "template <class Real>", f"TISSUE_HD Real {name}(const GraphJet<Real>& j) {{"]
    for s in used:
        lines.append(f"  const Real {s} = j.{s};")
    for lhs, rhs in subs:
        lines.append(f"  const Real {lhs} = {printer.doprint(rhs)};")
    lines.append(f"  return {printer.doprint(main)};")
    lines.append("}")
    return "\n".join(lines)


def scaled_coefficients(expr):
    """A_k of operator(c J) = sum_k c^(2k+1) A_k(J) / (1 + c^2 g)^k, checked to have exactly that form."""
    expr = to_jet(expr)
    c, r = sp.symbols("c r", positive=True)  # r = 1 / Q(c J)
    scale = {s: c * s for s in names.values()}
    q2 = (1 + names[(1, 0)] ** 2 + names[(0, 1)] ** 2).subs(scale, simultaneous=True)
    scaled = expr.subs(scale, simultaneous=True)
    scaled = scaled.replace(lambda e: e.is_Pow and sp.expand(e.base - q2) == 0, lambda e: r ** (-2 * e.exp))
    assert scaled.free_symbols <= set(names.values()) | {c, r}, scaled.free_symbols
    terms = sp.Poly(sp.expand(scaled), c, r).terms()
    coeffs = {}
    for (m, k), a in terms:
        assert m == k + 1 and k % 2 == 0, (m, k)
        coeffs[k // 2] = a
    return [coeffs.get(k, sp.Integer(0)) for k in range(max(coeffs) + 1)]


def emit_scaled(name, expr, doc):
    coeffs = scaled_coefficients(expr)
    subs, mains = sp.cse(coeffs, symbols=sp.numbered_symbols("c"))
    used = sorted(set().union(*[a.free_symbols for a in coeffs]), key=str)
    lines = [f"/// {doc}", "template <class Real>",
             f"TISSUE_HD ScaledOperator<Real, {len(coeffs)}> {name}(const GraphJet<Real>& j) {{"]
    for s in used:
        lines.append(f"  const Real {s} = j.{s};")
    for lhs, rhs in subs:
        lines.append(f"  const Real {lhs} = {printer.doprint(rhs)};")
    lines.append(f"  ScaledOperator<Real, {len(coeffs)}> op;")
    lines.append("  op.g = j.d10 * j.d10 + j.d01 * j.d01;")
    for k, m in enumerate(mains):
        lines.append(f"  op.a[{k}] = {printer.doprint(m)};")
    lines.append("  return op;")
    lines.append("}")
    return "\n".join(lines)


body = [
    emit("mean_curvature_operator", mean_curvature,
         "Q div(grad phi / Q): the right-hand side of the graph mean-curvature flow (6)/(17)."),
    emit("willmore_operator", willmore,
         "-Q div(P grad w / Q - w^2 grad phi / (2 Q^3)), w = Q div(grad phi / Q): the right-hand side of (10)."),
    emit_scaled("mean_curvature_scaled", mean_curvature,
                "mean_curvature_operator(c j) for every c, as ScaledOperator coefficients of the jet j."),
    emit_scaled("willmore_scaled", willmore,
                "willmore_operator(c j) for every c, as ScaledOperator coefficients of the jet j."),
]
text = """#pragma once
/// @file graph_flow_operators.hpp
/// GENERATED by tools/gen_graph_flow_operators.py (sympy); do not edit. The exact curvature-flow operators
/// of a graph as functions of its derivatives, used for the manufactured forcing terms F_MC, F_W
/// (Oberhuber, Suzuki & Zabka 2011, section 5).

#include "engine/exec/config.hpp"
#include "engine/exec/math.hpp"

namespace tissue::curvature_flow {

/// Derivatives of a graph phi at one point: d<a><b> = d^(a+b) phi / (dx^a dy^b), up to order 4.
template <class Real>
struct GraphJet {
  Real d10 = 0, d01 = 0;
  Real d20 = 0, d11 = 0, d02 = 0;
  Real d30 = 0, d21 = 0, d12 = 0, d03 = 0;
  Real d40 = 0, d31 = 0, d22 = 0, d13 = 0, d04 = 0;

  /// The jet of c phi.
  TISSUE_HD GraphJet scaled(Real c) const {
    GraphJet s;
    s.d10 = c * d10, s.d01 = c * d01;
    s.d20 = c * d20, s.d11 = c * d11, s.d02 = c * d02;
    s.d30 = c * d30, s.d21 = c * d21, s.d12 = c * d12, s.d03 = c * d03;
    s.d40 = c * d40, s.d31 = c * d31, s.d22 = c * d22, s.d13 = c * d13, s.d04 = c * d04;
    return s;
  }
};

/// An operator at the scaled jets c j of one graph, c real: sum_k c^(2k+1) a_k / (1 + c^2 g)^k, with
/// g = |grad phi|^2 of j. Both graph operators have this form, so a grid can store a and g per node.
template <class Real, int K>
struct ScaledOperator {
  Real a[K];
  Real g;
  /// The operator at the jet c j (Horner in c^2 / (1 + c^2 g)).
  TISSUE_HD Real at(Real c) const {
    const Real s = c * c, rho = s / (Real(1) + s * g);
    Real p = a[K - 1];
    for (int k = K - 2; k >= 0; --k) p = a[k] + rho * p;
    return c * p;
  }
};

""" + "\n\n".join(body) + """

}  // namespace tissue::curvature_flow
"""
open("modules/curvature_flow/graph_flow_operators.hpp", "w").write(text)
print("wrote modules/curvature_flow/graph_flow_operators.hpp")
