"""The classifier's samples (training/samples.py): a card filmed and read as the recogniser reads
it, each corner view labelled with the rank glyph it shows upright as the deck prints it, for
the layouts decks differ in: the index in two corners, in four, only top right, the lower one
printed upright."""

from __future__ import annotations

import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.reader.classify import GLYPHS, NO_GLYPH  # noqa: E402
from hardware.camera.reader.warp import VIEW_H, VIEW_W  # noqa: E402
from referee.cards import Card  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402
from training.samples import card_sample, glyph_of, ranked_views  # noqa: E402


def labels(deck: str, card: str, flip: bool) -> list[str]:
    views, glyphs, suit = card_sample(deck, Card.parse(card), 1, flip=flip)
    assert views.shape == (4, VIEW_H, VIEW_W, 3)
    assert suit == "CDHS".index(card[-1])
    return [GLYPHS[g] if g != NO_GLYPH else "-" for g in glyphs]


@pytest.mark.parametrize(("deck", "card", "upright", "turned"), [
    ("anglo", "QH", ["Q", "-", "Q", "-"], ["Q", "-", "Q", "-"]),
    ("berlin", "JS", ["B", "-", "B", "-"], ["B", "-", "B", "-"]),
    ("slavic_costumes", "AC", ["Т", "-", "Т", "-"], ["Т", "-", "Т", "-"]),
    ("kde-xskat-french", "KD", ["K", "K", "K", "K"], ["K", "K", "K", "K"]),
    # drawing the Oxygen sheet the first time takes half a minute: the full suite's, not the
    # quick loop's (its views are named without drawing in test_what_each_deck_prints)
    pytest.param("kde-oxygen", "9S", ["-", "9", "-", "-"], ["-", "-", "-", "9"],
                 marks=pytest.mark.slow),
    ("guyenne-classic", "QS", ["-", "-", "-", "-"], ["-", "-", "-", "-"]),
])
def test_views_are_labelled_as_the_deck_prints(deck: str, card: str, upright: list[str],
                                               turned: list[str]) -> None:
    need_artwork(deck)
    assert labels(deck, card, False) == upright
    assert labels(deck, card, True) == turned


def test_what_each_deck_prints() -> None:
    assert glyph_of("ancient_french", Card.parse("AH")) == "1"
    assert glyph_of("ancient_french", Card.parse("KH")) == "R"
    assert glyph_of("tarocco", Card.parse("JC")) == "F"
    assert glyph_of("guyenne-classic", Card.parse("JC")) is None
    assert glyph_of("guyenne-classic", Card.parse("10C")) == "10"
    assert ranked_views("kde-oxygen") == ("tr",)
    assert ranked_views("kde-ancient-egyptians") == ("tl",)  # its lower index stands upright
    assert ranked_views("dondorf") == ("tl", "tr", "br", "bl")
