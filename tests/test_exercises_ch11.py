"""Checkers of chapter 11 (auditing a real robot): reference answers earn full marks, blank and
starting ones nothing, and typical mistakes get their own explanation.

Every answer goes through ``labkit.exercises.answers_of`` and ``spec(number).grade``, the path of a
notebook's feedback cell and of the grader.  The reference answers are derived here from MuJoCo's
rules (the parent filter on weld groups, the 2·timestep clamp, solmix mixing) applied to the
compiled models, never read from the notebook.  The models come from the real-model corpus: offline
these tests skip (the ``corpus`` fixture says why).
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from labkit.exercises import answers_of, ch11, chapter_specs, spec

pytestmark = pytest.mark.usefixtures("corpus")


def grade(number, **namespace):
    return spec(number).grade(answers_of(number, namespace))


def messages(exercise):
    return " ".join(r.message for r in exercise.results if not r.passed)


def filter_would_drop(model, body1, body2):
    """MuJoCo's parent filter as written in its documentation, with the root treated as free:
    bodies welded to the world other than the world itself form the root's weld group; two bodies
    are dropped when their groups are the same, or one group is the other's parent group."""
    root = model.body("root").id
    weld = [root if (w == 0 and b != 0) else int(w) for b, w in enumerate(model.body_weldid)]

    def parent_group(group):
        return weld[model.body_parentid[group]] if group != root else 0

    w1, w2 = weld[model.body(body1).id], weld[model.body(body2).id]
    related = w1 == parent_group(w2) or w2 == parent_group(w1)
    return w1 == w2 or (related and w1 != 0 and w2 != 0)      # never for the world's own group


@pytest.fixture(scope="module")
def cross_legged():
    """The cross-legged humanoid as the file has it: (model, its start overlaps)."""
    model, data = ch11.humanoid(pose=ch11.CROSS_LEGGED)
    return model, ch11.overlaps(model, data)


@pytest.fixture(scope="module")
def reference(cross_legged):
    model, welded = cross_legged
    pendulum, _ = ch11.pendulum()
    upright, upright_data = ch11.standing()
    floor = upright.geom("floor").id
    foot = next(g for g in upright_data.contact[0].geom if g != floor)
    # solmix 1 : 1, so the contact's timeconst is the mean of the two geoms' (both standard format)
    share = upright.geom_solmix[floor] / (upright.geom_solmix[floor] + upright.geom_solmix[foot])
    mixed = share * upright.geom_solref[floor, 0] + (1 - share) * upright.geom_solref[foot, 0]
    return {
        "11.1": {"exclude_pairs": sorted(p for p in welded if filter_would_drop(model, *p))},
        # at the shipped step MuJoCo used max(timeconst, 2·timestep) = 2·timestep
        "11.2": {"hinge_timeconst": 2 * float(pendulum.opt.timestep)},
        "11.3": {"largest_timestep": mixed / 2},
    }


def test_reference_answers_earn_full_marks(reference):
    for number, answers in reference.items():
        graded = grade(number, **answers)
        assert graded.passed, graded.text()
        assert graded.score == spec(number).points


@pytest.mark.parametrize("number", ["11.1", "11.2", "11.3"])
def test_blank_answers_earn_nothing(number):
    graded = grade(number)
    assert graded.score == 0
    assert "you have not defined" in messages(graded)


def test_chapter_registers_three_exercises_in_order():
    assert [s.id for s in chapter_specs(11)] == ["11.1", "11.2", "11.3"]


def test_the_exercise_texts_hand_over_their_numbers():
    import nbformat

    cells = nbformat.read(Path(__file__).parents[1] / "course/11_audit_real_robot.ipynb", 4).cells
    text = {n: next(c.source.split(f"### Exercise {n}")[1] for c in cells
                    if f"### Exercise {n}" in c.source) for n in ("11.1", "11.2", "11.3")}
    assert "CROSS_LEGGED" in text["11.1"] and f"{ch11.OVERLAP * 1e3:g} mm" in text["11.1"]
    assert "cross_legged(crossed.twist)" in text["11.1"]
    assert "tuning.timestep" in text["11.2"] and "tuning.factor" in text["11.2"]
    assert "standing(timestep, floor.timeconst)" in text["11.3"] and "2 %" in text["11.3"]


