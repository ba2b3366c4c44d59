"""The run's steps under their old address: ``evaluation.run`` holds them now (plan, one setup,
assemble). Kept because the Function App's activities and users' code import ``evaluation.steps``."""
from __future__ import annotations

from .run import *  # noqa: F401,F403
from .run import __all__  # noqa: F401
