"""labkit.audit: every check fires on the mistake it names, stays quiet on the corrected model,
and, on real models, reports what MuJoCo itself confirms by an independent route."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest

import labkit
from labkit.auditing import CHECKS, audit, geometry, servo

FLOOR = '<geom name="floor" type="plane" size="2 2 .1"/>'


def mjcf(body: str, *, head: str = "", world: str = FLOOR, tail: str = "") -> str:
    return (f"<mujoco>{head}<worldbody>{world}{body}</worldbody>{tail}</mujoco>")


def ids(report) -> set[str]:
    return report.checks()


# --- overlap-at-start and the world-weld exception -----------------------------------------

GRIPPER = """
<body name="base" pos="0 0 1" {free}>
  <geom name="palm" type="box" size=".05 .05 .02"/>
  <body name="finger" pos="0 0 -.03">
    <joint name="slide" type="slide" axis="1 0 0" range="-.02 .02"/>
    <geom name="pad" type="box" size=".01 .01 .03"/>
  </body>
</body>"""


@pytest.mark.parametrize("mount", ["welded", "free", "welded, filterparent off",
                                   "free, filterparent off"])
def test_overlap_at_start_and_the_world_weld_exception(mount):
    """The finger overlaps its palm by 2 cm.  Welded to the world, the parent filter does not
    apply: a finding that names the exception; on a free base the filter drops the pair;
    with filterparent disabled the pair collides whatever the mount."""
    free = "" if mount.startswith("welded") else "<freejoint/>"
    head = '<option><flag filterparent="disable"/></option>' if "off" in mount else ""
    report = audit(mjcf(GRIPPER.replace("{free}", "").replace(
        '<geom name="palm"', f'{free}<geom name="palm"'), head=head))
    found = report.of("overlap-at-start")
    if mount == "free":
        assert not found
        return
    (finding,) = found
    model, data = report.model, report.data
    pad, palm = model.geom("pad").id, model.geom("palm").id
    # MuJoCo's own distance between the two geoms, computed independently of data.contact
    depth = -mujoco.mj_geomDistance(model, data, pad, palm, 1.0, None)
    assert finding.measured == pytest.approx(depth * 1e3, rel=1e-6)
    assert depth > 0.015  # 3 cm pad centred 3 cm below a palm 2 cm thick: 2 cm inside it
    assert finding.detail["world_weld"] == (mount == "welded")
    assert ("welded to the world" in finding.summary) == (mount == "welded")
    assert ("filterparent" in finding.summary) == ("off" in mount)
    assert {"geom 'pad'", "geom 'palm'"} == set(finding.elements)


def test_overlap_shallower_than_the_threshold_is_a_resting_contact():
    body = '<body pos="0 0 .0995"><freejoint/><geom type="sphere" size=".1"/></body>'
    assert not audit(mjcf(body)).of("overlap-at-start")  # 0.5 mm: a resting depth
    deeper = body.replace(".0995", ".098")                  # 2 mm: geometry
    assert audit(mjcf(deeper)).of("overlap-at-start")


def test_overlap_threshold_follows_the_models_units():
    """In a centimetre model (gravity 981) 0.5 length units are 5 mm: a finding."""
    body = '<body pos="0 0 9.5"><freejoint/><geom type="sphere" size="10"/></body>'
    head = '<option gravity="0 0 -981"/>'
    (finding,) = audit(mjcf(body, head=head, world='<geom type="plane" size="200 200 1"/>')
                       ).of("overlap-at-start")
    assert finding.measured == pytest.approx(5.0, rel=1e-6)  # mm


# --- timeconst-clamped ---------------------------------------------------------------------

BOX_ON_FLOOR = '<body pos="0 0 .0999"><freejoint/><geom name="box" type="box" size=".1 .1 .1"/></body>'


@pytest.mark.parametrize("timestep, clamped", [(0.02, True), (0.01, False), (0.005, False)])
def test_timeconst_clamped_matches_efc_kbip(timestep, clamped):
    """MuJoCo raises solref's 0.02 s to 2·timestep when that is larger: the contact row's
    stiffness efc_KBIP[0] is the clamped one exactly when the audit says so."""
    xml = mjcf(BOX_ON_FLOOR, head=f'<option timestep="{timestep}"/>')
    report = audit(xml)
    assert bool(report.of("timeconst-clamped")) == clamped
    model, data = report.model, report.data
    row = int(np.flatnonzero(data.efc_type == mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL)[0])
    solimp = model.geom_solimp[model.geom("box").id]
    depth = -float(data.efc_pos[row] - data.efc_margin[row])
    used = labkit.solver.reference((0.02, 1), solimp, depth, timestep=timestep)
    requested = labkit.solver.reference((0.02, 1), solimp, depth, timestep=timestep,
                                        refsafe=False)
    assert data.efc_KBIP[row, 0] == pytest.approx(used.k, rel=1e-9)
    assert (abs(data.efc_KBIP[row, 0] - requested.k) > 1e-6 * requested.k) == clamped


def test_timeconst_clamped_skips_when_refsafe_is_off_and_ignores_geoms_that_never_touch():
    head = '<option timestep="0.02"><flag refsafe="disable"/></option>'
    assert "timeconst-clamped" in audit(mjcf(BOX_ON_FLOOR, head=head)).skipped
    ghost = BOX_ON_FLOOR.replace('size=".1 .1 .1"', 'size=".1 .1 .1" contype="0" conaffinity="0"')
    assert not audit(mjcf(ghost, head='<option timestep="0.02"/>', world="")).of("timeconst-clamped")


# --- angles-degrees ------------------------------------------------------------------------

ARM = """<body><joint name="hinge" range="{lo} {hi}"/><geom type="capsule" fromto="0 0 0 .3 0 0"
 size=".02"/></body>"""


@pytest.mark.parametrize("angle, lo, hi, expect", [
    ("degree", 0, 1.57, True),      # radians written under degrees: 1.57°
    ("radian", 0, 1.57, False),     # the same numbers, read as radians
    ("degree", 0, 90, False),       # degrees, as intended
    ("degree", -2, 2, True),        # 4°: under TINY_SPAN (5.7°)
    ("degree", -3, 3, False),       # 6°: over it
])
def test_angles_degrees_on_ranges(angle, lo, hi, expect):
    xml = mjcf(ARM.format(lo=lo, hi=hi), head=f'<compiler angle="{angle}"/>', world="")
    found = audit(xml).of("angles-degrees")
    assert bool(found) == expect
    if expect:
        # MuJoCo itself: the same file compiled in radians has a range 180/π times wider
        spec = mujoco.MjSpec.from_string(xml)
        spec.compiler.degree = False
        wide = spec.compile().jnt_range[0]
        narrow = mujoco.MjModel.from_xml_string(xml).jnt_range[0]
        assert (wide[1] - wide[0]) / (narrow[1] - narrow[0]) == pytest.approx(180 / np.pi)


def test_angles_degrees_on_a_ctrlrange_written_in_degrees():
    body = ARM.format(lo=-90, hi=90)
    servo_ = '<actuator><position joint="hinge" kp="1" ctrlrange="-90 90"/></actuator>'
    (finding,) = audit(mjcf(body, world="", tail=servo_)).of("angles-degrees")
    assert finding.measured == pytest.approx(180 / np.pi)  # ctrlrange is never converted
    fixed = servo_.replace("-90 90", "-1.57 1.57")
    assert not audit(mjcf(body, world="", tail=fixed)).of("angles-degrees")


def test_a_compiled_model_does_not_know_its_angle_unit():
    model = mujoco.MjModel.from_xml_string(mjcf(ARM.format(lo=0, hi=1.57), world=""))
    (finding,) = audit(model).of("angles-degrees")
    assert finding.severity == "warning" and "if the file used" in finding.summary


# --- meshes --------------------------------------------------------------------------------

def blocks_obj(blocks: list[tuple[tuple[int, ...], tuple[int, ...]]], unit: float) -> str:
    """An OBJ mesh of axis-aligned boxes, each (low corner, high corner) in units of ``unit`` m,
    every box a closed shell of 12 outward-wound triangles."""
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    lines = []
    for n, ((x0, y0, z0), (x1, y1, z1)) in enumerate(blocks):
        lines += [f"v {x * unit} {y * unit} {z * unit}" for x in (x0, x1) for y in (y0, y1)
                  for z in (z0, z1)]
        first = 8 * n + 1
        for a, b, c, d in quads:
            lines += [f"f {first + a} {first + b} {first + c}", f"f {first + a} {first + c} {first + d}"]
    return "\n".join(lines) + "\n"


def test_hull_vs_mesh_agrees_with_mujocos_convex_and_exact_inertia():
    """A U-shaped bracket (three blocks, 7 of the 3×1×3 hull's 9 units): the audit's volumes are
    MuJoCo's, and a mild concavity is no finding."""
    obj = blocks_obj([((0, 0, 0), (1, 1, 3)), ((1, 0, 0), (2, 1, 1)), ((2, 0, 0), (3, 1, 3))], 0.1)
    body = '<body><freejoint/><geom type="mesh" mesh="u" density="1000"/></body>'
    xml = mjcf(body, head='<asset><mesh name="u" file="u.obj" inertia="{mode}"/></asset>', world="")
    assets = {"u.obj": obj.encode()}
    model = mujoco.MjModel.from_xml_string(xml.replace("{mode}", "exact"), assets)
    convex = mujoco.MjModel.from_xml_string(xml.replace("{mode}", "convex"), assets)
    ratio = convex.body_mass[1] / model.body_mass[1]  # MuJoCo's hull and mesh volumes, by mass
    assert geometry.hull_volume(model, 0) / geometry.mesh_volume(model, 0) == pytest.approx(
        ratio, rel=1e-6)
    assert ratio == pytest.approx(9 / 7, rel=1e-6)  # 3×1×3 hull over 7 unit blocks
    subject = labkit.auditing.Subject(model, mujoco.MjData(model), True)
    assert not list(CHECKS["hull-vs-mesh"](subject))  # 1.29 < 2: a mild concavity


def test_hull_vs_mesh_fires_on_a_cup():
    """An open-topped cup: five thin walls around an empty 8×8×8 cm inside."""
    walls = [((0, 0, 0), (10, 10, 1)), ((0, 0, 1), (1, 10, 10)), ((9, 0, 1), (10, 10, 10)),
             ((1, 0, 1), (9, 1, 10)), ((1, 9, 1), (9, 10, 10))]
    spec = mujoco.MjSpec.from_string(mjcf('<body><freejoint/><geom type="mesh" mesh="cup"/></body>',
                                          head='<asset><mesh name="cup" file="cup.obj"/></asset>'))
    spec.assets = {"cup.obj": blocks_obj(walls, 0.01).encode()}
    (finding,) = audit(spec).of("hull-vs-mesh")
    # walls of 1 cm: 100 + 4·... cm³ of material in a 1000 cm³ hull
    material = 100 + 2 * 90 + 2 * 72
    assert finding.measured == pytest.approx(1000 / material, rel=1e-6)


def test_visual_vs_collision_catches_a_mesh_in_the_wrong_units():
    """The same box as a visual geom and as a collision geom 1000× too large (mm read as m)."""
    body = ('<body><freejoint/><geom type="box" size=".05 .05 .05" contype="0" conaffinity="0" '
            'group="1"/><geom type="box" size="{s} {s} {s}" group="3"/></body>')
    assert not audit(mjcf(body.format(s=0.06), world="")).of("visual-vs-collision")
    (finding,) = audit(mjcf(body.format(s=50), world="")).of("visual-vs-collision")
    assert finding.measured == pytest.approx(1000, rel=1e-6)
    shifted = body.format(s=0.05).replace('group="3"', 'group="3" pos="1 0 0"')
    (apart,) = audit(mjcf(shifted, world="")).of("visual-vs-collision")
    assert apart.detail["disjoint"]


# --- collision reach and friction ----------------------------------------------------------

def test_no_collision_and_mujocos_own_contacts():
    """A link with contype 2 over a floor of conaffinity 1 never touches it: MuJoCo finds no
    contact even with the link sunk into the floor; with matching bits it does."""
    body = '<body pos="0 0 .05"><freejoint/><geom type="sphere" size=".1" {bits}/></body>'
    for bits, lonely in (('contype="2" conaffinity="2"', True), ("", False)):
        report = audit(mjcf(body.format(bits=bits)))
        assert bool(report.of("no-collision")) == lonely
        assert (report.data.ncon == 0) == lonely  # the sphere starts 5 cm inside the floor


def test_no_collision_is_quiet_for_a_body_alone_in_an_empty_world():
    assert not audit(mjcf('<body><freejoint/><geom size=".1"/></body>', world="")).of("no-collision")


@pytest.mark.parametrize("floor, ball, frictionless", [
    ('friction="0"', 'friction="0"', True),     # the larger of two zeros
    ('friction="0"', "", False),                # max(0, 1) = 1
    ('condim="1"', 'condim="1"', True),         # no friction rows at all
    ('condim="1"', "", False),                  # max(1, 3) = 3
    ('friction="0" priority="1"', "", True),    # priority: the floor's 0 wins
])
def test_zero_friction_matches_the_contact_mujoco_makes(floor, ball, frictionless):
    world = f'<geom type="plane" size="2 2 .1" {floor}/>'
    body = f'<body pos="0 0 .099"><freejoint/><geom type="sphere" size=".1" {ball}/></body>'
    report = audit(mjcf(body, world=world))
    assert bool(report.of("zero-friction")) == frictionless
    contact = report.data.contact[0]
    # MuJoCo raises a friction of 0 to mjMINMU = 1e-5 in the contact it makes
    assert (contact.friction[0] <= 1e-5 or contact.dim == 1) == frictionless


def test_zero_friction_ignores_a_robots_own_frictionless_limbs():
    legs = ('<body pos="0 0 1"><freejoint/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".05" '
            'condim="1"/><body pos=".3 0 0"><joint/><geom size=".01" condim="1"/><body><joint '
            'axis="0 1 0"/><geom type="capsule" fromto="0 0 0 -.25 0 0.05" size=".05" condim="1"/>'
            '</body></body></body>')
    assert not audit(mjcf(legs)).of("zero-friction")


# --- mass, inertia, density, units ---------------------------------------------------------

def test_mass_inertia_density_and_units():
    light = ('<body><joint/><geom type="capsule" fromto="0 0 0 .01 0 0" size=".002" mass="0.0005"/>'
             "</body>")
    report = audit(mjcf(light, world=""))
    model = report.model
    (mass,) = report.of("mass-tiny")
    assert mass.measured == pytest.approx(model.body_subtreemass[1])
    (inertia,) = report.of("inertia-tiny")
    full = np.zeros((1, 1))
    mujoco.mj_fullM(model, report.data, full)
    assert inertia.measured == pytest.approx(full[0, 0])
    dense = light.replace('mass="0.0005"', 'mass="5"')
    (rho,) = audit(mjcf(dense, world="")).of("density")
    volume = np.pi * 0.002**2 * 0.01 + 4 / 3 * np.pi * 0.002**3
    assert rho.measured == pytest.approx(5 / volume, rel=1e-6) and rho.measured > 22_590
    cm = audit(mjcf(light, head='<option gravity="0 0 -981"/>', world=""))
    assert cm.of("units")[0].detail["length_unit_m"] == pytest.approx(0.01)
    assert {"mass-tiny", "inertia-tiny", "density"} <= set(cm.skipped)


# --- servo-stability -----------------------------------------------------------------------

SERVO = """<mujoco><option timestep="{h}" integrator="{integrator}"/><worldbody>
<body><joint name="x" type="slide" damping="{c}"/><geom type="sphere" size=".05" mass="1"/></body>
</worldbody><actuator><position joint="x" kp="{kp}" kv="{kv}"/></actuator></mujoco>"""


def diverges(xml: str, seconds: float = 2.0) -> bool:
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[0] = 0.01
    for _ in range(int(seconds / model.opt.timestep)):
        mujoco.mj_step(model, data)
        if not np.isfinite(data.qpos[0]) or abs(data.qpos[0]) > 1:
            return True
    return False


@pytest.mark.parametrize("integrator", ["Euler", "implicitfast", "implicit", "RK4"])
@pytest.mark.parametrize("kv, c", [(0, 0), (20, 0), (0, 20), (20, 20)])
def test_servo_limit_is_where_mujoco_diverges(integrator, kv, c):
    """The largest stable kp of labkit.auditing.servo, for a 1 kg slide at h = 10 ms: at 0.97
    of it MuJoCo stays bounded for 2 s, at 1.03 it diverges (growth per step ≥ 1.0005 compounds
    past 1e2 in 200 steps)."""
    h = 0.01
    model = mujoco.MjModel.from_xml_string(SERVO.format(h=h, integrator=integrator, c=c,
                                                         kp=1, kv=kv))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    subject = labkit.auditing.Subject(model, data)
    terms = servo.actuator_terms(model, data, 0, subject.inverse_mass)
    kmax = servo.largest_stable_stiffness(terms, h, integrator)
    if kmax == 0:  # explicit damping alone past the limit: MuJoCo diverges even at tiny kp
        assert diverges(SERVO.format(h=h, integrator=integrator, c=c, kp=1e-3, kv=kv))
        return
    for factor, expect in ((0.97, False), (1.03, True)):
        xml = SERVO.format(h=h, integrator=integrator, c=c, kp=factor * kmax, kv=kv)
        assert diverges(xml, seconds=4.0) == expect, (factor, kmax)


def test_servo_stability_finding_and_its_margin():
    fine = SERVO.format(h=0.002, integrator="Euler", c=0, kp=1000, kv=0)
    assert not audit(fine).of("servo-stability")  # h²k/(4m) = 0.001
    near = SERVO.format(h=0.002, integrator="Euler", c=0, kp=6e5, kv=0)
    (finding,) = audit(near).of("servo-stability")  # h²k/4m = 0.6
    assert finding.severity == "warning" and finding.measured == pytest.approx(0.6, rel=1e-4)
    past = SERVO.format(h=0.002, integrator="Euler", c=0, kp=2e6, kv=0)
    assert audit(past).of("servo-stability")[0].severity == "error"
    assert diverges(past)


def test_servo_without_forcerange():
    """A slide servo that can press its ball into a wall: flagged unless a force limit (the
    actuator's forcerange or the joint's actuatorfrcrange) bounds it; the largest force is kp
    times the largest error its ranges allow."""
    press = ('<body><joint name="x" type="slide" {joint}/><geom type="sphere" '
             'size=".05"/></body>')
    wall = '<geom type="box" pos=".3 0 0" size=".01 .2 .2"/>'
    servo_ = '<actuator><position joint="x" kp="100" ctrlrange="0 .5" {act}/></actuator>'

    def found(joint: str = 'range="0 .5"', act: str = "", world: str = wall):
        return audit(mjcf(press.format(joint=joint), world=world,
                          tail=servo_.format(act=act))).of("servo-no-forcerange")

    (finding,) = found()
    assert finding.measured == pytest.approx(100 * 0.5)  # kp × (0.5 − 0) at the far end
    assert not found(act='forcerange="-1 1"')
    assert not found(joint='range="0 .5" actuatorfrcrange="-1 1"')
    assert not found(world="")  # nothing to press against
    (unbounded,) = found(joint="")  # an unlimited joint: the error has no bound
    assert unbounded.measured == np.inf


# --- the report ----------------------------------------------------------------------------

def test_report_text_json_and_html(cli):
    xml = mjcf(GRIPPER.replace("{free}", ""), head='<option timestep="0.02"/>')
    report = audit(xml)
    data = json.loads(report.to_json())
    for finding in data["findings"]:
        assert {"check", "severity", "elements", "measured", "chapter"} <= set(finding)
        assert finding["check"] in CHECKS and finding["link"].endswith(".ipynb")
    text = str(report)
    assert "overlap-at-start" in text and "fix:" in text
    html = report._repr_html_()
    assert "<table>" in html and "overlap-at-start" in html


def test_cli_audit(cli, tmp_path):
    path = tmp_path / "gripper.xml"
    path.write_text(mjcf(GRIPPER.replace("{free}", "")))
    status, out = cli("audit", path, "--json")
    assert status == 1  # an error-severity finding
    assert json.loads(out)["findings"][0]["check"] == "overlap-at-start"
    status, out = cli("audit", "pendulum")
    assert status == 0 and "labkit audit" in out
    status, _ = cli("audit", tmp_path / "missing.xml")
    assert status == 2
    status, out = cli("audit", "--list")
    assert status == 0 and all(check in out for check in CHECKS)


def test_unknown_check_and_keyframe_are_named():
    with pytest.raises(ValueError, match="unknown audit check"):
        audit("pendulum", checks=["overlap"])
    with pytest.raises(labkit.ModelError, match="keyframe"):
        audit("pendulum", keyframe="nope")


# --- the course's own models ---------------------------------------------------------------

# Course models whose findings are deliberate: the lesson the chapter draws from them.  Any
# other finding on a course model is a false alarm (or a mistake in the model: the audit found
# one, the world-welded base of clamp_elbow touching its arm, fixed in the model).
UNLIMITED = "servo-no-forcerange"  # teaching servos have no motor limit; the info is true
DELIBERATE = {
    "actuator_transmissions": {UNLIMITED},
    "arm": {UNLIMITED},
    "capstone_gripper": {UNLIMITED},   # chapter 09: the learner tunes the squeeze (kp)
    "clamp_stepper": {"servo-stability"},  # 04 §11: the #175 recipe breaks under Euler
    "contact_arena": {"overlap-at-start"},    # 06 §1: pairs placed touching, to show the filters
    "contact_gripper": {"overlap-at-start"},  # 06 §2: fingers pressed into the cube, to read forces
    "hand": {UNLIMITED},
    "solver_lever": {"zero-friction"},        # 05: condim 1, one row per contact
    "solver_sphere": {"zero-friction"},       # 05: condim 1, one row per contact
    "stability_finger": {"servo-stability", "inertia-tiny"},  # 10 §5: too small for its servo
    "tuning_frame_mesh": {"overlap-at-start", "hull-vs-mesh", UNLIMITED},  # 07 §1: the hull buries the arm
}


@pytest.mark.parametrize("name", labkit.model_names())
def test_course_models_have_no_unexplained_finding(name):
    assert ids(audit(name)) == DELIBERATE.get(name, set())


# --- real models: every finding confirmed by MuJoCo itself ---------------------------------

def corpus_reports():
    """(name, report) for every corpus model, audited once per session."""
    import labkit.corpus

    return {name: audit(labkit.corpus.path(name)) for name in labkit.corpus.names()}


@pytest.fixture(scope="module")
def reports(corpus):
    return corpus_reports()


def test_the_corpus_is_audited_and_each_check_fires_somewhere(reports):
    """Every model audits; the real models show the course's lessons: at least these checks
    report something on the 43 models of the two wheels."""
    seen = set().union(*(r.checks() for r in reports.values()))
    assert {"overlap-at-start", "timeconst-clamped", "angles-degrees", "no-collision",
            "zero-friction", "units", "mass-tiny", "inertia-tiny", "density",
            "servo-no-forcerange", "start-outside-range"} <= seen
    assert all(report.ran for report in reports.values())  # (its timing: scripts/benchmark.py)


def test_corpus_overlaps_are_mujocos_distances(reports):
    """Each reported overlap is a contact MuJoCo's own pipeline makes for that geom pair (a
    fresh mjData, mj_forward) at that depth, and mj_geomDistance, MuJoCo's separate distance
    query, finds the two geoms interpenetrating too."""
    checked = 0
    for name, report in reports.items():
        model = report.model
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        depth = {}
        for c in data.contact[: data.ncon]:
            pair = tuple(sorted((int(c.geom[0]), int(c.geom[1]))))
            depth[pair] = max(depth.get(pair, 0.0), -float(c.dist))
        for finding in report.of("overlap-at-start"):
            g1, g2 = sorted(model.geom(e.split("'")[1]).id if "'" in e.split(" in ")[0] else
                            int(e.split("#")[1].split()[0]) for e in finding.elements)
            assert finding.measured == pytest.approx(depth[(g1, g2)] * 1e3, rel=1e-9), name
            assert mujoco.mj_geomDistance(model, data, g1, g2, 1.0, None) < 0, name
            checked += 1
    assert checked >= 10


def test_corpus_clamped_timeconsts_are_the_engines(reports):
    """For every timeconst-clamped finding, MuJoCo's own constraint row: the model with its
    first flagged geom or joint pressed into a contact or limit, read from efc_KBIP."""
    confirmed = 0
    for name, report in reports.items():
        for finding in report.of("timeconst-clamped"):
            model = report.model
            h = model.opt.timestep
            requested = finding.measured
            # a box on a plane with that element's solref at the model's timestep
            xml = mjcf(BOX_ON_FLOOR.replace('type="box"', f'type="box" solref="{requested} 1"'),
                       head=f'<option timestep="{h}"/>',
                       world=f'<geom type="plane" size="1 1 .1" solref="{requested} 1"/>')
            m = mujoco.MjModel.from_xml_string(xml)
            d = mujoco.MjData(m)
            mujoco.mj_forward(m, d)
            row = 0
            depth = -float(d.efc_pos[row] - d.efc_margin[row])
            clamped = labkit.solver.reference((2 * h, 1), m.geom_solimp[0], depth, timestep=h,
                                              refsafe=False)
            assert d.efc_KBIP[row, 0] == pytest.approx(clamped.k, rel=1e-9), name
            assert finding.threshold == pytest.approx(2 * h)
            confirmed += 1
    assert confirmed >= 5


def mujoco_volumes(path, mesh_name: str) -> tuple[float, float]:
    """(hull, enclosed) volume of a model's mesh, m³, as MuJoCo's compiler computes them: the
    mass it gives the mesh at density 1 with inertia="convex" and inertia="exact"."""
    source = mujoco.MjSpec.from_file(str(path))
    mesh = source.mesh(mesh_name)
    folder = path.parent / (source.compiler.meshdir or "")
    volumes = []
    for mode in (mujoco.mjtMeshInertia.mjMESH_INERTIA_CONVEX,
                 mujoco.mjtMeshInertia.mjMESH_INERTIA_EXACT):
        spec = mujoco.MjSpec()
        if mesh.file:
            spec.add_mesh(name="m", file=str(folder / mesh.file), scale=mesh.scale, inertia=mode)
        else:  # vertices written in the MJCF
            spec.add_mesh(name="m", uservert=mesh.uservert, userface=mesh.userface,
                          scale=mesh.scale, inertia=mode)
        body = spec.worldbody.add_body()
        body.add_freejoint()
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname="m", density=1)
        volumes.append(float(spec.compile().body_mass[1]))
    return volumes[0], volumes[1]


