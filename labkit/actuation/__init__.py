"""Trace an actuator's force chain: ``labkit.trace`` and ``labkit.explain``.

MuJoCo turns a control into generalized force in stages (``mj_fwdActuation`` in
``engine_forward.c``)::

    request (data.ctrl) → input (delay, ctrlrange, slew) → activation (act, act_dot)
      → force_raw (gain·input + bias, or the pid/so3/dcmotor law) → force (forcerange)
      → qfrc = momentᵀ·force (transmission) → qfrc_actuator (sum, gravcomp, joint limits)

:func:`trace` recomputes every stage of one actuator from the model's parameters (and
the transmission lengths, velocities and moments MuJoCo computed) and cross-checks each
stage against MuJoCo's own arrays where MuJoCo stores it (act_dot, actuator_force,
qfrc_actuator) and, where it does not (the input, force_raw), against MuJoCo run on copies
with the clamps lifted; a disagreement raises
:class:`TraceMismatch` naming the stage and both values.  :func:`explain` reads back what
an MJCF shortcut (``position``, ``pid``, ...) became in the compiled model.

One job per module:

- :mod:`.params`: what the compiled parameters mean, read with MuJoCo's own enums;
- :mod:`.laws`: MuJoCo's actuator laws (activation rates, force laws), one actuator at a time;
- :mod:`.chain`: the recomputation of every stage for all actuators, and its comparison
  with MuJoCo's arrays;
- :mod:`.rounding`: when numbers agree to rounding (:data:`RTOL`) and which shown values
  are round-off;
- :mod:`.trace`: :func:`trace`, :class:`Trace` and :class:`Stage`, as text and HTML;
- :mod:`.explain`: :func:`explain` and :class:`Explanation`;
- :mod:`.moments`: the dense moment matrix and the length's derivative (:func:`moment_matrix`,
  :func:`length_gradient`), to ask where the moment arm is ∂l/∂q;
- :mod:`.servo`: a position servo's step response on chapter 03's arm (:func:`servo_step`,
  :func:`step_figure`, the figure behind the chapter's sliders).
"""

from __future__ import annotations

from .chain import TraceMismatch
from .explain import Explanation, explain
from .moments import length_gradient, moment_matrix
from .rounding import RTOL
from .servo import StepResponse, servo_step, step_figure
from .trace import Stage, Trace, trace

__all__ = ["RTOL", "Explanation", "Stage", "StepResponse", "Trace", "TraceMismatch", "explain",
           "length_gradient", "moment_matrix", "servo_step", "step_figure", "trace"]
