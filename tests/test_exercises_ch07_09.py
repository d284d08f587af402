"""The checkers of chapters 07–09 (``labkit.exercises.ch07`` … ``ch09``), without notebooks.

Every exercise is graded the way the feedback cell and ``labkit grade`` grade it: the
answers are read from a namespace by ``answers_of`` (as JSON data) and scored by
``spec(number).grade``.  For each exercise a reference answer derived here from first
principles earns full marks, a blank submission scores 0 and says what to define, and a
typical wrong answer loses points with its specific message.  The capstone (9.4) is also run
on several different correct parameter sets, on wrong ones that must each fail exactly their
own requirement, and on namespaces that try to forge the grade.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import mujoco
import nbformat
import numpy as np
import pytest

import labkit
from labkit.exercises import answers_of, ch09, spec

COURSE = Path(__file__).resolve().parents[1] / "course"


def grade(number, namespace):
    """Exercise ``number`` graded on the answers in ``namespace``, as a notebook would."""
    return spec(number).grade(answers_of(number, namespace))


def messages(graded):
    return "\n".join(f"{r.requirement}: {r.message} {r.hint}" for r in graded.results)


# -- what the chapters register ---------------------------------------------------------------------

EXERCISES = {  # id: (title, points), as the chapters have always stated them
    "7.1": ("Separate the arm from the frame with bitmasks", 3),
    "7.2": ("A bounce with a given restitution", 3),
    "7.3": ("Decompose a slot", 3),
    "8.1": ("Glove commands for a requested pose", 2),
    "8.2": ("Slew rates for a synchronized close", 2),
    "8.3": ("Tolerance and iterations for a projection budget", 3),
    "9.1": ("A lift that holds its height", 2),
    "9.2": ("The minimum grip force", 2),
    "9.3": ("A solref for a target depth", 2),
    "9.4": ("Lift the cube and hold it", 10),
}


def test_the_chapters_register_their_exercises():
    for chapter in (7, 8, 9):
        found = {s.id: (s.title, s.points) for s in labkit.exercises.chapter_specs(chapter)}
        assert found == {k: v for k, v in EXERCISES.items() if k.startswith(f"{chapter}.")}


@pytest.mark.parametrize("name", ["07_contact_tuning", "08_kinematic_drive", "09_capstone"])
def test_feedback_cells_are_one_line_and_the_helpers_come_from_labkit(name):
    notebook = nbformat.read(COURSE / f"{name}.ipynb", as_version=4)
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    chapter = str(int(name[:2]))
    for number in (n for n in EXERCISES if n.split(".")[0] == chapter):
        pattern = re.compile(rf'labkit\.exercise\("{re.escape(number)}"\)\s*(#.*)?')
        assert sum(bool(pattern.fullmatch(s.strip())) for s in code) == 1, number
    source = "\n".join(code)
    assert "with labkit.exercise(" not in source and "ex.require" not in source
    for helper in ("jitter_of", "bounce", "restitution", "decomposed", "slot", "tray", "finger_gaps", "build",
                   "run", "rig_slip", "table_depth_for", "panels"):
        assert not re.search(rf"^def {helper}\(", source, re.MULTILINE), f"{name} defines {helper} itself"
    for constant in ("LIMITS", "START", "SCRIPT", "CLOSE", "RIG"):
        assert not re.search(rf"^{constant} = [{{(d]", source, re.MULTILINE), f"{name} defines {constant}"


@pytest.mark.parametrize("number", EXERCISES)
def test_a_blank_submission_scores_zero_and_says_what_to_define(number):
    graded = grade(number, {})
    assert graded.score == 0 and not graded.passed
    first = next(iter(spec(number).answers))
    assert f"you have not defined `{first}` yet" in messages(graded)


# -- chapter 07 ---------------------------------------------------------------------------------------

MASKS = {"frame": (2, 2),      # bit 2 alone: shares nothing with the arm's default 1/1
         "arm": (1, 1),
         "probe": (1, 3)}      # accepts bits 1 and 2: the frame (2), the floor and the arm (1) reach it


def test_7_1_reference():
    assert grade("7.1", {"masks": MASKS}).score == 3


def test_7_1_masking_the_frame_alone_loses_the_probe():
    # the jitter is gone, but so is the probe: the two count together, so this earns nothing
    graded = grade("7.1", {"masks": {"frame": (2, 2)}})
    assert graded.score == 0
    text = messages(graded)
    assert "frame–probe never collide" in text and "the probe left the frame" in text


def test_7_1_the_dodges_earn_nothing():
    # changing nothing keeps the probe on the frame (it scored 1 of 3), switching the frame's
    # collisions off stops the jitter: neither is the lesson
    for masks, says in (({}, "the arm still jitters"), ({"frame": (0, 0)}, "the probe left the frame"),
                        ({"frame": (1, 1), "arm": (1, 1), "probe": (1, 1)}, "the arm still jitters")):
        graded = grade("7.1", {"masks": masks})
        assert graded.score == 0 and says in messages(graded), masks


def test_7_1_only_bitmasks_of_the_three_geoms():
    graded = grade("7.1", {"masks": {**MASKS, "floor": (2, 2)}})
    assert graded.score == 0 and "the floor keeps contype = conaffinity = 1" in messages(graded)
    assert grade("7.1", {"masks": {**MASKS, "floor": (1, 1)}}).score == 3          # restating it is fine
    graded = grade("7.1", {"masks": {"frame": (2, 2.5)}})
    assert graded.score == 0 and "whole numbers" in messages(graded)
    graded = grade("7.1", {"masks": {"frame": (-1, 2)}})
    assert graded.score == 0 and "from 0 to" in messages(graded)


def test_7_1_the_frame_keeps_to_its_own_bit():
    # the published model reserves bit 2 for the frame; the same fix on bit 4 is another student's
    on_bit_4 = {"frame": (8, 8), "arm": (1, 1), "probe": (1, 9)}
    graded = grade("7.1", {"masks": on_bit_4})
    assert graded.score == 0 and "frame uses bit 4; probe uses bit 4" in messages(graded)
    assert spec("7.1").grade(answers_of("7.1", {"masks": on_bit_4}), values={"bit": 4}).score == 3
    assert spec("7.1").grade(answers_of("7.1", {"masks": MASKS}), values={"bit": 4}).score == 0


def push_only_restitution(zeta):
    """e(ζ) of a spring–damper that lets go when its force would pull (derived independently)."""
    s = math.sqrt(1 - zeta**2)
    return math.exp(-zeta / s * (math.pi - math.atan2(2 * zeta * s, 1 - 2 * zeta**2)))


def damping_ratio_for(e):
    low, high = 1e-6, 0.999                      # e decreases monotonically in ζ
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if push_only_restitution(middle) > e else (low, middle)
    return (low + high) / 2


def test_7_2_reference_needs_the_direct_format():
    # the ball has priority 0, like the floor: a standard solref is averaged with the floor's
    # (0.02, 1), so its damping ratio is at least 0.5 (e ≈ 0.3); a direct one is kept as written
    zeta = damping_ratio_for(0.5)
    k = 1 / (0.02 * zeta) ** 2
    assert grade("7.2", {"bounce_solref": np.array([-k, -2 * zeta * math.sqrt(k)])}).score == 3
    k = 4e4                                          # another resolved stiffness (ω0·Δt = 0.04)
    assert grade("7.2", {"bounce_solref": (-k, -2 * zeta * math.sqrt(k))}).score == 3
    graded = grade("7.2", {"bounce_solref": (0.02, zeta)})          # the right ζ, standard format
    assert graded.score == 0
    assert "averaged your solref with the floor's [0.02, 1] and used [0.02, 0.628]" in messages(graded)


def test_7_2_the_floor_solref_is_the_models():
    from labkit.exercises import ch07

    model, _ = labkit.load("tuning_bounce")
    assert tuple(model.geom("floor").solref) == ch07.FLOOR_SOLREF
    assert model.geom("ball").priority[0] == 1 and model.geom("floor").priority[0] == 0
    e_mixed = ch07.bounce((0.02, 0.2), priority=0)[0]                # (0.02, 0.6) once mixed
    assert e_mixed == pytest.approx(ch07.bounce((0.02, 0.6))[0], abs=0.02)


def test_7_2_the_textbook_damping_ratio_is_recognised():
    zeta = math.log(2) / math.sqrt(math.pi**2 + math.log(2) ** 2)   # e^(−πζ/√(1−ζ²)) = 0.5
    k = 1 / (0.02 * zeta) ** 2
    graded = grade("7.2", {"bounce_solref": (-k, -2 * zeta * math.sqrt(k))})
    assert graded.score == 0
    assert "comes from the textbook formula" in messages(graded)


def test_7_2_needs_two_numbers():
    graded = grade("7.2", {"bounce_solref": (0.02, 0.2, 1)})
    assert graded.score == 0 and "should have 2 entries" in messages(graded)
    graded = grade("7.2", {"bounce_solref": [[0.02, 0.2], [0.02, 0.2]]})
    assert graded.score == 0 and "it has shape (2, 2)" in messages(graded)


def test_7_2_solrefs_that_are_no_solref_are_refused_before_the_drop():
    for junk, says in (([0, 0], "mixed-sign"), ([0.02, -0.2], "mixed-sign"),
                       ([1e300, 1], "timeconst should be at most"),
                       ([0.02, 50], "dampratio should be at most"),
                       ([-1e300, -1], "stiffness should be at most")):
        graded = grade("7.2", {"bounce_solref": junk})
        assert graded.score == 0 and says in messages(graded), junk
    assert grade("7.2", {"bounce_solref": [1, 1]}).score == 0          # a valid solref, no bounce of 0.5


# the slot: outside 75 × 30 mm, inside 50 × 20 mm, 50 mm tall; long walls span the full length
SLOT = [((0, -0.0125, 0.025), (0.0375, 0.0025, 0.025)), ((0, 0.0125, 0.025), (0.0375, 0.0025, 0.025)),
        ((-0.03125, 0, 0.025), (0.00625, 0.01, 0.025)), ((0.03125, 0, 0.025), (0.00625, 0.01, 0.025))]


def test_7_3_reference():
    assert grade("7.3", {"slot_walls": SLOT}).score == 3


def test_7_3_typical_mistakes():
    # the short walls forgotten: pushed along x, the peg slides out of the open ends (it used to
    # earn 2 of 3, while the check only asked that its centre stay within the inside's outline)
    graded = grade("7.3", {"slot_walls": SLOT[:2]})
    assert graded.score == 0 and "no wall along x" in messages(graded) and "probe heights" in messages(graded)
    full = [((0, 0, 0.025), (0.0375, 0.015, 0.025))]                       # one box: the hull again
    graded = grade("7.3", {"slot_walls": full})
    assert graded.score < 3 and "mm deep" in messages(graded)
    doubled = [(c, tuple(2 * h for h in half)) for c, half in SLOT]        # full sizes given as half
    assert grade("7.3", {"slot_walls": doubled}).score < 3
    # walls 4 mm too far out along x hold the peg, but not where the slot's inside ends
    wide = [((0, -0.0125, 0.025), (0.04, 0.0025, 0.025)), ((0, 0.0125, 0.025), (0.04, 0.0025, 0.025)),
            ((-0.03325, 0, 0.025), (0.00625, 0.01, 0.025)), ((0.03325, 0, 0.025), (0.00625, 0.01, 0.025))]
    graded = grade("7.3", {"slot_walls": wide})
    assert graded.score == 1 and "x = 27 mm" in messages(graded) and "ends at x = 25 mm" in messages(graded)
    # on the slot of a 54 mm inside, the same walls are the right ones
    values = {"length": 0.054, "width": 0.02, "height": 0.05}
    assert spec("7.3").grade(answers_of("7.3", {"slot_walls": wide}), values=values).score == 3


def test_7_3_the_two_trivial_slots_earn_nothing():
    # one solid box (the hull again) holds the probes on its rim: that scored 1 of 3
    graded = grade("7.3", {"slot_walls": [((0, 0, 0.025), (0.0375, 0.015, 0.025))]})
    assert graded.score == 0 and "it counts only once the peg drops into the slot" in messages(graded)
    # no walls at all (one speck far away) let the peg drop in, but not stay
    graded = grade("7.3", {"slot_walls": [((0.4, 0.4, 0.01), (0.001, 0.001, 0.001))]})
    assert graded.score == 0 and "pushed, the peg met no wall along x, no wall along y" in messages(graded)
    graded = grade("7.3", {"slot_walls": [((0, 0, 0.025), (1e300, 1, 1))]})
    assert graded.score == 0 and "within ±0.5 m" in messages(graded)


def test_7_3_checks_the_shape_of_the_walls():
    for wrong in ([1, 2, 3], [(0, 0, 0.025)], [((0, 0), (1, 1))]):
        graded = grade("7.3", {"slot_walls": wrong})
        assert graded.score == 0 and "shape (n, 2, 3)" in messages(graded)
    graded = grade("7.3", {"slot_walls": [((0, 0, 0.025), (0.01, 0, 0.025))]})
    assert graded.score == 0 and "must be positive" in messages(graded)


def test_tray_writes_the_hub_before_or_after_the_cubes():
    from labkit.exercises import ch07

    first, last = ch07.tray(9, hub_first=True), ch07.tray(9, hub_first=False)
    assert first.nv == last.nv == 6 * 10 and first.nbody == last.nbody == 11      # world, tray, 9 cubes
    assert first.body(1).name == "tray" and last.body(10).name == "tray"
    assert first.opt.jacobian == mujoco.mjtJacobian.mjJAC_SPARSE
    assert ch07.tray(1, True, mujoco.mjtJacobian.mjJAC_AUTO).opt.jacobian == mujoco.mjtJacobian.mjJAC_AUTO
    tray = first.body("tray")
    assert tray.mass[0] == 5 and first.geom_size[first.body_geomadr[tray.id]].tolist() == [0.6, 0.6, 0.02]
    cubes = first.body_pos[2:]                       # 8 per row, 12 cm between centres
    assert cubes[:, 0].tolist() == pytest.approx([0.12 * (i % 8) - 0.42 for i in range(9)])
    assert cubes[:, 1].tolist() == pytest.approx([-0.42] * 8 + [-0.30])
    # each 8 cm cube stands on the tray's top (z = 0.02), the tray on the floor (z = -0.02)
    assert cubes[:, 2] - 0.04 == pytest.approx(np.full(9, 0.02))
    data = mujoco.MjData(first)
    mujoco.mj_step(first, data, 10)
    assert np.abs(data.qvel).max() < 1e-2                  # resting, not falling


# -- chapter 08 ---------------------------------------------------------------------------------------

CHANNELS = ("lift", "index_mcp", "index_pip", "middle_mcp", "middle_pip", "thumb_yaw", "thumb_mcp")
PINCH = {"lift": 0.02, "index_mcp": 0.9, "middle_mcp": 0.6, "middle_dip": 0.96, "thumb_yaw": -0.2,
         "thumb_ip": 0.7}                             # the exercise's pose, as the chapter states it
INDEX_TIP = (0.0489, 0.012, 0.1065)                   # m: where the planner wants the index fingertip


def index_pip_for_the_tip():
    """index_pip (rad) that puts the index fingertip nearest INDEX_TIP with the rest of PINCH: the
    tip of the index_dist capsule, placed by MuJoCo's kinematics, over a 0.1 mrad grid."""
    from labkit.exercises import ch08

    model, data = labkit.load("hand")
    pose = {**PINCH, "middle_pip": 1.2, "thumb_mcp": 0.7}   # the mimics' leaders (ratios 0.8 and 1)
    pose.pop("middle_dip"), pose.pop("thumb_ip")
    pips = np.linspace(0.0, 1.6, 16001)
    misses = []
    for pip in pips:
        for name, value in {**pose, "index_pip": pip, "index_dip": 0.8 * pip, "middle_dip": 0.96,
                            "thumb_ip": 0.7}.items():
            data.joint(name).qpos[0] = value
        mujoco.mj_kinematics(model, data)
        misses.append(np.linalg.norm(ch08.fingertips(model, data)[0] - INDEX_TIP))
    return float(pips[int(np.argmin(misses))]), float(min(misses))


