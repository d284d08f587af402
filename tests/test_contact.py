"""labkit.contact.why agrees with MuJoCo's collision pipeline; table reports forces."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

import labkit
from labkit import contact


def random_model(seed: int) -> str:
    """A random tree of overlapping spheres: every unfiltered pair must touch."""
    rng = np.random.default_rng(seed)
    bodies, lines = [], []

    def geoms(name):
        out = []
        for k in range(rng.integers(1, 3)):
            ct, ca = rng.choice([0, 1, 2, 3]), rng.choice([0, 1, 2, 3])
            p = rng.uniform(-0.05, 0.05, 3)
            out.append(f'<geom name="{name}_g{k}" size="0.5" pos="{p[0]} {p[1]} {p[2]}" '
                       f'contype="{ct}" conaffinity="{ca}"/>')
        return out

    def body(name, depth):
        bodies.append(name)
        joint = rng.choice(["", '<joint type="hinge"/>', '<joint type="slide"/>', "<freejoint/>"]
                           if depth == 1 else ["", '<joint type="hinge"/>', '<joint type="ball"/>'])
        inner = [joint, *geoms(name)]
        if depth < 3:
            for c in range(rng.integers(0, 3)):
                inner.append(body(f"{name}{c}", depth + 1))
        return f'<body name="{name}">' + "".join(inner) + "</body>"

    world = geoms("world") + [body(f"b{i}", 1) for i in range(3)]
    if rng.random() < 0.5:
        world.append('<body name="mocap" mocap="true"><geom name="mocap_g0" size="0.5"/></body>')
        bodies.append("mocap")
    names = ["world", *bodies]
    for _ in range(2):
        x, y = rng.choice(names, 2, replace=False)
        lines.append(f'<exclude body1="{x}" body2="{y}"/>')
    flag = '<option><flag filterparent="disable"/></option>' if rng.random() < 0.25 else ""
    xml = f"<mujoco>{flag}<worldbody>{''.join(world)}</worldbody>"
    spec_model = mujoco.MjModel.from_xml_string(xml + "</mujoco>")
    pairs = []
    for _ in range(2):
        g1, g2 = rng.choice(spec_model.ngeom, 2, replace=False)
        pairs.append(f'<pair geom1="{spec_model.geom(g1).name}" geom2="{spec_model.geom(g2).name}"/>')
    return xml + f"<contact>{''.join(lines + pairs)}</contact></mujoco>"


@pytest.mark.parametrize("seed", range(25))
def test_why_agrees_with_mujoco_on_unseen_models(seed):
    model, data = labkit.load(random_model(seed))
    actual = {frozenset((int(c.geom1), int(c.geom2))) for c in data.contact[: data.ncon]}
    for g1 in range(model.ngeom):
        for g2 in range(g1 + 1, model.ngeom):
            verdict = contact.why(model, g1, g2)
            assert verdict.collides == (frozenset((g1, g2)) in actual), (seed, g1, g2, verdict.text())


XML = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 .1"/>
    <geom name="frame" type="box" size=".3 .3 .02" pos="0 0 .5" contype="2" conaffinity="2"/>
    <body name="arm" pos="0 0 .5">
      <joint type="hinge" axis="0 1 0"/>
      <geom name="upper" type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <body name="fore" pos=".3 0 0">
        <joint type="hinge" axis="0 1 0"/>
        <geom name="lower" type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        <body name="tool"><geom name="tip" size=".04" pos=".3 0 0"/></body>
      </body>
    </body>
    <body name="ball" pos="0 0 .04"><freejoint/><geom name="ball" size=".04" mass=".1"/></body>
  </worldbody>
  <contact><exclude body1="ball" body2="fore"/><pair geom1="upper" geom2="lower"/></contact>
</mujoco>
"""


@pytest.mark.parametrize(("g1", "g2", "collides", "rule"), [
    ("upper", "lower", True, "pair"),
    ("lower", "tip", False, "same weld"),
    ("upper", "tip", False, "parent-child"),  # tool is welded to fore, fore is arm's child
    ("floor", "upper", True, "bitmask"),     # world children are not parent-filtered
    ("frame", "upper", False, "bitmask"),
    ("floor", "frame", False, "same body"),
    ("ball", "lower", False, "exclude"),
    ("ball", "floor", True, "bitmask"),
])
def test_named_rules(g1, g2, collides, rule):
    model, _ = labkit.load(XML)
    verdict = contact.why(model, g1, g2)
    assert (verdict.collides, verdict.rule) == (collides, rule), verdict.text()
    assert verdict.reasons


