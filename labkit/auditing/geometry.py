"""Shapes, volumes and who-can-touch-whom, computed from a compiled ``mjModel``.

The audit's checks need a few geometric facts MuJoCo stores but does not compute in one
call: a mesh's enclosed volume next to its convex hull's, a geom's volume, its bounding box
in its body's frame, and which geom pairs the collision filter lets through.  They are
small closed formulas over mjModel arrays; each is tested against MuJoCo's own numbers
(inertia from density, ``mj_collision``) in tests/test_audit.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import mujoco

__all__ = ["can_collide", "collidable", "geom_volume", "hull_volume", "is_closed",
           "mesh_volume", "volume_is_defined", "world_box"]

# mjtGeom values (mjmodel.h): plane, hfield, sphere, capsule, ellipsoid, cylinder, box, mesh
PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = 0, 1, 2, 3, 4, 5, 6, 7


def _signed_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    """Volume (model units³) enclosed by triangles ``faces`` (k, 3) over ``vertices`` (n, 3),
    by the divergence theorem; negative if the faces wind inwards."""
    if len(faces) == 0:
        return 0.0
    a, b, c = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def _vertices(model: mujoco.MjModel, mesh: int) -> np.ndarray:
    start = model.mesh_vertadr[mesh]
    return np.asarray(model.mesh_vert[start:start + model.mesh_vertnum[mesh]], dtype=float)


def mesh_volume(model: mujoco.MjModel, mesh: int) -> float:
    """The volume (m³) the mesh's own triangles enclose (0 or less for an open or inverted
    mesh)."""
    start = model.mesh_faceadr[mesh]
    faces = np.asarray(model.mesh_face[start:start + model.mesh_facenum[mesh]])
    return _signed_volume(_vertices(model, mesh), faces)


def _edges(model: mujoco.MjModel, mesh: int) -> tuple[np.ndarray, np.ndarray]:
    """The mesh's directed edges (3·faces, 2) and, per undirected edge, how many faces share it."""
    start = model.mesh_faceadr[mesh]
    faces = np.asarray(model.mesh_face[start:start + model.mesh_facenum[mesh]])
    directed = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    _, counts = np.unique(np.sort(directed, axis=1), axis=0, return_counts=True)
    return directed, counts


def is_closed(model: mujoco.MjModel, mesh: int) -> bool:
    """Whether the mesh is watertight: every edge shared by exactly two triangles.  Only then
    is its volume defined exactly (an open mesh's signed volume depends on its origin)."""
    _, counts = _edges(model, mesh)
    return bool(len(counts) and np.all(counts == 2))


# A mesh whose open edges are at most 1 % of its edges (a few slivers lost in an export) encloses
# a volume defined to about that fraction when measured about its own centre, as MuJoCo
# centres it; its faces must wind one way (each directed edge once), or the sum is meaningless.
NEARLY_CLOSED = 0.01


def volume_is_defined(model: mujoco.MjModel, mesh: int) -> bool:
    """Whether :func:`mesh_volume` means something: the mesh is closed, or nearly (open edges
    ≤ NEARLY_CLOSED of all), its triangles are wound consistently, and the volume is positive."""
    directed, counts = _edges(model, mesh)
    if not len(counts) or np.mean(counts == 1) > NEARLY_CLOSED or np.any(counts > 2):
        return False
    _, repeats = np.unique(directed, axis=0, return_counts=True)
    return bool(np.all(repeats == 1) and mesh_volume(model, mesh) > 0)


def hull_volume(model: mujoco.MjModel, mesh: int) -> float | None:
    """The volume (m³) of the convex hull MuJoCo collides the mesh as, from ``mesh_graph``;
    None when the compiler built no hull for it.

    ``mesh_graph`` holds, per mesh: numvert, numface, vert_edgeadr[numvert],
    vert_globalid[numvert], edge_localid[numvert + 3·numface], face_globalid[3·numface]
    (mjmodel.h); the last block are the hull's triangles as indices into the mesh's vertices.
    """
    start = int(model.mesh_graphadr[mesh])
    if start < 0:
        return None
    graph = model.mesh_graph
    nvert, nface = int(graph[start]), int(graph[start + 1])
    first = start + 2 + 3 * nvert + 3 * nface
    faces = np.asarray(graph[first:first + 3 * nface]).reshape(-1, 3)
    return abs(_signed_volume(_vertices(model, mesh), faces))


