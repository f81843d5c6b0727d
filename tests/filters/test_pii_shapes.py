"""The shapes behind the new PII kinds and name finders, each proved on our own sentences:
street addresses (and that scanning only around street numbers misses nothing), cards of any
grouping, phones near a phone word, dates of birth, name cues, the gazetteer, and the spans
`settled_found` reports against the input text."""
import random

import pytest

from privacy.addresses import find_addresses
from privacy.gazetteer import first_names, place_names, romanize, surnames
from privacy.name_cues import cue_names
from privacy.numbers import find_birth_dates, find_cards, find_id_numbers, find_phones, luhn
from privacy.scrubber import cached_scrubber
from tests.filters.pii_posts import make_posts
from tests.filters.pii_table import load_table


def _found(finder, text):
    return [text[a:b] for a, b in finder(text)]


@pytest.mark.parametrize("text, address", [
    ("I live at 42 Wallaby Way, Sydney and I feel so alone.", "42 Wallaby Way, Sydney"),
    ("Send it to 1600 Pennsylvania Ave NW, Washington, DC 20500 please.", "1600 Pennsylvania Ave NW, Washington, DC 20500"),
    ("My old flat was on Lindenstraße 14, 10115 Berlin, Germany.", "Lindenstraße 14, 10115 Berlin, Germany"),
    ("Her address is Rua das Flores 221, Porto.", "Rua das Flores 221, Porto"),
    ("ship to P.O. Box 4410, Tulsa OK 74101", "P.O. Box 4410, Tulsa OK 74101"),
    ("Jane Roe\n17 Elm Grove\nApt. 3\nLeeds LS6 2AB\nUnited Kingdom\nMobile: 07700 900123",
     "17 Elm Grove\nApt. 3\nLeeds LS6 2AB\nUnited Kingdom"),
    ("> Kaivokatu 8\n> 00100 Helsinki\n> Finland", "Kaivokatu 8\n> 00100 Helsinki\n> Finland"),
    ("We met at the corner of 5th Avenue and Pine Street.", "the corner of 5th Avenue and Pine Street"),
    ("i live at 12 elm street and i hate it", "12 elm street"),
    ("PSC 1234, Box 5678\nAPO AE 09001", "PSC 1234, Box 5678\nAPO AE 09001"),
])
def test_street_addresses_are_found_with_what_follows_them(text, address):
    assert _found(find_addresses, text) == [address]


@pytest.mark.parametrize("text", [
    "Room 101 at the hospital still haunts me.", "Chapter 11 of my life starts today.", "My iPhone 12 broke.",
    "I spent 3 Hours On The Road.", "Flight 714 was delayed by 4 hours.", "I have 2 Xbox 360 controllers",
    "The 101 Freeway was jammed", "We won 2:1 and I screamed.", "i ran 5 miles down the road today",
    "so I wake up hoping to go to classes I drive 10 miles and park", "Borderlands 3\nRisk of Rain 2\nTerraria",
    "I moved to Texas on Monday and I'm homesick.", "Since March 2020 I have barely left the house.",
])
def test_numbers_and_names_that_say_no_street_are_no_address(text):
    assert find_addresses(text) == []


def test_scanning_only_around_street_numbers_finds_what_a_full_scan_finds():
    """find_addresses runs its patterns only on the windows around numbers placed as street
    numbers (address_windows); on seeded mixes of addresses, traps and posts the spans must equal a
    scan of the whole text."""
    pieces = [t for t, _, _ in load_table()] + make_posts(20, seed=5) + [
        "12 Elm St", "Erzsébet tér 5", "ul. Polna 3", "Apt. 4, 9 Oak Lane", "2 14 Elm St", "unit b, 5 oak lane",
        "USNS Comfort\nFPO AP 96601", "the corner of 5th Avenue and Pine St", "zip code 60614", "Box 12"]
    rng = random.Random(3)
    texts = pieces + [rng.choice([" ", "\n", ", ", ". "]).join(rng.sample(pieces, 3)) for _ in range(150)]
    for text in texts:
        assert find_addresses(text) == find_addresses(text, [(0, len(text))]), text


