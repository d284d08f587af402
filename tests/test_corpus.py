"""labkit's public tools on every real model of the corpus (``labkit.corpus``): each model loads,
renders, records, and labkit's own checks agree with MuJoCo on it.

Per model (parametrized, one state per model shared by the tests: 200 steps from qpos0 with
zero controls, then ``mj_forward``, so that feet, props and limits are engaged):

- ``load`` and ``snapshot``: the image has the asked shape and is not blank;
- ``record``: a few signals over a short run agree with the plain loop of ``mj_step``;
- ``trace`` (which checks every stage against MuJoCo and raises ``TraceMismatch``) and
  ``explain`` (compared with the model's arrays) on the actuators, at random controls;
- ``contact.why`` against MuJoCo's own collision pipeline, on sampled geom pairs: those in
  contact, parent and child, both welded to the world, world against moving, bitmask
  excluded, ``<exclude>``\\d and random ones.  MuJoCo's answer: the pair appears in
  ``data.contact`` after ``mj_collision`` once both geoms' (and their bodies') margins cover
  the distance between them, so that only the filters decide;
- ``solver.reference`` against ``efc_KBIP`` on the contact and limit rows of the state, and
  on the limit rows of a copy with every limited joint past its upper limit.

Offline the tests skip (the ``corpus`` fixture says why); CI requires the corpus.
"""

from __future__ import annotations

import copy
import functools
import itertools

import mujoco
import numpy as np
import pytest

import labkit
from labkit import contact, solver
from labkit.corpus import names

MODELS = names()
STEPS = 200           # steps before the checks: long enough for feet and props to land


@functools.cache
def _settled(name: str) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """Model ``name`` after STEPS steps from qpos0 with zero controls, then mj_forward: one
    state per model for every test (each test works on a copy of the data)."""
    model, data = labkit.corpus.load(name)
    labkit.sim.run(model, data, nstep=STEPS)
    mujoco.mj_forward(model, data)
    return model, data


def _state(corpus, name: str) -> tuple[mujoco.MjModel, mujoco.MjData]:
    model, data = _settled(name)
    return model, copy.copy(data)


# -- load, snapshot, record -----------------------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_loads_and_renders(corpus, name):
    model, data = _state(corpus, name)
    assert model.ngeom > 0 and np.all(np.isfinite(data.qpos))
    image = labkit.snapshot(model, data, width=160, height=120)
    assert image.shape == (120, 160, 3) and image.dtype == np.uint8
    # not blank: the model covers part of the picture, pixels that differ from its most
    # common colour (the background).  The smallest share is duplo2x4's, 0.6 %: a 3 cm brick
    # without moving bodies, framed by its stat.extent of 0.4 m; the others cover over 5 %
    _, counts = np.unique(image.reshape(-1, 3), axis=0, return_counts=True)
    assert 1 - counts.max() / counts.sum() > 0.002


@pytest.mark.parametrize("name", MODELS)
def test_records_what_the_plain_loop_steps(corpus, name):
    model, data = _state(corpus, name)
    plain = copy.copy(data)
    body = int(np.argmax(model.body_dofnum > 0)) if model.nv else model.nbody - 1
    signals = {"time": lambda m, d: d.time, "xpos": data.body(body).xpos}
    if model.njnt:
        signals["qpos"] = data.joint(0).qpos
    rec = labkit.record(model, data, signals, nstep=20)
    for _ in range(20):
        mujoco.mj_step(model, plain)
    assert rec.t.shape == (21,) and rec["xpos"].shape == (21, 3)
    assert np.all(np.isfinite(rec["xpos"]))
    # the last sample is what the twentieth mj_step left: bit for bit the plain loop's
    assert rec["time"][-1] == plain.time and np.array_equal(rec["xpos"][-1], plain.xpos[body])
    if model.njnt:
        adr = model.jnt_qposadr[0]
        assert np.array_equal(np.atleast_1d(rec["qpos"][-1]),
                              plain.qpos[adr:adr + np.size(rec["qpos"][-1])])


# -- trace and explain ----------------------------------------------------------------------------

