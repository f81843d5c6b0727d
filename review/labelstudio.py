"""Label Studio task JSON and labeling config for review items (Label Studio's documented formats).

Each task's `data` holds the segment text and the item's fields; the mask is a pre-annotation
(`predictions`) of a `Labels` region on the text, so Label Studio highlights the word; the
reviewer answers with the `decision` choice (accept / reject, hotkeys a / r). An export of the
annotated project (JSON or JSON_MIN) imports back with `express review import`.
"""
from __future__ import annotations

from typing import Any
from xml.sax.saxutils import quoteattr

from review.items import ReviewItem

TEXT_OBJECT = "text"
WORD_CONTROL = "word"
DECISION_CONTROL = "decision"
WORD_LABEL = "disclosure"
QUESTION = "Is the highlighted word the writer disclosing their own emotion?"


def labeling_config() -> str:
    """The labeling config XML to create the Label Studio project with."""
    return f"""<View>
  <Header value={quoteattr(QUESTION)}/>
  <Text name="{TEXT_OBJECT}" value="${TEXT_OBJECT}"/>
  <Labels name="{WORD_CONTROL}" toName="{TEXT_OBJECT}">
    <Label value="{WORD_LABEL}" background="#ffd54f"/>
  </Labels>
  <Text name="details" value="$details"/>
  <Choices name="{DECISION_CONTROL}" toName="{TEXT_OBJECT}" choice="single" required="true" showInline="true">
    <Choice value="accept" hotkey="a"/>
    <Choice value="reject" hotkey="r"/>
  </Choices>
</View>
"""


def task(item: ReviewItem, model_version: str = "express") -> dict[str, Any]:
    """One Label Studio task (Basic Label Studio JSON format with a pre-annotation)."""
    details = (f"word '{item.surface}' -> label {item.label} | pattern {item.pattern} | rule {item.rule or 'n/a'}"
               f" | negated {item.negated} | post {item.post_id} | item {item.item_id}")
    return {
        "data": {TEXT_OBJECT: item.text, "details": details, **{k: v for k, v in item.to_json().items() if k != "text"}},
        "predictions": [{
            "model_version": model_version,
            "result": [{
                "id": f"m{item.item_id[:8]}", "from_name": WORD_CONTROL, "to_name": TEXT_OBJECT, "type": "labels",
                "value": {"start": item.start, "end": item.end, "text": item.surface, "labels": [WORD_LABEL]},
            }],
        }],
    }