def glove_for(pose, divide_mimics=True, reverse_lift=False, index_pip=0.83):
    """Commands (0–255, CHANNELS order) for ``pose``, by the exercise's rule, with ranges and
    couplings read from hand.xml: a mimic's target becomes its leader's, divided by the ratio."""
    model, _ = labkit.load("hand")
    leader_targets = {}
    for e in range(model.neq):                      # joint equalities: follower = c0 + c1·leader
        follower, leader = model.joint(model.eq_obj1id[e]).name, model.joint(model.eq_obj2id[e]).name
        if follower in pose:
            ratio = model.eq_data[e, 1] if divide_mimics else 1.0
            leader_targets[leader] = (pose[follower] - model.eq_data[e, 0]) / ratio
    glove = []
    for name in CHANNELS:
        lo, hi = model.joint(name).range
        value = pose.get(name, leader_targets.get(name, index_pip if name == "index_pip" else None))
        backwards = name != "thumb_yaw" and (name != "lift" or reverse_lift)
        glove.append(float(255 * ((hi - value) if backwards else (value - lo)) / (hi - lo)))
    return glove


def test_8_1_reference():
    from labkit.exercises import ch08

    assert dict(ch08.PINCH) == PINCH and ch08.INDEX_TIP == INDEX_TIP
    pip, miss = index_pip_for_the_tip()
    assert pip == pytest.approx(0.83, abs=2e-3) and miss < 1e-4       # the point is given to 0.1 mm
    assert grade("8.1", {"glove": glove_for(PINCH, index_pip=pip)}).score == 2