def test_corpus_hull_and_mesh_volumes_are_mujocos(reports):
    """On every closed collision mesh of the corpus the audit's hull and enclosed volumes are
    the ones MuJoCo's compiler computes (its convex and exact inertia modes)."""
    import labkit.corpus

    compared = 0
    for name, report in reports.items():
        model = report.model
        meshes = {int(model.geom_dataid[g]) for g in np.flatnonzero(
            (model.geom_type == geometry.MESH) & geometry.collidable(model))}
        for k in sorted(meshes):
            if not geometry.is_closed(model, k):
                continue
            hull, enclosed = mujoco_volumes(labkit.corpus.path(name), model.mesh(k).name)
            assert geometry.hull_volume(model, k) == pytest.approx(hull, rel=1e-6), name
            assert geometry.mesh_volume(model, k) == pytest.approx(enclosed, rel=1e-6), name
            compared += 1
    assert compared >= 2


def test_hull_finding_on_the_course_frame_is_mujocos(tmp_path):
    """tuning_frame_mesh's ring (chapter 07) collides as a slab: the reported ratio is MuJoCo's
    convex over exact volume."""
    (finding,) = audit("tuning_frame_mesh").of("hull-vs-mesh")
    hull, enclosed = mujoco_volumes(labkit.model_path("tuning_frame_mesh"), "frame")
    assert finding.measured == pytest.approx(hull / enclosed, rel=1e-6)
    assert hull / enclosed == pytest.approx(0.6**2 / (0.6**2 - 0.52**2), rel=1e-3)  # slab / ring


