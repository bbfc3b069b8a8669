"""Enrolling a deck (hardware/camera/reader/enroll.py, templates.py): the deck's own faces decide
(nearest card with a margin), it learns the letters the deck prints, its self-check names the
cards it does not read again from their photos, and a deck file that does not fit makes reads
unclear, never wrong."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.reader.classify import FEATURES, GLYPHS  # noqa: E402
from hardware.camera.reader.enroll import (  # noqa: E402
    CARD_BEFORE,
    COPIES,
    CORNERS,
    ELSEWHERE,
    MOVING,
    NO_CARD,
    NOWHERE,
    SAME_FEATURES,
    STILL,
    Enroller,
    EnrollError,
    Seen,
    build,
    enroll_images,
    glyph_names,
    see_images,
    self_check,
    take_live,
)
from hardware.camera.reader.locate import DRAWN_OUT, Sight, Spot  # noqa: E402
from hardware.camera.reader.recognise import Recogniser  # noqa: E402
from hardware.camera.reader.sources import Frame  # noqa: E402
from hardware.camera.reader.templates import (  # noqa: E402
    PICTURE_SIZE,
    TEMPLATE_KIND,
    EnrolledDeck,
    descriptor,
    turned,
)
from hardware.camera.reader.warp import views, warp  # noqa: E402
from hardware.camera.synthetic.evaluate import enrolled, photo  # noqa: E402
from hardware.camera.synthetic.scene import random_scene, render  # noqa: E402
from referee.cards import Card, full_deck  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402


@pytest.fixture(scope="module")
def swiss() -> EnrolledDeck:
    """A Swiss-suited deck (acorns, shields, roses, bells; no letters on its courts): nothing
    the classifier was taught to read, so only enrollment can read it."""
    need_artwork("swiss-xvii")
    return enrolled("swiss-xvii")


def swiss_scenes() -> list[tuple[Card | None, np.ndarray]]:
    return [(s.top, render(s)) for s in (
        random_scene(seed, "swiss-xvii", size=(640, 480), length=(200.0, 400.0))
        for seed in range(16))]


@pytest.mark.slow
def test_an_enrolled_deck_reads_a_deck_the_classifier_cannot(swiss: EnrolledDeck) -> None:
    mine = Recogniser(swiss)
    reads = [(top, mine.read(frame).card) for top, frame in swiss_scenes()]
    assert sum(card not in (None, top) for top, card in reads) == 0
    # 11 of 16 here with the classifier taught smeared corners (6 with the one before; 13
    # when the deck's features alone named cards, which they no longer do: on real photos
    # they were wrong more often than right)
    assert sum(card == top for top, card in reads) >= 5


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the shipped classifier (fold 1) was never taught Swiss "
                   "suits and reads this deck's 8H as 8D at 0.93 out of the box: "
                   "confidently wrong (docs/camera.md); strict, so it fails once that is mended")
def test_out_of_the_box_a_swiss_deck_is_unclear_not_wrong() -> None:
    need_artwork("swiss-xvii")
    plain = Recogniser()
    for top, frame in swiss_scenes():
        assert plain.read(frame).card in (None, top)


@pytest.mark.slow
def test_the_deck_file_keeps_what_it_learned(swiss: EnrolledDeck, tmp_path: Path) -> None:
    path = tmp_path / "swiss.npz"
    swiss.save(path)
    again = EnrolledDeck.load(path)
    assert again.cards == swiss.cards
    assert np.array_equal(again.descriptors, swiss.descriptors)
    assert np.array_equal(again.meaning, swiss.meaning)
    with np.load(path) as z:
        assert str(z["kind"]) == TEMPLATE_KIND


@pytest.mark.slow
def test_enrollment_learns_the_letters_a_deck_prints() -> None:
    """slavic_costumes prints Т for the ace, В for the jack, Д for the queen: enrolled, the
    deck's glyphs mean its own cards."""
    need_artwork("slavic_costumes")
    deck = enrolled("slavic_costumes")
    names = glyph_names(deck)
    assert "Т" in names.get(14, []) and "Д" in names.get(12, []) and "B" in names.get(11, [])


