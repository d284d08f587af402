"""labkit.check: true claims pass, false ones raise with a clear difference, all are logged."""

from __future__ import annotations

import json

import numpy as np
import pytest

import labkit


def test_true_claim_returns_a_passed_claim():
    claim = labkit.check("two plus two", 2 + 2, 4, sources="#1")
    assert claim.passed and claim.sources[0].label == "mujoco#1"


def test_false_claim_raises_with_observed_expected_and_sources():
    with pytest.raises(labkit.ClaimFailed) as info:
        labkit.check("gravity is 10", -9.81, -10.0, tol=0.1, sources="XMLreference")
    text = str(info.value)
    assert "gravity is 10" in text and "-9.81" in text and "-10" in text
    assert "0.19" in text and "docs XMLreference" in text


@pytest.mark.parametrize(("observed", "expected", "kw", "holds"), [
    (1.0005, 1.0, {"tol": 1e-3}, True),
    (1.002, 1.0, {"tol": 1e-3}, False),
    (101.0, 100.0, {"rtol": 0.02}, True),
    (103.0, 100.0, {"rtol": 0.02}, False),
    (np.array([1.0, 2.0]), np.array([1.0, 2.0]), {}, True),
    (np.array([1.0, 2.0]), np.array([1.0, 2.0, 3.0]), {}, False),
    ((1, 1), (1, 1), {}, True),
    ("hinge", "slide", {}, False),
    (0.4, labkit.below(0.5), {}, True),
    (0.6, labkit.below(0.5), {}, False),
    (np.array([0.2, 0.7]), labkit.between(0.1, 0.8), {}, True),
    (0.5, labkit.above(0.5, strict=True), {}, False),
])
def test_comparison_rules(observed, expected, kw, holds):
    if holds:
        assert labkit.check("c", observed, expected, **kw).passed
    else:
        with pytest.raises(AssertionError):
            labkit.check("c", observed, expected, **kw)


def test_sources_must_be_source_labels():
    for wrong in (["mjmodel.h"], [42]):
        with pytest.raises(labkit.SourceError):
            labkit.check("c", 1, 1, sources=wrong)


def test_claims_log(tmp_path, monkeypatch):
    log = tmp_path / "claims.jsonl"
    monkeypatch.setenv("LABKIT_CLAIMS", str(log))
    monkeypatch.setenv("LABKIT_NOTEBOOK", "99_test")
    labkit.check("first", 1.5, 1.5, sources="mjmodel.h:nv")
    with pytest.raises(AssertionError):
        labkit.check("second", np.array([1.0]), np.array([2.0]))
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["notebook"] == "99_test" and first["passed"] and first["mujoco"] == "3.17.0"
    assert first["sources"][0]["label"] == "mjmodel.h:nv"
    assert second["observed"] == [1.0] and not second["passed"]


def test_counterexamples_show_as_failing_and_raise_only_if_they_hold():
    claim = labkit.check("g is 10", -9.81, -10.0, tol=0.01, expect_fail=True)
    assert claim.passed and not claim.holds
    assert claim.text().startswith("✘ does not hold, as expected: g is 10")
    with pytest.raises(labkit.ClaimFailed, match="held, but was expected not to"):
        labkit.check("g is about 10", -9.81, -10.0, tol=0.5, expect_fail=True)


def test_a_table_of_cases_shares_one_tolerance_and_names_the_row_that_misses():
    claim = labkit.check("each spring stretches by F/k", observed={"soft": 0.1001, "stiff": 0.01},
                         expected={"soft": 0.1, "stiff": 0.01}, rtol=1e-2)
    assert claim.passed
    with pytest.raises(labkit.ClaimFailed, match="stiff: off by"):
        labkit.check("each spring stretches by F/k", observed={"soft": 0.1, "stiff": 0.02},
                     expected={"soft": 0.1, "stiff": 0.01}, rtol=1e-2)
    with pytest.raises(labkit.ClaimFailed, match="differ from the expected"):
        labkit.check("rows", observed={"soft": 0.1}, expected={"soft": 0.1, "stiff": 0.01}, tol=1e-3)