def test_8_1_typical_mistakes():
    graded = grade("8.1", {"glove": glove_for(PINCH, divide_mimics=False)})    # the ratio forgotten
    assert graded.score == 1 and "wrong for: middle_dip (0.768, not 0.96)" in messages(graded)
    graded = grade("8.1", {"glove": glove_for(PINCH, reverse_lift=True)})    # the tip moves with the lift
    assert graded.score == 0 and "wrong for: lift" in messages(graded)
    # the mapping right, index_pip guessed instead of measured: the tip misses
    graded = grade("8.1", {"glove": glove_for(PINCH, index_pip=0.7)})
    assert graded.score == 1 and "mm away" in messages(graded)
    graded = grade("8.1", {"glove": [300] * 7})
    assert graded.score == 0 and "within 0–255" in messages(graded)
    graded = grade("8.1", {"glove": glove_for(PINCH)[:6]})
    assert graded.score == 0 and "should have 7 entries" in messages(graded)


RELAXED = {"index_mcp": 0.3, "index_pip": 0.4, "middle_mcp": 0.5, "middle_pip": 0.2, "thumb_mcp": 0.6}


def test_8_2_reference_and_one_rate_for_all():
    from labkit.exercises import ch08

    assert dict(ch08.RELAXED) == RELAXED
    model, _ = labkit.load("hand")
    distance = {n: model.joint(n).range[1] - RELAXED[n] for n in RELAXED}   # to the upper limits
    # every rate scaled by one factor: the same path, so the fingertip speed scales with it; measure
    # the fastest fingertip of a 1 s close and scale the close to 0.285 m/s
    fastest = max(ch08.tip_speeds({n: d / 1.0 for n, d in distance.items()}).values())
    close_time = fastest / 0.285
    rates = {n: d / close_time for n, d in distance.items()}
    assert grade("8.2", {"gentle_slew": rates}).score == 2
    # the distance/rate formula alone (a synchronized close in 0.9 s) is too slow for the limit
    graded = grade("8.2", {"gentle_slew": {n: d / 0.9 for n, d in distance.items()}})
    assert graded.score == 0 and "the fastest fingertip peaks at 0.217 m/s" in messages(graded)
    graded = grade("8.2", {"gentle_slew": {n: d / 0.6 for n, d in distance.items()}})      # too fast
    assert graded.score == 0 and "peaks at 0.326 m/s" in messages(graded)
    graded = grade("8.2", {"gentle_slew": dict.fromkeys(RELAXED, 1.6 / 0.9)})   # one rate: no synchrony
    assert graded.score == 0 and "middle_pip arrives 0.336 s after the first" in messages(graded)
    graded = grade("8.2", {"gentle_slew": 1.6 / 0.9})
    assert graded.score == 0 and "should be a dict" in messages(graded)
    graded = grade("8.2", {"gentle_slew": {**rates, "index_dip": 1.0}})
    assert graded.score == 0 and "one rate (rad/s) for each flexion leader" in messages(graded)
    graded = grade("8.2", {"gentle_slew": {**rates, "thumb_mcp": -1.0}})
    assert graded.score == 0 and "must be positive" in messages(graded)


