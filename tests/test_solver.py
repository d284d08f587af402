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


# -- rest_prediction: real resting objects of the corpus ---------------------------------------

def _duplo_on_floor(corpus, cone: str, condim: int, quat=(1, 0, 0, 0)):
    """dm_control's duplo2x4 brick on a free joint, dropped 4 mm onto a floor added with MjSpec."""
    spec = mujoco.MjSpec()
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[1, 1, 0.1])
    brick = spec.worldbody.add_body(name="brick", pos=[0, 0, 0.04], quat=list(quat))
    brick.add_freejoint()
    spec.attach(mujoco.MjSpec.from_file(str(corpus.path("dm_control/props/duplo2x4"))),
                prefix="duplo/", frame=brick.add_frame())
    model = spec.compile()
    labkit.axes.CONES.apply(model, cone)
    model.geom_condim[:] = condim
    return model, mujoco.MjData(model)


PROPS = {"dm_control/suite/stacker": {f"box{i}": (-0.3 + 0.2 * i, 0.023, 0) for i in range(4)},
         "dm_control/suite/manipulator": {"ball": (0.15, 0.023, 0), "peg": (-0.15, 0.03, np.pi / 2)}}
"""Where the props of dm_control's planar suite models start: near the floor, apart."""


def _planar_props(corpus, name: str, placements: dict, cone: str, condim: int):
    """A dm_control planar suite model (manipulator, stacker) whose props (slide x, slide z,
    hinge y) are placed at {body: (x, z, angle)} (the others as in :data:`PROPS`); the arm's
    collisions are turned off so that it falls past them."""
    placements = {**PROPS[name], **placements}
    model, data = corpus.load(name)
    arm = model.body("upper_arm").id
    for g in range(model.ngeom):
        if model.body_rootid[model.geom_bodyid[g]] == arm:
            model.geom_contype[g] = model.geom_conaffinity[g] = 0
    labkit.axes.CONES.apply(model, cone)
    model.geom_condim[:] = condim
    for body, (x, z, angle) in placements.items():
        b = model.body(body).id
        adr = model.jnt_qposadr[model.body_jntadr[b]:model.body_jntadr[b] + 3]
        offset = (x - model.body_pos[b, 0], z - model.body_pos[b, 2], angle)
        data.qpos[adr] = model.qpos0[adr] + offset
    return model, data


def _settle(model, data, seconds: float = 2.0):
    labkit.sim.run(model, data, duration=seconds)
    mujoco.mj_forward(model, data)


SIDE = (0.7071068, 0.7071068, 0, 0)    # a quarter turn about x: the brick on its long side

# (scene, the body asked about, how many contacts it rests on by its geometry)
REST_SCENES = {
    "duplo upright": (lambda c, cone, n: _duplo_on_floor(c, cone, n), "brick", 4),
    # on its long side: the studs' mass moves the centre of mass off the base's centre
    "duplo on its side": (lambda c, cone, n: _duplo_on_floor(c, cone, n, SIDE), "brick", 4),
    "stacker box": (lambda c, cone, n: _planar_props(c, "dm_control/suite/stacker", {},
                                                     cone, n), "box0", 4),
    # box2 on box1: box1's four floor corners and four under box2, solved as one stack
    "stacker box under a box": (lambda c, cone, n: _planar_props(c, "dm_control/suite/stacker", {
        "box1": (0.05, 0.023, 0), "box2": (0.05, 0.0675, 0)}, cone, n), "box1", 8),
    "stacker box on a box": (lambda c, cone, n: _planar_props(c, "dm_control/suite/stacker", {
        "box1": (0.05, 0.023, 0), "box2": (0.05, 0.0675, 0)}, cone, n), "box2", 4),
    "manipulator ball": (lambda c, cone, n: _planar_props(c, "dm_control/suite/manipulator", {},
                                                          cone, n), "ball", 1),
    # the peg lying down rests on its guard's end and its blade's tip: the lever rule
    "manipulator peg": (lambda c, cone, n: _planar_props(c, "dm_control/suite/manipulator", {},
                                                         cone, n), "peg", 2),
}


