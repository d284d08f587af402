"""labkit.mujoco_warnings collects MuJoCo's warnings instead of printing them."""

from __future__ import annotations

import labkit

DEPRECATED = ('<mujoco><compiler settotalmass="2"/><worldbody><body><freejoint/>'
              '<geom size=".1"/></body></worldbody></mujoco>')


def test_warnings_are_collected_and_the_handler_restored(capfd):
    with labkit.mujoco_warnings() as caught:
        model, _ = labkit.load(DEPRECATED)
    assert len(caught) == 1 and "settotalmass" in caught[0] and "deprecated" in caught[0]
    assert model.body_mass[1] == 2.0  # deprecated, but still applied
    with labkit.mujoco_warnings() as none:
        labkit.load("pendulum")
    assert none == []
    assert "settotalmass" not in capfd.readouterr().err
