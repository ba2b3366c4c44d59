"""The model catalog answers from the specs alone, without loading a model."""
from __future__ import annotations

import pytest

from evaluation.engine.model_catalog import COLBERT_NAME, CROSS_ENCODER_NAME, HASH_NAME, vector_size
from evaluation.errors import UsageError


def test_vector_size_is_each_embedders_size_and_the_cross_encoder_has_none():
    assert (vector_size("bge-small"), vector_size("minilm-l6"), vector_size(COLBERT_NAME)) == (384, 384, 128)
    assert vector_size(HASH_NAME) > 0
    with pytest.raises(UsageError, match="makes no vectors"):
        vector_size(CROSS_ENCODER_NAME)
