"""Integration on tensors: differentiable ODE solutions (docs/ode.md).

* :func:`solve_ivp` — ``scipy.integrate.solve_ivp`` with ``.y`` a Tensor differentiable in
  y0, args, t_eval and t_span (reverse mode by the continuous adjoint, forward mode by the
  variational equations).
* :func:`odeint` — ``scipy.integrate.odeint`` on top of it (LSODA).
"""
# Only the ODE solvers are imported here (tenferro/integrate/_ode.py); the quadrature
# functions (trapezoid, simpson, ...) live in their own module of this package and are
# imported next to these when the two branches merge.
from ._ode import OdeResult as OdeResult, odeint as odeint, solve_ivp as solve_ivp

__all__ = ["solve_ivp", "odeint", "OdeResult"]