@pytest.mark.slow
def test_a_deck_file_with_the_cards_misnamed_reads_unclear_not_wrong(
        swiss: EnrolledDeck) -> None:
    """A deck file whose cards carry other cards' names (each rank's cards named as the next
    rank's): the classifier, sure of what it reads, denies the deck's choice."""
    need_artwork("anglo")
    deck = enrolled("anglo")
    rename = {c: Card(2 + (c.rank - 1) % 13, c.suit) for c in full_deck()}
    wrong_names = EnrolledDeck(tuple(rename[c] for c in deck.cards), deck.descriptors,
                               deck.meaning)
    mine = Recogniser(wrong_names)
    wrong = 0
    for seed in range(10):
        s = random_scene(seed, "anglo", size=(640, 480), length=(200.0, 400.0))
        read = mine.read(render(s))
        wrong += read.card not in (None, s.top)
    assert wrong == 0


@pytest.mark.slow
def test_the_self_check_names_the_cards_it_does_not_read_again(tmp_path: Path) -> None:
    """Each card's photo read again, turned round and askew, by the enrolled deck: a folder
    whose 6S and 7S photos were swapped (each card enrolled under the other's name) has both
    named, each read unclear or as the other; the folder as it should be, none. (Not every
    swap has both named: of 11 pairs of these photos swapped, the shipped classifier has both
    named in 8 and one in the others, e.g. the 5S alone of a 5S-6S swap; docs/camera.md.)"""
    need_artwork("anglo")
    for card in full_deck():
        cv2.imwrite(str(tmp_path / f"{card}.png"), render(photo("anglo", card, 3)))
    enroller = Enroller()
    seen, problems = see_images(tmp_path, enroller)
    assert problems == [] and all(isinstance(s.photo, Path) for s in seen.values())
    deck = build(seen)
    assert self_check(deck, seen) == []
    six, seven = Card.parse("6S"), Card.parse("7S")
    swapped = dict(seen)
    swapped[six], swapped[seven] = seen[seven], seen[six]
    unread = self_check(build(swapped), swapped)
    assert {card for card, _, _ in unread} == {six, seven}, unread
    for card, got, why in unread:
        assert got in (None, seven if card == six else six)
        assert (why == "") == (got is not None)


@pytest.mark.slow
def test_live_enrollment_asks_card_by_card_and_takes_each_once_still() -> None:
    """A camera that shows an empty table first, then each card asked for after two frames of
    the card before (still on the table), the new card lying still: each card is taken once,
    in order, and what each frame showed is told (no card, the card before, a card)."""
    need_artwork("anglo")
    enroller = Enroller()
    cards = full_deck()[:3]
    asked: list[tuple[str, str]] = []
    now: dict[str, Any] = {"card": None, "lag": 0}
    watched: list[str] = []

    def frames() -> object:
        t = 0
        while True:
            if now["card"] is None:  # the empty table, once
                image = render(photo("anglo", cards[0], 3)) * 0 + 90
                now["card"] = cards[0]
            else:
                shown = now["card"] if now["lag"] == 0 else now["before"]
                now["lag"] = max(0, now["lag"] - 1)
                image = render(photo("anglo", shown, 3))
            t += 33_000_000
            yield Frame(t, image)

    def show(card: Card, what: str) -> None:
        asked.append((str(card), what))
        if what == "taken" and cards.index(card) + 1 < len(cards):
            now.update(card=cards[cards.index(card) + 1], before=card, lag=2)

    seen = take_live(frames(), show, cards, steady=3, enroller=enroller,  # type: ignore[arg-type]
                     watch=lambda what, quad: watched.append(what))
    assert list(seen) == cards
    assert asked == [(str(c), w) for c in cards for w in ("lay", "taken")]
    assert watched == [NO_CARD, MOVING, STILL, STILL] + [CARD_BEFORE, CARD_BEFORE, MOVING,
                                                         STILL, STILL] * 2


