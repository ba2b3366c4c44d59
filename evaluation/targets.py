"""``target_specs`` under its old name (it sat beside ``target.py``, one letter apart), for users' code only.
Importing this module warns (``DeprecationWarning``) naming ``evaluation.target_specs``; nothing in this
project imports it (``tests/test_old_names.py`` checks the app, the library, the benchmarks and the tests)."""
from __future__ import annotations

import warnings

from .target_specs import *  # noqa: F403
from .target_specs import API_KEY_PREFIX, ENGINES, SETTING  # noqa: F401  (constants, named for readers)

warnings.warn("evaluation.targets is an old name: import from evaluation.target_specs (the same names)",
              DeprecationWarning, stacklevel=2)
