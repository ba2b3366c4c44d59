"""The missing-documents filters (escaped, batched under a length limit) and the retry waits, as pure
functions; the fake service's own parser (tests/azure_fake.py) reads the filters back."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from azure_fake import parse_filter
from evaluation.azure_search.filters import doc_id_filters, odata_string
from evaluation.azure_search.retry import RetrySettings, retry_wait


def test_a_single_quote_is_doubled_in_a_string_literal():
    assert odata_string("o'brien's") == "'o''brien''s'"
    assert doc_id_filters("parent_id", ["o'brien"]) == ["search.in(parent_id, 'o''brien', '|')"]


def test_the_delimiter_is_one_no_id_contains():
    assert doc_id_filters("parent_id", ["a|b", "c"]) == ["search.in(parent_id, 'a|b~c', '~')"]


def test_ids_holding_every_delimiter_are_looked_up_with_eq_clauses():
    odd = "a|b~c^d`e;f,g"
    assert doc_id_filters("parent_id", [odd, "plain"]) == [
        "search.in(parent_id, 'plain', '|')", f"parent_id eq '{odd}'"]


def test_no_ids_need_no_filter_and_duplicates_are_looked_up_once():
    assert doc_id_filters("parent_id", []) == []
    assert doc_id_filters("parent_id", ["b", "a", "b"]) == ["search.in(parent_id, 'a|b', '|')"]


def test_batches_stay_under_the_limit():
    ids = [f"doc-{n:03d}" for n in range(100)]  # 7 characters each
    filters = doc_id_filters("parent_id", ids, max_chars=100)
    # 29 characters of frame, then 7 for the first id and 8 for each next: (100 - 29 + 1) // 8 = 9 a filter.
    assert [len(parse_filter(f)[1]) for f in filters] == [9] * 11 + [1]
    assert all(len(f) <= 100 for f in filters)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                        min_size=1, max_size=30).filter(lambda s: s.strip() == s), max_size=40),
       st.integers(min_value=60, max_value=400))
def test_any_ids_come_back_from_the_filters_exactly_and_each_filter_fits(ids, limit):
    filters = doc_id_filters("parent_id", ids, max_chars=limit)
    found = set()
    for expression in filters:
        field, values = parse_filter(expression)
        assert field == "parent_id"
        assert len(expression) <= limit or len(values) == 1
        found |= values
    assert found == set(ids)


def test_the_wait_is_what_the_service_asks_bounded_else_a_doubling_backoff():
    limits = RetrySettings(max_retries=4, max_wait=10.0, base_delay=1.0)
    assert retry_wait({"retry-after-ms": "250"}, 0, limits) == 0.25
    assert retry_wait({"x-ms-retry-after-ms": "1500"}, 0, limits) == 1.5
    assert retry_wait({"retry-after": "3"}, 0, limits) == 3.0
    assert retry_wait({"retry-after": "600"}, 0, limits) == 10.0              # bounded
    assert retry_wait({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}, 2, limits) == 1.0 * 2 ** 2
    assert [retry_wait({}, n, limits) for n in range(5)] == [1.0, 2.0, 4.0, 8.0, 10.0]
