"""Headless rendering: real pixels, one renderer per model and size, videos at real speed."""

from __future__ import annotations

import numpy as np

import labkit
from labkit import rendering


def test_snapshot_renders_the_model(pendulum):
    model, data = pendulum
    image = labkit.snapshot(model, data, width=160, height=120)
    assert image.shape == (120, 160, 3) and image.dtype == np.uint8
    # the red bob must be visible: some pixel far redder than it is blue
    assert (image[..., 0].astype(int) - image[..., 2]).max() > 80


def test_renderer_is_reused(pendulum):
    model, data = pendulum
    labkit.snapshot(model, data, width=96, height=64)
    first = rendering._renderers[(id(model), 96, 64)][1]
    labkit.snapshot(model, data, width=96, height=64, contacts=True)
    assert rendering._renderers[(id(model), 96, 64)][1] is first
    assert len(rendering._renderers) <= rendering._CACHE_SIZE


def test_frames_larger_than_the_offscreen_buffer_leave_the_model_alone(pendulum):
    model, data = pendulum
    before = (model.vis.global_.offwidth, model.vis.global_.offheight)
    assert labkit.snapshot(model, data, width=800, height=600).shape == (600, 800, 3)
    assert (model.vis.global_.offwidth, model.vis.global_.offheight) == before


def test_video_samples_at_fps(pendulum):
    model, data = pendulum
    clip = labkit.video(model, data, duration=0.5, fps=20, width=64, height=48, inline=False)
    assert clip.shape == (11, 48, 64, 3)  # t = 0, 0.05, ..., 0.5
    assert data.time == np.float64(0.5) or abs(data.time - 0.5) < 1e-9


def test_unknown_camera(pendulum):
    model, data = pendulum
    try:
        labkit.snapshot(model, data, camera="nope")
    except KeyError as exc:
        assert "no camera 'nope'" in str(exc)
    else:
        raise AssertionError("an unknown camera must be an error")


def test_evicting_a_renderer_does_not_corrupt_the_others():
    # more models than the cache holds: closing the oldest must not touch the newest
    spheres = [labkit.load(f'<mujoco><visual><quality shadowsize="1024"/></visual><worldbody>'
                           f'<light pos="0 0 2"/><geom size="{0.1 + 0.05 * i}" rgba="1 0 0 1"/>'
                           f'</worldbody></mujoco>') for i in range(rendering._CACHE_SIZE + 2)]
    images = [labkit.snapshot(m, d, width=64, height=48) for m, d in spheres]
    rendering.close_renderers()
    fresh = labkit.snapshot(*spheres[-1], width=64, height=48)
    assert np.array_equal(images[-1], fresh)


def test_visual_flags_by_name(pendulum):
    model, data = pendulum
    hull = labkit.snapshot(model, data, width=64, height=48, flags=["convexhull"], frames="geom")
    assert hull.shape == (48, 64, 3)
    try:
        labkit.snapshot(model, data, flags=["convexhul"])
    except ValueError as exc:
        assert "unknown visual flag 'convexhul'" in str(exc) and "convexhull" in str(exc)
    else:
        raise AssertionError("a misspelt flag must be an error")
