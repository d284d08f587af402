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
