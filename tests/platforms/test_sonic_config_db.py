"""config_db.json built as data: serialized exactly as json.dumps(indent=2, sort_keys=True) writes
it (the goldens and every earlier render were written that way), whatever the text holds."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netgen.nos.sonic import config_db as builder
from netgen.nos.sonic.config_db import serialized
from netgen.rendered import RenderError

pytestmark = pytest.mark.render

# CONFIG_DB shapes: table -> key -> field -> string or list of strings; any text, ASCII or not
text = st.text(max_size=12)
field = st.one_of(text, st.lists(text, max_size=4), st.integers(-5, 5), st.booleans())
rows = st.dictionaries(text, st.dictionaries(text, field, max_size=4), max_size=4)
tables = st.dictionaries(text, rows, max_size=4)


@settings(max_examples=300, deadline=None)
@given(tables)
def test_serialized_is_json_dumps_byte_for_byte(value):
    assert serialized(value) == json.dumps(value, indent=2, sort_keys=True) + "\n"


def test_non_ascii_text_is_escaped_as_json_escapes_it():
    value = {"BANNER_MESSAGE": {"global": {"login": "Zutritt nur für Befugte"}}}
    assert "f\\u00fcr" in serialized(value)


def test_keys_that_are_not_text_are_written_as_json_writes_them():
    value = {"T": {2: {}, 10: {}}}  # json sorts them as numbers, then writes them as text
    expected = '{\n  "T": {\n    "2": {},\n    "10": {}\n  }\n}\n'
    assert serialized(value) == json.dumps(value, indent=2, sort_keys=True) + "\n" == expected


def test_a_table_two_features_build_is_a_netgen_bug(monkeypatch):
    monkeypatch.setattr(builder, "FEATURES", (lambda v: {"PORT": {}}, lambda v: {"PORT": {}}))

    class View:
        hostname = "sw1"

    with pytest.raises(RenderError, match=r"sw1: config_db feature <lambda> repeats tables \['PORT'\]"):
        builder.config_db(View())  # type: ignore[arg-type]
