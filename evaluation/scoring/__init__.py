"""Scoring: judging results against the expected answers at a grain, the metrics, and the ranking
and picks. Pure functions over plain data; no search engine is needed to use them."""
