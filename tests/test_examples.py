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


@pytest.mark.parametrize("chi, betas", [(8, (0.46, 0.48, 0.50)), (16, (0.46,))])
def test_trg_specific_heat_in_the_ordered_phase(trg, chi, betas):
    # issue 25: from ~15 coarse-graining steps on, the tensor of the ordered phase has
    # exactly doubly degenerate singular values (the lattice symmetry), and the second
    # reverse pass through svd returned noise (chi 16, beta 0.46: c = -107.5; chi 8, beta
    # 0.50: c = 87.1). 20 steps, c by reverse-over-reverse against the central difference
    # of the AD internal energy and against Onsager. chi = 16 (the example's default) only
    # at beta 0.46 (~4 s); chi = 8 shows the same degeneracy at all three (~0.3 s each)
    import tenferro as tf

    def energy(b):
        beta = tf.tensor(b, requires_grad=True)
        (g,) = tf.grad([trg.trg_ln_z(beta, chi, 20)], [beta])
        return -float(g)

    h = 1e-5
    for b in betas:
        _, u, c = trg.thermodynamics(b, chi, 20)
        fd = -b * b * (energy(b + h) - energy(b - h)) / (2 * h)
        # the noise of the computed ln Z (its degenerate pairs are split by amplified
        # rounding, ~1e-13) limits the agreement to ~4e-5 at chi 16, depending on the rounding
        # of the second pass
        assert c == pytest.approx(fd, rel=2e-4)
        assert abs(u - trg.exact_energy(b)) < 3e-3
        assert abs(c - trg.exact_specific_heat(b)) < 0.02 * trg.exact_specific_heat(b)


def test_trg_example_checks_itself(trg, monkeypatch, capsys):
    # the docs' run passes; a wrong specific heat (what issue 25 printed with status 0)
    # makes it exit 1, and points near beta_c are printed but not checked
    args = ["--chi", "8", "--iterations", "12", "--betas", "0.40", str(trg.BETA_C)]
    assert trg.main(args) == 0
    out = capsys.readouterr().out
    assert "[OK]" in out and "near beta_c: not checked" in out
    real = trg.thermodynamics

    def wrong_c(b, *a, **k):
        ln_z, u, c = real(b, *a, **k)
        return ln_z, u, -107.5

    monkeypatch.setattr(trg, "thermodynamics", wrong_c)
    assert trg.main(args) == 1
    assert "[FAILED]" in capsys.readouterr().out


# ---- examples/mps_energy.py ---------------------------------------------------------------

@pytest.fixture(scope="module")
def mps():
    return _load("mps_energy")


@pytest.mark.parametrize("L", [2, 5, 8, 10])
@pytest.mark.parametrize("h, J", [(0.3, 1.0), (1.0, 1.0), (1.7, 1.0), (0.8, 0.6)])
def test_free_fermion_energy_and_gap_match_exact_diagonalization(mps, L, h, J):
    from scipy import linalg
    levels = linalg.eigh(mps.dense_hamiltonian(L, h, J), eigvals_only=True)
    assert mps.exact_diagonalization_energy(L, h, J) == pytest.approx(levels[0], rel=1e-12)
    assert mps.free_fermion_energy(L, h, J) == pytest.approx(levels[0], rel=1e-12)
    # the first excited state fills the lowest mode: E_1 - E_0 = Lambda_1
    assert mps.free_fermion_gap(L, h, J) == pytest.approx(levels[1] - levels[0], rel=1e-8,
                                                          abs=1e-12)


def test_mps_rayleigh_quotient_and_gradient_match_the_dense_state(mps):
    # a random MPS of 6 sites: the MPO sweep equals <psi|H|psi>/<psi|psi> of the 64
    # amplitudes, and its reverse-mode gradient equals central differences
    import numpy as np
    import tenferro as tf
    from tenferro.testing import check_grads
    L, D, h = 6, 3, 0.7
    shapes = mps.site_shapes(L, D)
    assert [s[0] for s in shapes] + [1] == [1, 2, 3, 3, 3, 2, 1]
    x = np.random.default_rng(3).standard_normal(sum(math.prod(s) for s in shapes))
    tensors = mps.unflatten(tf.tensor(x), shapes)
    psi, ham = mps.mps_state_vector(tensors), mps.dense_hamiltonian(L, h)
    w = mps.mpo(h)
    assert float(mps.rayleigh_quotient(tensors, w)) == pytest.approx(
        psi @ ham @ psi / (psi @ psi), rel=1e-13)
    check_grads(lambda p: mps.rayleigh_quotient(mps.unflatten(p, shapes), w), (x,),
                modes=("rev",), order=1)