def test_8_2_tip_speeds_are_the_fingertips_finite_differences():
    from labkit.exercises import ch08

    model, data = labkit.load("hand")
    tips = ch08.fingertips(model, data)
    # the open hand: index and middle tips at the far ends of their fingers (x forward), the thumb's behind
    assert tips[0] == pytest.approx([0.04 + 0.045 + 0.028 + 0.02, 0.012, 0.165 - 0.002], abs=1e-12)
    assert tips[1] == pytest.approx([0.04 + 0.048 + 0.03 + 0.022, -0.012, 0.165 - 0.002], abs=1e-12)
    assert tips[2] == pytest.approx([-0.034 - 0.04 - 0.028, 0.0, 0.165 - 0.006], abs=1e-12)
    # one joint alone at 1 rad/s: the index tip moves on a circle about index_mcp, at 1 rad/s × radius
    speeds = ch08.tip_speeds({"index_mcp": 1.0}, start={}, goal={"index_mcp": 0.5})
    radius = 0.045 + 0.028 + 0.02
    chord = 2 * radius * math.sin(model.opt.timestep / 2) / model.opt.timestep   # one step's chord, per step
    assert speeds["index"] == pytest.approx(chord, rel=1e-9)
    assert speeds["middle"] == speeds["thumb"] == 0.0


def test_8_3_reference_and_the_seeds_values():
    # measured: at tolerance 0.02 mm, 4 halvings stop every finger within 0.02 mm of the rod and 3 do
    # not (a finger stays 0.026 mm short); §6's worst-case resolution, 1 mm / 2**n ≤ 0.02 mm, says 6
    assert grade("8.3", {"tolerance": 2e-5, "iterations": 4}).score == 3
    graded = grade("8.3", {"tolerance": 2e-5, "iterations": 6})
    assert graded.score == 2 and "iterations = 4 already does" in messages(graded)
    graded = grade("8.3", {"tolerance": 5e-4, "iterations": 12})             # the G20 notes' values
    assert graded.score == 0
    text = messages(graded)
    assert "distances [-0.5" in text and "it reached 0.5 mm" in text
    graded = grade("8.3", {"tolerance": 5e-5, "iterations": 10**6})
    assert graded.score == 0 and "from 0 to 64" in messages(graded)
    graded = grade("8.3", {"tolerance": 5e-5, "iterations": 4.5})
    assert graded.score == 0 and "whole number" in messages(graded)


def test_8_3_penetration_and_fewest_iterations_count_only_once_the_fingers_touch():
    # zero tolerance and zero iterations keep out any penetration and any cost: they score nothing
    graded = grade("8.3", {"tolerance": 0, "iterations": 0})
    assert graded.score == 0 and "counted only once every finger ends within 0.02 mm" in messages(graded)
    # resting 0.05 mm deep: outside the 0.02 mm band, whatever the iterations
    graded = grade("8.3", {"tolerance": 5e-5, "iterations": 5})
    assert graded.score == 0 and "distances [-0.04" in messages(graded)
    for junk in ({"tolerance": 1, "iterations": 1}, {"tolerance": 2, "iterations": 2}):
        assert grade("8.3", junk).score == 0


# -- chapter 09: the warm-ups -------------------------------------------------------------------------

CUBE, G = 0.2, 9.81      # kg, m/s²


def test_9_1_reference_and_a_sagging_lift():
    kp = 800.0                                           # sag m·g/kp = 2.5 mm
    assert grade("9.1", {"lift_kp": kp, "lift_kv": 2 * math.sqrt(kp * 0.9)}).score == 2
    kp = 200.0                                           # sag 9.8 mm
    graded = grade("9.1", {"lift_kp": kp, "lift_kv": 2 * math.sqrt(kp * 0.9)})
    # stability is a precondition: it no longer earns half the points on its own
    assert graded.score == 0 and re.search(r"it was up to 9\.\d+ mm away", messages(graded))
    assert [r.gate for r in graded.results] == [True, False]
    graded = grade("9.1", {"lift_kp": 800.0})
    assert graded.score == 0 and "you have not defined `lift_kv` yet" in messages(graded)


def test_9_1_a_lift_that_does_nothing_or_diverges_earns_nothing():
    for junk in ({"lift_kp": 0, "lift_kv": 0}, {"lift_kp": 1, "lift_kv": 1}, {"lift_kp": 50, "lift_kv": 20}):
        assert grade("9.1", junk).score == 0, junk
    graded = grade("9.1", {"lift_kp": 1e5, "lift_kv": 1e4})           # kv far above 2·m/h under Euler
    assert graded.score == 0 and "mjWARN_BADQACC" in messages(graded)
    graded = grade("9.1", {"lift_kp": 1e308, "lift_kv": 20})
    assert graded.score == 0 and "at most 100000 N/m" in messages(graded)