# labkit.trace copies the model twice per call (forcerange and tendon limits lifted): about
# 0.25 s per actuator on the dogs and the fruitfly, whose 38 to 78 actuators would take a
# minute.  On models with more than TRACE_ALL actuators, one actuator of each kind (its
# dynamics, gain, bias and transmission types and its limited flags) is traced, plus evenly
# spaced others up to TRACE_ALL: every code path of the trace still runs on every model.
TRACE_ALL = 6


def _traced(model: mujoco.MjModel) -> list[int]:
    if model.nactuator <= TRACE_ALL:
        return list(range(model.nactuator))
    kinds: dict[tuple, int] = {}
    for a in range(model.nactuator):
        kind = (int(model.actuator_dyntype[a]), int(model.actuator_gaintype[a]),
                int(model.actuator_biastype[a]), int(model.actuator_trntype[a]),
                bool(model.actuator_ctrllimited[a]), bool(model.actuator_forcelimited[a]))
        kinds.setdefault(kind, a)
    spread = np.linspace(0, model.nactuator - 1, TRACE_ALL).round().astype(int).tolist()
    return sorted(set(kinds.values()) | set(spread))


# corpus models with nothing to trace, or no constraint row to compare: a model that gains or
# loses actuators or rows under a new wheel or MuJoCo fails here, instead of skipping silently
NO_ACTUATORS = {"dm_control/kinova/jaco_arm", "dm_control/kinova/jaco_hand",
                "dm_control/props/duplo2x4", "dm_control/suite/lqr", "dm_control/suite/swimmer"}
NO_ROWS = {"dm_control/props/duplo2x4", "dm_control/suite/acrobot", "dm_control/suite/fish",
           "dm_control/suite/lqr", "dm_control/suite/pendulum", "dm_control/suite/swimmer",
           "gymnasium/point"}


@pytest.mark.parametrize("name", MODELS)
def test_trace_and_explain_agree_with_mujoco(corpus, name):
    model, data = _state(corpus, name)
    assert (model.nactuator == 0) == (name in NO_ACTUATORS)
    rng = np.random.default_rng(20)     # random controls, in ctrlrange where it is limited
    low, high = model.actuator_ctrlrange.T
    limited = model.actuator_ctrllimited.astype(bool)
    data.ctrl[:] = np.where(limited, rng.uniform(low, high), rng.uniform(-1, 1, model.nu))
    mujoco.mj_forward(model, data)
    for a in range(model.nactuator):
        ex = labkit.explain(model, a)
        assert ex.id == a and ex.actuator == (model.actuator(a).name or ex.actuator)
        assert np.array_equal(ex.gainprm, model.actuator_gainprm[a, :ex.gainprm.size])
        assert np.array_equal(ex.biasprm, model.actuator_biasprm[a, :ex.biasprm.size])
        assert np.array_equal(ex.dynprm, model.actuator_dynprm[a, :ex.dynprm.size])
        assert np.array_equal(ex.gear, model.actuator_gear[ex.outadr:ex.outadr + ex.outnum])
        ctrls = slice(ex.ctrladr, ex.ctrladr + ex.ctrlnum)
        assert np.array_equal(ex.ctrlrange, model.actuator_ctrlrange[ctrls])
        assert ex.forcelimited == bool(model.actuator_forcelimited[a])
        target = int(model.actuator_trnid[a, 0])
        objects = {mujoco.mjtTrn.mjTRN_JOINT: mujoco.mjtObj.mjOBJ_JOINT,
                   mujoco.mjtTrn.mjTRN_TENDON: mujoco.mjtObj.mjOBJ_TENDON,
                   mujoco.mjtTrn.mjTRN_SITE: mujoco.mjtObj.mjOBJ_SITE}
        kind = objects.get(int(model.actuator_trntype[a]))
        if kind is not None and mujoco.mj_id2name(model, kind, target):
            assert ex.target == mujoco.mj_id2name(model, kind, target)
    for a in _traced(model):
        tr = labkit.trace(model, data, a)        # raises TraceMismatch where MuJoCo disagrees
        assert tr.id == a and tr.family == labkit.explain(model, a).family
        outadr, outnum = model.actuator_outadr[a], model.actuator_outnum[a]
        assert np.array_equal(tr.force, data.actuator_force[outadr:outadr + outnum])


