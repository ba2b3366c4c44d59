"""Read-only HTTP routes over the runs: the Evaluate page and /api/v1/evaluations (see ``api.routes``).

``bp`` is the Functions blueprint that ``function_app.py`` registers.
"""
from .routes import bp

__all__ = ["bp"]
