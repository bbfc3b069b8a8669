"""The decks drawn here (hardware/camera/synthetic/artwork.py): a ``pips-<n>`` deck is 52 cards
laid out as real decks are, each number card showing as many pips as its rank."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.synthetic import artwork  # noqa: E402
from referee.cards import full_deck  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402


def marks(image: np.ndarray) -> int:
    """Separate marks of ink, coloured or dark, on a card (a frame around the whole card is
    not one)."""
    bgr = image[..., :3].astype(int)
    ink = ((bgr.max(axis=2) - bgr.min(axis=2) > 80) | (bgr.max(axis=2) < 90)) \
        & (image[..., 3] > 200)
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8))
    return sum(1 for s in stats[1:] if s[cv2.CC_STAT_WIDTH] < 0.8 * image.shape[1])


@pytest.mark.parametrize("deck", ["pips-1", "pips-5"])
@pytest.mark.slow
def test_a_pip_deck_has_52_cards_with_their_pips(deck: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    need_artwork(deck)
    monkeypatch.setenv("REFEREE_CAMERA_CACHE", str(tmp_path))
    folder = artwork.render_deck(deck)
    assert folder.is_relative_to(tmp_path)
    images = {c: cv2.imread(str(folder / f"{c}.png"), cv2.IMREAD_UNCHANGED) for c in full_deck()}
    assert all(im is not None and im.shape[2] == 4 for im in images.values())
    assert {im.shape[0] for im in images.values()} == {artwork.CARD_HEIGHT}
    assert images[full_deck()[0]][0, 0, 3] < 50  # rounded corners: the corner is see-through
    for card, image in images.items():
        if card.suit in "DH" and card.rank <= 10:
            # the pips, and two indices of a rank glyph ("10" may run into one) and a suit
            expected = {card.rank + 4} | ({card.rank + 6} if card.rank == 10 else set())
            assert marks(image) in expected, card
    assert len({im.tobytes() for im in images.values()}) == 52


@pytest.mark.slow
def test_pip_decks_differ_from_one_another(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    need_artwork("pips-2", "pips-3")
    monkeypatch.setenv("REFEREE_CAMERA_CACHE", str(tmp_path))
    a, b = (cv2.imread(str(artwork.card_png(d, full_deck()[20])), cv2.IMREAD_UNCHANGED)
            for d in ("pips-2", "pips-3"))
    assert a.shape != b.shape or np.abs(a.astype(int) - b.astype(int)).mean() > 2


def _read_deck(deck: str) -> int:
    """In a process of its own: every card of a deck read from the cache (drawn on first
    use); how many read whole."""
    from hardware.camera.synthetic.artwork import card_png

    return sum(cv2.imread(str(card_png(deck, c)), cv2.IMREAD_UNCHANGED) is not None
               for c in full_deck())


@pytest.mark.slow
def test_processes_drawing_and_reading_a_deck_at_once_each_read_every_card_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The locator's training renders its scenes in several processes, each drawing a deck
    on first use: none may read a card another is still writing (a half-written PNG reads as
    no image: "cannot read the artwork of KH in font-6", seen on a fresh cache)."""
    from concurrent.futures import ProcessPoolExecutor

    need_artwork("font-6")
    monkeypatch.setenv("REFEREE_CAMERA_CACHE", str(tmp_path))
    with ProcessPoolExecutor(4) as pool:
        read = list(pool.map(_read_deck, ["font-6"] * 4))
    assert read == [52] * 4
    folder = tmp_path / "png"
    assert sorted(p.name for p in folder.iterdir()) == ["font-6"]  # no work folder left
    assert len(list((folder / "font-6").iterdir())) == 52