# -- contact.why against MuJoCo's collision pipeline --------------------------------------------

PER_GROUP = 6         # pairs sampled from each group below


def _pairs(model: mujoco.MjModel, data: mujoco.MjData,
           seed: int) -> dict[str, list[tuple[int, int]]]:
    """Geom pairs to ask about, by group; each group sampled down to PER_GROUP (touching:
    every pair in data.contact)."""
    body, weld = model.geom_bodyid, model.body_weldid[model.geom_bodyid]
    every = list(itertools.combinations(range(model.ngeom), 2))
    excluded = {frozenset((int(s) >> 16, int(s) & 0xFFFF)) for s in model.exclude_signature}

    def parent_child(a: int, b: int) -> bool:
        up_a, up_b = model.body_parentid[body[a]], model.body_parentid[body[b]]
        return (up_b == body[a] or up_a == body[b]) and body[a] != body[b]

    groups = {
        "touching": sorted({tuple(sorted((int(data.contact[i].geom1), int(data.contact[i].geom2))))
                            for i in range(data.ncon)}),
        "parent-child": [p for p in every if parent_child(*p)],
        "both static": [p for p in every if weld[p[0]] == 0 and weld[p[1]] == 0],
        "world and moving": [p for p in every if (weld[p[0]] == 0) != (weld[p[1]] == 0)],
        "bitmask": [p for p in every if not model.geom_contype[p[0]] & model.geom_conaffinity[p[1]]
                    and not model.geom_contype[p[1]] & model.geom_conaffinity[p[0]]],
        "exclude": [p for p in every if frozenset((body[p[0]], body[p[1]])) in excluded],
        "random": every,
    }
    rng = np.random.default_rng(seed)
    return {group: pairs if group == "touching" or len(pairs) <= PER_GROUP
            else [pairs[i] for i in sorted(rng.choice(len(pairs), PER_GROUP, replace=False))]
            for group, pairs in groups.items()}


def _mujoco_lists(model: mujoco.MjModel, data: mujoco.MjData, g1: int, g2: int) -> list[int]:
    """The ``exclude`` codes of the contacts MuJoCo's mj_collision lists for geoms g1 and g2
    once their margins (and their bodies', which the mid-phase reads) exceed the distance
    between them: geometry then never stops a pair, only the filters do."""
    bodies = model.geom_bodyid[[g1, g2]]
    saved = (model.geom_margin[[g1, g2]].copy(), model.geom_gap[[g1, g2]].copy(),
             model.body_margin[bodies].copy())
    reach = 2 * (np.linalg.norm(data.geom_xpos[g1] - data.geom_xpos[g2])
                 + model.geom_rbound[g1] + model.geom_rbound[g2]) + 1.0       # m
    try:
        model.geom_margin[[g1, g2]], model.geom_gap[[g1, g2]] = reach, 0.0
        model.body_margin[bodies] = reach
        mujoco.mj_collision(model, data)
        return [int(data.contact[i].exclude) for i in range(data.ncon)
                if {int(data.contact[i].geom1), int(data.contact[i].geom2)} == {g1, g2}]
    finally:
        model.geom_margin[[g1, g2]], model.geom_gap[[g1, g2]], model.body_margin[bodies] = saved


@pytest.mark.parametrize("name", MODELS)
def test_contact_why_agrees_with_mujocos_collision_pipeline(corpus, name):
    model, data = _state(corpus, name)
    disagree = []
    for group, pairs in _pairs(model, data, seed=MODELS.index(name)).items():
        for g1, g2 in pairs:
            verdict = contact.why(model, g1, g2)
            listed = _mujoco_lists(model, data, g1, g2)
            # exclude = 3: listed, but the geoms cannot move relative to each other
            if bool(listed) != verdict.collides or (listed and verdict.pushes != (3 not in listed)):
                pair = f"{model.geom(g1).name or g1} / {model.geom(g2).name or g2}"
                disagree.append(f"{group}: {pair}: why says {verdict.rule} (collides="
                                f"{verdict.collides}), MuJoCo lists {len(listed)} contact(s) "
                                f"{listed}")
    assert not disagree, "\n".join(disagree)


