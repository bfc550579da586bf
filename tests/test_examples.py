"""The examples run and reproduce the physics they claim (reduced sizes)."""
import importlib.util
import math
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def trg():
    return _load("trg_ising")


def test_onsager_reference_values(trg):
    # the exact internal energy at beta_c is -sqrt 2; c is -beta^2 du/dbeta
    assert trg.exact_energy(trg.BETA_C) == pytest.approx(-math.sqrt(2), abs=1e-12)
    b, h = 0.47, 1e-5
    du = (trg.exact_energy(b + h) - trg.exact_energy(b - h)) / (2 * h)
    assert trg.exact_specific_heat(b) == pytest.approx(-b * b * du, rel=1e-6)
    # u = -d lnZ/d beta, from the quadrature of ln Z
    dlnz = (trg.exact_ln_z(b + h) - trg.exact_ln_z(b - h)) / (2 * h)
    assert trg.exact_energy(b) == pytest.approx(-dlnz, rel=1e-7)


@pytest.mark.parametrize("beta", [0.38, 0.48])
def test_trg_ln_z_energy_and_specific_heat_match_onsager(trg, beta):
    # chi = 8, 14 iterations (~0.2 s a point), away from beta_c
    ln_z, u, c = trg.thermodynamics(beta, chi=8, iterations=14)
    assert abs(ln_z - trg.exact_ln_z(beta)) < 2e-4
    assert abs(u - trg.exact_energy(beta)) < 3e-3
    assert abs(c - trg.exact_specific_heat(beta)) < 0.02 * trg.exact_specific_heat(beta)


def test_trg_trace_spellings_agree(trg):
    import tenferro as tf
    a = trg.trg_ln_z(tf.tensor(0.45), 6, 8, trace="einsum")
    b = trg.trg_ln_z(tf.tensor(0.45), 6, 8, trace="loop")
    assert float(a) == pytest.approx(float(b), rel=1e-13)


def test_trg_derivative_equals_the_difference_quotient_of_the_same_function(trg):
    # degenerate singular values (lattice symmetry) are hit at chi = 16 from step 5 on:
    # the AD derivative of the computed ln Z equals its central difference
    import tenferro as tf
    f = lambda x: float(trg.trg_ln_z(tf.tensor(x), 16, 6))
    b, h = 0.40, 1e-6
    fd = (f(b + h) - f(b - h)) / (2 * h)
    beta = tf.tensor(b, requires_grad=True)
    (g,) = tf.grad([trg.trg_ln_z(beta, 16, 6)], [beta])
    assert float(g) == pytest.approx(fd, rel=1e-8)