def test_the_constants_are_the_files():
    pole, _ = ch11.pendulum()
    assert pole.opt.timestep == ch11.FILE_STEP
    assert list(pole.jnt_solref[:, 0]) == [ch11.FILE_TIMECONST] * pole.njnt
    assert spec("11.2").params["factor"].default * ch11.FILE_STEP == ch11.HALF_STEP
    upright, data = ch11.standing()
    floor = upright.geom("floor").id
    assert upright.geom_solref[floor, 0] == ch11.FLOOR_TIMECONST
    for contact in data.contact[:data.ncon]:                  # the feet: solmix 1 like the floor
        foot = int(sum(contact.geom) - floor)
        assert upright.geom_solref[foot, 0] == ch11.FEET_TIMECONST
        assert upright.geom_solmix[foot] == upright.geom_solmix[floor] == 1.0


# -- Exercise 11.1: exclude what the parent filter would have dropped ------------------------------

def test_the_pose_is_inside_the_joint_ranges_and_crosses_the_shins(cross_legged):
    model, welded = cross_legged
    for joint, angle in ch11.cross_legged(max(spec("11.1").params["twist"].values())).items():
        low, high = model.joint(joint).range
        assert low <= angle <= high, joint
    assert ("ltibia", "rtibia") in welded            # the shins pass through each other
    assert ch11.cross_legged() == ch11.CROSS_LEGGED


def test_a_twisted_lower_back_clears_one_hip_far_from_the_threshold():
    """Either way the lower back swings clear of one hip body (no contact at all) and deep into
    the other: each twist's pairs are the published ones less one, far from the 1 mm threshold."""
    hips = {("lhipjoint", "lowerback"), ("lowerback", "rhipjoint")}
    for twist in spec("11.1").params["twist"].values():
        welded = ch11.overlaps(*ch11.humanoid(pose=ch11.cross_legged(twist)), depth=0.0)
        clear = ("lowerback", "rhipjoint") if twist < 0 else ("lhipjoint", "lowerback")
        assert clear not in welded, twist
        assert welded[(hips - {clear}).pop()] > 10 * ch11.OVERLAP, twist


def test_the_filters_pairs_are_the_ones_a_free_root_loses(cross_legged, reference):
    """The rule (filter_would_drop) and MuJoCo agree: a free root removes what the rule drops."""
    _, welded = cross_legged
    free = ch11.overlaps(*ch11.humanoid("free", pose=ch11.CROSS_LEGGED))
    dropped = {tuple(p) for p in reference["11.1"]["exclude_pairs"]}
    assert dropped == set(welded) - set(free)
    assert dropped and set(free) and set(free) <= set(welded)   # both kinds are in the exercise


def test_excluding_every_overlap_hides_the_real_collisions(cross_legged):
    _, welded = cross_legged
    graded = grade("11.1", exclude_pairs=sorted(welded))
    assert graded.score == 0 and "hides a real collision" in messages(graded)
    assert "ltibia–rtibia" in messages(graded)


def test_excluding_nothing_leaves_the_filters_pairs(reference):
    graded = grade("11.1", exclude_pairs=[])
    assert graded.score == 0 and "are left" in messages(graded)
    for body1, body2 in reference["11.1"]["exclude_pairs"]:
        assert f"{body1}–{body2}" in messages(graded)


def test_the_root_pairs_alone_leave_the_hips(reference):
    """The pairs with the root itself are not all: the hip bodies are welded to the world too."""
    roots = [p for p in reference["11.1"]["exclude_pairs"] if "root" in p]
    graded = grade("11.1", exclude_pairs=roots)
    assert graded.score == 0 and "lhipjoint" in messages(graded)


