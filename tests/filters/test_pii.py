from filters.pii import scrub, scrub_post
from schemas.records import RawPost


def test_handles_emails_urls_and_phone_numbers_become_placeholders():
    text = ("Thanks u/Kind_Stranger and /u/other-one! Mail me: jane.doe+r@example.co.uk or see "
            "https://www.reddit.com/r/x/comments/abc/?utm=1 and www.blog.org, call (555) 123-4567 "
            "or +44 20 7946 0958.")
    out = scrub(text)
    assert out == ("Thanks [USER] and [USER]! Mail me: [EMAIL] or see [URL] and [URL], call [PHONE] "
                   "or [PHONE].")
    for leaked in ("Kind_Stranger", "other-one", "jane.doe", "example.co.uk", "reddit.com", "blog.org", "123-4567", "7946"):
        assert leaked not in out


def test_urls_keep_the_sentence_punctuation_after_them():
    assert scrub("Read https://example.org/a/b. Or example.com/x, or (www.test.io)!") == (
        "Read [URL]. Or [URL], or ([URL])!")


def test_ordinary_numbers_and_text_are_left_alone():
    text = "I'm 24, I slept 10 hours in 2023 and I feel so anxious about 3 exams at 9:30."
    assert scrub(text) == text


def test_scrub_post_blanks_author_and_scrubs_every_text_field():
    p = scrub_post(RawPost(id="1", text="ask u/bob", title="mail a@b.io", selftext="ask u/bob", author="bob"))
    assert (p.text, p.title, p.selftext, p.author) == ("ask [USER]", "mail [EMAIL]", "ask [USER]", "")


def test_scrub_post_copies_every_other_field_and_leaves_the_original_alone():
    from dataclasses import fields

    original = RawPost(id="7", text="Help\n\nmail me at a@b.io ☺️ or www.x.com", subreddit="s", author="bob",
                       created_utc=5, title="Help", selftext="mail me at a@b.io ☺️ or www.x.com", over_18=True,
                       score=-2, distinguished="admin", stickied=True, removed_by_category="m", kind="comment",
                       link_id="t3_x", source="dump", source_file="f.zst", source_line=9, retrieved_on=11,
                       crosspost_parent="t3_y")
    before = RawPost(**{f.name: getattr(original, f.name) for f in fields(RawPost)})
    p = scrub_post(original)
    assert original == before and p is not original
    scrubbed = {"text", "title", "selftext", "author"}
    assert all(getattr(p, f.name) == getattr(original, f.name) for f in fields(RawPost) if f.name not in scrubbed)
    assert (p.text, p.selftext, p.author) == ("Help\n\nmail me at [EMAIL] ☺️ or [URL]", "mail me at [EMAIL] ☺️ or [URL]", "")


def test_cheap_hints_never_skip_a_pattern_that_would_have_matched():
    """scrub() tries a pattern only when a cheap hint says it may match; on tricky inputs (phone
    formats, Unicode digits and spaces, URLs, e-mails, handles, emoji, markdown) the result must
    equal running every pattern unconditionally."""
    import random

    from filters.pii import EMAIL, HANDLE, PHONE, URL, _phone

    def unconditional(text):
        text = URL.sub("[URL]", EMAIL.sub("[EMAIL]", text))
        return PHONE.sub(_phone, HANDLE.sub("[USER]", text))

    pieces = ["call 555-123-4567", "+44 20 7946 0958", "(02) 9999 1234", "0412 345 678.", "x(123)4567890y",
              "555\u00a0123\u00a04567", "٥٥٥-١٢٣-٤٥٦٧", "１２３４５６７８", "123.456.7890", "12 34 56", "1234567",
              "in 2019 I was 25", "id 123456", "a+1 234 567 8901", "mail me: a.b+c@mail.co.uk", "see WWW.Example.COM/x",
              "https://t.co/abc?x=1.", "reddit.com/u/someone", "ask /u/bob_22 or u/x", "I’m **so** sad 😬 #1",
              "~~struck~~ `code`", "site.CoM.", "x.İnfo", "a.u\u212a", "Www.x", "\n\n", " ", "—", "…", "5", "55", "555", "-", "."]
    rng = random.Random(11)
    texts = pieces + ["".join(rng.choice(pieces) + rng.choice(["", " ", "\n", ".", "-"]) for _ in range(rng.randint(2, 6)))
                      for _ in range(400)]
    assert any(scrub(t) != t for t in texts) and any("[PHONE]" in scrub(t) for t in texts)
    for text in texts:
        assert scrub(text) == unconditional(text), text


def test_url_hint_on_lowered_ascii_text_agrees_with_the_case_insensitive_hint():
    """The URL hint lowers ASCII texts and searches case-sensitively (cheaper); on seeded random
    strings dense in TLD letters of both cases, dots, slashes and non-ASCII look-alikes (Kelvin
    sign, dotted capital I) it must say exactly what the case-insensitive form says."""
    import random

    from filters.pii import _TLD_HINT, _may_hold_url

    def case_insensitive(text):
        return "://" in text or "www." in text.lower() or _TLD_HINT.search(text) is not None

    pieces = [".", ".", "com", "CoM", "cOm", "co", "Co", "uk", "UK", "u\u212a", "io", "\u0130o", "info", "\u0130nfo",
              "gov", "Gg", "tV", "edu", "www", "WwW", ":/", "/", ":", " ", "-", "_", "x", "1", "é", "m", "s"]
    rng = random.Random(5)
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 7))) for _ in range(30_000)]
    said = [_may_hold_url(t) for t in texts]
    assert said == [case_insensitive(t) for t in texts]
    assert sum(said) > 1_000 and len(texts) - sum(said) > 1_000
    assert sum(1 for t, s in zip(texts, said) if s and t.isascii() and "://" not in t) > 500