def test_corpus_angle_findings_recompiled_in_radians(reports):
    """The flagged ranges, compiled with angle="radian", are 180/π times wider: the numbers in
    the file were radians."""
    import labkit.corpus

    confirmed = 0
    for name, report in reports.items():
        for finding in report.of("angles-degrees"):
            spec = mujoco.MjSpec.from_file(str(labkit.corpus.path(name)))
            spec.compiler.degree = False
            wide = spec.compile()
            for element in finding.elements:
                joint = element.split("'")[1]
                narrow = report.model.joint(joint).range
                assert np.ptp(wide.joint(joint).range) == pytest.approx(
                    np.ptp(narrow) * 180 / np.pi, rel=1e-9), name
                confirmed += 1
    assert confirmed >= 2


def test_corpus_mass_inertia_units_from_mujocos_arrays(reports):
    for name, report in reports.items():
        model = report.model
        for finding in report.of("mass-tiny"):
            masses = [model.body(e.split("'")[1]).subtreemass[0] for e in finding.elements]
            assert min(masses) == pytest.approx(finding.measured) and max(masses) < 1e-3, name
        for finding in report.of("inertia-tiny"):
            full = np.zeros((model.nv, model.nv))
            mujoco.mj_fullM(model, report.data, full)
            joints = [model.joint(e.split("'")[1]).id for e in finding.elements]
            diagonal = [full[model.jnt_dofadr[j], model.jnt_dofadr[j]] for j in joints]
            assert min(diagonal) == pytest.approx(finding.measured) and max(diagonal) < 1e-6
        for finding in report.of("units"):
            assert finding.measured == pytest.approx(np.linalg.norm(model.opt.gravity))