def test_9_2_reference_and_coulombs_grip():
    acceleration = 6 * 0.12 / 1.0**2                     # z = h·(3u² − 2u³): z'' peaks at 6h/T²
    coulomb = CUBE * (G + acceleration) / (2 * START["friction"])     # the elliptic rig's minimum (§4)
    # the pyramidal rig's minimum has no formula: bisect it, from 150 % (slips, §4) to 250 % (holds)
    low, high = 1.5 * coulomb, 2.5 * coulomb
    for _ in range(5):
        mid = (low + high) / 2
        low, high = (low, mid) if ch09.rig_slip(mid, cone="pyramidal") <= ch09.RIG_HOLDS else (mid, high)
    assert grade("9.2", {"grip_min": high}).score == 2
    # Coulomb's grip, the formula printed beside the exercise, is the elliptic rig's answer, not this one
    graded = grade("9.2", {"grip_min": coulomb})
    assert graded.score == 0 and "your force is too small" in messages(graded)
    assert "cone='pyramidal'" in messages(graded)
    # the bracket is one requirement: either side alone is met by a tiny or a huge force
    graded = grade("9.2", {"grip_min": 3 * coulomb})
    assert graded.score == 0 and "more than the minimum" in messages(graded)


def test_9_2_an_extreme_grip_earns_nothing():
    for grip, says in ((100, "more than the minimum"), (1e-3, "your force is too small"),
                       (1e308, "at most 100 N"), (0, "above 0 N"), (-2, "a normal force per pad")):
        graded = grade("9.2", {"grip_min": grip})
        assert graded.score == 0 and says in messages(graded), grip


def test_9_3_reference_and_a_clamped_timeconst():
    # four corners share the weight; the depth follows the stiffness 1/(dmax·timeconst·dampratio)²
    def depth(solref):
        return labkit.solver.rest_penetration(solref, labkit.solver.DEFAULT_SOLIMP, timestep=0.002,
                                              accel=G / 4)

    low_band, high_band = ch09.TABLE_BAND
    # the band lies below what dampratio 1 reaches with a timeconst MuJoCo keeps (≥ 2·timestep)
    assert depth((0.004, 1.0)) > high_band
    low, high = 0.1, 1.0                              # dampratio, at a timeconst of 5 ms
    for _ in range(50):
        ratio = (low + high) / 2
        low, high = (ratio, high) if depth((0.005, ratio)) < (low_band + high_band) / 2 else (low, ratio)
    assert grade("9.3", {"table_solref": (0.005, ratio)}).score == 2
    # a short timeconst at dampratio 1 would reach the band as written; MuJoCo raises it to 4 ms
    tau = 0.005 * ratio
    assert low_band <= depth((tau, 1.0)) == depth((0.004, 1.0))   # rest_penetration clamps too
    graded = grade("9.3", {"table_solref": (tau, 1.0)})
    assert graded.score == 0 and "raised it to 0.004 s" in messages(graded)
    assert "it rests 4.37 µm deep" in messages(graded)
    graded = grade("9.3", {"table_solref": (0.02, -1.0)})
    assert graded.score == 0 and "mixed-sign" in messages(graded)


def test_9_3_a_bouncing_cube_has_no_resting_depth():
    # timeconst·dampratio = 3 ms as in the reference, but dampratio 0.3: the stiff contact bounces
    predicted = labkit.solver.rest_penetration((0.01, 0.3), labkit.solver.DEFAULT_SOLIMP, timestep=0.002,
                                               accel=G / 4)
    assert ch09.TABLE_BAND[0] <= predicted <= ch09.TABLE_BAND[1]
    graded = grade("9.3", {"table_solref": (0.01, 0.3)})
    assert graded.score == 0 and "not at rest after 0.5 s" in messages(graded)


def test_9_3_a_timeconst_used_as_written_counts_only_at_the_right_depth():
    # any long timeconst is used as written: [1, 1] and START's solref scored 1.33 of 2
    for junk in ((1, 1), (0.02, 1), (0.5, 0.5)):
        graded = grade("9.3", {"table_solref": junk})
        assert graded.score == 0 and "counted only once the depth is right" in messages(graded), junk
    graded = grade("9.3", {"table_solref": (1e300, 1)})
    assert graded.score == 0 and "timeconst should be at most 1 s" in messages(graded)


# -- chapter 09: the capstone -------------------------------------------------------------------------

# The capstone's limits and starting point as the chapter states them (duplicated on purpose:
# changing them in labkit must be a deliberate act that updates this file too).
LIMITS = {"min_lift": 0.100, "max_slip": 0.002, "max_penetration": 0.001, "max_peak_force": 15.0,
          "max_jitter": 0.005}
START = {"friction": 0.5, "condim": 3, "solref": (0.02, 1), "solimp": (0.8, 0.9, 0.001, 0.5, 2),
         "cone": "pyramidal", "impratio": 1, "noslip_iterations": 0, "timestep": 0.002,
         "integrator": "Euler", "finger_kp": 200, "finger_kv": 2, "lift_kp": 50, "lift_kv": 20}

# The requirement each feedback line checks, recognised by its wording, and its weight (the
# three that the starting point fails count double).  Stability is a precondition (no weight:
# without it nothing is scored); the lift is the task, and so is the shelf, a precondition that
# a lift aimed at the script's target meets by itself; the four limits after it count only once
# the cube was lifted and held (a cube left on the table meets all four).
REQUIREMENTS = {"stable": "stays stable", "lift": "up during the hold", "shelf": "on average over the hold",
                "slip": "slips at most", "penetration": "overlaps more than", "peak_force": "presses harder",
                "jitter": "shakes by"}
WEIGHTS = {"stable": 0, "lift": 2, "shelf": 0, "slip": 2, "penetration": 2, "peak_force": 1, "jitter": 1}
GATES = {"stable", "shelf"}
AFTER_LIFT = {"slip", "penetration", "peak_force", "jitter"}
NOT_JUDGED = "not judged, because the cube was not lifted and held"

# A good set the wrong ones below are one change away from.
BASE = {**START, "friction": 1.0, "cone": "elliptic", "impratio": 10, "solref": (0.01, 1),
        "solimp": (0.95, 0.99, 0.001, 0.5, 2), "finger_kp": 300, "finger_kv": 10,
        "lift_kp": 2000, "lift_kv": 100}

