"""The names ``labkit`` exports are exactly the ones its docstring documents."""

from __future__ import annotations

import inspect
import re

import labkit


def test_documented_names_are_the_exported_names():
    text = labkit.__doc__.split("The names a chapter uses")[1]
    documented = set(re.findall(r"``(?:labkit\.)?([A-Za-z_]\w*)``", text))
    documented -= {"classroom"}
    assert documented == set(labkit.__all__)
    assert all(hasattr(labkit, name) for name in labkit.__all__)


def test_every_exported_function_documents_itself_with_an_example():
    for name in labkit.__all__:
        value = getattr(labkit, name)
        if inspect.isfunction(value):
            doc = inspect.getdoc(value) or ""
            assert "Example" in doc, f"labkit.{name} needs an example in its docstring"