def test_corpus_ghost_links_never_touch(reports):
    """Bodies reported by no-collision make no contact with anything in MuJoCo, even with
    every body's geoms piled onto one spot: one second of simulation with the world's gravity
    from the start pose, every contact read."""
    for name, report in reports.items():
        for finding in report.of("no-collision"):
            model = report.model
            bodies = {model.body(e.split("'")[1]).id for e in finding.elements}
            data = mujoco.MjData(model)
            for _ in range(int(0.5 / model.opt.timestep)):
                mujoco.mj_step(model, data)
                for c in data.contact[: data.ncon]:
                    assert not bodies & {model.geom_bodyid[c.geom[0]],
                                         model.geom_bodyid[c.geom[1]]}, name


# --- rest-penetration ----------------------------------------------------------------------

@pytest.mark.parametrize("shape, solref, contacts", [
    ('type="sphere" size=".1"', "0.02 1", None),   # default contact: about 0.07 mm
    ('type="sphere" size=".1"', "0.1 1", 1),
    ('type="box" size=".1 .1 .1"', "0.02 1", None),
    ('type="box" size=".1 .1 .1"', "0.2 1", 4),    # its weight shared by four corners
])
def test_rest_penetration_on_the_real_number_of_contacts(shape, solref, contacts):
    """A 1 m-class object dropped from 2 cm settles on its support; the audit reports it when
    the rest depth passes 1 mm, on as many contacts as MuJoCo makes, and MuJoCo's own depth
    after 3 s more agrees with the prediction to 3 % (the solver's residual at rest; the
    contact's damping term vanishes with the velocity)."""
    body = f'<body pos="0 0 .12"><freejoint/><geom name="it" {shape} solref="{solref}"/></body>'
    xml = mjcf(body)
    found = audit(xml).of("rest-penetration")
    if contacts is None:
        assert not found
        return
    (finding,) = found
    assert finding.detail["contacts"] == contacts
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    for _ in range(int(3.0 / model.opt.timestep)):
        mujoco.mj_step(model, data)
    depths = [-c.dist for c in data.contact[: data.ncon]]
    assert data.ncon == contacts
    assert max(depths) * 1e3 == pytest.approx(finding.measured, rel=0.03)
    assert finding.measured > 1.0