def test_disabled_contacts_and_unknown_geoms():
    model, _ = labkit.load(XML)
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    assert contact.why(model, "ball", "floor").rule == "disabled"
    with pytest.raises(KeyError, match="no geom named 'bal'"):
        contact.why(model, "bal", "floor")


def test_pairs_and_pairs_that_cannot_move():
    model, data = labkit.load(XML)
    assert frozenset(("ball", "floor")) in contact.pairs(model, data)
    fixed, _ = labkit.load(XML.replace('<pair geom1="upper" geom2="lower"/>',
                                       '<pair geom1="floor" geom2="frame"/>'))
    verdict = contact.why(fixed, "floor", "frame")
    assert verdict.collides and not verdict.pushes and "never pushes" in verdict.text()


def test_table_reports_the_resting_weight():
    model, data = labkit.load(XML)
    for _ in range(500):
        mujoco.mj_step(model, data)
    rows = [r for r in contact.table(model, data) if {r.geom1, r.geom2} == {"ball", "floor"}]
    assert len(rows) == 1
    # at rest the floor carries the ball's weight, m·g
    assert rows[0].normal_force == pytest.approx(0.1 * 9.81, rel=1e-3)
    np.testing.assert_allclose(rows[0].normal, [0, 0, 1], atol=1e-9)
    assert rows[0].dist < 0 and "ball" in contact.table(model, data).text()


def test_geom_id_takes_names_and_ids():
    model, _ = labkit.load(XML)
    ball = model.geom("ball").id
    assert contact.geom_id(model, "ball") == contact.geom_id(model, ball) == ball
    with pytest.raises(KeyError, match=r"no geom named 'bal'; its geoms: \["):
        contact.geom_id(model, "bal")
    with pytest.raises(KeyError, match="out of range"):
        contact.geom_id(model, model.ngeom)


def test_no_reason_line_contradicts_a_never_collide_verdict():
    # "frame" is a world geom and "upper" belongs to a child of the world: the parent-child filter
    # does not apply, but the bitmasks (2 against 1) do, so the verdict is "never collide"
    model, _ = labkit.load(XML)
    verdict = contact.why(model, "frame", "upper")
    assert not verdict and verdict.rule == "bitmask"
    assert any("world" in r and "does not remove this pair" in r for r in verdict.reasons), verdict.text()
    for seed in range(10):
        model, _ = labkit.load(random_model(seed))
        for g1 in range(model.ngeom):
            for g2 in range(g1 + 1, model.ngeom):
                verdict = contact.why(model, g1, g2)
                if not verdict:
                    assert not any("do collide" in r or "can collide" in r for r in verdict.reasons), \
                        verdict.text()


WELDS = """
<mujoco>
  <worldbody>
    <geom name="static" type="box" size=".1 .1 .1" pos="3 0 .05"/>
    <body name="A" pos="0 0 1"><joint type="slide" axis="0 0 1"/><geom name="a" size=".1"/>
      <body name="B" pos=".05 0 0"><geom name="b" size=".02" pos="0 0 .3"/>
        <body name="C" pos=".05 0 0"><joint type="hinge" axis="0 1 0"/><geom name="c" size=".1"/></body>
      </body>
    </body>
    <body name="M" mocap="true" pos="3 0 .1"><geom name="m" size=".1"/></body>
    <body name="F" pos="3 0 .25"><freejoint/><geom name="f" size=".1"/></body>
  </worldbody>
</mujoco>
"""


def test_filters_act_on_weld_groups_and_skip_two_groups_without_dofs():
    model, data = labkit.load(WELDS)
    found = contact.pairs(model, data)
    # C's parent B is welded to A: C is filtered against its grandparent A, as a child of A's weld group
    assert contact.why(model, "a", "c").rule == "parent-child" and frozenset(("a", "c")) not in found
    # a mocap body and static geometry have no dofs: skipped; a free body collides with both
    assert contact.why(model, "m", "static").rule == "both static" and frozenset(("m", "static")) not in found
    assert {frozenset(("f", "m")), frozenset(("f", "static"))} <= found
    model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_FILTERPARENT
    mujoco.mj_forward(model, data)
    assert contact.why(model, "a", "c") and frozenset(("a", "c")) in contact.pairs(model, data)