def test_the_sampled_pairs_cover_every_verdict(corpus):
    # the comparison above can fail both ways only if the sample holds pairs that collide and
    # pairs that each filter removes; over the corpus it does
    rules, collide = set(), 0
    for name in MODELS:
        model, data = _settled(name)
        for pairs in _pairs(model, data, seed=MODELS.index(name)).values():
            for g1, g2 in pairs:
                verdict = contact.why(model, g1, g2)
                collide += verdict.collides
                rules.add(verdict.rule if not verdict.collides else "collides")
    assert collide > 100
    # (no corpus model has a mocap body, so "both static" never decides: two geoms welded to
    # the world are one weld group, "same weld")
    assert {"collides", "parent-child", "bitmask", "exclude", "same body", "same weld"} <= rules


# -- solver.reference against efc_KBIP -------------------------------------------------------------

ROWS = 30             # rows sampled per model


def _rows(model: mujoco.MjModel, data: mujoco.MjData) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(row, solref, solimp) of every contact and limit row whose K MuJoCo computes from solref
    (elliptic friction rows have K = 0 and are left out)."""
    kinds = mujoco.mjtConstraint
    rows = []
    for i in range(data.nefc):
        kind, element = int(data.efc_type[i]), int(data.efc_id[i])
        if kind in (kinds.mjCNSTR_CONTACT_FRICTIONLESS, kinds.mjCNSTR_CONTACT_PYRAMIDAL,
                    kinds.mjCNSTR_CONTACT_ELLIPTIC):
            con = data.contact[element]
            if kind != kinds.mjCNSTR_CONTACT_ELLIPTIC or i == con.efc_address:
                rows.append((i, con.solref, con.solimp))
        elif kind == kinds.mjCNSTR_LIMIT_JOINT:
            rows.append((i, model.jnt_solref[element], model.jnt_solimp[element]))
        elif kind == kinds.mjCNSTR_LIMIT_TENDON:
            rows.append((i, model.tendon_solref_lim[element], model.tendon_solimp_lim[element]))
    return rows


def _beyond_limits(model: mujoco.MjModel, data: mujoco.MjData) -> mujoco.MjData:
    """A copy of ``data`` with every limited hinge and slide joint 2 % of its range past its
    upper limit (into the solimp transition of most), after mj_forward: limit rows for
    models whose joints the short run leaves free."""
    beyond = copy.copy(data)
    for j in range(model.njnt):
        if model.jnt_limited[j] and int(model.jnt_type[j]) in (mujoco.mjtJoint.mjJNT_HINGE,
                                                               mujoco.mjtJoint.mjJNT_SLIDE):
            low, high = model.jnt_range[j]
            beyond.qpos[model.jnt_qposadr[j]] = high + 0.02 * (high - low)
    mujoco.mj_forward(model, beyond)
    return beyond


@pytest.mark.parametrize("name", MODELS)
def test_solver_reference_matches_efc_kbip(corpus, name):
    model, data = _state(corpus, name)
    states = [data, _beyond_limits(model, data)]
    assert (not any(_rows(model, state) for state in states)) == (name in NO_ROWS)
    refsafe = not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_REFSAFE
    for state in states:
        rows = _rows(model, state)
        for row, solref, solimp in rows[::max(1, len(rows) // ROWS)]:
            ref = solver.reference(solref, solimp, state.efc_pos[row] - state.efc_margin[row],
                                   timestep=model.opt.timestep, refsafe=refsafe)
            # rtol: the same double-precision formulas as mj_makeImpedance, in another order
            kind = mujoco.mjtConstraint(state.efc_type[row]).name
            np.testing.assert_allclose([ref.k, ref.b, ref.d], state.efc_KBIP[row, :3],
                                       rtol=1e-12, err_msg=f"{name}: row {row} ({kind})")
