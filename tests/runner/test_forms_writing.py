"""A body's writing (`forms.apply`) is read without writing it twice: the size bounds and the test of whether a
writing changes the text give what writing the compact twin gives, on bodies far from and across the 1 MB limit."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from conformance.vocab import requests as rq
from conformance.vocab.forms import _writing_kept
from conformance.vocab.protocols import JSON_WRITINGS, compact_size, written

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
# strings that put a body inside, near or outside the limit, each in another way of being escaped
LARGE = st.sampled_from(["a/b", "x" * 900_000, "é" * 300_000, 'q"\\/' * 300_000, "y" * 1_200_000,
                         "\x01" * 200_000])
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT | LARGE,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                      max_leaves=6)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.dictionaries(TEXT, VALUES, max_size=4), st.sampled_from(JSON_WRITINGS))
def test_a_writing_is_kept_as_writing_the_compact_twin_decides(body, writing):
    sent, plain = written(body, writing), written(body, "compact")
    low, high = compact_size(body)
    assert low <= len(plain) <= high
    kept = sent != plain and rq.size_class(len(sent)) == rq.size_class(len(plain))
    assert _writing_kept(body, sent, writing) == kept
