"""Reddit ids as they are matched: a post is `abc` in a dump and `t3_abc` as a fullname."""
from __future__ import annotations

FULLNAME_PREFIXES = ("t3_", "t1_")  # submission, comment


def post_key(post_id: str) -> str:
    """An id in the form it is matched in: lower case, without a `t3_`/`t1_` fullname prefix."""
    pid = str(post_id).strip().lower()
    return pid[3:] if pid[:3] in FULLNAME_PREFIXES else pid