def geom_volume(model: mujoco.MjModel, geom: int) -> float:
    """A geom's volume (m³): closed formulas for primitives, the enclosed volume for meshes
    where it is defined (:func:`volume_is_defined`), else their hull's; 0 for planes and
    height fields."""
    kind, size = int(model.geom_type[geom]), model.geom_size[geom]
    r = float(size[0])
    if kind == SPHERE:
        return 4 / 3 * np.pi * r**3
    if kind == CAPSULE:
        return np.pi * r**2 * 2 * size[1] + 4 / 3 * np.pi * r**3
    if kind == CYLINDER:
        return np.pi * r**2 * 2 * size[1]
    if kind == BOX:
        return float(8 * size[0] * size[1] * size[2])
    if kind == ELLIPSOID:
        return float(4 / 3 * np.pi * size[0] * size[1] * size[2])
    if kind == MESH and model.geom_dataid[geom] >= 0:
        mesh = int(model.geom_dataid[geom])
        hull = hull_volume(model, mesh)
        if volume_is_defined(model, mesh) or hull is None:
            return max(mesh_volume(model, mesh), 0.0)
        return hull
    return 0.0


def world_box(model: mujoco.MjModel, data: mujoco.MjData,
              geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The world-aligned box (centre (3,), half-sizes (3,), m) at ``data``'s pose that holds
    every geom's own bounding box (``geom_aabb``, in the geom's frame); None for no geoms."""
    lows, highs = [], []
    for g in geoms:
        centre, half = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        rot = data.geom_xmat[g].reshape(3, 3)
        mid = data.geom_xpos[g] + rot @ centre
        extent = np.abs(rot) @ half
        lows.append(mid - extent)
        highs.append(mid + extent)
    if not lows:
        return None
    low, high = np.min(lows, axis=0), np.max(highs, axis=0)
    return (low + high) / 2, (high - low) / 2


def collidable(model: mujoco.MjModel) -> np.ndarray:
    """Boolean (ngeom,): geoms that take part in collisions at all (a non-zero contype or
    conaffinity, or named in an explicit ``<pair>``)."""
    mask = (model.geom_contype != 0) | (model.geom_conaffinity != 0)
    if model.npair:
        mask[model.pair_geom1] = True
        mask[model.pair_geom2] = True
    return mask


def can_collide(model: mujoco.MjModel) -> np.ndarray:
    """Boolean (ngeom, ngeom), symmetric: pairs the collision pipeline can ever make a contact
    for — through the bitmask test (contype of one & conaffinity of the other) between bodies
    the parent filter keeps, or through an explicit ``<pair>`` — ignoring ``<exclude>`` only
    where no pair names them (mj_collision's rules)."""
    import mujoco

    ctype = model.geom_contype.astype(np.int64)
    caff = model.geom_conaffinity.astype(np.int64)
    bits = ((ctype[:, None] & caff[None, :]) | (ctype[None, :] & caff[:, None])) != 0
    body = model.geom_bodyid
    weld = model.body_weldid
    parent = weld[model.body_parentid[weld]]
    same = weld[:, None] == weld[None, :]
    related = (weld[:, None] == parent[None, :]) | (parent[:, None] == weld[None, :])
    moving = (weld[:, None] != 0) & (weld[None, :] != 0)
    if model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT:
        related[:] = False
    # MuJoCo's filter (engine_collision_driver.c): drop a pair welded together, or a weld and its
    # weld-parent unless one of them is the world's; for every pair of bodies at once
    keep = ~(same | (related & moving))
    for k in range(model.nexclude):
        signature = int(model.exclude_signature[k])
        b1, b2 = signature >> 16, signature & 0xFFFF
        keep[b1, b2] = keep[b2, b1] = False
    allowed = bits & keep[np.ix_(body, body)]
    np.fill_diagonal(allowed, False)
    for k in range(model.npair):
        g1, g2 = model.pair_geom1[k], model.pair_geom2[k]
        allowed[g1, g2] = allowed[g2, g1] = True
    return allowed