CORRECT = {
    "elliptic cone, impratio 10": BASE,
    "pyramidal cone with noslip": {**START, "friction": 0.8, "noslip_iterations": 10, "solref": (0.012, 1),
                                   "solimp": (0.99, 0.999, 0.001, 0.5, 2), "finger_kp": 200, "finger_kv": 8,
                                   "lift_kp": 1000, "lift_kv": 60},
    "torsional friction at 1 ms": {**START, "friction": 0.6, "condim": 4, "cone": "elliptic", "impratio": 100,
                                   "solref": (0.005, 1), "solimp": (0.9, 0.95, 0.001, 0.5, 2),
                                   "finger_kp": 400, "finger_kv": 15, "lift_kp": 3000, "lift_kv": 150,
                                   "timestep": 0.001},
    "direct-format solref": {**START, "friction": 1.2, "cone": "elliptic", "impratio": 20,
                             "solref": (-20000, -200), "solimp": (0.95, 0.99, 0.001, 0.5, 2),
                             "finger_kp": 250, "finger_kv": 10, "lift_kp": 1500, "lift_kv": 80},
    "implicitfast, heavy damping": {**BASE, "finger_kv": 150, "integrator": "implicitfast"},
    "low friction, firm grip": {**BASE, "friction": 0.3, "impratio": 50, "finger_kp": 400, "finger_kv": 15},
    "the chapter's reference": {**START, "friction": 1.0, "cone": "elliptic", "impratio": 20,
                                "solref": (0.008, 1), "solimp": (0.95, 0.99, 0.001, 0.5, 2),
                                "finger_kp": 240, "finger_kv": 12, "lift_kp": 1500, "lift_kv": 90},
}

WRONG = {  # name: (parameters, the requirement their trial fails, exactly)
    "slipping": ({**BASE, "cone": "pyramidal", "impratio": 1}, {"slip"}),
    "sinking": ({**BASE, "solref": (0.05, 1), "solimp": (0.9, 0.95, 0.001, 0.5, 2), "noslip_iterations": 10},
                {"penetration"}),
    "jittering": ({**BASE, "finger_kv": 0}, {"jitter"}),
    "crushing": ({**BASE, "finger_kp": 800}, {"peak_force"}),
    "sagging": ({**BASE, "lift_kp": 50, "lift_kv": 20}, {"lift"}),
}


def graded_failures(measured):
    """The requirements the checker fails for a trial that fails ``measured``: a cube that was
    not lifted fails the lift, and every limit after it is not judged."""
    return measured | AFTER_LIFT if "lift" in measured else measured


def failures(report):
    """The requirements a report fails, by this file's copy of the limits."""
    failed = set()
    if report.unstable:
        failed.add("stable")
    if report.lift < LIMITS["min_lift"]:
        failed.add("lift")
    for name in ("slip", "penetration", "peak_force", "jitter"):
        if getattr(report, name) > LIMITS[f"max_{name}"]:
            failed.add(name)
    return failed


def capstone(namespace):
    """Grade 9.4 on ``namespace``: (score, {requirement: (passed, message)}, feedback text)."""
    graded = grade("9.4", namespace)
    results = {}
    for r in graded.results:
        key = next((n for n, words in REQUIREMENTS.items() if words in r.requirement), r.requirement)
        results[key] = (r.passed, r.message)
    return graded.score, results, graded.text()


@pytest.fixture(scope="module")
def start_report():
    """The graded trial of the starting parameters (shared: several tests read it)."""
    return ch09.run(START)


def test_the_package_states_these_limits_read_only():
    assert dict(ch09.LIMITS) == LIMITS and dict(ch09.START) == START
    assert [(k, w) for k, _, w in ch09.requirements()] == list(WEIGHTS.items())
    assert set(ch09.GATES) == GATES and set(ch09.AFTER_LIFT) == AFTER_LIFT
    with pytest.raises(TypeError):
        ch09.LIMITS["min_lift"] = 0                    # type: ignore[index]
    with pytest.raises(AttributeError):
        ch09.LIMITS.update(min_lift=0)                 # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        ch09.SCRIPT["lift"]["lift"] = 0.5              # type: ignore[index]
    text = ch09.limits_text()
    for key, statement, weight in ch09.requirements():
        assert (f"required before any points count: {statement}" if key in GATES
                else f"{weight:g} × {statement}") in text
    assert all(key in text for key in LIMITS)
    # the four limits after the lift are listed under the line that says so
    after = text.index("counted only once the cube was lifted and held")
    listed = ch09.requirements()
    assert all(text.index(statement) > after for key, statement, _ in listed if key in AFTER_LIFT)
    assert text.index("the cube stays at least 100 mm up") < after
    assert "on average over the hold the cube is at most 120 mm up" in text     # the published shelf


def test_start_restates_every_parameter_of_the_model_file():
    # moved from course/09_capstone.ipynb: build(START) must change nothing the file sets
    model, _ = labkit.load("capstone_gripper")
    restated, _ = ch09.build(START)
    for field in ("geom_friction", "geom_condim", "geom_solref", "geom_solimp", "actuator_gainprm",
                  "actuator_biasprm"):
        assert np.array_equal(getattr(model, field), getattr(restated, field)), field
    for option in ("cone", "impratio", "noslip_iterations", "timestep", "integrator"):
        assert getattr(model.opt, option) == getattr(restated.opt, option), option


def test_build_gives_the_pad_cube_contact_exactly_starts_parameters():
    # moved from course/09_capstone.ipynb (it tested labkit's configure, not MuJoCo): every geom gets
    # START's contact parameters, so MuJoCo's mixing of the pad's and the cube's returns them unchanged
    model, data = ch09.build(START)
    labkit.sim.run(model, data, duration=0.5, ctrl=labkit.grasp.script(model, **ch09.SCRIPT))
    pad, cube = model.geom("left_pad").id, model.geom("cube").id
    contact = next(c for c in data.contact[:data.ncon] if {c.geom1, c.geom2} == {pad, cube})
    assert list(contact.friction[:2]) == [START["friction"]] * 2
    assert list(contact.solref) == list(START["solref"]) and list(contact.solimp) == list(START["solimp"])


def test_the_rig_verdicts_and_its_cone():
    assert ch09.RIG_HOLDS == 0.0005
    assert ch09.RIG_SLIPS == 0.002                 # the capstone's slip limit
    assert ch09.RIG["cone"] == "elliptic" and ch09.RIG["noslip_iterations"] > 0
    coulomb = CUBE * (G + 6 * 0.12) / (2 * START["friction"])
    assert ch09.rig_slip(1.03 * coulomb) == ch09.rig_slip(1.03 * coulomb, cone="elliptic") <= ch09.RIG_HOLDS
    assert ch09.rig_slip(1.03 * coulomb, cone="pyramidal") >= ch09.RIG_SLIPS     # chapter 09 §4


