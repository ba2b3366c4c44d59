"""The run's steps under their old address, for users' code only: ``evaluation.run`` holds them (plan, one
setup, assemble). Importing this module warns (``DeprecationWarning``) naming that place; nothing in this
project imports it (``tests/test_old_names.py`` checks the app, the library, the benchmarks and the tests)."""
from __future__ import annotations

import warnings

from .run import *  # noqa: F403
from .run import __all__  # noqa: F401

warnings.warn("evaluation.steps is an old name: import from evaluation.run (the same names)", DeprecationWarning,
              stacklevel=2)