@pytest.mark.parametrize("h", [1.0, 1.5])
def test_mps_ground_state_energy_matches_free_fermions(mps, h):
    # L = 8, D = 4 (the exact state needs D = 16): 400 L-BFGS iterations (~1 s) reach a
    # relative error ~1e-6 at the critical point h = 1
    energy, iterations, _ = mps.ground_state(8, 4, h, maxiter=400)
    exact = mps.free_fermion_energy(8, h)
    assert iterations > 10
    assert -1e-12 < (energy - exact) / abs(exact) < 1e-5   # variational: never below


# ---- examples/lattice_network.py ----------------------------------------------------------

@pytest.fixture(scope="module")
def lattice():
    return _load("lattice_network")


def test_brute_force_and_transfer_matrix_agree(lattice):
    for L in (2, 3, 4):
        bf = lattice.brute_force(L, 0.41, 0.13)
        tm = lattice.transfer_matrix(L, 0.41, 0.13)
        # ln Z, u, c, m: the transfer matrix carries exact derivatives
        for t, b in zip(tm, bf):
            assert t == pytest.approx(b, rel=1e-12)
    # 2 x 2 by hand: 4 bonds on a ring of 4 spins, no field: Z = 2 e^{4b} + 12 + 2 e^{-4b}
    b = 0.3
    z = 2 * math.exp(4 * b) + 12 + 2 * math.exp(-4 * b)
    assert lattice.brute_force(2, b)[0] == pytest.approx(math.log(z) / 4, rel=1e-14)


@pytest.mark.parametrize("network", ["bonds", "spins"])
@pytest.mark.parametrize("L, beta, field", [(3, 0.3, 0.0), (4, 0.44, 0.1), (4, 0.9, -0.05)])
def test_lattice_network_thermodynamics_match_enumeration(lattice, network, L, beta, field):
    # ln Z from one einsum, u and m by tf.grad, c by a second tf.grad, all against the
    # moments of the 2^(L^2) Boltzmann weights
    got = lattice.thermodynamics(L, beta, field, network=network)
    ref = lattice.brute_force(L, beta, field)
    for g, r in zip(got, ref):
        assert g == pytest.approx(r, rel=1e-11, abs=1e-13)


@pytest.mark.parametrize("L, network", [(5, "bonds"), (5, "spins"), (6, "spins")])
def test_lattice_network_thermodynamics_match_transfer_matrix(lattice, L, network):
    got = lattice.thermodynamics(L, 0.47, 0.03, network=network)
    ref = lattice.transfer_matrix(L, 0.47, 0.03)
    for g, r in zip(got, ref):
        assert g == pytest.approx(r, rel=1e-10)


def test_lattice_network_derivative_equals_difference_quotient(lattice):
    import tenferro as tf
    beta = tf.tensor(0.5, requires_grad=True)
    (g,) = tf.grad([lattice.ln_z(5, beta, 0.02, network="bonds")], [beta])
    f = lambda b: float(lattice.ln_z(5, b, 0.02, network="bonds"))
    step = 1e-5
    assert float(g) == pytest.approx((f(0.5 + step) - f(0.5 - step)) / (2 * step), rel=1e-8)
    assert float(lattice.ln_z(5, 0.5, 0.02, network="spins")) == pytest.approx(
        float(lattice.ln_z(5, 0.5, 0.02, network="bonds")), rel=1e-13)


def test_lattice_network_too_large_for_einsum_labels_raises(lattice):
    with pytest.raises(ValueError, match="L <= 5"):
        lattice.ln_z(6, 0.4, network="bonds")
    with pytest.raises(ValueError, match="L <= 7"):
        lattice.ln_z(8, 0.4, network="spins")


