"""The runtime's one switch: EXPRESS_PLAIN=1 turns every piece off, a list turns those off, a name
that is no piece is refused; every piece says what it buys."""
from __future__ import annotations

import pytest

from flows.runtime.pieces import PIECES, SWITCH, check, enabled


@pytest.mark.parametrize("value", ["", "0"])
def test_unset_every_piece_is_on(monkeypatch, value):
    monkeypatch.setenv(SWITCH, value)
    check()
    assert all(enabled(p) for p in PIECES)


@pytest.mark.parametrize("value", ["1", "all", " 1 "])
def test_plain_turns_every_piece_off(monkeypatch, value):
    monkeypatch.setenv(SWITCH, value)
    check()
    assert not any(enabled(p) for p in PIECES)


def test_a_list_turns_off_those_pieces_only(monkeypatch):
    first, second, *rest = PIECES
    monkeypatch.setenv(SWITCH, f"{first}, {second}")
    check()
    assert not enabled(first) and not enabled(second) and all(enabled(p) for p in rest)


def test_a_name_that_is_no_piece_is_refused_naming_it(monkeypatch):
    monkeypatch.setenv(SWITCH, f"{next(iter(PIECES))},gc_thresold")
    with pytest.raises(ValueError, match="no runtime piece named gc_thresold"):
        check()
    with pytest.raises(KeyError):
        enabled("gc_thresold")


def test_every_piece_says_what_it_buys_in_one_line():
    assert PIECES and all(text and "\n" not in text for text in PIECES.values())
