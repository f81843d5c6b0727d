"""What a post's invisible characters become at read (sources/reddit_text.py, its data file)."""
import pytest

from sources.reddit_text import author_text, default_table, load_table


def test_invisible_characters_typed_directly_are_settled_like_their_references():
    zwj_family = "\U0001F468\u200d\U0001F469\u200d\U0001F467"  # an emoji sequence: its joiners stay
    raw = f"I\u00a0am so\u200b tired\ufeff of this {zwj_family}"
    assert author_text(raw, escaped=False) == f"I am so tired of this {zwj_family}"
    assert author_text("a&#x200b;b &#8203;c&nbsp;d &#160;e", escaped=False) == "ab c d  e"


def test_other_references_stay_as_written_and_escaped_text_is_decoded_once():
    assert author_text("&amp;lt;3 &amp;copy; &amp;#x41;", escaped=True) == "&lt;3 &copy; &#x41;"
    assert author_text("&lt;3 &copy;", escaped=False) == "&lt;3 &copy;"


def test_the_shipped_table_has_a_version_and_both_kinds():
    table = default_table()
    assert table.version and set(table.becomes.values()) == {"", " "}


def test_a_table_entry_that_is_no_code_point_names_the_file(tmp_path):
    bad = tmp_path / "text.toml"
    bad.write_text('version = "x"\nremove = ["200B"]\n')
    with pytest.raises(ValueError, match=r"text\.toml: \[remove\] '200B'"):
        load_table(bad)
