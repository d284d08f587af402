"""A position servo's step response on chapter 03's arm, as a pure function of its gains.

The arm is ``models/actuator_arm.xml`` (a 1 kg ball 0.5 m out on a shoulder hinge, gravity
on) with its servo made a plain ``<position kp kv gear>``: no class, no ``ctrlrange``, no
``forcerange``.  It is commanded ``ctrl = gear·target`` (the servo acts on the actuator
length ``gear·q``), so the joint's target is ``target`` whatever the gear.  As a
second-order system it has ``ω = gear·√(kp/I)`` and ``ζ = kv·gear²/(2·√(kp·gear²·I))``, and
gravity makes it rest short of the target, at ``target − m·g·L·cos(target)/(kp·gear²)``
(the balance of chapter 03 §6, linearised once).

:func:`servo_step` simulates it; :func:`step_figure` draws it, for chapter 03's sliders.
Both read nothing but their arguments and the model file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["ARM_MODEL", "StepResponse", "servo_step", "step_figure"]

ARM_MODEL = "actuator_arm"
"""The course model the step response runs on (its actuator ``servo`` is replaced)."""


@dataclass(frozen=True)
class StepResponse:
    """One step of the arm's position servo (see :func:`servo_step`).

    t: sample times (s), shape (T,); angle: the shoulder angle (rad) at those times;
    target: the commanded joint angle (rad); omega: the natural frequency ``gear·√(kp/I)``
    (rad/s); zeta: the damping ratio; omega_h: ``omega·timestep``, the explicit-Euler
    stability number (the undamped servo is unstable above 2); rest: the predicted rest
    angle under gravity (rad).
    """

    t: np.ndarray
    angle: np.ndarray
    target: float
    omega: float
    zeta: float
    omega_h: float
    rest: float


def servo_step(kp: float = 50.0, kv: float = 5.0, gear: float = 1.0, *, target: float = 0.5,
               duration: float = 1.5) -> StepResponse:
    """Simulate the arm's position servo stepping from 0 to ``target``.

    Args:
      kp: the servo's stiffness, N·m/rad at gear 1 (force = kp·(ctrl − gear·q) − kv·gear·q̇).
      kv: its damping, N·m·s/rad at gear 1 (0 allowed).
      gear: the transmission's gear ratio (> 0); the joint sees kp·gear² and kv·gear².
      target: the joint angle to reach, rad (the control is ``gear·target``).
      duration: simulated time, s.

    Returns:
      A :class:`StepResponse`: the recorded angle with ω, ζ, ω·h and the predicted rest.

    Example: ``labkit.actuation.servo_step(kp=200, kv=10).rest`` → ``0.4785`` (rad, 0.5 wanted).
    """
    import mujoco

    from ..models import load, spec
    from ..recording import record

    if kp <= 0 or kv < 0 or gear <= 0:
        raise ValueError(f"kp > 0, kv ≥ 0 and gear > 0 are needed (got kp={kp}, kv={kv}, gear={gear})")
    edited = spec(ARM_MODEL)
    servo = edited.actuator("servo")
    servo.set_to_position(kp=kp, kv=kv)
    servo.gear[0] = gear
    servo.ctrllimited = servo.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
    model, data = load(edited)
    run = record(model, data, {"angle": data.joint("shoulder").qpos}, duration=duration, ctrl=[gear * target])
    arm = model.body("arm")
    inertia, timestep = model.dof_M0[0], model.opt.timestep                # kg·m² about the hinge, s
    mgl = arm.mass[0] * -model.opt.gravity[2] * np.linalg.norm(arm.ipos)   # gravity torque, arm level, N·m
    omega = gear * np.sqrt(kp / inertia)
    zeta = kv * gear**2 / (2 * np.sqrt(kp * gear**2 * inertia))
    return StepResponse(run.t.copy(), np.asarray(run["angle"]).copy(), target, float(omega), float(zeta),
                        float(omega * timestep), float(target - mgl * np.cos(target) / (kp * gear**2)))


def step_figure(kp: float = 50.0, kv: float = 5.0, gear: float = 1.0) -> Figure:
    """Plot the step response of :func:`servo_step` to 0.5 rad, with the target and the
    predicted rest angle; the title gives ω, ζ and ω·h.  Chapter 03's sliders drive it.

    Args:
      kp: stiffness, N·m/rad; kv: damping, N·m·s/rad; gear: gear ratio (see :func:`servo_step`).

    Returns:
      A matplotlib Figure (angle in rad over 1.5 s), detached from pyplot.

    Example: ``labkit.interactive(labkit.actuation.step_figure, kp=ipywidgets.FloatSlider(...))``.
    """
    from ..display import figure

    step = servo_step(kp, kv, gear)
    fig, ax = figure()
    ax.plot(step.t, step.angle, label="shoulder angle")
    ax.axhline(step.target, color="gray", ls="--", lw=1, label="target")
    ax.axhline(step.rest, color="k", ls=":", lw=1, label="predicted rest")
    ax.set(xlabel="time [s]", ylabel="shoulder angle [rad]", ylim=(-0.3, 0.9),
           title=f"kp {kp:g}, kv {kv:g}, gear {gear:g}: ω = {step.omega:.1f} rad/s, ζ = {step.zeta:.2f}, "
                 f"ω·h = {step.omega_h:.3f}")
    ax.legend(fontsize="small", loc="lower right")
    ax.grid(alpha=0.3)
    return fig
