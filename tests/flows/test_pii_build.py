"""`express build` on a dump whose posts carry PII of every kind publishes none of it (read back
with DuckDB), while the look-alikes that are not PII survive in the release."""
import json
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[2]
PII = {  # what must never reach a release -> the placeholder it becomes
    "jane.doe99@example.com": "[EMAIL]",
    "johnsmith.ai/blog": "[URL]",
    "https://blog.example.app/post/12": "[URL]",
    "192.168.14.201": "[IP]",
    "2001:db8:85a3::8a2e:370:7334": "[IP]",
    "+44 20 7946 0958": "[PHONE]",
    "(415) 555-0172": "[PHONE]",
    "4111 1111 1111 1111": "[CARD]",
    "123-45-6789": "[SSN]",
    "GB82 WEST 1234 5698 7654 32": "[IBAN]",
    "u/throwaway_sad_42": "[USER]",
    "@jane_doe_99": "[USER]",
    "jake#1234": "[USER]",
    "Sarah Johnson": "[NAME]",
}
TRAPS = ["r/relationship_advice", "23F", "10/10", "$40", "3:30pm", "2014", "412 days"]
FILLER = ("The week started slowly and the weather stayed grey the whole time, so most evenings I stayed in, "
          "cooked something simple, and tried to read a few chapters before bed. Work was the usual mix of "
          "meetings and small fixes, nothing dramatic, and my manager mostly left me alone to get on with it. "
          "On the weekend I walked along the river for an hour and called my parents, who sounded well. ")


def _post(i: int, pii: str) -> dict:
    trap = TRAPS[i % len(TRAPS)]
    body = (f"{FILLER}Anyway, I feel so guilty about what happened on Friday ({trap}). "
            f"Someone passed my details around, {pii}, and now strangers keep getting in touch. "
            f"{FILLER}I just wanted to write it down somewhere.")
    return {"id": f"p{i:03d}", "subreddit": "offmychest", "author": f"writer{i}", "created_utc": 1700000000 + i,
            "title": f"A long week {i}", "selftext": body, "over_18": False, "score": 5}


def test_a_build_over_posts_with_every_kind_of_pii_publishes_none_of_it(prefect_harness, tmp_path):
    from tests.builds import build

    dump = tmp_path / "RS_2024-03.jsonl"
    dump.write_text("\n".join(json.dumps(_post(i, p)) for i, p in enumerate(PII)) + "\n")
    recipe = tmp_path / "recipe.toml"
    recipe.write_text((REPO / "configs" / "demo.toml").read_text()
                      .replace("data_docs = true", "data_docs = false")
                      .replace("min_masks_for_distribution = 100", "min_masks_for_distribution = 100000")
                      .replace("max_label_share = 0.25", "max_label_share = 1.0"))
    built = build([str(dump)], str(tmp_path / "wh"), str(recipe), workers=0)
    data = Path(built["release"]["path"]) / "data" / "*.parquet"
    con = duckdb.connect()
    rows = con.execute(f"SELECT post_id, text, masked_text FROM read_parquet('{data}')").fetchall()
    assert len({r[0] for r in rows}) == len(PII)  # every post was published, scrubbed
    published = "\n".join(t + "\n" + m for _, t, m in rows)
    leaked = [p for p in PII if p in published]
    assert leaked == []
    for pii, tag in PII.items():
        assert con.execute(f"SELECT count(*) FROM read_parquet('{data}') WHERE contains(text, ?)",
                           [tag]).fetchone()[0] > 0, (pii, tag)
    assert [t for t in TRAPS if t not in published] == []
    manifest = json.loads(Path(built["release"]["manifest"]).read_text())
    assert manifest["gate"]["success"] is True
