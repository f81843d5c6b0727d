from schemas.records import Malformed, RawPost
from sources.join import SubmissionFlags, join_comments, order_inputs


def test_comments_inherit_nsfw_from_their_submission():
    recs = [RawPost(id="abc", text="t", over_18=True), RawPost(id="def", text="t"),
            Malformed("f", 3, "x", "bad_json"),
            RawPost(id="c1", text="c", kind="comment", link_id="t3_abc"),
            RawPost(id="c2", text="c", kind="comment", link_id="t3_def"),
            RawPost(id="c3", text="c", kind="comment", link_id="t3_unseen")]
    flags = SubmissionFlags()
    out = list(join_comments(recs, flags))
    assert len(out) == len(recs)
    assert [r.over_18 for r in out if isinstance(r, RawPost) and r.kind == "comment"] == [True, False, False]
    assert flags.joined == 1 and flags.nsfw == {int("abc", 36)}


def test_submission_files_are_read_before_comment_files():
    assert order_inputs(["a/RC_2024-01.zst", "b/RS_2024-01.zst", "x.jsonl", "rc_2024-02.ndjson"]) == [
        "b/RS_2024-01.zst", "x.jsonl", "a/RC_2024-01.zst", "rc_2024-02.ndjson"]
