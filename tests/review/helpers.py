"""Helpers of the review and browser tests: a private copy of the shared demo release (so ledgers
written by one test never leak into another) and a tiny release built from our own realistic
posts with the real extractor and segmenter."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from common.parquet import ParquetSink
from schemas.config import ExtractConfig, SegmentConfig
from schemas.funnel import Funnel
from schemas.records import DISCLOSURES, EXAMPLES, RawPost
from warehouse.layout import ReleasePaths
from warehouse.releases.release import Release

# Our own posts of realistic length (100-300 words), with repeated emotion words and PII.
POSTS = {
    "p1": (
        "Update on the move, sorry this is long\n\n"
        "So last month my partner Jenny and I finally moved across the country for her new job. "
        "I posted about it before as u/quiet_fern_22 and a few of you asked how it went, so here it is. "
        "The first week was chaos. Boxes everywhere, the internet did not work, and the landlord kept "
        "sending us e-mails from landlord.office@example.com about parking permits. I feel so sad when I "
        "think about the friends we left behind, honestly more than I expected. We had a standing Friday "
        "dinner for six years and now it is just the two of us and a pizza. Work has been fine, the team "
        "seems nice enough and nobody expects much from me yet. But then on Tuesday my manager moved my "
        "review forward without telling me, and I was really angry at myself for not preparing earlier. "
        "I stayed up until two rewriting my notes. Jenny keeps telling me to give it time. Yesterday we "
        "found a small bakery two streets away that makes the same rye bread my grandmother used to bake, "
        "and I'm so happy we did, it felt like a tiny piece of home. Then my old roommate called and we "
        "talked for an hour about nothing. After I hung up I feel so sad again, like the distance only "
        "hit me right then. Anyway, we are signing up for a climbing gym next week. Any tips for making "
        "friends as an adult in a new city would be very welcome."
    ),
    "p2": (
        "Small win today\n\n"
        "I have been dreading the dentist for about three years now, which is a ridiculous thing to "
        "admit at my age. I kept cancelling and rebooking, and every time the reminder text came I "
        "would put the phone face down and pretend it did not exist. My sister finally drove me there "
        "herself this morning and waited in the car with a book. The hygienist was patient and talked "
        "me through every step, and it turned out to be one small filling and a cleaning. Walking out "
        "of there I feel so relieved that I bought myself an ice cream at ten in the morning. It is "
        "silly but I wanted to tell someone who would get it. My sister just laughed and said she "
        "told me so, which is fair. Next up is the eye doctor, but that one can wait until spring."
    ),
}
# A second scrubber, as a Presidio-style rewrite would produce: other placeholders, other lengths.
RESCRUB = (("Jenny", "<PERSON>"), ("[USER]", "<USERNAME>"), ("[EMAIL]", "<EMAIL_ADDRESS>"))
SMALL_WINDOWS = SegmentConfig(max_tokens=60, group_tokens=5, half_window=70)


def scrubbed(text: str) -> str:
    from privacy.scrubber import scrub

    return scrub(text)


def rescrubbed(text: str) -> str:
    out = scrubbed(text)
    for old, new in RESCRUB:
        out = out.replace(old, new)
    return out


def build_tiny_release(root: Path, texts: dict[str, str], extractor, segment: SegmentConfig | None = None,
                       dataset: str = "tiny", version: str = "v1", run_id: str = "run-tiny") -> Release:
    """A release folder as publish writes it (data/, manifest.json) plus its run's disclosures,
    from posts run through the real extractor, examples builder and segmenter."""
    from extractors.examples import Hooks, build_examples
    from extractors.segmentation import Segmenter

    posts = [RawPost(id=pid, text=t, subreddit="test", created_utc=1700000000) for pid, t in texts.items()]
    found: list[dict] = []
    funnel = Funnel()
    examples = list(build_examples(posts, extractor, ExtractConfig(), funnel, Segmenter(segment or SegmentConfig()),
                                   Hooks(on_disclosures=lambda p, ds: found.append(
                                       {"post_id": p.id, "disclosures": [d.to_json() for d in ds]}))))
    rel = root / dataset / version
    with ParquetSink(rel / ReleasePaths.split_name("test"), EXAMPLES) as sink:
        for ex in examples:
            sink.write(ex.to_row())
    with ParquetSink(root / "runs" / run_id / "disclosures.parquet", DISCLOSURES) as sink:
        for row in found:
            sink.write(row)
    manifest = {"dataset": dataset, "version": version, "run_id": run_id, "config": {"extract": {"keep_negated": False}},
                "rows": {"test": len(examples)}, "funnel": funnel.to_dict()}
    (rel / "manifest.json").write_text(json.dumps(manifest))
    return Release.at(rel)


def copy_demo(demo_build: dict, root: Path, docs: bool = False) -> Release:
    """The demo release and its run's posts and disclosures, copied into the warehouse `root`."""
    src = Path(demo_build["warehouse"])
    rel = Path(demo_build["release"]["path"])
    dst = root / rel.parent.name / rel.name
    shutil.copytree(rel, dst, ignore=None if docs else shutil.ignore_patterns("data_docs"))
    run_id = json.loads((rel / "manifest.json").read_text())["run_id"]
    (root / "runs" / run_id).mkdir(parents=True)
    shutil.copyfile(src / "runs" / run_id / "disclosures.parquet", root / "runs" / run_id / "disclosures.parquet")
    return Release.at(dst)
