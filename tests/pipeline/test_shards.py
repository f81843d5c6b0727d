"""Sharding without Prefect: deterministic shard names, original line numbers, markers that skip
finished work, and duplicates caught across shard boundaries (also after a resume)."""
import json
import random
from pathlib import Path

import pyarrow.parquet as pq
import zstandard

from common.files import temp_path
from filters.dedupe import split_chain
from filters.chain import filters_from_config
from pipeline.dedupe_shards import DedupeStep, kept_posts
from pipeline.extract_shards import POST_COLUMNS
from pipeline.filter_shards import FilterStep
from pipeline.run import expand_inputs, load_saved_recipe, save_recipe
from pipeline.shards import Shard, input_stems, shard_lines
from pipeline.split import InputFile, SplitStep, split_so_far
from pipeline.steps import read_marker, run_in_order, run_step
from schemas.config import load_recipe
from schemas.records import RawPost
from sources.dumps import iter_lines

REPO = Path(__file__).resolve().parents[2]


def split_input(path: str, shards_dir: str, stem: str, shard_lines: int, sha256: str | None = None):
    return run_step(SplitStep, InputFile(path, Path(shards_dir), stem, shard_lines, sha256))


def filter_shard(shard: Shard, recipe: str, nsfw_files: list[str] | None = None):
    return run_step(FilterStep, shard, str(recipe), nsfw_files=nsfw_files)


def dedupe_shards(shards: list[Shard], recipe: str):
    return run_in_order(DedupeStep, shards, str(recipe))


def _post(i: int, text: str, disclose: bool = True) -> str:
    """A submission line; `disclose` ends a text that has no disclosure with one, so the build's early
    disclosure filter keeps it (these tests are about the steps after it)."""
    if disclose and "i feel" not in text.lower():
        text += ". I feel so tired"
    return json.dumps({"id": f"p{i}", "subreddit": "test", "author": f"u{i}", "created_utc": 1700000000 + i,
                       "title": "t", "selftext": text})


