"""Checkers of chapter 00 (start here): the pendulum of ``models/pendulum.xml``."""

from __future__ import annotations

from functools import lru_cache

import mujoco
import numpy as np

from .. import models
from ..display import fmt
from ..models import load
from ..recording import record
from ..sim import run
from .answers import NUMBER, number
from .core import Exercise, Param, checker

RELEASE = 0.5          # rad: the keyframe "tilted"
SWING = 0.2            # s: exercise 0.1 reads the pendulum after this much swing (published)
LOWER_BOB = 1.0        # m: exercise 0.2 clamps a second bob this far below the hinge
HIGH_RELEASE = 2.0     # rad: exercise 0.2 releases the two-bob pendulum from here (published)
KEEP = 0.5             # exercise 0.3: the amplitude kept after 3 s, ± KEEP_BAND (published)
KEEP_BAND = 0.1

# the variants.  0.1: any time before the first return (the period is ≈ 1.4 s), on a grid
# that never repeats the published height; 0.2: high releases only (below 1.2 rad the
# small-angle series is close enough to pass), 0.05 rad apart: the period then changes by
# 0.7-1.3 %, more than the 0.5 % tolerance; 0.3: 25-75 %, at least 15 points from the
# published 50 % so that the published damping (±10 points) never passes
SWING_PARAM = Param(SWING, 0.1, 0.6, 0.02, unit="s", label="how long it swings before you read it")
RELEASE_PARAM = Param(HIGH_RELEASE, 1.2, 2.6, 0.05, unit="rad", label="the release angle")
KEEP_PARAM = Param(KEEP, 0.25, 0.75, 0.05, unit="%", scale=0.01, gap=0.15,
                   label=f"the amplitude to keep after 3 s, as a share of the release angle, "
                         f"± {fmt(100 * KEEP_BAND)} points")


@lru_cache(maxsize=1)
def _pendulum_facts() -> tuple[float, float, float]:
    """(L, I, g) of the course pendulum: bob depth (m), inertia about the hinge (kg·m²),
    gravity (m/s²), read from the compiled model."""
    model, _ = load("pendulum")
    length = -model.geom("bob").pos[2]
    return float(length), float(model.dof_M0[0]), float(-model.opt.gravity[2])


def _period(model: mujoco.MjModel, data: mujoco.MjData, seconds: float) -> float:
    """Mean period (s) of the hinge ``swing`` from its zero crossings over ``seconds``."""
    swing = record(model, data, {"angle": data.joint("swing").qpos}, duration=seconds)
    return float(np.diff(swing.crossings("angle")).mean())


@lru_cache(maxsize=4)
def _two_bob_period(release: float = HIGH_RELEASE, bobs: int = 2) -> float:
    """The measured period (s) over 10 s of :func:`two_bob_pendulum` (``bobs=2``) or of the
    course pendulum (``bobs=1``), released from ``release`` rad (the same for every answer)."""
    model, data = two_bob_pendulum() if bobs == 2 else load("pendulum")
    data.joint("swing").qpos = release
    return _period(model, data, 10.0)


@lru_cache(maxsize=1)
def _undamped_period() -> float:
    """The measured period (s) of the undamped course pendulum over 3 s, from its keyframe."""
    return _period(*load("pendulum", keyframe="tilted"), 3.0)


@lru_cache(maxsize=64)
def _amplitude_ratio(damping: float) -> float:
    """The swing amplitude 3 s after release from the keyframe, as a fraction of the release
    angle, with joint damping ``damping`` (N·m·s/rad): the largest |angle| in the last half
    period (it holds one extremum).  Cached: the fuzz tests re-grade the same values."""
    model, data = load("pendulum", keyframe="tilted")
    model.dof_damping[model.joint("swing").dofadr[0]] = damping
    swing = record(model, data, {"angle": data.joint("swing").qpos}, duration=3.0)
    return float(np.abs(swing["angle"][swing.t > 3.0 - _undamped_period() / 2]).max() / RELEASE)