@pytest.mark.parametrize("condim", [1, 3])
@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("scene", list(REST_SCENES))
def test_rest_prediction_matches_resting_corpus_objects(corpus, scene, cone, condim):
    build, body, expected_contacts = REST_SCENES[scene]
    model, data = build(corpus, cone, condim)
    _settle(model, data)
    rest = solver.rest_prediction(model, data, body)
    assert rest.speed < 1e-6                       # settled: what is compared is a rest
    assert rest.contacts == expected_contacts and rest.cone == cone
    assert np.all(rest.condim == condim) and np.all(rest.measured > 0)
    # 2 s is over 100 time constants of every contact here (timeconst ≤ 0.02 s): the
    # transient is gone; what remains is the solver's tolerance and the drift of bodies that
    # slide freely (condim 1), measured below 1e-6 of the depth; 1e-5 leaves a margin of 10
    np.testing.assert_allclose(rest.predicted, rest.measured, rtol=1e-5)
    if body != "box1":                             # box1 also carries box2
        assert rest.share.sum() == pytest.approx(1.0, rel=1e-6)


def _margin(model):
    model.geom_margin[:], model.geom_gap[:] = 0.002, 0.0005


def _stack_of_two(corpus, cone):
    return _planar_props(corpus, "dm_control/suite/stacker", {
        "box1": (0.05, 0.023, 0), "box2": (0.05, 0.0675, 0)}, cone, 3), "box1", 8


def _brick_on_its_side(corpus, cone):
    return _duplo_on_floor(corpus, cone, 3, SIDE), "brick", 4


# The scope rest_prediction's docstring names, each case on a real resting object: the
# contact parameters on the stacker's stack of two boxes, the integrators and noslip on the
# duplo brick on its side (the stacker's arm diverges under RK4 at its 1 ms step, so its
# boxes never rest there; the light brick chatters with a margin or a direct solref)
VARIANTS = {
    "margin and gap": (_stack_of_two, _margin),
    "direct solref": (_stack_of_two, lambda model: model.geom_solref.__setitem__(
        slice(None), (-20000, -300))),
    "narrow solimp": (_stack_of_two, lambda model: model.geom_solimp.__setitem__(
        slice(None), (0.5, 0.95, 1e-5, 0.5, 2))),
    "RK4": (_brick_on_its_side, lambda model: labkit.axes.INTEGRATORS.apply(model, "RK4")),
    "implicitfast": (_brick_on_its_side,
                     lambda model: labkit.axes.INTEGRATORS.apply(model, "implicitfast")),
    "noslip": (_brick_on_its_side, lambda model: setattr(model.opt, "noslip_iterations", 20)),
}


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_rest_prediction_holds_across_its_scope(corpus, variant, cone):
    scene, change = VARIANTS[variant]
    (model, data), body, contacts = scene(corpus, cone)
    change(model)
    _settle(model, data)
    rest = solver.rest_prediction(model, data, body)
    assert rest.speed < 1e-6 and rest.contacts == contacts
    np.testing.assert_allclose(rest.predicted, rest.measured, rtol=1e-5)   # as above


def test_rest_prediction_shares_the_load_by_the_lever_rule(corpus):
    # upright, the brick's centre of mass lies above its base's centre: four equal shares, so
    # the single-contact formula with contacts=4 holds; on its side it does not
    upright = _duplo_on_floor(corpus, "elliptic", 3)
    side = _duplo_on_floor(corpus, "elliptic", 3, SIDE)
    depths = {}
    for label, (model, data) in {"upright": upright, "side": side}.items():
        _settle(model, data)
        contact = data.contact[0]
        # efc_diagA of a free body's contact is body_invweight0 = 1/m, so accel = g
        assert data.efc_diagA[contact.efc_address] == pytest.approx(1 / model.body("brick").mass[0])
        equal = solver.rest_penetration(contact.solref, contact.solimp, timestep=model.opt.timestep,
                                        accel=-model.opt.gravity[2], contacts=4)
        depths[label] = (equal, np.array([data.contact[i].includemargin - data.contact[i].dist
                                          for i in range(data.ncon)]))
        share = solver.rest_prediction(model, data, "brick").share
        if label == "upright":
            np.testing.assert_allclose(share, 0.25, rtol=1e-9)
    equal, measured = depths["upright"]
    np.testing.assert_allclose(measured, equal, rtol=1e-6)     # 3 s settled: as above
    equal, measured = depths["side"]
    assert measured.min() < 0.7 * equal and measured.max() > 1.3 * equal   # unequal shares