def test_the_picture_shows_flagged_geoms_in_red():
    report = audit(mjcf(GRIPPER.replace("{free}", "")))
    image = report.picture(width=160, height=120)
    assert image.shape == (120, 160, 3)
    red = (image[..., 0] > 120) & (image[..., 1] < 60) & (image[..., 2] < 60)
    assert red.mean() > 0.05  # the palm and the pad, in red, framed
    assert audit("pendulum").picture() is None  # nothing flagged: no picture
    import html

    # its alt text names the model and the flagged geoms
    flagged = sorted({g for f in report.findings for g in f.geoms})
    alt = report.picture_alt()
    assert alt.startswith(f"render of model '{report.name}': the {len(flagged)} flagged geom")
    assert all((report.model.geom(g).name or f"#{g}") in alt for g in flagged[:6])
    assert f'<img alt="{html.escape(alt)}"' in report._repr_html_()


@pytest.mark.parametrize("floor, ball", [
    ('solref="0.001 1"', 'solref="0.001 1"'),                  # both clamped
    ('solref="0.001 1"', 'solref="0.1 1"'),                    # mixed: 0.0505 s
    ('solref="0.001 1" solmix="9"', 'solref="0.1 1"'),         # weighted: 0.0109 s
    ('solref="0.001 1" solmix="1000"', 'solref="0.1 1"'),      # weighted: 0.0011 s
    ('solref="0.001 1" priority="1"', 'solref="0.1 1"'),       # the floor's, by priority
    ('solref="-1000 -10"', 'solref="0.001 1"'),                # direct + standard: the smaller
])
def test_timeconst_clamped_uses_the_contacts_mixed_solref(floor, ball):
    """The audit mixes the two geoms' solref as MuJoCo does: it reports a clamp exactly when
    the solref MuJoCo gives the contact (data.contact.solref) is standard and below 2·h."""
    world = f'<geom type="plane" size="2 2 .1" {floor}/>'
    body = f'<body pos="0 0 .099"><freejoint/><geom type="sphere" size=".1" {ball}/></body>'
    report = audit(mjcf(body, world=world))
    solref = report.data.contact[0].solref
    clamped = 0 < solref[0] < 2 * report.model.opt.timestep
    assert bool(report.of("timeconst-clamped")) == clamped
    if clamped:
        (finding,) = report.of("timeconst-clamped")
        assert finding.measured == pytest.approx(solref[0], rel=1e-9)
        (pair,) = finding.detail["pairs"]  # the pair that asks for it, named
        assert pair.startswith("geom #0") and pair.endswith("in body #1")


