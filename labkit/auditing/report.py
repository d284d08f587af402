"""What an audit found, and three ways to read it: text, JSON and a notebook table."""

from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import mujoco

__all__ = ["SEVERITIES", "Finding", "Report"]

# error: the simulation is wrong or unstable as the model stands; warning: very likely a
# mistake, with a symptom the course shows; info: worth knowing, often deliberate.
SEVERITIES = ("error", "warning", "info")
SITE = "https://github.com/mujoco-by-experiment/mujoco-by-experiment/blob/main/course/"


@dataclass(frozen=True)
class Finding:
    """One thing the audit found.

    check: the check's id (``"overlap-at-start"``); severity: one of :data:`SEVERITIES`;
    elements: the model's elements by kind and name (``"geom 'left_pad'"``; an unnamed one as
    ``"geom #12 in body 'hand'"``); measured / threshold / unit: the number the check compared
    and the limit it used; summary: what was found, with its numbers; why: why it matters,
    in one sentence; chapter: the course section that teaches it (``"07 §1 · A joint that
    jitters"``) and ``notebook`` its file; fix: what to do; geoms: ids to highlight in a
    picture; detail: further numbers (JSON-serializable).
    """

    check: str
    severity: str
    elements: tuple[str, ...]
    measured: float
    threshold: float
    unit: str
    summary: str
    why: str
    chapter: str
    notebook: str
    fix: str
    geoms: tuple[int, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain JSON-ready data (``geoms`` left out: ids mean nothing outside)."""
        out = asdict(self)
        out.pop("geoms")
        out["elements"] = list(self.elements)
        out["link"] = SITE + self.notebook
        for key in ("measured", "threshold"):
            value = float(out[key])
            out[key] = value if np.isfinite(value) else str(value)
        return out


@dataclass
class Report:
    """The findings of :func:`labkit.audit`, most severe first.

    name: the model's name; findings: list of :class:`Finding`; ran: ids of the checks run;
    skipped: check id → why it did not run; seconds: how long the audit took (wall clock).
    Print it for a text report, ``to_json()`` for ``{"findings": [...]}``; in a notebook it
    renders as a table with a picture of the flagged geoms.
    """

    name: str
    findings: list[Finding]
    ran: list[str]
    skipped: dict[str, str]
    seconds: float
    model: mujoco.MjModel | None = field(default=None, repr=False, compare=False)
    data: mujoco.MjData | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        order = {s: i for i, s in enumerate(SEVERITIES)}
        self.findings.sort(key=lambda f: (order[f.severity], self.ran.index(f.check)
                                          if f.check in self.ran else 0))

    def __repr__(self) -> str:  # deterministic: no timing (notebooks compare their outputs)
        return (f"<labkit audit report of {self.name!r}: {len(self.findings)} findings from "
                f"{len(self.ran)} checks>")

    def __len__(self) -> int:
        return len(self.findings)

    def __iter__(self):
        return iter(self.findings)

    def of(self, check: str) -> list[Finding]:
        """The findings of one check id."""
        return [f for f in self.findings if f.check == check]

    def checks(self) -> set[str]:
        """The ids of the checks that found something."""
        return {f.check for f in self.findings}

    def to_json(self, indent: int | None = 2) -> str:
        """``{"model", "findings": [...], "ran", "skipped", "seconds"}`` as JSON text."""
        return json.dumps({"model": self.name, "findings": [f.to_dict() for f in self.findings],
                           "ran": self.ran, "skipped": self.skipped,
                           "seconds": round(self.seconds, 3)}, indent=indent, ensure_ascii=False)

    def __str__(self) -> str:
        head = (f"labkit audit · {self.name}: {len(self.findings)} finding"
                f"{'' if len(self.findings) == 1 else 's'} from {len(self.ran)} checks")
        lines = [head, "=" * min(len(head), 100)]
        if not self.findings:
            lines.append("Nothing found.")
        for f in self.findings:
            lines += [f"[{f.severity}] {f.check}: {f.summary}",
                      f"    elements: {_short(f.elements)}",
                      f"    measured {_num(f.measured)} {f.unit}, threshold {_num(f.threshold)} "
                      f"{f.unit}",
                      f"    why: {f.why} (chapter {f.chapter})",
                      f"    fix: {f.fix}", ""]
        for check, why in self.skipped.items():
            lines.append(f"(not run: {check}: {why})")
        return "\n".join(lines).rstrip()

    def picture(self, width: int = 320, height: int = 240) -> np.ndarray | None:
        """A snapshot with every flagged geom in red and the rest faded; None if nothing is
        flagged or no renderer works here."""
        import copy

        from ..gl import GLUnavailable
        from ..rendering import snapshot

        flagged = sorted({g for f in self.findings for g in f.geoms})
        if not flagged or self.model is None:
            return None
        model = copy.deepcopy(self.model)
        model.geom_rgba[:, 3] *= 0.25
        model.geom_rgba[flagged] = (0.9, 0.1, 0.1, 1.0)
        model.geom_matid[flagged] = -1
        model.vis.headlight.ambient[:] = 0.4  # models without lights still show their parts
        model.vis.headlight.diffuse[:] = 0.6
        # frame the flagged geoms: their bounding spheres, seen from 3× their radius
        where = self.data.geom_xpos[flagged]
        centre = where.mean(axis=0)
        radius = float(np.max(np.linalg.norm(where - centre, axis=1)
                              + model.geom_rbound[flagged]))
        try:
            return snapshot(model, self.data, width=width, height=height, lookat=centre,
                            distance=3 * max(radius, 1e-3), azimuth=135, elevation=-25)
        except GLUnavailable:
            return None

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{f.severity}</td><td><code>{f.check}</code></td>"
            f"<td>{html.escape(_short(f.elements))}</td>"
            f"<td>{_num(f.measured)} {html.escape(f.unit)}<br><small>threshold "
            f"{_num(f.threshold)}</small></td><td>{html.escape(f.summary)}<br><small>"
            f"{html.escape(f.why)}</small></td><td><a href=\"{SITE}{f.notebook}\">"
            f"{html.escape(f.chapter)}</a></td><td>{html.escape(f.fix)}</td></tr>"
            for f in self.findings)
        table = (f"<p><b>labkit audit · {html.escape(self.name)}</b>: {len(self.findings)} "
                 f"findings from {len(self.ran)} checks</p>")
        if rows:
            table += ("<table><thead><tr><th>severity</th><th>check</th><th>elements</th>"
                      "<th>measured</th><th>what and why</th><th>chapter</th><th>fix</th></tr>"
                      f"</thead><tbody>{rows}</tbody></table>")
        image = self.picture()
        if image is not None:
            import mediapy

            from ..display import image_html

            table += image_html(mediapy.compress_image(image, fmt="png"), self.picture_alt(),
                                width=image.shape[1], height=image.shape[0])
        return table

    def picture_alt(self) -> str:
        """What :meth:`picture` shows, as its alt text: the model, and the flagged geoms by
        name (an unnamed one as ``#id``), in red."""
        flagged = sorted({g for f in self.findings for g in f.geoms})
        names = [(self.model.geom(g).name or f"#{g}") if self.model is not None else f"#{g}"
                 for g in flagged]
        return (f"render of model '{self.name}': the {len(flagged)} flagged "
                f"geom{'' if len(flagged) == 1 else 's'} in red ({_short(tuple(names))}), "
                "the rest faded")


def _num(value: float) -> str:
    return f"{value:.3g}" if np.isfinite(value) else str(value)


def _short(elements: tuple[str, ...], most: int = 6) -> str:
    shown = ", ".join(elements[:most])
    return shown + (f" and {len(elements) - most} more" if len(elements) > most else "")