def test_panels_draws_slip_penetration_and_height_against_their_limits(start_report):
    fig = ch09.panels([start_report, start_report], ["start", "again"])
    assert [ax.get_ylabel() for ax in fig.axes] == ["slip [mm]", "penetration [mm]", "cube height [mm]"]
    for ax, signal, limit in zip(fig.axes, ("slip", "penetration", "height"),
                                 ("max_slip", "max_penetration", "min_lift"), strict=True):
        trial, _, dashed, *dotted = ax.lines                    # two trials, the limit, two phase ends
        assert np.array_equal(trial.get_xdata(), start_report.recording.t)
        assert np.array_equal(trial.get_ydata(), 1e3 * start_report.recording[signal])        # mm
        assert list(dashed.get_ydata()) == [1e3 * LIMITS[limit]] * 2
        assert [line.get_xdata()[0] for line in dotted] == [0.5, 2.0]                         # s
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["start", "again"]


def test_the_starting_point_scores_nothing(start_report):
    # it scored 3.33 of 10: stability, force and jitter were met by a cube that never rose
    assert failures(start_report) == {"lift", "slip", "penetration"}
    score, results, text = capstone({"answer": START})
    assert score == 0
    assert {k for k, (ok, _) in results.items() if not ok} == {"lift"} | AFTER_LIFT
    assert all(NOT_JUDGED in results[k][1] for k in AFTER_LIFT)
    assert results["stable"][0] and "· required before any points count" in text


IDLE = {**START, "finger_kp": 0, "finger_kv": 0, "lift_kp": 0, "lift_kv": 0}    # a robot that does nothing


@pytest.mark.parametrize(("name", "answer", "says"), [
    # a robot that does nothing met slip, penetration, force and jitter: it scored 7.78
    ("idle", IDLE, NOT_JUDGED),
    ("idle with Coulomb friction", {**IDLE, "friction": 5.0, "cone": "elliptic", "noslip_iterations": 50},
     NOT_JUDGED),
    ("friction 1e300", {**START, "friction": 1e300}, "no material pair comes near 10"),       # scored 6.67
    ("a 2 s timestep", {**START, "timestep": 2.0}, "at most 10 ms"),                         # scored 4.44
    ("no friction", {**START, "friction": 0}, "should be above 0"),
    ("nothing changed", {}, NOT_JUDGED),
    ("a negative gain", {**BASE, "finger_kp": -300}, "a servo's kp is ≥ 0"),
    ("condim 2", {**BASE, "condim": 2}, "should be 1, 3, 4 or 6"),
    ("dmax of 1", {**BASE, "solimp": (0.95, 1.0, 0.001, 0.5, 2)}, "strictly between 0 and 1"),
    ("power below 1", {**BASE, "solimp": (0.95, 0.99, 0.001, 0.5, 0.5)}, "power is at least 1"),
    ("a zero width", {**BASE, "solimp": (0.95, 0.99, 0, 0.5, 2)}, "a positive length"),
    ("impratio below 1", {**BASE, "impratio": 0.5}, "impratio ≥ 1"),
    ("a fractional noslip", {**BASE, "noslip_iterations": 2.5}, "whole number"),
    ("an unknown integrator", {**BASE, "integrator": "Verlet"}, "MuJoCo's integrators"),
    ("a mixed-sign solref", {**BASE, "solref": (0.01, -1)}, "mixed-sign"),
    ("rolling friction a metre long", {**BASE, "friction": (1.0, 0.005, 1.0)}, "at most twice"),
])
def test_answers_without_the_lesson_score_nothing(name, answer, says):
    score, _, text = capstone({"answer": answer})
    assert score == 0 and says in text, f"{name}: {text}"


def test_capstone_trials_are_cached_on_the_validated_parameters():
    ch09._cached_trial.cache_clear()
    capstone({"answer": BASE})
    capstone({"answer": {**BASE, "condim": 3.0, "solref": [0.01, 1.0]}})     # the same data once validated
    assert ch09._cached_trial.cache_info().misses == 1


def test_editing_limits_in_the_notebook_changes_nothing():
    # the forgery tried on the old feedback cell: a slipping answer and laxer limits
    params, _ = WRONG["slipping"]
    forged = {"answer": params, "LIMITS": {**LIMITS, "min_lift": 0, "max_slip": 1, "max_penetration": 1},
              "limit": {}, "SCRIPT": {}, "START": {}}
    score, results, _ = capstone(forged)
    assert score == pytest.approx(10 * (1 - 2 / 8), abs=0.01) and not results["slip"][0]


def test_redefining_run_in_the_notebook_changes_nothing():
    perfect = SimpleNamespace(unstable=(), lift=0.12, slip=0.0, penetration=0.0, peak_force=1.0, jitter=0.0,
                              penetration_pair=("", ""))
    params, _ = WRONG["slipping"]
    forged = {"answer": params, "run": lambda params: perfect, "build": None, "grasp": None,
              "report": perfect, "_trial": lambda params: perfect}
    score, results, _ = capstone(forged)
    assert score == pytest.approx(10 * (1 - 2 / 8), abs=0.01)
    measured = labkit.fmt(1e3 * ch09.run(params).slip, 3)
    assert results["slip"][1] == f"the cube slipped {measured} mm, the limit is 2 mm"


def test_the_capstone_reads_only_answer():
    assert list(spec("9.4").answers) == ["answer"]
    data = answers_of("9.4", {"answer": ch09.START, "LIMITS": {}, "run": print})
    assert set(data) == {"answer"}
    assert data["answer"]["value"]["solref"] == [0.02, 1]      # plain JSON data


@pytest.mark.parametrize("name", CORRECT)
def test_different_correct_answers_all_pass(name):
    report = ch09.run(CORRECT[name])
    assert failures(report) == set(), f"{name}: {report}"
    score, results, text = capstone({"answer": CORRECT[name]})
    assert score == 10, text
    assert set(results) == set(REQUIREMENTS)


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_answer_fails_exactly_its_requirement(name):
    params, expected = WRONG[name]
    report = ch09.run(params)
    assert failures(report) == expected, f"{name}: {report}"
    score, results, text = capstone({"answer": params})
    assert {n for n, (ok, _) in results.items() if not ok} == graded_failures(expected)
    lost = sum(WEIGHTS[n] for n in graded_failures(expected)) / sum(WEIGHTS.values())
    assert score == pytest.approx(10 * (1 - lost), abs=0.01)
    if "lift" in expected:                     # the sagging lift: nothing after it is judged
        assert score == 0 and all(NOT_JUDGED in results[n][1] for n in AFTER_LIFT)
    (requirement,) = expected
    message = results[requirement][1]
    measured = {"slip": report.slip * 1e3, "penetration": report.penetration * 1e3,
                "jitter": report.jitter * 1e3, "peak_force": report.peak_force, "lift": report.lift * 1e3}
    assert labkit.fmt(measured[requirement], 3) in message, message        # says how much was measured
    limit = LIMITS["min_lift" if requirement == "lift" else f"max_{requirement}"]
    shown = limit if requirement == "peak_force" else 1e3 * limit
    assert labkit.fmt(shown, 3) in message or labkit.fmt(shown) in message, message   # and the limit
    assert "hint: §" in text                                               # and where the cure is