def swung_pendulum(seconds: float = SWING) -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The course pendulum released from its keyframe after ``seconds`` (s) of swing, with
    everything derived from that state (a final ``mj_forward``: after ``mj_step`` the
    positions in ``data`` still belong to the state before the last step)."""
    model, data = load("pendulum", keyframe="tilted")
    run(model, data, duration=seconds)
    mujoco.mj_forward(model, data)
    return model, data


@lru_cache(maxsize=32)
def _swung_angle(seconds: float) -> float:
    """The hinge angle (rad) of :func:`swung_pendulum` (the same for every answer)."""
    return float(swung_pendulum(seconds)[1].joint("swing").qpos[0])


@checker("0.1", "Read where the bob is now", points=1, answers={"tip_height": NUMBER},
         params={"swing": SWING_PARAM})
def _read_site(ex: Exercise) -> None:
    length, _, _ = _pendulum_facts()
    hinge = _swung_angle(ex.param("swing"))
    keyframe, straight_down = -length * np.cos(RELEASE), -length
    # rtol 1e-9: the same kinematics, round-off only
    ex.close("tip_height", -length * np.cos(hinge), rtol=1e-9, unit="m",
             hint="fresh_data holds the state now, and data.site(name).xpos a site's world position",
             mistakes={keyframe: "that is where the bob was at the keyframe; it has swung since",
                       straight_down: "that is the site's position in its body's frame (what the model "
                                      "holds), or the bob hanging straight down",
                       length * np.sin(hinge): "that is the sideways (x) offset, not the height",
                       hinge: "that is the hinge angle in radians, not a height"})


def two_bob_pendulum() -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The course pendulum with its rod extended to ``LOWER_BOB`` and a copy of the bob at the
    rod's end (the first bob stays where it was), at the tilted keyframe."""
    spec = models.spec("pendulum")
    bob = spec.geom("bob")
    spec.body("pendulum").add_geom(name="lower_bob", type=bob.type, size=bob.size, mass=bob.mass,
                                   rgba=bob.rgba, pos=[0, 0, -LOWER_BOB])
    spec.geom("rod").fromto = [0, 0, 0, 0, 0, -LOWER_BOB]
    spec.geom("floor").pos = [0, 0, -LOWER_BOB - 0.2]      # the floor out of the way
    return load(spec, keyframe="tilted")


@checker("0.2", "Time a swing from high up", points=2, answers={"long_period": NUMBER},
         params={"release": RELEASE_PARAM})
def _long_period(ex: Exercise) -> None:
    release = ex.param("release")
    length, hinge_inertia, gravity = _pendulum_facts()
    mass = float(load("pendulum")[0].body("pendulum").mass[0])   # each bob: the rod is massless
    own = hinge_inertia - mass * length**2                # a bob's inertia about its own centre
    depths = np.array([length, LOWER_BOB])
    small_angle = 2 * np.pi * np.sqrt(np.sum(mass * depths**2 + own) / (mass * gravity * depths.sum()))
    series = 1 + release**2 / 16 + 11 * release**4 / 3072   # section 2's series
    measured = _two_bob_period(release)
    # 0.5 %: a measurement over whole swings varies by far less (1e-9 between 4 and 10 s of
    # record); section 2's series stops at θ0⁴, which leaves out 0.6 % at 1.2 rad and 1.6 % at 2
    ex.close("long_period", measured, rtol=5e-3, unit="s",
             hint=f"build the pendulum with two_bob_pendulum(), set its hinge angle to "
                  f"{RELEASE_PARAM.show(release)}, record the angle for several swings and time them "
                  "as section 2 did",
             mistakes={small_angle * series:
                       "that is section 2's formula and its series, which was checked at 0.5 rad; "
                       "this high up the terms it leaves out are no longer small: time the swing itself",
                       small_angle: "that is the small-angle period; a swing from this high is much slower",
                       _two_bob_period(RELEASE):
                       "that is a swing from the keyframe's 0.5 rad; release it from your angle",
                       _two_bob_period(release, 1):
                       "that is the one-bob pendulum of section 2; time the two-bob one",
                       measured / 2: "that is half a swing: time from one upward zero crossing to the next"})


# 0 ≤ b ≤ 10 N·m·s/rad: negative damping feeds energy in, and beyond critical damping, 2·√(I·m·g·L)
# ≈ 2.2 N·m·s/rad for I = 0.251 kg·m², m·g·L = 4.9 N·m, the pendulum no longer swings at all; the
# answer is ≈ 0.12, and 10 leaves room for any overdamped try, which is told its amplitude
DAMPING = number(0, 10, unit=" N·m·s/rad",
                 why="negative damping feeds energy in, and beyond about 2.2 N·m·s/rad (critical "
                     "damping) the pendulum no longer swings")


@checker("0.3", "Damp the pendulum", points=2, answers={"damping": DAMPING}, params={"keep": KEEP_PARAM})
def _damp(ex: Exercise) -> None:
    ratio = _amplitude_ratio(float(ex.value("damping")))
    low, high = ex.param("keep") - KEEP_BAND, ex.param("keep") + KEEP_BAND
    ex.require(low - 1e-12 <= ratio <= high + 1e-12,
               f"amplitude after 3 s is {fmt(100 * low)}–{fmt(100 * high)} % of the release angle",
               failure=f"it is {fmt(100 * ratio)} %",
               hint=("more damping makes the swing die out faster: " if ratio > high else
                     "less damping lets it swing longer: ")
               + "record the angle for 3 s with a few values and read how far the last swing goes")
