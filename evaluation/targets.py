"""``target_specs`` under its old name (it sat beside ``target.py``, one letter apart): the Function
App's modules and users' code import ``evaluation.targets``."""
from __future__ import annotations

from .target_specs import *  # noqa: F401,F403
from .target_specs import API_KEY_PREFIX, ENGINES, SETTING  # noqa: F401  (constants, named for readers)