def test_a_needless_exclude_is_named(reference):
    extra = [*reference["11.1"]["exclude_pairs"], ["lhumerus", "rhumerus"]]
    graded = grade("11.1", exclude_pairs=extra)
    assert graded.score == 0 and "needlessly" in messages(graded)
    assert "lhumerus–rhumerus" in messages(graded)


def test_pairs_may_come_in_any_order_and_container(reference):
    pairs = reference["11.1"]["exclude_pairs"]
    assert grade("11.1", exclude_pairs={(b, a) for a, b in pairs}).passed
    assert grade("11.1", exclude_pairs=tuple(list(p) for p in reversed(pairs))).passed


@pytest.mark.parametrize(("answer", "says"), [
    ([["root", "nose"]], "not a body"),
    ([["root", "root"]], "one body twice"),
    ([["root"]], "a pair is two body names"),
    ([[0, 1]], "a pair is two body names"),
    ("root lfemur", "a list of [body1, body2] pairs"),
    ({"root": "lfemur"}, "a list of [body1, body2] pairs"),
])
def test_malformed_pairs_earn_nothing(answer, says):
    graded = grade("11.1", exclude_pairs=answer)
    assert graded.score == 0 and says in graded.text()


def test_the_humanoid_builder_hangs_the_root_as_asked():
    for root, joints in (("world", 0), ("free", 1), ("jointed", 1)):
        model, _ = ch11.humanoid(root)
        assert model.body("root").jntnum[0] == joints
        assert (model.body("root").weldid[0] == 0) == (root == "world")
    model, _ = ch11.humanoid("free", filterparent=False)
    assert model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT
    with pytest.raises(ValueError, match="root is one of"):
        ch11.humanoid("mocap")


def test_rest_speed_puts_gravity_back_and_excludes_remove_only_the_overlaps():
    model, data = ch11.humanoid()
    pairs = sorted(ch11.overlaps(model, data))
    excluded, excluded_data = ch11.humanoid(exclude=pairs)
    assert ch11.overlaps(excluded, excluded_data) == {}
    quiet, quiet_data = ch11.humanoid()
    quiet.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    assert ch11.rest_speed(excluded, excluded_data) == ch11.rest_speed(quiet, quiet_data)
    assert list(excluded.opt.gravity) == list(model.opt.gravity)


# -- Exercise 11.2: half the timestep, the same limit ----------------------------------------------

def test_the_shipped_limit_uses_twice_the_timestep():
    model, data = ch11.pendulum()
    row = ch11.limit_row(model, data)
    h, dmax = model.opt.timestep, model.joint("hinge").solimp[1]
    assert row[0] == pytest.approx(1 / (dmax**2 * (2 * h) ** 2), rel=1e-12)   # K, damping ratio 1
    assert row[1] == pytest.approx(2 / (dmax * 2 * h), rel=1e-12)             # B


def test_pendulum_sets_both_limits_and_the_step():
    model, _ = ch11.pendulum(0.01, 0.04)
    assert model.opt.timestep == 0.01
    assert [list(model.jnt_solref[j]) for j in range(model.njnt)] == [[0.04, 1.0]] * model.njnt


@pytest.mark.parametrize(("answer", "says"), [
    (0.02, "file's value"),
    (0.01, "never used the file's value"),
    (0.005, "quarter"),
])
def test_timeconst_mistakes_are_named(answer, says):
    graded = grade("11.2", hinge_timeconst=answer)
    assert graded.score == 0 and says in messages(graded)


@pytest.mark.parametrize(("factor", "answer", "says"), [
    (0.25, 0.04, "twice the file's step"),
    (0.25, 0.015, "twice the new step"),
    (0.25, 0.03, "old step itself"),
    (0.25, 0.02, "no longer raises it, and the limit becomes 9 times stiffer"),
    (0.75, 0.02, "raises it only to 0.045 s"),
])
def test_timeconst_mistakes_on_another_variant_are_named(factor, answer, says):
    values = {"timestep": 0.03, "factor": factor}         # tuned at 30 ms: the limit used 60 ms
    graded = spec("11.2").grade(answers_of("11.2", {"hinge_timeconst": answer}), values=values)
    assert graded.score == 0 and says in messages(graded)
    assert spec("11.2").grade(answers_of("11.2", {"hinge_timeconst": 0.06}), values=values).passed


