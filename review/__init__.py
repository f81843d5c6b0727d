"""Hand review of masks, as the EXPRESS authors did: export items, review them in a browser or in
Label Studio, keep the decisions in an append-only ledger, measure precision, and hand the build a
pure function (`apply.apply_decisions`) that re-derives masks from the decisions."""