@pytest.fixture(scope="module")
def ctmrg():
    return _load("ctmrg_ising")


def test_ctmrg_matches_onsager_through_the_fixed_point(ctmrg):
    # chi 8 at beta 0.40 (the example's self-check, one point): ln Z/N, u, c against
    # Onsager, u against the difference quotient of the computed ln Z/N
    ln_z, u, c = ctmrg.thermodynamics(0.40, 8)
    assert abs(ln_z - ctmrg.exact_ln_z(0.40)) < 1e-9
    assert abs(u - ctmrg.exact_energy(0.40)) < 1e-7
    assert abs(c - ctmrg.exact_specific_heat(0.40)) < 1e-5 * ctmrg.exact_specific_heat(0.40)
    assert abs(u - ctmrg.difference_energy(0.40, 8)) < 1e-9


def test_ctmrg_self_check_fails_when_off(ctmrg, monkeypatch, capsys):
    assert ctmrg.main(["--chi", "8", "--betas", "0.48", "--unrolled-beta", "0"]) == 0
    monkeypatch.setattr(ctmrg, "U_TOL", 1e-14)          # chi 8 is 2.5e-10 off at 0.48
    assert ctmrg.main(["--chi", "8", "--betas", "0.48", "--unrolled-beta", "0"]) == 1
    assert "[FAILED]" in capsys.readouterr().out


def test_ctmrg_implicit_derivative_equals_unrolling(ctmrg, monkeypatch, capsys):
    # as many unrolled steps as the iteration takes give the implicit derivative (to the
    # iteration's tolerance), with more memory; the self-check fails when they may not
    # differ at all
    steps = ctmrg.iterations(0.40, 4)
    u_imp = ctmrg.energy_implicit(0.40, 4)
    assert abs(ctmrg.energy_unrolled(0.40, 4, steps) - u_imp) < 1e-9 * abs(u_imp)
    assert abs(ctmrg.energy_unrolled(0.40, 4, 3) - u_imp) > 1e-6 * abs(u_imp)  # too few
    assert ctmrg.compare_unrolled(0.40, 4) < ctmrg.UNROLLED_RTOL
    out = capsys.readouterr().out
    assert "peak memory" in out and "steps" in out
    monkeypatch.setattr(ctmrg, "UNROLLED_RTOL", -1.0)
    assert ctmrg.main(["--chi", "4", "--betas", "0.40", "--unrolled-beta", "0.40"]) == 1


# ---- examples/ipeps_heisenberg.py ---------------------------------------------------------

@pytest.fixture(scope="module")
def ipeps():
    return _load("ipeps_heisenberg")


def test_ipeps_rotated_bond_hamiltonian_is_the_heisenberg_bond(ipeps):
    # the sublattice rotation exp(i pi S^y) of the second spin: the singlet's -3/4 is the
    # ground energy, and the ground state is the rotated singlet (|uu> + |dd>)/sqrt 2
    import numpy as np
    h = ipeps.bond_hamiltonian().reshape(4, 4)
    w, v = np.linalg.eigh(h)
    assert w[0] == pytest.approx(-0.75, abs=1e-15) and w[1] > w[0] + 0.99
    assert abs(v[:, 0] @ np.array([1, 0, 0, 1]) / math.sqrt(2)) == pytest.approx(1, abs=1e-14)
    # the Neel state of the original model is the product state of up spins here: <h> = -1/4
    assert h[0, 0] == pytest.approx(-0.25, abs=1e-15)


def test_ipeps_c4v_basis_spans_the_symmetric_tensors(ipeps):
    import numpy as np
    b = ipeps.BASIS
    # 6 classes of bond configurations (0000, 1000, 1100, 1010, 1110, 1111) times 2 spins
    assert b.shape == (32, 12)
    assert np.allclose(b.T @ b, np.eye(12), atol=1e-14)
    a = (b @ np.random.default_rng(0).standard_normal(12)).reshape(2, 2, 2, 2, 2)
    assert np.allclose(a, a.transpose(0, 2, 3, 4, 1), atol=1e-15)   # rotation
    assert np.allclose(a, a.transpose(0, 1, 4, 3, 2), atol=1e-15)   # l <-> r
    # a non-symmetric tensor is not in the span
    e = np.zeros(32)
    e[1] = 1.0
    assert np.linalg.norm(b @ (b.T @ e) - e) > 0.5