def test_a_table_of_cases_takes_ranges_and_per_case_tolerances():
    import labkit

    claim = labkit.check("limits", {"euler": 2.0000001, "rk4": 2.83, "kick": -3.2},
                         {"euler": labkit.near(2, rtol=1e-6), "rk4": labkit.near(2 * 2**0.5, rtol=1e-3),
                          "kick": labkit.below(-1.0)})
    assert claim.passed and "≤ -1" in claim.text() and "2.828 (±0.1%)" in claim.text()
    with pytest.raises(labkit.ClaimFailed, match=r"rk4: 2\.9 is not 2\.828"):
        labkit.check("limits", {"euler": 2.0, "rk4": 2.9},
                     {"euler": 2.0, "rk4": labkit.near(2.828, tol=0.01)})
    # without any tolerance each case is still compared on its own (exactly)
    assert labkit.check("counts", {"a": np.arange(3), "b": "x"}, {"a": np.arange(3), "b": "x"}).passed
    record = labkit.check("one range", {"a": 1.0}, {"a": labkit.above(0)}).record()
    assert record["expected"] == {"a": "≥ 0"}


# -- scoped claims: a rule swept along an axis ------------------------------------------------------
def _pendulum_gap(integrator: str) -> float:
    """The course pendulum's angle (rad) after 1 s from its tilted keyframe, per integrator."""
    import mujoco

    model, data = labkit.load("pendulum", keyframe="tilted")
    labkit.axes.INTEGRATORS.apply(model, integrator)
    for _ in range(500):
        mujoco.mj_step(model, data)
    return float(data.qpos[0])


def test_a_sweep_runs_every_case_of_an_axis_in_order():
    import mujoco

    angles = labkit.sweep(labkit.axes.INTEGRATORS, _pendulum_gap)
    assert list(angles) == ["Euler", "implicit", "implicitfast", "RK4"]
    model, _ = labkit.load("pendulum")
    assert labkit.axes.INTEGRATORS.apply(model, "RK4").opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
    assert labkit.axes.CONES.value("elliptic") == mujoco.mjtCone.mjCONE_ELLIPTIC
    assert list(labkit.axes.SOLVERS.only("Newton", "CG")) == ["Newton", "CG"]
    with pytest.raises(KeyError, match="has no case 'rk4'; it has Euler"):
        labkit.axes.INTEGRATORS.only("rk4")
    with pytest.raises(TypeError, match="cannot be applied to a compiled model"):
        labkit.axes.JOINT_TYPES.apply(model, "ball")


def test_a_scoped_rule_holds_inside_its_scope_and_differs_just_outside():
    angles = labkit.sweep(labkit.axes.INTEGRATORS, _pendulum_gap)
    euler = angles["Euler"]
    gaps = {case: abs(angle - euler) for case, angle in angles.items()}
    # an undamped hinge has no velocity-dependent force: the implicit integrators' extra term
    # is zero and they take Euler's step exactly; RK4 is a different method
    claim = labkit.check("Without damping, implicit and implicitfast step an undamped pendulum exactly "
                         "as Euler does", gaps, 0.0, scope=["Euler", "implicit", "implicitfast"])
    assert claim.passed and claim.cases == {"Euler": True, "implicit": True, "implicitfast": True,
                                            "RK4": False}
    text = claim.text()
    assert "holds" in text and "RK4 " in text and "differs (outside the scope)" in text
    assert "inside the scope (Euler, implicit, implicitfast); outside it the rule must not hold" in text
    assert "<table" in claim._repr_html_()
    assert claim.record()["scope"] == ["Euler", "implicit", "implicitfast"]
    with pytest.raises(labkit.ClaimFailed, match="implicit: the rule holds outside the scope too"):
        labkit.check("Only Euler steps it so", gaps, 0.0, scope=["Euler"])


def test_a_scope_too_wide_or_too_narrow_fails_and_names_the_case():
    gaps = {"Euler": 0.0, "implicit": 1e-3, "implicitfast": 1e-3, "RK4": 8e-4}
    with pytest.raises(labkit.ClaimFailed, match=r"implicit: .* inside the scope"):
        labkit.check("the same under Euler and implicit", gaps, 0.0, scope=["Euler", "implicit"])
    with pytest.raises(labkit.ClaimFailed, match="holds outside the scope too"):
        labkit.check("the gap is below 1 % under Euler only", gaps, labkit.below(0.01), scope=["Euler"])
    everywhere = labkit.check("the gap is below 1 % whatever the integrator", gaps, labkit.below(0.01),
                              scope=labkit.axes.INTEGRATORS)
    assert everywhere.passed and "for every case swept" in everywhere.text()


def test_scoped_claims_refuse_what_cannot_be_a_sweep():
    with pytest.raises(TypeError, match="observes a dict of cases"):
        labkit.check("x", 1.0, 1.0, scope=["Euler"])
    with pytest.raises(ValueError, match="names 'RK4', which the sweep did not run"):
        labkit.check("x", {"Euler": 1.0}, 1.0, scope=["RK4"])