def test_cards_pass_the_luhn_check_in_any_grouping_and_a_plus_makes_a_phone():
    assert luhn("4111111111111111") and not luhn("4111111111111112")
    assert _found(find_cards, "card 501872649303 and visa 6234 5678 9012 3456 780") == [
        "501872649303", "6234 5678 9012 3456 780"]
    assert _found(find_cards, "4111111111111111 4111-1111-1111-1111") == ["4111111111111111", "4111-1111-1111-1111"]
    assert find_cards("card 4111 1111 1111 1112") == []  # fails the check
    assert find_cards("call +44 2079 4609 5821") == []  # a phone number
    assert find_cards("order 123456789015 shipped") == []  # 12 digits, no card word: no card layout


def test_phones_need_a_phone_word_or_a_country_code_and_dates_are_never_phones():
    assert _found(find_phones, "Mobile: 0176 123 4567, Desk: +41 (0)96 471 07 95") == ["0176 123 4567",
                                                                                      "+41 (0)96 471 07 95"]
    assert _found(find_phones, "not answering at 699 956 915 or 60-56-85-91 office") == ["699 956 915",
                                                                                          "60-56-85-91"]
    for text in ("call me on 2019-12-24", "I counted 1 000 000 reasons", "text me 12.05.2021", "it took 3 4 5 6 7"):
        assert find_phones(text) == [], text


def test_a_date_of_birth_needs_a_birth_cue_and_a_full_date():
    assert _found(find_birth_dates, "I was born on 14 February 1996 in Leeds") == ["14 February 1996"]
    assert _found(find_birth_dates, "DOB: 03/07/1989. 1992-11-05 is my birthday") == ["03/07/1989", "1992-11-05"]
    for text in ("I was born in 1998 and I feel old", "born in March 1990", "We moved on 12/05/2021"):
        assert find_birth_dates(text) == [], text


def test_an_id_number_follows_its_cue_or_has_the_national_insurance_format():
    assert _found(find_id_numbers, "passport no. 583920174 expired; my NI number: QQ 52 81 94 C") == [
        "583920174", "QQ 52 81 94 C"]
    assert _found(find_id_numbers, "Licence, as printed on the card, reads BRANT805219KL9ZQ 37.") == [
        "BRANT805219KL9ZQ 37"]  # letters and 5+ digits later in the cue's sentence
    assert _found(find_id_numbers, "member #48213, acct ending in 7788 and IDs 55190-B") == ["48213", "7788", "55190-B"]
    assert _found(find_id_numbers, "The code number is 44K 70213. Mine is JY 28 46 10 D") == ["44K 70213", "JY 28 46 10 D"]
    for text in ("I have been a member since 2014", "my account has 1500 karma", "policy 2021 changed",
                 "the ID 2 of them", "insurance 1200 a month", "my license is valid until 12/05/2027",
                 "my account was made in 2015", "account 4.5 stars", "ID 10:30", "my number is 07700 900123",
                 "passport photo cost $15", "my id 1234 lol"[:0] + "id 98765 is lower case",
                 "the account, 3 years and 40000 posts later. AB123456", "GB 12 34 56 A is no valid prefix",
                 "MY COUSIN PAINTED THE BAKERY NUMBER 21 WITH 2 NEIGHBOURS", "ACCOUNT IS THE 12 OF US"):
        assert find_id_numbers(text) == [], text


def test_cues_point_at_names_of_any_origin_and_never_at_common_words_or_places():
    text = ("My best friend Oluwaseun moved. my bf tomasz left. A guy called Björn texted. I met Kenji. "
            "Siobhan and I talked. Dmitri told me. Me and Aarav laughed. My name is Chiamaka.")
    assert _found(cue_names, text) == ["Oluwaseun", "tomasz", "Björn", "Kenji", "Siobhan", "Dmitri", "Aarav",
                                       "Chiamaka"]
    for text in ("Mom told me to leave.", "my friend said no", "I met Canada's border guards", "My sister Joy",
                 "he called Sarah", "Everyone and I", "my boyfriend and I"):
        assert cue_names(text) == [], text


