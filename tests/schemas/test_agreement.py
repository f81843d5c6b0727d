"""Agreement coefficients against textbook examples (shared by review stats and `express agreement`)."""
import pytest

from common.agreement import cohen_kappa, fleiss_kappa, krippendorff_alpha_nominal

# Fleiss (1971) as worked in most textbooks: 10 items, 14 raters, 5 categories; kappa = 0.210.
FLEISS_TABLE = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
# Krippendorff (2011), "Computing Krippendorff's alpha": 4 coders, 12 units, missing values; nominal alpha = 0.743.
KRIPP = ["1 2 3 3 2 1 4 1 2 . . .", "1 2 3 3 2 2 4 1 2 5 . 3", ". 3 3 3 2 3 4 2 2 5 1 .", "1 2 3 3 2 4 4 1 2 5 1 ."]


def test_cohen_kappa_on_the_two_by_two_textbook_table():
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == 1.0


def test_fleiss_kappa_on_the_fleiss_1971_example():
    assert round(fleiss_kappa(FLEISS_TABLE), 3) == 0.210
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[1, 1], [3, 0]])


def test_krippendorff_alpha_on_the_krippendorff_2011_example():
    coders = [row.split() for row in KRIPP]
    units = [[c[i] for c in coders if c[i] != "."] for i in range(12)]
    assert round(krippendorff_alpha_nominal(units), 3) == 0.743