def _odd_geoms_only(model, data, g1, g2):
    """A contact filter callback: discard every pair unless both geom ids are odd."""
    return int(not (g1 % 2 and g2 % 2))


@pytest.mark.parametrize("midphase", [True, False])
@pytest.mark.parametrize("callback", [lambda m, d, g1, g2: 0, _odd_geoms_only])
def test_why_follows_an_installed_contact_filter_callback(callback, midphase):
    mujoco.set_mjcb_contactfilter(callback)
    try:
        for seed in range(10):
            model, data = labkit.load(random_model(seed))
            if not midphase:
                model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_MIDPHASE
                mujoco.mj_forward(model, data)
            actual = {frozenset((int(c.geom1), int(c.geom2))) for c in data.contact[: data.ncon]}
            for g1 in range(model.ngeom):
                for g2 in range(g1 + 1, model.ngeom):
                    verdict = contact.why(model, g1, g2, data)
                    assert verdict.collides == (frozenset((g1, g2)) in actual), (seed, g1, g2, verdict.text())
    finally:
        mujoco.set_mjcb_contactfilter(None)
    # the callback replaces the per-geom bitmask test ("frame" 2/2 against "upper" 1/1, but the world
    # body's combined masks are 3/3), not the test on each body's combined masks (a lone 2/2 geom)
    lone = XML.replace("</worldbody>", '<body name="lone" pos=".15 0 .5"><freejoint/>'
                       '<geom name="lone" size=".04" contype="2" conaffinity="2"/></body></worldbody>')
    mujoco.set_mjcb_contactfilter(lambda m, d, g1, g2: 0)
    try:
        model, data = labkit.load(lone)
        assert contact.why(model, "frame", "upper").rule == "contactfilter"
        assert frozenset(("frame", "upper")) in contact.pairs(model, data)
        assert contact.why(model, "lone", "upper").rule == "bitmask"           # overlapping, 2/2 and 1/1
        assert frozenset(("lone", "upper")) not in contact.pairs(model, data)
    finally:
        mujoco.set_mjcb_contactfilter(None)
    assert contact.why(model, "frame", "upper").rule == "bitmask"


@pytest.mark.parametrize("seed", range(25))
def test_why_says_which_listed_contacts_push(seed):
    # an explicit pair inside one weld group, or between two groups without dofs, is listed
    # with exclude = 3 and gets no rows: `pushes` must say so, for every pair MuJoCo lists
    model, data = labkit.load(random_model(seed))
    for c in data.contact[: data.ncon]:
        verdict = contact.why(model, int(c.geom1), int(c.geom2))
        assert verdict.collides, verdict.text()
        assert verdict.pushes == (c.exclude == 0), (seed, verdict.text(), c.exclude)
        assert (c.efc_address >= 0) == verdict.pushes


STATIC_PAIRS = """
<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 .1"/>
    <body name="post"><geom name="post" type="box" size=".05 .05 .2" pos=".5 0 .19"/></body>
    <body name="M" mocap="true" pos=".5 0 .4"><geom name="m" size=".05"/></body>
    <body name="cart" pos="0 0 .09"><freejoint/><geom name="cart" type="box" size=".1 .1 .1"/>
      <body name="lid" pos="0 0 .1"><geom name="lid" type="box" size=".08 .08 .02"/></body>
    </body>
  </worldbody>
  <contact>
    <pair geom1="floor" geom2="post"/><pair geom1="m" geom2="post"/><pair geom1="cart" geom2="lid"/>
  </contact>
</mujoco>
"""