def test_speaker_labels_titles_speech_name_words_and_verbs_said_of_people_point_at_names():
    text = ("Oskar: you never listen.\nBettina: I do.\nI asked for ms. Okparaeke. \"Fine,\" said Tavita. "
            "Her maiden name is Abernathy. It's under my aunt's name Xochitl. Leontyne Abara lives upstairs. "
            "Thandeka passed away.")
    assert _found(cue_names, text) == ["Oskar", "Bettina", "Okparaeke", "Tavita", "Abernathy", "Xochitl",
                                       "Leontyne Abara", "Thandeka"]
    for text in ("Disclaimer: I'm not a doctor.", "Edit: typo\nUpdate: fixed", "Everyone laughed at me.",
                 "Mom cried.", "he said no", "the file name is report", "I miss Canada so much", "Me: fine\nAlso me: no",
                 "my username is Kestrel_99", "I renamed Documents"):
        assert cue_names(text) == [], text
    assert _found(cue_names, "Ayodele: \"where were you?\"") == ["Ayodele"]  # a quote after one label
    assert _found(cue_names, "his nickname Zosia, her surname: Kowalczyk. Wow! said Brannigan") == [
        "Zosia", "Kowalczyk", "Brannigan"]


def test_other_mentions_of_a_found_name_are_replaced_and_one_word_brands_of_two_words_are_not():
    scrubber = cached_scrubber()
    assert scrubber.scrub("A film by Ingeborg Valtersdottir, starring Valtersdottir herself.") == (
        "A film by [NAME], starring [NAME] herself.")
    assert scrubber.scrub("My cousin Ignatius works at Ramsey-Ignatius now.") == (
        "My cousin [NAME] works at Ramsey-Ignatius now.")  # a part of a compound is no mention
    text = "Last year I joined Bluecanvas as an analyst and I hated every minute."  # NER calls it a person
    assert scrubber.scrub(text) == text
    assert scrubber.scrub("My coworker Goodman covered for me.") == "My coworker [NAME] covered for me."


def test_a_found_name_followed_by_or_ending_in_a_company_word_is_dropped():
    from presidio_analyzer import RecognizerResult

    from privacy.names import _completed

    text = "Thornbury Incorporated was the dream of Marek Thornbury, and Weber Ltd bought it."
    ner = [RecognizerResult("PERSON", 0, 22, 0.85), RecognizerResult("PERSON", 40, 55, 0.85),
           RecognizerResult("PERSON", 61, 66, 0.85)]  # as NER may tag them
    assert [text[r.start:r.end] for r in _completed(text, ner)] == ["Marek Thornbury"]  # nor is its mention


def test_the_gazetteer_holds_names_of_many_origins_in_latin_letters_and_no_places_as_names():
    assert romanize("Ефимия") == "efimiya" and romanize("Αθανασίου") == "athanasiou" and romanize("王") is None
    names = first_names()
    assert {"emily", "sofia", "mateo", "björn", "zsófia", "aleksandr"} <= names
    assert {"kowalczyk", "nishiyama", "gonzález"} <= surnames()
    assert {"germany", "brazilian", "texas", "america"} <= place_names()


def test_settled_spans_are_offsets_into_the_input_and_rebuild_the_scrubbed_text():
    scrubber = cached_scrubber()
    texts = make_posts(12, seed=21) + ["Lucinda and Mike met at 12 Elm Street. Mike told me Lucinda called "
                                       "0176 123 4567 and Kowalczyk laughed."]
    for text, (out, spans) in zip(texts, scrubber.settled_found(texts)):
        assert out == scrubber._replace(text, spans)
        assert all(a.end <= b.start for a, b in zip(spans, spans[1:]))
    out, spans = scrubber.settled_found(texts[-1:])[0]
    assert [(s.kind, texts[-1][s.start:s.end]) for s in spans] == [
        ("name", "Lucinda"), ("name", "Mike"), ("address", "12 Elm Street"), ("name", "Mike"), ("name", "Lucinda"),
        ("phone", "0176 123 4567"), ("name", "Kowalczyk")]