@pytest.mark.parametrize("root, exception", [("", True), ("<freejoint/>", False)])
def test_world_weld_exception_covers_welded_siblings(root, exception):
    """A torso with a welded hip block and a jointed thigh beside it: welded to the world, the
    thigh and the block overlap (siblings, but the block is in the thigh's weld-parent group,
    which is the world's); with a free torso the filter drops them.  A box on a table, a tree of
    its own, is never the exception."""
    torso = f"""<body name="torso" pos="0 0 1">{root}<geom type="box" size=".1 .1 .1"/>
      <body name="hip" pos=".1 0 -.1"><geom type="sphere" size=".05"/></body>
      <body name="thigh" pos=".1 0 -.15"><joint axis="0 1 0"/><geom type="capsule"
        fromto="0 0 0 0 0 -.3" size=".04"/></body></body>"""
    table = ('<body name="table" pos="2 0 .4"><geom type="box" size=".3 .3 .02"/></body>'
             '<body name="box" pos="2 0 .43"><freejoint/><geom type="box" size=".05 .05 .02"/>'
             "</body>")
    report = audit(mjcf(torso + table, world=""))
    found = {tuple(sorted(f.detail["bodies"])): f.detail["world_weld"]
             for f in report.of("overlap-at-start")}
    assert found.get(("body 'hip'", "body 'thigh'")) == (True if exception else None)
    assert found[("body 'box'", "body 'table'")] is False  # 1 cm deep, an ordinary overlap


def test_start_outside_range_is_an_active_limit_row():
    """A hinge starting 0.2 rad past its range: MuJoCo makes a limit row at the first step,
    with efc_pos = −0.2; inside the range, none."""
    arm = ('<body><joint name="h" range="0.2 1" limited="true"/><geom type="capsule" '
           'fromto="0 0 0 .3 0 0" size=".02"/></body>')
    report = audit(mjcf(arm, head='<compiler angle="radian"/>', world=""))
    (finding,) = report.of("start-outside-range")
    data = report.data
    rows = np.flatnonzero(data.efc_type == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT)
    assert finding.measured == pytest.approx(-data.efc_pos[rows[0]], rel=1e-9)
    assert finding.measured == pytest.approx(0.2)
    inside = arm.replace('range="0.2 1"', 'range="-1 1"')
    quiet = audit(mjcf(inside, head='<compiler angle="radian"/>', world=""))
    assert not quiet.of("start-outside-range")
    assert not np.any(quiet.data.efc_type == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT)