def _dump(tmp_path: Path, lines: list[str], name: str = "RS_2030-01.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def _in_memory_drops(shards: list[Shard], recipe: Path) -> list[list[int]]:
    """The oracle: every kept post of every shard, in order, through the stateful filters' `check`."""
    _, chain = split_chain(filters_from_config(load_saved_recipe(recipe).filters))
    out = []
    for s in shards:
        rows = pq.read_table(s.path / "posts.parquet", columns=["id", "text"]).to_pylist()
        out.append([k for k, r in enumerate(rows)
                    if any(f.check(RawPost(id=r["id"], text=r["text"])) is not None for f in chain)])
    return out


def test_split_names_shards_deterministically_and_keeps_original_line_numbers(tmp_path):
    lines = [_post(i, f"post number {i} has some words in it") for i in range(23)]
    lines[7] = ""  # a blank line still counts as a line of the input
    dump = _dump(tmp_path, lines)
    out = split_input(str(dump), str(tmp_path / "shards"), "RS_2030-01", 10)
    assert [s.path.name for s in out.shards] == ["RS_2030-01-00000", "RS_2030-01-00001",
                                                            "RS_2030-01-00002"]
    assert [s.lines for s in out.shards] == [10, 10, 3] and out.lines == 23
    second = out.shards[1]
    got = list(shard_lines(second))
    assert [n for n, _ in got] == list(range(11, 21))
    assert got[0][1] == lines[10].encode()
    # a finished split is read back from its marker, not redone
    marker = tmp_path / "shards" / "split-RS_2030-01.done"
    before = marker.stat().st_mtime_ns
    again = split_input(str(dump), str(tmp_path / "shards"), "RS_2030-01", 10)
    assert again.skipped and not out.skipped and again.shards == out.shards and again.sha256 == out.sha256
    assert marker.stat().st_mtime_ns == before


def test_shards_hold_every_line_of_the_input_in_order_whatever_the_block_and_line_ends(tmp_path):
    """The split counts lines in decompressed blocks and cuts only at shard ends: on inputs with
    blank lines, \\r, lines longer than a block, with and without a last newline, plain or zstd,
    the shards' lines must be the input's lines (numbers included), shard_lines a shard."""
    rng = random.Random(3)
    inputs = [b"", b"\n", b"x", b"a\nb", b"a\nb\n", b"\n\n\n"]
    for _ in range(60):
        parts = [rng.choice([b"", b"{}", b"\r", b"x" * rng.randint(1, 3000)]) for _ in range(rng.randint(0, 30))]
        inputs.append(b"\n".join(parts) + rng.choice([b"", b"\n", b"\n\n", b"tail"]))
    inputs.append(b"\n".join(b"y" * rng.randint(200, 3000) for _ in range(3000)))  # blocks end mid-line
    for k, data in enumerate(inputs):
        path = tmp_path / (f"RS_{k}.zst" if k % 2 else f"RS_{k}.jsonl")
        path.write_bytes(zstandard.ZstdCompressor().compress(data) if k % 2 else data)
        n = rng.randint(1, 7) if len(data) < 100_000 else 700
        split = split_input(str(path), str(tmp_path / f"shards-{k}"), "s", n, "0" * 64)
        want = list(iter_lines(path))
        got = [line for e in split.shards for line in shard_lines(e)]
        assert got == want, (k, data[:60])
        assert split.lines == len(want) == sum(e.lines for e in split.shards)
        assert all(e.lines == n for e in split.shards[:-1]) and split.shards[-1].lines <= n
        assert len(split.shards) == max(1, -(-len(want) // n))


def test_each_shard_is_listed_by_its_own_marker_as_soon_as_it_is_written(tmp_path):
    """What lets the flow filter a shard while the rest of the input is still being split."""
    dump = _dump(tmp_path, [_post(i, f"post {i}") for i in range(25)])
    root = tmp_path / "shards"
    assert split_so_far(root, "RS_2030-01") == []
    out = split_input(str(dump), str(root), "RS_2030-01", 10)
    assert split_so_far(root, "RS_2030-01") == out.shards
    assert split_so_far(root, "RS_2030-01", start=1) == out.shards[1:]
    # an interrupted split: only the shards written (in order) are listed
    (root / "RS_2030-01-00001" / "split.done").unlink()
    assert split_so_far(root, "RS_2030-01") == out.shards[:1]


def test_a_folder_of_dumps_is_read_without_the_temp_files_a_killed_writer_left(tmp_path):
    dump = _dump(tmp_path, [_post(1, "post 1")])
    temp_path(tmp_path / "praw-ab12.checkpoint.jsonl").write_text("half written")
    assert expand_inputs([str(tmp_path)]) == [str(dump)]


def test_inputs_sharing_a_stem_get_distinct_shard_names():
    stems = input_stems(["/a/RS_2024-01.zst", "/b/RS_2024-01.zst", "/c/RC_2024-01.zst"])
    assert len(set(stems.values())) == 3 and stems["/c/RC_2024-01.zst"] == "RC_2024-01"


def test_duplicates_are_caught_across_shards_and_after_a_resume(tmp_path):
    text = "I feel so happy about this whole long story of mine today"
    lines = [_post(i, f"unique post {i} with enough words to pass") for i in range(8)]
    lines[2] = _post(2, text)
    lines[6] = _post(6, text.upper())  # a repost in the next shard (case folded)
    lines[7] = "{not json"
    dump = _dump(tmp_path, lines)
    recipe = save_recipe(load_recipe(REPO / "configs" / "demo.toml"), tmp_path / "recipe.json")
    shards = split_input(str(dump), str(tmp_path / "shards"), "RS_2030-01", 4).shards
    filtered = [filter_shard(s, str(recipe)) for s in shards]
    assert [f.funnel.malformed for f in filtered] == [0, 1]
    first = dedupe_shards(shards, str(recipe))
    assert first[1].funnel.dropped == {"duplicate": 1} and first[0].funnel.dropped == {}
    # resume: the second shard's dedupe is redone; the first is replayed, so the repost is still caught
    (shards[1].path / "dedupe.done").unlink()
    again = dedupe_shards(shards, str(recipe))
    assert again[0].skipped and not again[1].skipped
    assert again[1].funnel == first[1].funnel
    kept = [p.id for p in kept_posts(shards[1], POST_COLUMNS)]
    assert "p6" not in kept and kept == ["p4", "p5"]
    assert read_marker(shards[1].path, "dedupe")["funnel"]["read"] == 3
    quarantined = pq.read_table(shards[1].path / "quarantine-dedupe.parquet").to_pylist()
    assert [(q["post_id"], q["reason"], q["source_line"]) for q in quarantined] == [("p6", "duplicate", 7)]


def test_comment_shards_join_nsfw_ids_that_submission_shards_persisted_also_after_a_resume(tmp_path):
    from pipeline.filter_shards import nsfw_id_files

    subs = [_post(i, f"submission {i} has plenty of words to pass the filters") for i in range(6)]
    subs[4] = json.dumps({**json.loads(subs[4]), "over_18": True})  # in the second submission shard
    comments = [json.dumps({"id": f"c{k}", "link_id": f"t3_p{4 if k % 2 else 1}", "subreddit": "test",
                            "author": f"c{k}", "body": f"comment {k} says enough words to be kept here and I feel so tired"})
                for k in range(4)]
    rs, rc = _dump(tmp_path, subs), _dump(tmp_path, comments, "RC_2030-01.jsonl")
    recipe = str(save_recipe(load_recipe(REPO / "configs" / "demo.toml"), tmp_path / "recipe.json"))
    sub_shards = split_input(str(rs), str(tmp_path / "shards"), "RS_2030-01", 3).shards
    [com_shard] = split_input(str(rc), str(tmp_path / "shards"), "RC_2030-01", 10).shards
    assert [filter_shard(s, recipe).funnel.dropped for s in sub_shards] == [{}, {"nsfw": 1}]
    ids = nsfw_id_files(sub_shards)
    assert [Path(f).read_text() for f in ids] == ["p4\n"]  # the first shard's empty id file is left out
    assert (sub_shards[0].path / "nsfw-submissions.txt").read_text() == ""
    first = filter_shard(com_shard, recipe, ids)
    assert first.funnel.dropped == {"nsfw": 2} and first.comments_joined == 2
    # resume: the comment shard is redone from the id files the finished submission shards left
    (com_shard.path / "filter.done").unlink()
    again = filter_shard(com_shard, recipe, nsfw_id_files(sub_shards))
    assert not again.skipped and again.funnel == first.funnel
    kept = [r["id"] for r in pq.read_table(com_shard.path / "posts.parquet").to_pylist()]
    assert kept == ["c0", "c2"]


def test_a_submission_shard_with_comments_is_refiltered_once_earlier_shards_ids_are_known(tmp_path):
    from pipeline.filter_shards import needs_join, nsfw_id_files

    lines = [_post(i, f"submission {i} has plenty of words to pass the filters") for i in range(3)]
    lines[0] = json.dumps({**json.loads(lines[0]), "over_18": True})
    lines += [json.dumps({"id": f"c{k}", "link_id": f"t3_p{k}", "subreddit": "test", "author": f"c{k}",
                          "body": f"comment {k} says enough words to be kept here and I feel so tired"}) for k in range(3)]
    recipe = str(save_recipe(load_recipe(REPO / "configs" / "demo.toml"), tmp_path / "recipe.json"))
    first, second = split_input(str(_dump(tmp_path, lines)), str(tmp_path / "shards"), "RS_2030-01", 3).shards
    assert filter_shard(first, recipe).unjoined_comments == 0
    alone = filter_shard(second, recipe)
    assert alone.funnel.kept == 3 and alone.unjoined_comments == 3
    ids = nsfw_id_files([first])
    assert needs_join(alone, ids) and not needs_join(alone, [])
    joined = filter_shard(second, recipe, ids)
    assert not joined.skipped and joined.funnel.dropped == {"nsfw": 1} and joined.comments_joined == 1
    assert filter_shard(second, recipe, ids).skipped  # done with these ids: not redone again


def test_duplicate_index_drops_the_same_rows_as_the_in_order_filter(tmp_path):
    """The DuckDB key-file dedupe and the in-memory filter (the oracle) agree row for row: repeats
    within a shard, across shards, and of a post seen two shards back."""
    texts = [f"distinct post {i} with several words here" for i in range(30)]
    for dup, orig in ((3, 1), (12, 1), (13, 11), (14, 14 - 1), (25, 3), (29, 20)):
        texts[dup] = texts[orig].upper()
    dump = _dump(tmp_path, [_post(i, t) for i, t in enumerate(texts)])
    recipe = save_recipe(load_recipe(REPO / "configs" / "demo.toml"), tmp_path / "recipe.json")
    shards = split_input(str(dump), str(tmp_path / "shards"), "RS_2030-01", 10).shards
    for s in shards:
        filter_shard(s, str(recipe))
    assert all((s.path / "dup-keys.parquet").exists() for s in shards)
    by_index = [d.dropped_rows for d in dedupe_shards(shards, str(recipe))]
    assert by_index == _in_memory_drops(shards, recipe)
    assert by_index == [[3], [2, 3, 4], [5, 9]]


def test_duplicate_index_finds_repeats_under_a_small_memory_limit(tmp_path):
    from common.parquet import ParquetSink
    from filters.duplicate_index import KEYS, repeated_rows
    from filters.reddit import normalised_hash

    files, expected, seen = [], {}, set()
    for k in range(4):
        path = tmp_path / f"keys-{k}.parquet"
        with ParquetSink(path, KEYS) as sink:
            for row in range(40_000):
                n = (k * 40_000 + row) % 150_000  # the last file repeats the first 10,000 keys
                key = normalised_hash(f"post {n}")
                if key in seen:
                    expected.setdefault(k, []).append(row)
                seen.add(key)
                sink.write({"key": key})
        files.append(path)
    assert repeated_rows(files, tmp_path / "spill", memory_limit="20MB") == expected
    assert list(expected) == [3] and len(expected[3]) == 10_000


def test_near_duplicate_keys_made_while_filtering_drop_the_same_rows_as_the_in_memory_filters(tmp_path):
    """With the near-duplicate filter on, each shard's filter step stores the MinHash signature of
    every kept post (near-signatures.npy, row-aligned with posts.parquet) and its LSH band keys
    (near-bands.parquet), so dedupe decides in DuckDB and replays shared keys only; it must drop
    exactly the rows the filters' `check` drops from the text (the oracle), including near copies one
    and two shards back, also when resumed."""
    import dataclasses

    import numpy as np
    import pytest

    story = ("I feel so guilty about missing my sister's graduation last weekend because work ran late "
             "and I could not get away in time to see her walk across the stage")
    texts = [f"post number {i} tells a different story about {w} and how the day went for everyone there"
             for i, w in enumerate(["dogs", "rain", "trains", "cooking", "music", "chess", "snow", "work", "tea",
                                    "maps", "bikes", "stars", "clay", "boats", "math", "birds", "wood", "glass"])]
    texts[1] = story
    texts[4] = story.replace("last weekend", "last Saturday")  # same shard
    texts[9] = story + " again"  # next shard
    texts[15] = story.upper()  # exact repost two shards on
    dump = _dump(tmp_path, [_post(i, t) for i, t in enumerate(texts)])
    base = load_recipe(REPO / "configs" / "demo.toml")
    near_on = dataclasses.replace(base, filters=dataclasses.replace(base.filters, near_duplicate_threshold=0.8))
    recipe = save_recipe(near_on, tmp_path / "recipe.json")
    shards = split_input(str(dump), str(tmp_path / "shards"), "RS_2030-01", 6).shards
    for s in shards:
        filter_shard(s, str(recipe))
    for s in shards:
        sigs = np.load(s.path / "near-signatures.npy")
        rows = pq.ParquetFile(s.path / "posts.parquet").metadata.num_rows
        assert sigs.shape == (rows, 64) and sigs.dtype == np.uint32
    assert all((s.path / "near-bands.parquet").exists() for s in shards)
    stored = [(d.dropped_rows, d.funnel) for d in dedupe_shards(shards, str(recipe))]
    (shards[-1].path / "dedupe.done").unlink()  # resume: earlier shards still count, unchanged
    resumed = dedupe_shards(shards, str(recipe))
    assert [d.skipped for d in resumed] == [True, True, False]
    assert [(d.dropped_rows, d.funnel) for d in resumed] == stored
    assert [rows for rows, _ in stored] == _in_memory_drops(shards, recipe)
    assert [f.dropped for _, f in stored] == [{"near_duplicate": 1}, {"near_duplicate": 1}, {"duplicate": 1}]

    for s in shards:  # signatures of the wrong row count: dedupe stops naming the file, before any marker
        np.save(s.path / "near-signatures.npy", np.zeros((2, 64), dtype=np.uint32))
        (s.path / "dedupe.done").unlink()
    with pytest.raises(ValueError, match=f"{shards[0].path.name}.*near-signatures.npy"):
        dedupe_shards(shards, str(recipe))
    assert not any((s.path / "dedupe.done").exists() for s in shards)


def test_posts_the_disclosure_prefilter_rejects_are_dropped_before_language_id_and_scrubbing(tmp_path):
    """Cheapest first: a post with no disclosure window is dropped as no_disclosure by the filter
    step, whatever its language or PII (its text is quarantined as read); only candidates are
    language-checked, scrubbed, hashed for duplicates and written to posts.parquet."""
    import dataclasses

    lines = [
        _post(0, "I feel so guilty about the email I sent to jane.doe@example.com yesterday afternoon"),
        _post(1, "Write to jane.doe@example.com if you want the bicycle, it is still in the garage", False),
        _post(2, "Je me sens tellement coupable aujourd'hui parce que j'ai oublié son anniversaire encore", False),
        _post(3, "Honestly I am so anxious about the exam next week that I cannot sleep at night at all"),
    ]
    base = load_recipe(REPO / "configs" / "demo.toml")
    recipe_obj = dataclasses.replace(base, filters=dataclasses.replace(base.filters, languages=("en",)))
    recipe = save_recipe(recipe_obj, tmp_path / "recipe.json")
    [shard] = split_input(str(_dump(tmp_path, lines)), str(tmp_path / "shards"), "RS_2030-01", 10).shards
    done = filter_shard(shard, str(recipe))
    assert done.funnel.dropped == {"no_disclosure": 2} and done.funnel.kept == 2
    kept = pq.read_table(shard.path / "posts.parquet").to_pylist()
    assert [r["id"] for r in kept] == ["p0", "p3"]
    assert "jane.doe@example.com" not in kept[0]["text"]  # candidates are scrubbed
    dropped = pq.read_table(shard.path / "quarantine-ingest.parquet").to_pylist()
    assert [(q["post_id"], q["reason"]) for q in dropped] == [("p1", "no_disclosure"), ("p2", "no_disclosure")]
    assert [(q["source_line"], q["raw"]) for q in dropped] == [(2, None), (3, None)]  # pointed at, not copied
    keys = pq.read_table(shard.path / "dup-keys.parquet").num_rows
    assert keys == 2  # duplicate keys of candidates only


def test_the_quarantine_keeps_the_text_of_every_drop_but_the_prefilters(tmp_path):
    """`no_disclosure` drops (most of a dump) are pointed at by file and line; any other drop keeps
    its text as read, so a reason can be checked without the input at hand."""
    nsfw = json.loads(_post(1, "I feel so guilty about what I told my brother at the dinner last night"))
    lines = [_post(0, "We drove to the coast on Sunday and the weather was grey all weekend", False),
             json.dumps({**nsfw, "over_18": True})]
    recipe = save_recipe(load_recipe(REPO / "configs" / "demo.toml"), tmp_path / "recipe.json")
    [shard] = split_input(str(_dump(tmp_path, lines)), str(tmp_path / "shards"), "RS_2030-01", 10).shards
    done = filter_shard(shard, str(recipe))
    assert done.funnel.dropped == {"no_disclosure": 1, "nsfw": 1} and done.funnel.kept == 0
    dropped = {q["reason"]: q for q in pq.read_table(shard.path / "quarantine-ingest.parquet").to_pylist()}
    assert (dropped["no_disclosure"]["source_line"], dropped["no_disclosure"]["raw"]) == (1, None)
    assert dropped["nsfw"]["raw"].startswith("t\n\nI feel so guilty about what I told my brother")


def test_a_near_copy_of_a_post_without_disclosure_is_kept(tmp_path):
    """The rule the reorder sets (docs/sources-and-filters.md): near duplicates are looked for among
    disclosure candidates only. A non-candidate never makes a later candidate a near duplicate, so
    of a pair (A without a disclosure, then B, a near copy of A that has one) B is kept; before the
    reorder B was dropped as A's near duplicate and A then had no disclosure: neither was published."""
    import dataclasses

    a = ("We painted the old fence behind the garden on Sunday with my brother and his two kids and it "
         "took the whole afternoon because the paint kept running out and the brushes were terrible ones")
    b = a.replace("and it took", "and I feel so proud it took")
    c = "Just a note that the meeting moved to Thursday at the library near the station this week"
    lines = [_post(0, a, False), _post(1, c, False), _post(2, b)]
    base = load_recipe(REPO / "configs" / "demo.toml")
    near_on = dataclasses.replace(base, filters=dataclasses.replace(base.filters, near_duplicate_threshold=0.5))
    recipe = save_recipe(near_on, tmp_path / "recipe.json")
    shards = split_input(str(_dump(tmp_path, lines)), str(tmp_path / "shards"), "RS_2030-01", 2).shards
    filtered = [filter_shard(s, str(recipe)) for s in shards]
    assert [f.funnel.dropped for f in filtered] == [{"no_disclosure": 2}, {}]
    deduped = dedupe_shards(shards, str(recipe))
    assert [d.dropped_rows for d in deduped] == [[], []]
    assert [p.id for s in shards for p in kept_posts(s, POST_COLUMNS)] == ["p2"]
    # the oracle agrees: the in-memory near-duplicate filter would have dropped p2 after p0
    from filters.near_duplicates import NearDuplicateFilter

    oracle = NearDuplicateFilter(0.5, near_on.filters.minhash_permutations, near_on.filters.shingle_words)
    assert oracle.check(RawPost(id="p0", text=a)) is None and oracle.check(RawPost(id="p2", text=b)) is not None
