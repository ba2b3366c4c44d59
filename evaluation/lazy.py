"""Names a package exports without importing them until first use (PEP 562 ``__getattr__``).

The packages that wrap heavy dependencies (the model runtime, the Azure SDK, an HTTP client) export
their names this way, so importing them costs nothing until a name is used.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, Mapping


def lazy_attributes(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``names`` maps each exported name to the module, relative
    to ``package``, that defines it. A name is imported once and then kept on the package, unless its module
    gives it from its own ``__getattr__`` (``GOLDEN_SCHEMA``: a fresh copy each time), which is then asked
    again every time."""
    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(names[name], package)
        value = getattr(module, name)
        if name in vars(module):  # a plain name of its module: kept; one its __getattr__ makes: asked each time
            setattr(sys.modules[package], name, value)
        return value

    return __getattr__