def test_timeconst_a_percent_off_fails(reference):
    right = reference["11.2"]["hinge_timeconst"]
    assert not grade("11.2", hinge_timeconst=1.01 * right).passed
    assert not grade("11.2", hinge_timeconst=0.99 * right).passed
    assert grade("11.2", hinge_timeconst=1.0002 * right).passed


def test_timeconst_must_be_positive():
    graded = grade("11.2", hinge_timeconst=-0.04)
    assert graded.score == 0 and "above 0 s" in graded.text()


# -- Exercise 11.3: the largest timestep at which no contact is clamped ----------------------------

def test_the_standing_humanoid_touches_the_floor_with_its_feet_only():
    model, data = ch11.standing()
    floor = model.geom("floor").id
    assert data.ncon > 0
    for contact in data.contact[:data.ncon]:
        assert floor in contact.geom and contact.dist == pytest.approx(-1e-3, abs=1e-9)
        assert "foot" in model.geom(int(sum(contact.geom) - floor)).name
    assert ch11.clamped_rows(model, data) == []


def test_clamped_rows_asks_mujoco_and_restores_the_flags():
    model, data = ch11.standing(0.01)                 # 2·0.01 > every contact's 0.0175 s
    flags = int(model.opt.disableflags)
    assert ch11.clamped_rows(model, data) == list(range(data.nefc))
    assert int(model.opt.disableflags) == flags


def test_the_edges_of_the_largest_timestep(reference):
    right = reference["11.3"]["largest_timestep"]
    assert grade("11.3", largest_timestep=right).passed
    assert grade("11.3", largest_timestep=0.985 * right).passed      # within 2 % below
    assert not grade("11.3", largest_timestep=0.975 * right).passed
    assert not grade("11.3", largest_timestep=1.001 * right).passed  # clamped


@pytest.mark.parametrize(("answer", "says"), [
    (0.0075, "feet's own time constant"),
    (0.01, "floor's 0.02 s"),
    (0.005, "file's own timestep"),
    (0.0175, "time constant itself"),
])
def test_timestep_mistakes_are_named(answer, says):
    graded = grade("11.3", largest_timestep=answer)
    assert graded.score == 0 and says in messages(graded)


def test_another_floor_moves_the_edge_and_names_the_old_answer():
    values = {"timeconst": 0.03}                  # the contacts ask for (0.015 + 0.03)/2
    right = (ch11.FEET_TIMECONST + 0.03) / 4
    graded = spec("11.3").grade(answers_of("11.3", {"largest_timestep": right}), values=values)
    assert graded.passed, graded.text()
    for answer, says in ((0.00875, "the file's floor"), (0.015, "floor's 0.03 s halved")):
        graded = spec("11.3").grade(answers_of("11.3", {"largest_timestep": answer}), values=values)
        assert graded.score == 0 and says in messages(graded)


def test_largest_timestep_out_of_range_is_refused():
    for wrong in (0, -0.001, 0.5):
        graded = grade("11.3", largest_timestep=wrong)
        assert graded.score == 0 and "should be" in graded.text()


def test_the_chapters_numbers_are_what_the_grader_measures():
    """The fall of the shipped pole and of the fix agree at rest (the exercise's second test)."""
    shipped = ch11.fall(*ch11.pendulum())
    fixed = ch11.fall(*ch11.pendulum(ch11.HALF_STEP, 0.04))
    assert fixed[1] == pytest.approx(shipped[1], rel=1e-6)      # same K and B: the same rest
    assert shipped[0] > 0 and np.isfinite(shipped).all()