def test_the_lift_target_aims_the_lift_and_the_shelf_caps_it():
    # the published shelf is the script's own 0.12 m target: a lift aimed there settles below it
    assert ch09.SHELF == ch09.SCRIPT["lift"]["lift"] == 0.12 and ch09.SAG == 0.02
    named = {**BASE, "lift_target": 0.12}
    assert capstone({"answer": named})[0] == capstone({"answer": BASE})[0] == 10
    # aiming higher to cover the sag lifts the cube above the shelf: a precondition, so nothing counts
    score, results, text = capstone({"answer": {**START, "lift_target": 0.2}})
    assert score == 0 and results["lift"][0] and not results["shelf"][0]
    assert re.search(r"on average it was 1\d\d(\.\d+)? mm up", results["shelf"][1]) and "lift_target" in text
    for target, says in ((0.25, "at most 0.2 m"), (-0.01, "at least 0 m")):
        score, _, text = capstone({"answer": {**BASE, "lift_target": target}})
        assert score == 0 and says in text, text
    with pytest.raises(ValueError, match="lift_target"):
        ch09.run({**BASE, "lift_target": 0.3})
    # on a student's numbers the window is the shelf's: a lift aimed at the neighbouring shelf misses it
    values = {"cube_mass": 0.2, "shelf": 0.07, "sag": 0.005}
    kp = 4 * CUBE * G / 0.005                                # sag m·g/kp: a quarter of the 5 mm allowed
    aimed = {**BASE, "lift_kp": kp, "lift_kv": 2 * math.sqrt(kp * 0.9)}
    graded = spec("9.4").grade(answers_of("9.4", {"answer": {**aimed, "lift_target": 0.07}}), values=values)
    assert graded.score == 10, graded.text()
    for neighbour in (0.06, 0.08):
        graded = spec("9.4").grade(answers_of("9.4", {"answer": {**aimed, "lift_target": neighbour}}),
                                   values=values)
        assert graded.score == 0, graded.text()


def test_a_diverging_answer_is_told_so():
    with labkit.mujoco_warnings():
        score, results, text = capstone({"answer": {**BASE, "finger_kv": 150}})
    assert not results["stable"][0] and "mjWARN_BADQACC" in results["stable"][1]
    assert "implicitfast" in text and score == 0                  # a precondition: nothing else is judged
    assert set(results) == {"stable"}


def test_answers_the_grader_cannot_run_are_refused_with_a_reason():
    for answer, reason in (({**BASE, "timestep": 1e-5}, "at least 0.5 ms"),
                           ({**BASE, "fricton": 1.0}, "did you mean 'friction'"),
                           ({**BASE, "noslip_iterations": 10**6}, "at most 1000 noslip_iterations"),
                           ({**BASE, "cone": "elliptical"}, "'cone': should be 'pyramidal' or 'elliptic'"),
                           ("friction=1", "should be a dict")):
        score, _, text = capstone({"answer": answer})
        assert score == 0 and reason in text, text


def test_the_warm_ups_use_the_package_trial_not_the_notebooks():
    # 9.1–9.3 read only their declared answers: a namespace's START, RIG or run is ignored
    forged = {"START": {**START, "lift_kp": 1e4}, "RIG": {}, "run": None, "lift_kp": 200.0,
              "lift_kv": 2 * math.sqrt(200 * 0.9), "table_depth_for": lambda solref: 3e-5,
              "table_solref": (0.02, 1.0)}
    graded = grade("9.1", forged)
    assert graded.score == 0 and re.search(r"it was up to 9\.\d+ mm away", messages(graded))   # its own sag
    assert grade("9.3", forged).score < 2


def test_helpers_the_notebook_imports_behave_as_documented():
    from labkit.exercises import ch07, ch08

    model, _ = labkit.load("tuning_frame_mesh")
    rms, angle, data, rec = ch07.jitter_of(model)
    assert rms == pytest.approx(ch07.baseline_jitter()) and rms > 0.1 and isinstance(data, mujoco.MjData)
    assert angle < 0 and rec.t[-1] == pytest.approx(1.0)          # pushed up by the frame, over 1 s
    probe = model.geom("probe")
    sink = labkit.solver.rest_penetration(probe.solref, probe.solimp, timestep=model.opt.timestep)
    # the bar's top is read from the mesh, whose vertices MuJoCo stores in single precision
    assert ch07.probe_on_frame_height(model) == pytest.approx(0.315 + probe.size[0] - sink, abs=1e-7)
    assert ch07.restitution(0.2) == pytest.approx(push_only_restitution(0.2), rel=1e-12)
    hand, hand_data = labkit.load("hand")
    mujoco.mj_forward(hand, hand_data)
    assert ch08.finger_gaps(hand, hand_data).shape == (3,)
    assert dict(ch08.CLOSE) == {n: float(hand.joint(n).range[1]) for n in ch08.CLOSE}
    times = ch08.arrival_times(5.0, start={}, goal=ch08.CLOSE)       # from the open hand at 5 rad/s
    assert times == pytest.approx({n: v / 5.0 for n, v in ch08.CLOSE.items()}, abs=2 * hand.opt.timestep)
    # the § 1 edge scene: the arm hinged on the frame's body, that body hanging from each parent kind
    for parent in labkit.axes.PARENTS:
        frame_model, _ = labkit.load(ch07.frame_on(parent))
        arm = frame_model.body("arm")
        assert frame_model.body(int(arm.parentid[0])).name == "cell"
        weld = frame_model.body(int(frame_model.body("cell").weldid[0])).name
        assert weld == {"world": "world", "welded": "base"}.get(parent, "cell"), parent
    with pytest.raises(KeyError, match="parent must be one of"):
        ch07.frame_on("floating")