def test_live_enrollment_takes_the_next_card_whose_corners_are_like_the_one_before() -> None:
    """kde-penguins' 6 of diamonds after its 5: their corners' features are more alike than
    the card before's limit (0.97 with the shipped classifier), their faces are not, so the 6
    is taken, not waited on as the 5 still lying there."""
    need_artwork("kde-penguins")
    cards = [Card.parse("5D"), Card.parse("6D")]
    images = [render(photo("kde-penguins", card, 8)) for card in cards]
    enroller = Enroller()
    d = [descriptor(enroller.classifier.look(views(warp(image, enroller.quad(image)))))
         for image in images]
    assert max(float(d[1] @ d[0]), float(d[1] @ turned(d[0]))) > SAME_FEATURES  # the premise
    frames = (Frame(i * 33_000_000, images[i // 8]) for i in range(16))
    told: list[tuple[str, str]] = []
    seen = take_live(frames, lambda card, what: told.append((str(card), what)), cards,
                     enroller=enroller)
    assert list(seen) == cards
    assert told == [("5D", "lay"), ("5D", "taken"), ("6D", "lay"), ("6D", "taken")]


def test_a_deck_file_keeps_its_pictures_and_one_without_them_still_loads(
        tmp_path: Path) -> None:
    """The whole-card pictures go into the deck file and come back; a file enrolled before
    them, or with an earlier version's smaller pictures, loads without (its reads decide by the
    features alone); pictures of the wrong shape are refused."""
    rng = np.random.default_rng(2)
    cards = tuple(full_deck())
    d = rng.normal(size=(52, 4 * FEATURES)).astype(np.float32)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    meaning = np.zeros((len(GLYPHS) + 1, 13), np.float32)
    w, h = PICTURE_SIZE
    pics = rng.normal(size=(52, 2, w * h * 3)).astype(np.float32)
    with_pictures = EnrolledDeck(cards, d, meaning, pics)
    with_pictures.save(tmp_path / "new.npz")
    again = EnrolledDeck.load(tmp_path / "new.npz")
    assert again.pictures is not None and np.array_equal(again.pictures, pics)
    assert again.match_picture(pics[7, 1]) is not None
    assert again.match_picture(pics[7, 1]).card == cards[7]  # type: ignore[union-attr]
    EnrolledDeck(cards, d, meaning).save(tmp_path / "old.npz")
    old = EnrolledDeck.load(tmp_path / "old.npz")
    assert old.pictures is None and old.match_picture(pics[7, 1]) is None
    # an earlier version's pictures (16x22): loaded without them, read by the features
    EnrolledDeck(cards, d, meaning, pics[:, :, :16 * 22 * 3]).save(tmp_path / "earlier.npz")
    earlier = EnrolledDeck.load(tmp_path / "earlier.npz")
    assert earlier.pictures is None and "enroll the deck again" in earlier.outdated
    assert again.outdated == old.outdated == ""
    EnrolledDeck(cards, d, meaning, pics[:, :1]).save(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="pictures"):
        EnrolledDeck.load(tmp_path / "bad.npz")
    # features not four of the classifier's, or not numbers: refused, not matched
    EnrolledDeck(cards, d[:, :96], meaning).save(tmp_path / "short.npz")
    with pytest.raises(ValueError, match="sizes differ"):
        EnrolledDeck.load(tmp_path / "short.npz")
    nan = d.copy()
    nan[3, 5] = np.nan
    EnrolledDeck(cards, nan, meaning).save(tmp_path / "nan.npz")
    with pytest.raises(ValueError, match="not numbers"):
        EnrolledDeck.load(tmp_path / "nan.npz")


def test_a_picture_a_pixel_or_two_off_still_finds_its_card() -> None:
    """The read card's outline a little off moves its picture: the match lays it over each
    enrolled picture at every place two pixels about, so a picture moved by (2, 1) pixels
    still names its card, surely and by a margin; moved further, it is unsure."""
    w, h = PICTURE_SIZE
    rng = np.random.default_rng(4)
    faces = np.stack([cv2.GaussianBlur(rng.uniform(0, 255, (h + 8, w + 8, 3)).astype(np.float32),
                                       (0, 0), 1.5) for _ in range(104)])
    pics = faces[:, 4:4 + h, 4:4 + w].reshape(52, 2, -1)
    cards = tuple(full_deck())
    deck = EnrolledDeck(cards, np.zeros((52, 4), np.float32),
                        np.zeros((len(GLYPHS) + 1, 13), np.float32), pics)
    moved = faces[2 * 9 + 1, 6:6 + h, 5:5 + w].reshape(-1)  # card 9, turned round, moved
    m = deck.match_picture(moved)
    assert m is not None and m.card == cards[9] and m.score > 0.99 and m.margin > 0.3
    far = faces[2 * 9 + 1, 0:h, 0:w].reshape(-1)  # four pixels each way: past the search
    assert deck.match_picture(far).score < 0.9  # type: ignore[union-attr]
    assert deck.match_picture(np.zeros(w * h * 3, np.float32)).score == 0.0  # type: ignore[union-attr]


@pytest.mark.slow
def test_enrollment_looks_again_drawn_out_where_the_card_shows_no_index(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As the recogniser does, enrollment looks at a photo again drawn out (a card close to
    the camera) where the locator found no card or its outline shows no index in its corners,
    and takes that look's outline only where it shows one and is a quarter larger than the
    first."""
    need_artwork("berlin")
    # seed 303: a plain table corner (at 301 the classifier saw an index in its grain, 0.82)
    frame = render(photo("berlin", Card.parse("7C"), seed=303))
    enroller = Enroller()
    found = enroller.locator.look(frame, 1)
    card = found.spots[0].quad
    table = np.array([[4, 4], [40, 4], [40, 60], [4, 60]], np.float32)  # a corner of table
    wide = table * 2.5  # more table, six times the area, still no index
    assert enroller.index_at(frame, card) == CORNERS
    assert enroller.index_at(frame, table) == enroller.index_at(frame, wide) == NOWHERE
    mirrored = cv2.flip(frame, 1)  # the index in the other corners
    other = enroller.locator.look(mirrored, 1).spots[0].quad
    assert enroller.index_at(mirrored, other) == ELSEWHERE
    assert enroller.quad(frame) is card or np.array_equal(enroller.quad(frame), card)
    asked: list[float] = []

    def looks(first: list[Spot], second: list[Spot]) -> None:
        def look(image: np.ndarray, most: int = 2, pad: float = 0.0) -> Sight:
            asked.append(pad)
            return Sight(found.chance, second if pad == DRAWN_OUT else first)
        asked.clear()
        monkeypatch.setattr(enroller.locator, "look", look)

    looks([Spot(card, 0.9)], [Spot(table, 0.9)])
    assert np.array_equal(enroller.quad(frame), card) and asked == [0.0]
    looks([], [Spot(card, 0.9)])  # nothing found as it is
    assert np.array_equal(enroller.quad(frame), card) and asked == [0.0, DRAWN_OUT]
    looks([Spot(table, 0.9)], [Spot(card, 0.9)])  # found, but no index in it
    assert np.array_equal(enroller.quad(frame), card) and asked == [0.0, DRAWN_OUT]
    looks([Spot(table, 0.9)], [Spot(wide, 0.9)])  # drawn out, larger, no index: the first
    assert np.array_equal(enroller.quad(frame), table) and asked == [0.0, DRAWN_OUT]
    looks([], [])
    assert enroller.quad(frame) is None and asked == [0.0, DRAWN_OUT]
    # an outline drawn out about as large as the first is of the same card: the first stays,
    # though the classifier doubted its index (a font it was never taught)
    doubted = card.copy()
    monkeypatch.setattr(enroller, "index_at",
                        lambda image, quad: NOWHERE if quad is doubted else CORNERS)
    looks([Spot(doubted, 0.9)], [Spot(card + 2.0, 0.9)])
    assert enroller.quad(frame) is doubted and asked == [0.0, DRAWN_OUT]
    centre = card.mean(axis=0)
    part = (centre + (doubted - centre) * 0.8).astype(np.float32)  # 64 % of the card
    monkeypatch.setattr(enroller, "index_at",
                        lambda image, quad: NOWHERE if quad is part else CORNERS)
    looks([Spot(part, 0.9)], [Spot(card, 0.9)])
    assert enroller.quad(frame) is card
    # an outline whose index shows only in the other corners (a piece of the card, or the card
    # the wrong way round): looked at again, and the larger outline drawn out taken where its
    # index is in its corners; about as large, the first stays (a deck that prints its index
    # there); larger, its index elsewhere too, the first stays (both turned on their side)
    def corners_not(*quads: np.ndarray) -> None:
        monkeypatch.setattr(enroller, "index_at", lambda image, quad: ELSEWHERE if any(
            quad is q for q in quads) else CORNERS)

    corners_not(part)
    looks([Spot(part, 0.9)], [Spot(card, 0.9)])
    assert enroller.quad(frame) is card and asked == [0.0, DRAWN_OUT]
    corners_not(doubted)
    looks([Spot(doubted, 0.9)], [Spot(card + 2.0, 0.9)])
    assert enroller.quad(frame) is doubted and asked == [0.0, DRAWN_OUT]
    corners_not(part, card)
    looks([Spot(part, 0.9)], [Spot(card, 0.9)])
    assert enroller.quad(frame) is part and asked == [0.0, DRAWN_OUT]
    # a first outline with no index at all: the larger outline drawn out is taken wherever its
    # index stands (a deck that prints it top right)
    monkeypatch.setattr(enroller, "index_at",
                        lambda image, quad: ELSEWHERE if quad is card else NOWHERE)
    looks([Spot(part, 0.9)], [Spot(card, 0.9)])
    assert enroller.quad(frame) is card and asked == [0.0, DRAWN_OUT]


@pytest.mark.slow
def test_a_photo_or_camera_without_colour_is_not_enrolled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table names no card in a frame without colour (red and black suits look alike), so
    enrollment refuses such photos and such a camera, saying why."""
    need_artwork("anglo")
    colour = render(photo("anglo", Card.parse("QH"), 3))
    grey = cv2.cvtColor(cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    cv2.imwrite(str(tmp_path / "QH.png"), grey)
    with pytest.raises(EnrollError, match=r"QH\.png: no colour \(black and white, or too"):
        enroll_images(tmp_path)
    # a grey photo is not even looked at (not enrolled in grey)
    looked: list[int] = []
    enroller = Enroller()
    monkeypatch.setattr(enroller, "see", lambda image, quad=None: looked.append(1))
    with pytest.raises(EnrollError):
        enroll_images(tmp_path, enroller)
    assert looked == []
    # a camera without colour: said once, the card not taken, the camera watched on
    told: list[tuple[str, str]] = []
    frames = (Frame(k * 33_000_000, grey) for k in range(10))
    with pytest.raises(EnrollError, match="the camera stopped before QH was taken"):
        take_live(frames, lambda card, what: told.append((str(card), what)),
                  [Card.parse("QH")], steady=3)
    assert told == [("QH", "lay"), ("QH", "no colour")]
    # the same card in colour is taken
    frames = (Frame(k * 33_000_000, colour) for k in range(10))
    assert list(take_live(frames, lambda card, what: None, [Card.parse("QH")], steady=3)) == [
        Card.parse("QH")]


@pytest.mark.slow
def test_enrollment_learns_where_a_deck_prints_its_index(tmp_path: Path) -> None:
    """KDE's Oxygen deck prints its index upright in the top-right corner only: enrolled, the
    deck says so, its file keeps it, and an index seen only there is read as the deck's own
    (out of the box it is left unclear: the warp may have turned it on its side)."""
    from hardware.camera.reader.recognise import THRESHOLD, decide, in_its_corners

    need_artwork("kde-oxygen")
    need_artwork("anglo")
    oxygen, anglo = enrolled("kde-oxygen"), enrolled("anglo")
    assert oxygen.other_corners and not anglo.other_corners
    oxygen.save(tmp_path / "oxygen.npz")
    assert EnrolledDeck.load(tmp_path / "oxygen.npz").other_corners
    plain, mine = Recogniser(), Recogniser(oxygen)
    frame = render(photo("kde-oxygen", Card.parse("9S"), seed=12))
    quad = plain.locator.look(frame, 1).spots[0].quad
    look = plain.look(frame, quad)
    assert not in_its_corners(look)
    assert decide(look, plain.meaning, THRESHOLD, quad).reason == "index misplaced"
    assert decide(look, plain.meaning, THRESHOLD, quad, corners=False).card == Card.parse("9S")
    assert plain.read(frame).card is None and mine.read(frame).card == Card.parse("9S")
    # where the deck's own decision is unclear, the out-of-the-box one it falls back to
    # takes the deck's corners: the Oxygen deck's index is its own, anglo's would be turned
    from hardware.camera.reader import recognise

    unsure = recognise.Read(None, 0.0, quad, "deck unsure")
    original = recognise.decide_enrolled
    try:
        recognise.decide_enrolled = lambda *a, **k: unsure  # type: ignore[assignment]
        assert mine.read_quad(frame, quad).card == Card.parse("9S")
        assert Recogniser(replace(oxygen, other_corners=False)).read_quad(
            frame, quad).card is None
    finally:
        recognise.decide_enrolled = original


def test_a_deck_says_it_prints_its_index_in_the_other_corners_by_most_of_its_cards(
        tmp_path: Path) -> None:
    """``other_corners`` is the majority of the cards seen (a card or two outlined on its side
    at enrollment does not make a deck of them), kept in the deck file; a file without it (an
    earlier version's) reads as a deck with the usual corners and says to enroll again; a
    file whose entry is not true or false is refused with one clear line."""
    rng = np.random.default_rng(3)

    def seen(other: bool) -> Seen:
        d = rng.normal(size=(COPIES, 4 * FEATURES)).astype(np.float32)
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        g = np.zeros(len(GLYPHS) + 1, np.float32)
        g[GLYPHS.index("K")] = 1
        return Seen(d, g, None, other)

    cards = full_deck()
    assert not build({c: seen(i < 25) for i, c in enumerate(cards)}).other_corners
    deck = build({c: seen(i < 26) for i, c in enumerate(cards)})
    assert deck.other_corners
    deck.save(tmp_path / "d.npz")
    assert EnrolledDeck.load(tmp_path / "d.npz").other_corners
    with np.load(tmp_path / "d.npz") as z:
        arrays = {k: z[k] for k in z.files}
    old = {k: v for k, v in arrays.items() if k != "other_corners"}
    np.savez_compressed(tmp_path / "old.npz", **old)
    loaded = EnrolledDeck.load(tmp_path / "old.npz")
    assert not loaded.other_corners and "enroll the deck again" in loaded.outdated
    for bad in (np.array("False"), np.array([True, False]), np.array(2)):
        np.savez_compressed(tmp_path / "bad.npz", **{**old, "other_corners": bad})
        with pytest.raises(ValueError, match="other_corners is not true or false"):
            EnrolledDeck.load(tmp_path / "bad.npz")


@pytest.mark.slow
def test_the_deck_s_clear_picture_names_a_club_the_classifier_takes_for_a_spade() -> None:
    """A scene of a deck the networks never saw (gnomangelo, seed 60 311): the classifier
    reads its 3 of clubs as the 3 of spades, surely, and the deck's features only just agree;
    the deck's whole-card picture, clearly the 3 of clubs, names it. Without the pictures the
    same read is the 3 of spades, wrong. (The example was seed 40 017 until the classifier
    taught smeared corners, which is unsure of that one: without pictures it is unclear.)"""
    need_artwork("gnomangelo")
    deck = enrolled("gnomangelo")
    scene = random_scene(60311, "gnomangelo")
    assert scene.top == Card.parse("3C")
    frame = render(scene)
    assert Recogniser(deck).read(frame).card == Card.parse("3C")
    alone = EnrolledDeck(deck.cards, deck.descriptors, deck.meaning)
    assert Recogniser(alone).read(frame).card == Card.parse("3S")


def test_enrollment_refuses_a_frame_no_camera_gives() -> None:
    """As the recogniser does (a strip 1 pixel wide would ask the locator for gigabytes)."""
    from hardware.camera.reader.recognise import FrameError

    enroller = Enroller()
    with pytest.raises(FrameError, match="a frame of 1 x 5000 pixels"):
        enroller.quad(np.zeros((5000, 1, 3), np.uint8))
    with pytest.raises(FrameError, match="a frame of float64"):
        enroller.see(np.zeros((480, 640, 3)))


def test_a_folder_of_photos_none_usable_says_the_first_why_and_how_many_more(
        tmp_path: Path) -> None:
    """Every reason is not listed in the one line, but how many photos could not be used is."""
    for name, data in (("AS.png", b"junk"), ("KS.png", b""), ("QS.jpg", b"not a photo")):
        (tmp_path / name).write_bytes(data)
    (tmp_path / "notes.txt").write_text("not a card: not counted")
    with pytest.raises(EnrollError) as info:
        enroll_images(tmp_path, Enroller())
    said = str(info.value)
    assert "52 of the 52 cards are missing or unusable" in said
    assert f"; not used: {tmp_path / 'AS.png'}: not an image OpenCV can read" in said
    assert said.endswith("(and 2 more photos not usable)")


def test_a_photo_not_named_by_a_card_is_said_not_skipped(tmp_path: Path) -> None:
    """A folder of photos with one misnamed: the error names it (it had said only that the
    52 cards were missing, as for an empty folder); a text file beside them is not a photo."""
    cv2.imwrite(str(tmp_path / "queen.png"), np.full((480, 640, 3), 90, np.uint8))
    (tmp_path / "README.txt").write_text("my deck")
    with pytest.raises(EnrollError) as err:
        see_images(tmp_path, Enroller())
    said = str(err.value)
    assert "52 of the 52 cards are missing" in said
    assert "queen.png: not named by a card (QH.png, 10S.jpg, AD.jpeg)" in said
    assert "README" not in said


class _SeesAnything(Enroller):
    """An enroller that takes any photo for a card (no networks: the folder is the test)."""

    def __init__(self) -> None:
        pass

    def see(self, image: Any, quad: Any = None) -> Seen | None:
        return Seen(np.zeros((1, 4 * FEATURES), np.float32),
                    np.zeros(len(GLYPHS) + 1, np.float32))


def test_one_photo_under_two_cards_names_is_refused(tmp_path: Path) -> None:
    """The 2026-12-07 CLI audit: 52 copies of one photo were enrolled, and the self-check
    then blamed the photos' clearness. The same pixels under two names are refused."""
    rng = np.random.default_rng(5)
    for card in full_deck():
        cv2.imwrite(str(tmp_path / f"{card}.png"), rng.integers(0, 255, (80, 64, 3), np.uint8))
    assert len(see_images(tmp_path, _SeesAnything())[0]) == 52  # 52 photos of their own
    (tmp_path / "8H.png").write_bytes((tmp_path / "QH.png").read_bytes())
    (tmp_path / "2C.png").write_bytes((tmp_path / "3C.png").read_bytes())
    with pytest.raises(EnrollError) as err:
        see_images(tmp_path, _SeesAnything())
    assert str(err.value) == (f"{tmp_path}: 2C.png, 3C.png are the same photo (and 1 more "
                              "such set): each card needs a photo of its own")
    (tmp_path / "9S.png").write_bytes((tmp_path / "3C.png").read_bytes())
    (tmp_path / "4D.png").write_bytes((tmp_path / "5D.png").read_bytes())
    with pytest.raises(EnrollError, match=r"2C.png, 3C.png, 9S.png are the same photo \(and 2 "
                       r"more such sets\)"):
        see_images(tmp_path, _SeesAnything())


def test_two_photos_of_one_card_are_refused(tmp_path: Path) -> None:
    """One of them had been used without a word (QH.png and QH.jpg); the same pixels under
    both names had been called "the same photo", as if two cards were meant."""
    rng = np.random.default_rng(6)
    for card in full_deck():
        cv2.imwrite(str(tmp_path / f"{card}.png"), rng.integers(0, 255, (80, 64, 3), np.uint8))
    cv2.imwrite(str(tmp_path / "QH.jpg"), cv2.imread(str(tmp_path / "QH.png")))
    with pytest.raises(EnrollError) as err:
        see_images(tmp_path, _SeesAnything())
    assert str(err.value) == f"{tmp_path}: QH.jpg, QH.png are 2 photos of QH: keep one"
    cv2.imwrite(str(tmp_path / "2C.jpeg"), cv2.imread(str(tmp_path / "3C.png")))
    with pytest.raises(EnrollError) as err:
        see_images(tmp_path, _SeesAnything())
    assert str(err.value) == (f"{tmp_path}: 2C.jpeg, 2C.png are 2 photos of 2C (and 1 more "
                              "such card): keep one")