def test_ipeps_product_state_energy_is_the_neel_energy(ipeps):
    # alpha = 0: the rotated Neel state, E = 2 * (-1/4) exactly, whatever chi
    import tenferro as tf
    theta = ipeps.pair_flip_state(alpha=0.0, noise=0.0)
    e = ipeps.Energy(4)(tf.as_tensor(theta))
    assert float(e) == pytest.approx(-0.5, abs=1e-12)


def test_ipeps_implicit_gradient_matches_differences_away_from_the_optimum(ipeps):
    # at the warm start (|grad| ~ 0.2) the fixed-point gradient along a random direction
    # equals the 5-point difference of the computed energy (measured 1e-14 relative here,
    # 1e-11 along seed 1's direction)
    ad, fd = ipeps.difference_check(ipeps.pair_flip_state(), 16, seed=3)
    assert abs(ad) > 1e-3
    assert ad == pytest.approx(fd, rel=1e-8)


def test_ipeps_example_checks_itself(ipeps, monkeypatch, capsys):
    # --quick (8 iterations, ~1 s): E within 1e-5 of the published value (measured 7.8e-7),
    # the gradient within 1e-9 of the differences; impossible tolerances make it exit 1
    assert ipeps.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "[OK]" in out and "E = -0.6602" in out
    monkeypatch.setattr(ipeps, "E_TOL_QUICK", 1e-12)
    assert ipeps.main(["--quick"]) == 1
    assert "|E - published|" in capsys.readouterr().out
    monkeypatch.setattr(ipeps, "E_TOL_QUICK", 1e-5)
    monkeypatch.setattr(ipeps, "FD_TOL", 1e-16)
    assert ipeps.main(["--quick"]) == 1
    assert "|AD - difference|" in capsys.readouterr().out


# ---- ode_fit: rates of a Lotka-Volterra model through tf.integrate.solve_ivp ----------------

@pytest.fixture(scope="module")
def ode_fit():
    return _load("ode_fit")


def test_ode_fit_gradient_matches_differences(ode_fit):
    import numpy as np
    import tenferro as tf
    x0 = np.log(ode_fit.START)
    _, g = tf.value_and_grad(ode_fit.loss)(x0)
    h = 1e-5
    for k, e in enumerate(np.eye(4)):
        fd = (ode_fit.loss(x0 + h * e).item() - ode_fit.loss(x0 - h * e).item()) / (2 * h)
        assert g[k] == pytest.approx(fd, rel=1e-6)


def test_ode_fit_self_check_fails_when_off(ode_fit, monkeypatch, capsys):
    # the example exits 1 when the fitted rates are off: the rates it claims differ from
    # the data's (DATA was made at import) by 20 % in γ
    import numpy as np
    monkeypatch.setattr(ode_fit, "TRUE", ode_fit.TRUE * np.array([1.0, 1.0, 1.0, 1.2]))
    assert ode_fit.main() == 1
    assert "FAILED" in capsys.readouterr().out


# ---- distributed_fit: logistic regression on sharded data, tenferro.distributed ----------

@pytest.fixture(scope="module")
def distributed_fit():
    return _load("distributed_fit")


def test_distributed_fit_checks_itself(distributed_fit, monkeypatch, capsys):
    """(the cluster run is the docs build's and tests/test_distributed.py's; here the
    serial fit, and the check that fails when the fit is off)"""
    assert distributed_fit.main(["--rows", "5000"], use_cluster=False) == 0
    orig = distributed_fit.make_shards
    data_w = distributed_fit.W_TRUE.copy()
    monkeypatch.setattr(distributed_fit, "make_shards",
                        lambda n, rows: orig(n, rows, w_true=data_w))
    monkeypatch.setattr(distributed_fit, "W_TRUE", distributed_fit.W_TRUE * 1.5)
    assert distributed_fit.main(["--rows", "5000"], use_cluster=False) == 1
    assert "more than 0.1 from w_true" in capsys.readouterr().out
