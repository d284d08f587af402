"""labkit.solver reproduces MuJoCo's efc_KBIP and predicts resting penetration."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import labkit
from labkit import solver


def test_impedance_shape_and_limits():
    solimp = (0.9, 0.95, 0.001, 0.5, 2)
    r = np.array([0.0, 0.0005, 0.001, 0.01, -0.0005])
    d = solver.impedance(solimp, r)
    np.testing.assert_allclose(d[[0, 2, 3]], [0.9, 0.95, 0.95])
    assert d[1] == pytest.approx(0.925) and d[4] == d[1]  # midpoint, symmetric in r
    assert np.all(np.diff(solver.impedance(solimp, np.linspace(0, 0.002, 50))) >= 0)
    assert solver.impedance((0.99, 0.99, 0.001, 0.5, 2), 0.3) == pytest.approx(0.99)
    assert solver.impedance((0, 1.5, 0.001, 0.5, 2), 1.0) == pytest.approx(solver.MAXIMP)


def sphere_drop(solref, solimp, timestep=0.002, cone="pyramidal", condim=3, mass=1.0):
    # both geoms get the same parameters, so contact mixing leaves them unchanged
    xml = f"""
    <mujoco><option timestep="{timestep}" cone="{cone}"/>
      <default><geom solref="{solref[0]} {solref[1]}" solimp="{' '.join(map(str, solimp))}"
                     condim="{condim}"/></default>
      <worldbody><geom type="plane" size="1 1 .1"/>
        <body pos="0 0 .0495"><freejoint/><geom size=".05" mass="{mass}"/></body>
      </worldbody></mujoco>"""
    return labkit.load(xml)


@pytest.mark.parametrize(("solref", "solimp"), [
    ((0.02, 1), (0.9, 0.95, 0.001, 0.5, 2)),
    ((0.01, 0.5), (0.8, 0.99, 0.01, 0.3, 3)),
    ((0.001, 1), (0.9, 0.95, 0.001, 0.5, 2)),     # below 2·timestep: clamped
    ((-3000, -80), (0.95, 0.95, 0.001, 0.5, 2)),  # direct format, flat impedance
    ((0.03, 2), (0.5, 0.9, 0.002, 0.7, 1)),       # linear impedance
])
def test_reference_matches_efc_kbip(solref, solimp):
    model, data = sphere_drop(solref, solimp)
    for _ in range(5):
        mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    assert data.nefc > 0
    c = data.contact[0]
    ref = solver.reference(c.solref, c.solimp, data.efc_pos[0] - data.efc_margin[0],
                           timestep=model.opt.timestep)
    k, b, imp, _ = data.efc_KBIP[0]
    assert (ref.k, ref.b, ref.d) == pytest.approx((k, b, imp), rel=1e-12)
    assert ref.clamped == (solref[0] > 0 and solref[0] < 2 * model.opt.timestep)
    aref = -ref.b * data.efc_vel[0] - ref.stiffness * (data.efc_pos[0] - data.efc_margin[0])
    assert aref == pytest.approx(data.efc_aref[0], rel=1e-9)


def test_clamp_can_be_disabled():
    ref = solver.reference((0.001, 1), (0.9, 0.95, 0.001, 0.5, 2), timestep=0.002, refsafe=False)
    assert ref.timeconst == 0.001 and not ref.clamped
    assert solver.reference((0.001, 1), (0.9, 0.95, 0.001, 0.5, 2), timestep=0.002).timeconst == 0.004


@pytest.mark.parametrize(("solref", "solimp", "cone", "condim", "mass"), [
    ((0.02, 1), (0.9, 0.95, 0.001, 0.5, 2), "pyramidal", 3, 1.0),
    ((0.02, 1), (0.9, 0.95, 0.001, 0.5, 2), "elliptic", 3, 20.0),
    ((0.005, 1), (0.99, 0.99, 0.001, 0.5, 2), "pyramidal", 1, 0.2),
    ((-2000, -50), (0.9, 0.95, 0.001, 0.5, 2), "pyramidal", 3, 5.0),
])
def test_rest_penetration_matches_a_resting_sphere(solref, solimp, cone, condim, mass):
    model, data = sphere_drop(solref, solimp, cone=cone, condim=condim, mass=mass)
    for _ in range(2000):
        mujoco.mj_step(model, data)
    depth = 0.05 - data.qpos[2]
    predicted = solver.rest_penetration(solref, solimp, timestep=model.opt.timestep,
                                        accel=-model.opt.gravity[2])
    # 4 s of simulation: the damped transient has decayed far below 1e-6 of the depth
    assert depth == pytest.approx(predicted, rel=1e-6)


def test_rest_penetration_rejects_nonsense():
    with pytest.raises(ValueError, match="must be > 0"):
        solver.rest_penetration((0.02, 1), (0.9, 0.95, 0.001, 0.5, 2), timestep=0.002, accel=0)


def _stacked(n_boxes: int):
    """Free boxes in a sparse model, resting on the floor or on each other (one stack)."""
    box = '<geom type="box" size=".05 .05 .05"/>'
    bodies = "".join(f'<body pos="0 0 {0.05 + 0.1 * i}"><freejoint/>{box}</body>' for i in range(n_boxes))
    model, data = labkit.load('<mujoco><option jacobian="sparse"/><worldbody>'
                              f'<geom type="plane" size="1 1 .1"/>{bodies}</worldbody></mujoco>')
    mujoco.mj_step(model, data, 5)
    return model, data


def test_factor_cost_counts_a_chain_of_free_bodies_by_hand():
    # three boxes in a stack: each free body has a dense 6x6 block (21 lower entries); the floor
    # contact touches box 0 alone, the two box-box contacts couple neighbours (a 6x6 block each);
    # eliminating from the last body to the first creates no fill: a chain stays a chain
    model, data = _stacked(3)
    cost = labkit.solver.factor_cost(model, data)
    assert cost.hessian == cost.factor == 3 * 21 + 2 * 36
    # written by hand: dof k of block b has 6b + k lower-index neighbours in the blocks it touches
    expected = 0
    for b in range(3):
        for k in range(6):
            s = k + (6 if b > 0 else 0)
            expected += s * (s + 1) // 2
    assert cost.multiply_adds == expected


def test_factor_cost_sees_the_fill_of_a_hub_written_last():
    from labkit.exercises import ch07

    for n in (8, 16):
        costs = {}
        for first in (True, False):
            model = ch07.tray(n, first)
            data = mujoco.MjData(model)
            mujoco.mj_step(model, data, 10)
            costs[first] = (labkit.solver.factor_cost(model, data), int(data.solver_nnz[0]))
        nv = 6 * (n + 1)
        (a, nnz_a), (b, nnz_b) = costs[True], costs[False]
        assert a.hessian == b.hessian and a.factor == a.hessian                 # hub first: no fill
        assert b.factor == nv * (nv + 1) // 2                                   # hub last: dense
        assert b.factor - a.factor == nnz_b - nnz_a                             # as the engine counts
        assert b.multiply_adds == sum(k * (k + 1) // 2 for k in range(nv))      # dense elimination


def test_factor_cost_needs_sparse_matrices():
    model, data = labkit.load("solver_stack")
    with pytest.raises(ValueError, match="sparse"):
        labkit.solver.factor_cost(model, data)


def test_iterations_to_restores_the_options_and_orders_the_solvers():
    model, data = labkit.load("solver_stack")
    labkit.sim.run(model, data, duration=0.3)
    options = ("iterations", "tolerance", "disableflags", "enableflags")
    before = [getattr(model.opt, name) for name in options]
    needed = {}
    for name in ("NEWTON", "CG", "PGS"):
        model.opt.solver = getattr(mujoco.mjtSolver, "mjSOL_" + name)
        needed[name] = labkit.solver.iterations_to(model, data, 1e-6)
        assert data.solver_fwdinv[1] < 1e-6 and data.solver_niter[0] == needed[name]
    assert [getattr(model.opt, name) for name in options] == before
    assert needed["NEWTON"] <= 2 < needed["CG"] < needed["PGS"]
    model.opt.solver = mujoco.mjtSolver.mjSOL_PGS
    assert labkit.solver.iterations_to(model, data, 1e-6, most=3) is None


@pytest.mark.parametrize("mid", [0.1, 0.5, 0.9])
def test_impedance_power_one_is_linear_for_any_midpoint(mid):
    r = np.linspace(0, 0.003, 31)
    expected = 0.2 + (0.9 - 0.2) * np.minimum(r / 0.002, 1)
    np.testing.assert_allclose(solver.impedance((0.2, 0.9, 0.002, mid, 1), r), expected, rtol=1e-12)


def test_connect_sag_matches_rest_penetration():
    # models/equality_demo.xml: the sphere's connect takes solref (0.05, 1) from <default><equality>
    model, data = labkit.load("equality_demo")
    labkit.sim.run(model, data, duration=2.0)
    sag = 1.0 - data.body("hang").xpos[2]
    expected = solver.rest_penetration((0.05, 1), model.eq_solimp[0], timestep=model.opt.timestep)
    assert sag == pytest.approx(expected, rel=1e-6)


def test_rest_depths_finds_the_inverted_solimps_three_roots():
    typo = (0.9, 0.05, 0.001, 0.5, 2)
    roots = solver.rest_depths((0.02, 1), typo, timestep=0.0005)
    assert len(roots) == 3 and roots == sorted(roots)
    assert roots[0] == pytest.approx(solver.rest_penetration((0.02, 1), typo, timestep=0.0005), rel=1e-9)
    assert roots[2] == pytest.approx(9.81 * (1 - 0.05) * 0.02**2, rel=1e-9)   # beyond the width: d = dmax
    for root in roots:                                                      # each solves the rest equation
        ref = solver.reference((0.02, 1), typo, root, timestep=0.0005)
        assert ref.k * ref.d**2 * root == pytest.approx((1 - ref.d) * 9.81, rel=1e-9)
    default = solver.rest_depths(solver.DEFAULT_SOLREF, solver.DEFAULT_SOLIMP, timestep=0.002)
    assert default == [pytest.approx(solver.rest_penetration(solver.DEFAULT_SOLREF, solver.DEFAULT_SOLIMP,
                                                             timestep=0.002), rel=1e-9)]


def test_euler_stability_is_the_step_matrix_spectral_radius():
    h = 0.002
    cases = (((0.004, 1), 1.7e-5), ((0.004, 0.3), 1.6e-6), ((0.02, 1), 3.7e-4), ((0.001, 1), 1e-6))
    for solref, depth in cases:
        hb, bound = solver.euler_stability(solref, solver.DEFAULT_SOLIMP, depth, timestep=h, refsafe=False)
        ref = solver.reference(solref, solver.DEFAULT_SOLIMP, depth, timestep=h, refsafe=False)
        b, k = ref.d * ref.b, ref.k * ref.d**2
        step = np.array([[1 - h * h * k, h * (1 - h * b)], [-h * k, 1 - h * b]])
        radius = np.abs(np.linalg.eigvals(step)).max()
        assert (hb, bound) == pytest.approx((h * b, h * h * k + 2 * h * b))
        assert (radius < 1) == (hb < 2 and bound < 4)


@pytest.mark.parametrize("sparse", [False, True])
def test_row_terms_reads_the_row_and_its_true_inverse_mass(sparse):
    model, data = labkit.load("solver_lever")
    if sparse:
        model.opt.jacobian = mujoco.mjtJacobian.mjJAC_SPARSE
    for _ in range(1500):
        mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    row = solver.row_terms(model, data)
    x_c = data.contact[0].pos[0]
    assert row.inverse_mass == pytest.approx(x_c**2 / data.M[0], rel=1e-3)   # a vertical normal at x_c
    assert row.diag_approx == data.efc_diagA[0] and row.d == data.efc_KBIP[0, 2]
    assert row.a == pytest.approx(0.0, abs=1e-8)                               # at rest
    assert row.a0 == pytest.approx(-9.81 * 0.25 * x_c / (data.M[0]), rel=1e-3)   # gravity's torque at the tip
    with pytest.raises(ValueError, match="does not exist"):
        solver.row_terms(model, data, row=data.nefc)