def test_corpus_starts_outside_range_are_limit_rows(reports):
    confirmed = 0
    for name, report in reports.items():
        model, data = report.model, report.data
        for finding in report.of("start-outside-range"):
            rows = np.flatnonzero(data.efc_type == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT)
            violated = {model.joint(data.efc_id[r]).name: -data.efc_pos[r] for r in rows}
            for element in finding.elements:
                joint = element.split("'")[1]
                assert violated[joint] == pytest.approx(finding.detail["excess"][element],
                                                        rel=1e-9), name
                confirmed += 1
    assert confirmed >= 2


def test_disabled_constraints_make_no_rows_to_clamp_and_nothing_collides():
    """<flag contact="disable"/>: MuJoCo makes no contact row, so a contact solref below 2·h
    clamps nothing and nothing collides; the limit's row still exists, and its clamp counts."""
    arm = ('<body><joint range="-1 1"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".02"/>'
           "</body>")
    head = '<option timestep="0.02"><flag contact="disable"/></option><compiler angle="radian"/>'
    report = audit(mjcf(BOX_ON_FLOOR + arm, head=head))
    assert report.data.ncon == 0
    (finding,) = report.of("timeconst-clamped")
    assert len(finding.elements) == 1 and finding.elements[0] == "joint #1 in body #2"
    assert {"no-collision", "zero-friction"} <= set(report.skipped)
    limits = head.replace('contact="disable"', 'limit="disable"')
    assert not audit(mjcf(arm, head=limits, world="")).of("timeconst-clamped")


# --- held-out review: mocap, weld groups, flex, wedged objects, wraps, keyframes -----------

def test_a_mocap_target_is_not_a_link_that_cannot_collide():
    body = ('<body name="target" mocap="true" pos="0 0 1"><geom type="sphere" size=".02" '
            'contype="0" conaffinity="0"/></body>')
    assert not audit(mjcf(body + BOX_ON_FLOOR)).of("no-collision")
    jointed = body.replace(' mocap="true"', "").replace('<geom', '<freejoint/><geom')
    assert audit(mjcf(jointed + BOX_ON_FLOOR)).of("no-collision")


def test_density_adds_the_bodies_welded_together():
    """A 1e-6 kg mounting body welded to a 1 kg link: per body it would be lighter than air,
    as one rigid link it weighs 1 kg in the link's volume."""
    link = ('<body pos="0 0 1"><freejoint/><geom type="box" size=".05 .05 .05" mass="1"/>'
            '<body name="mount"><geom type="box" size=".05 .05 .05" pos="0 0 .1" mass="1e-6"/>'
            "</body></body>")
    assert not audit(mjcf(link)).of("density")
    (finding,) = audit(mjcf(link.replace('mass="1"/>', 'mass="1e-6"/>', 1))).of("density")
    assert finding.measured == pytest.approx(2e-6 / (2 * 0.1**3), rel=1e-9)


def test_a_flex_is_audited_and_its_contacts_are_not_geom_overlaps():
    flex = ('<body name="ball" pos="0.5 0 .02"><freejoint/><geom size=".05"/></body>'
            '<flexcomp name="soft" type="grid" count="3 3 3" spacing=".05 .05 .05" pos="0 0 .02" '
            'radius=".01" dim="3" mass="1"><edge equality="true"/></flexcomp>')
    report = audit(mjcf(flex))
    assert any(min(c.geom) < 0 for c in report.data.contact[: report.data.ncon])
    for finding in report.of("overlap-at-start"):
        assert "#-1" not in " ".join(finding.elements)
    # the ball: 30 mm inside the floor, a geom contact
    (ball,) = [f for f in report.of("overlap-at-start") if "body 'ball'" in f.detail["bodies"]]
    assert ball.measured == pytest.approx(30, rel=1e-6)


def test_an_object_wedged_at_the_start_is_not_a_soft_contact():
    """A box started 4 cm inside its table stays there: that depth is the overlap's, so
    rest-penetration says nothing and overlap-at-start reports it."""
    wedged = '<body pos="0 0 .06"><freejoint/><geom type="box" size=".1 .1 .1"/></body>'
    report = audit(mjcf(wedged, world='<geom type="box" size="1 1 .1" pos="0 0 -.1"/>'))
    assert report.of("overlap-at-start") and not report.of("rest-penetration")


def test_a_tendons_wrapping_cylinder_is_not_a_visual_geom():
    arm = """<body name="arm"><joint name="j"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".02"
      contype="0" conaffinity="0"/><geom name="wrap" type="cylinder" size=".04 .01" contype="0"
      conaffinity="0"/><site name="a" pos=".3 .05 0"/><geom type="sphere" size=".3" group="3"/>
      </body><site name="b" pos="-.3 .05 0"/>"""
    tail = ('<tendon><spatial><site site="a"/><geom geom="wrap"/><site site="b"/></spatial>'
            "</tendon>")
    report = audit(mjcf(arm, tail=tail))
    model = report.model
    assert model.wrap_objid[model.wrap_type == mujoco.mjtWrap.mjWRAP_CYLINDER][0] == \
        model.geom("wrap").id
    assert not report.of("visual-vs-collision")


def test_a_misread_range_is_one_finding_not_two():
    """Radians under degrees: the range is misread; the ctrlrange, in radians, is right. The
    audit says the first and not that the ctrlrange is in degrees."""
    body = ARM.format(lo=0, hi=1.57)
    servo_ = '<actuator><position joint="hinge" kp="1" ctrlrange="0 1.57"/></actuator>'
    (finding,) = audit(mjcf(body, world="", tail=servo_)).of("angles-degrees")
    assert finding.elements == ("joint 'hinge'",)


