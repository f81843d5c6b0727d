"""Fixtures of the extractor tests: the rules alone, beside the default extractor (acceptance on)."""
import pytest


@pytest.fixture(scope="session")
def rules_extractor():
    """The pattern rules without the acceptance model (`[extract] acceptance = "off"`)."""
    from extractors.disclosures import DisclosureExtractor

    return DisclosureExtractor(acceptance="off")