def test_table_shows_which_contacts_do_not_act_and_pairs_can_keep_only_active_ones():
    model, data = labkit.load(STATIC_PAIRS)
    rows = contact.table(model, data)
    codes = {frozenset((r.geom1, r.geom2)): r.exclude for r in rows}
    # world against static, mocap against static, one weld group: listed with exclude 3
    assert {codes[frozenset(p)] for p in (("floor", "post"), ("m", "post"), ("cart", "lid"))} == {3}
    assert codes[frozenset(("floor", "cart"))] == 0
    assert all(r.active == (r.exclude == 0) == (not r.excluded) for r in rows)
    assert all(r.normal_force == 0 for r in rows if not r.active)
    text = rows.text()
    assert text.splitlines()[0].endswith("| condim | exclude")
    assert "3: no dofs" in text and "0: active" in text
    assert "<th>exclude</th>" in rows._repr_html_()
    assert contact.pairs(model, data, active=True) == {frozenset(("floor", "cart"))}
    assert contact.pairs(model, data) == set(codes)
    verdict = contact.why(model, "cart", "lid")
    assert verdict.collides and not verdict.pushes and verdict.text().startswith("listed in data.contact")
    # a contact in the gap: listed, exclude 1, shown as such
    ball, ball_data = labkit.load(XML)
    ball.geom_gap[ball.geom("ball").id] = 0.05
    ball_data.qpos[2] = 0.04 + 0.02                      # 2 cm above the floor: inside the gap
    mujoco.mj_forward(ball, ball_data)
    gap_row = next(r for r in contact.table(ball, ball_data) if {r.geom1, r.geom2} == {"ball", "floor"})
    assert (gap_row.exclude, gap_row.active) == (1, False)
    assert "1: in the gap" in contact.table(ball, ball_data).text()


def test_a_table_of_active_contacts_keeps_its_columns():
    # the exclude column appears only when a contact does not act: tables of ordinary scenes
    # read as before
    model, data = labkit.load(XML)
    # the ball 1 mm into the floor (touching exactly is dist = 0, not below the zero margin: in the gap)
    data.qpos[model.jnt_qposadr[model.body("ball").jntadr[0]] + 2] -= 0.001
    mujoco.mj_forward(model, data)
    text = contact.table(model, data).text()
    assert text.splitlines()[0].endswith("| condim") and "exclude" not in text
    empty = contact.table(model, mujoco.MjData(model))
    assert empty.text() == "no contacts" and len(empty) == 0


GEOM_TYPES = ["plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh"]
TYPE_ASSETS = ('<asset><hfield name="h" nrow="3" ncol="3" size=".5 .5 .1 .1"/><mesh name="m" '
               'vertex="-.2 -.2 -.2 .2 -.2 -.2 -.2 .2 -.2 .2 .2 -.2 -.2 -.2 .2 .2 -.2 .2 -.2 .2 .2 '
               '.2 .2 .2"/></asset>')


def typed_geom(kind: str, name: str) -> str:
    size = {"plane": 'size="1 1 .1"', "hfield": 'hfield="h"', "mesh": 'mesh="m"'}.get(kind, 'size=".2 .2 .2"')
    return f'<geom name="{name}" type="{kind}" {size}/>'


@pytest.mark.parametrize("explicit", [False, True], ids=["automatic", "explicit pair"])
@pytest.mark.parametrize("fixed", GEOM_TYPES)
def test_why_knows_which_type_pairs_have_a_collision_function(fixed, explicit):
    """A world geom of each type against an overlapping free geom of each (non-plane) type:
    why's verdict matches MuJoCo's ncon, including plane-hfield and hfield-hfield, for which
    MuJoCo has no collision function."""
    for moving in GEOM_TYPES[1:]:                  # a plane is only allowed in static bodies
        xml = (f"<mujoco>{TYPE_ASSETS}<worldbody>{typed_geom(fixed, 'A')}<body pos='0 0 .05'><freejoint/>"
               f"{typed_geom(moving, 'B')}</body></worldbody>"
               + ("<contact><pair geom1='A' geom2='B'/></contact>" if explicit else "") + "</mujoco>")
        model, data = labkit.load(xml)
        verdict = contact.why(model, "A", "B")
        assert verdict.collides == (data.ncon > 0), (fixed, moving, data.ncon, verdict.text())
        no_function = {fixed, moving} <= {"plane", "hfield"}
        assert (verdict.rule == "no collision function") == no_function, (fixed, moving, verdict.rule)


def test_a_model_with_only_the_world_body_has_no_contacts():
    model, data = labkit.load("<mujoco><worldbody><geom name='a' size='.1'/><geom name='b' size='.1'/>"
                              "</worldbody><contact><pair geom1='a' geom2='b'/></contact></mujoco>")
    assert data.ncon == 0
    assert not contact.why(model, "a", "b")