def test_keyframes_by_numpy_index_and_bad_keyframes():
    xml = mjcf('<body><joint name="h" range="-1 1"/><geom size=".1"/></body>',
               head='<compiler angle="radian"/>', world="", tail='<keyframe><key qpos="2"/></keyframe>')
    assert audit(xml, keyframe=np.int64(0)).of("start-outside-range")
    with pytest.raises(labkit.ModelError, match="name or index"):
        audit(xml, keyframe=True)


def test_a_cube_wound_inside_out_has_no_enclosed_volume():
    """A closed cube whose triangles all wind one way has a volume; the same cube with one face
    flipped is inconsistent (MuJoCo keeps it so under inertia="convex"; the legacy mode
    rewinds it, and exact refuses it), and the audit falls back to the hull's volume."""
    cube = ("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n"
            "f 1 3 2\nf 1 4 3\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\nf 2 3 7\nf 2 7 6\n"
            "f 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n")
    flipped = cube.replace("f 5 6 7\n", "f 5 7 6\n")
    for file, obj, defined in (("cube.obj", cube, True), ("flipped.obj", flipped, False)):
        # two file names: MuJoCo caches a mesh by its file name
        asset = f'<asset><mesh name="c" file="{file}" inertia="convex"/></asset>'
        spec = mujoco.MjSpec.from_string(mjcf('<body><freejoint/><geom type="mesh" mesh="c"/>'
                                              '</body>', world="", head=asset))
        spec.assets = {file: obj.encode()}
        model = spec.compile()
        assert geometry.volume_is_defined(model, 0) == defined
        assert geometry.geom_volume(model, 0) == pytest.approx(1.0, rel=1e-9)  # hull = cube


def test_corpus_frictionless_pairs_by_mujocos_own_mixing(reports):
    """For each flagged pair, two spheres with the pair's friction, condim, priority and solmix,
    pressed together: the contact MuJoCo makes is frictionless (mixing ignores the shapes)."""
    confirmed = 0
    for name, report in reports.items():
        model = report.model
        for finding in report.of("zero-friction"):
            flagged = {geom_id(model, e) for e in finding.elements}
            pairs = np.argwhere(np.triu(geometry.can_collide(model)))
            for a, b in pairs:
                if not {a, b} & flagged or model.body_rootid[model.geom_bodyid[a]] == \
                        model.body_rootid[model.geom_bodyid[b]]:
                    continue
                spec = mujoco.MjSpec()
                for x, g in ((0.0, a), (0.15, b)):
                    body = spec.worldbody.add_body(pos=[x, 0, 0])
                    body.add_freejoint()
                    body.add_geom(size=[0.1, 0, 0], friction=model.geom_friction[g],
                                  condim=int(model.geom_condim[g]),
                                  priority=int(model.geom_priority[g]),
                                  solmix=float(model.geom_solmix[g]))
                m = spec.compile()
                d = mujoco.MjData(m)
                mujoco.mj_forward(m, d)
                contact = d.contact[0]
                if contact.friction[0] < 0.01 or contact.dim == 1:
                    confirmed += 1
                    assert {a, b} & flagged, name
    assert confirmed >= 3


def geom_id(model, element: str) -> int:
    """The geom id of an element named as the audit names it."""
    if "'" in element.split(" in ")[0]:
        return model.geom(element.split("'")[1]).id
    return int(element.split("#")[1].split()[0])


def test_corpus_unlimited_servos_push_unclamped(reports):
    """Each flagged servo, its joint held at one end of its range and its ctrl at the far end of
    ctrlrange (or 1000 units away where either is unlimited): MuJoCo's actuator_force is kp
    times the error, unclipped."""
    import copy

    confirmed = 0
    for name, report in reports.items():
        model = copy.deepcopy(report.model)  # its ctrl limits are lifted below
        for finding in report.of("servo-no-forcerange"):
            for element in finding.elements:
                a = model.actuator(element.split("'")[1]).id
                data = mujoco.MjData(model)
                joint = model.actuator_trnid[a, 0]
                kp = model.actuator_gainprm[a, 0]
                largest = finding.detail["largest_force"][element]
                if np.isfinite(largest):
                    lo, hi = model.jnt_range[joint]
                    c_lo, c_hi = model.actuator_ctrlrange[a]
                    q, c = (lo, c_hi) if abs(c_hi - lo) >= abs(hi - c_lo) else (hi, c_lo)
                else:
                    q, c = 0.0, 1000.0
                    model.actuator_ctrllimited[a] = 0  # no ctrl clamp on this copy
                data.qpos[model.jnt_qposadr[joint]] = q
                data.ctrl[a] = c
                mujoco.mj_forward(model, data)
                expected = kp * (c - model.actuator_gear[a, 0] * q)
                assert data.actuator_force[a] == pytest.approx(expected, rel=1e-9), name
                if np.isfinite(largest):
                    assert abs(expected) == pytest.approx(largest, rel=1e-9)
                confirmed += 1
    assert confirmed >= 5


def test_corpus_densities_with_mujocos_volumes(reports):
    """The flagged links' density from MuJoCo's own numbers: body_mass, and each collision
    geom's volume as the mass MuJoCo's compiler gives a copy of it at density 1."""
    import labkit.corpus

    confirmed = 0
    for name, report in reports.items():
        model = report.model
        for finding in report.of("density"):
            for element, rho in finding.detail["densities"].items():
                root = model.body(element.split("'")[1]).id
                bodies = np.flatnonzero(model.body_weldid == root)
                volume = 0.0
                for g in np.flatnonzero(np.isin(model.geom_bodyid, bodies)
                                        & geometry.collidable(model)):
                    if model.geom_type[g] == geometry.MESH:
                        mesh = model.mesh(model.geom_dataid[g]).name
                        hull, enclosed = mujoco_volumes(labkit.corpus.path(name), mesh)
                        volume += enclosed if geometry.volume_is_defined(
                            model, model.geom_dataid[g]) else hull
                        continue
                    spec = mujoco.MjSpec()
                    body = spec.worldbody.add_body()
                    body.add_freejoint()
                    body.add_geom(type=mujoco.mjtGeom(int(model.geom_type[g])),
                                  size=model.geom_size[g], density=1)
                    volume += float(spec.compile().body_mass[1])
                mass = float(model.body_mass[bodies].sum())
                assert rho == pytest.approx(mass / volume, rel=1e-6), (name, element)
                confirmed += 1
    assert confirmed >= 3
