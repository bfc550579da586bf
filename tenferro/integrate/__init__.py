"""Integration on tensors with scipy.integrate's names, differentiable.

* :func:`trapezoid`, :func:`simpson`, :func:`cumulative_trapezoid`,
  :func:`cumulative_simpson` — quadrature of sampled data (``_quadrature.py``).
* :func:`solve_ivp` — ``scipy.integrate.solve_ivp`` with ``.y`` a Tensor differentiable in
  y0, args, t_eval and t_span (reverse mode by the continuous adjoint, forward mode by the
  variational equations).
* :func:`odeint` — ``scipy.integrate.odeint`` on top of it (LSODA).
"""
from ._ode import OdeResult as OdeResult, odeint as odeint, solve_ivp as solve_ivp
from ._quadrature import (cumulative_simpson as cumulative_simpson,
                          cumulative_trapezoid as cumulative_trapezoid, simpson as simpson,
                          trapezoid as trapezoid)

__all__ = ["trapezoid", "simpson", "cumulative_trapezoid", "cumulative_simpson",
           "solve_ivp", "odeint", "OdeResult"]