TILTED = """<mujoco><worldbody>
  <geom type="plane" size="1 1 .1" zaxis="{zaxis}" friction="1"/>
  <body name="box" pos="0 0 .06"><freejoint/>
    <geom type="box" size=".05 .05 .05" friction="1"/></body>
  <body name="arm"><joint type="hinge" axis="0 1 0"/>
    <geom type="capsule" fromto="0.3 0 .2 .5 0 .2" size=".02"/>
    <body name="finger"><joint type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto=".5 0 .2 .6 0 .2" size=".02"/></body></body>
  <body name="wall" pos="-.5 0 .1"><geom type="box" size=".01 .1 .1"/></body>
</worldbody></mujoco>"""


def test_rest_prediction_says_where_it_does_not_apply(corpus):
    model, data = labkit.load(TILTED.format(zaxis="0 0 1"))
    with pytest.raises(ValueError, match="no active contact"):
        solver.rest_prediction(model, data, "box")
    with pytest.raises(ValueError, match="no degrees of freedom"):
        solver.rest_prediction(model, data, "wall")
    with pytest.raises(ValueError, match="hangs from jointed body 'arm'"):
        _settle(model, data)
        solver.rest_prediction(model, data, "finger")
    with pytest.raises(ValueError, match="carries jointed body 'finger'"):
        solver.rest_prediction(model, data, "arm")
    model.geom_solimp[:] = (0.9, 0.05, 0.001, 0.5, 2)
    mujoco.mj_forward(model, data)
    with pytest.raises(ValueError, match="inverted solimp"):
        solver.rest_prediction(model, data, "box")
    # on a 0.2 rad incline, friction must carry m·g·sin(0.2); MuJoCo's soft friction cannot
    # hold it at rest (the box creeps), so no rest depth exists
    model, data = labkit.load(TILTED.format(zaxis=f"{np.sin(0.2)} 0 {np.cos(0.2)}"))
    _settle(model, data, 0.5)
    with pytest.raises(ValueError, match="cannot balance its load"):
        solver.rest_prediction(model, data, "box")
    with pytest.raises(ValueError, match="whole number"):
        solver.rest_penetration((0.02, 1), (0.9, 0.95, 0.001, 0.5, 2), timestep=0.002, contacts=0)


def test_rest_prediction_counts_applied_forces_in_the_load():
    # a 1 kg box pushed down with 10 N and twisted with 0.5 N·m about x: four corners carry
    # m·g + 10 N, unequally (the torque tilts it), and the depths follow
    model, data = labkit.load('<mujoco><worldbody><geom type="plane" size="1 1 .1"/>'
                              '<body name="box" pos="0 0 .06"><freejoint/>'
                              '<geom type="box" size=".05 .05 .05" mass="1"/></body>'
                              '</worldbody></mujoco>')
    box = model.body("box").id
    data.xfrc_applied[box] = (0, 0, -10, 0.5, 0, 0)
    _settle(model, data)
    rest = solver.rest_prediction(model, data, box)
    weight = model.body_mass[box] * 9.81
    assert rest.force.sum() == pytest.approx(weight + 10, rel=1e-9)
    # the corners' moment about the centre of mass's x axis cancels the applied 0.5 N·m
    y = np.array([data.contact[i].pos[1] for i in range(data.ncon)]) - data.xipos[box, 1]
    assert rest.force @ y == pytest.approx(-0.5, rel=1e-6)
    assert rest.force[y < 0].min() > 1.5 * rest.force[y > 0].max()
    np.testing.assert_allclose(rest.predicted, rest.measured, rtol=1e-5)   # settled, as above
