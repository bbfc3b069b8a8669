"""The recogniser on a fixed set of rendered scenes (issue 12): how many are read right, how
many wrong; never timed (bench/camera.py times it). The shares asserted are the ones measured
when the model was trained (docs/camera.md), a little below, so a worse model fails."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.reader.find import find_cards  # noqa: E402
from hardware.camera.reader.locate import Sight, order  # noqa: E402
from hardware.camera.reader.recognise import Read, Recogniser  # noqa: E402
from hardware.camera.reader.templates import (  # noqa: E402
    EnrolledDeck,
    TemplateMatch,
    alike,
    template_vector,
)
from hardware.camera.reader.warp import warp  # noqa: E402
from hardware.camera.synthetic.evaluate import score_deck  # noqa: E402
from hardware.camera.synthetic.scene import corners_in_frame, random_scene, render  # noqa: E402
from referee.cards import Card, full_deck  # noqa: E402

SEEDS = range(1000, 1030)


@pytest.fixture(scope="module")
def recogniser() -> Recogniser:
    return Recogniser()


@pytest.mark.slow
def test_training_deck_scenes(decks: None, recogniser: Recogniser) -> None:
    """anglo (a training deck): most scenes read right, none wrong."""
    score = score_deck("anglo", SEEDS, recogniser)
    assert score.wrong == 0, score.wrong_seeds
    assert score.correct >= 28, score.figures()  # measured 30 of 30 (28 before the locator)


@pytest.mark.slow
def test_held_out_deck_scenes(decks: None, recogniser: Recogniser) -> None:
    """touati (held out of training): some read right, none wrong (the rest unclear)."""
    score = score_deck("touati", SEEDS, recogniser)
    assert score.wrong == 0, score.wrong_seeds
    assert score.correct >= 27, score.figures()  # measured 30 of 30 (23 before the locator)


@pytest.mark.slow
def test_borderless_deck_scenes(decks: None, recogniser: Recogniser) -> None:
    """anglo with its border line painted white (``anglo+plain``; touati and most real decks
    have none, so a card on a white card shows only a faint edge): most read right, none
    wrong. Without the finder's corner stage 50 of these 60 read right."""
    score = score_deck("anglo+plain", range(1000, 1060), recogniser)
    assert score.wrong == 0, score.wrong_seeds
    assert score.correct >= 57, score.figures()  # measured 60 of 60 (56 before the locator)


def true_outline_reads(deck: str, seeds: range, recogniser: Recogniser) -> tuple[int, int]:
    """Right and wrong reads of the top card through its true outline, each corner a few
    pixels off (as the finder's): the corner classifiers alone, whatever the finder does."""
    right = wrong = 0
    for seed in seeds:
        scene = random_scene(seed, deck)
        rng = np.random.default_rng(seed)
        quad = corners_in_frame(scene, scene.cards[-1]) + rng.uniform(-3, 3, (4, 2))
        read = recogniser.read_quad(render(scene), quad.astype(np.float32))
        right += read.card == scene.top
        wrong += read.card is not None and read.card != scene.top
    return right, wrong


@pytest.mark.slow
def test_the_classifiers_read_the_true_outline(decks: None, recogniser: Recogniser) -> None:
    """Through the top card's true outline: gnomangelo (a training deck) and touati (held
    out of training) read mostly right, none wrong (the model before the distorted samples
    read 53 of these 60 touati scenes right)."""
    right, wrong = true_outline_reads("gnomangelo", range(2000, 2030), recogniser)
    assert wrong == 0 and right >= 27, (right, wrong)  # measured 30 of 30
    right, wrong = true_outline_reads("touati", range(2000, 2060), recogniser)
    assert wrong == 0 and right >= 56, (right, wrong)  # measured 58 of 60


def test_the_top_card_is_the_one_found(decks: None) -> None:
    """On a pile of three, the whole card found is the top one (its corners within a few
    pixels), not one of the cards beneath."""
    hits = 0
    for seed in range(20):
        scene = random_scene(seed, "anglo", beneath=2, hands=False)
        quads = find_cards(render(scene))
        if not quads:
            continue
        true = corners_in_frame(scene, scene.cards[-1])
        err = min(float(np.abs(quads[0] - np.roll(true, k, axis=0)).max()) for k in range(4))
        hits += err < 10
    assert hits >= 16  # measured 18 of 20


def test_a_table_without_a_card_is_no_card(decks: None, recogniser: Recogniser) -> None:
    scene = random_scene(3, "anglo")
    scene.cards.clear()
    scene.hands.clear()
    read = recogniser.read(render(scene))
    assert read.card is None and read.quad is None


@pytest.mark.slow
def test_an_enrolled_deck_reads_its_cards(decks: None, tmp_path: object) -> None:
    """Templates of each card, from clean photos, name the same cards in new photos."""
    vectors, cards = [], []
    for card in full_deck():
        scene = random_scene(7, "touati", top=card, beneath=0, hands=False)
        scene.glare, scene.blur, scene.motion = None, 0.0, 0.0
        image = render(scene)
        quads = find_cards(image)
        assert quads, card
        vectors.append(template_vector(warp(image, quads[0])))
        cards.append(card)
    deck = EnrolledDeck(tuple(cards), np.stack(vectors))
    right = 0
    for card in (Card.parse(c) for c in ("QH", "10S", "7C", "AD", "KS", "2H")):
        scene = random_scene(99, "touati", top=card, beneath=1, hands=False)
        image = render(scene)
        quads = find_cards(image)
        if quads:
            seen = deck.look(warp(image, quads[0]))
            right += seen.card == card and seen.score > seen.second
    assert right >= 4


@pytest.mark.slow
def test_a_deck_that_names_every_card_wrongly_makes_reads_unclear_not_wrong(
        decks: None) -> None:
    """An enrolled deck whose templates all carry another card's name (a deck file made from
    photos named wrongly): where the corners and the template disagree the read is unclear;
    no read names the template's card."""
    vectors, cards = [], []
    for card in full_deck():
        scene = random_scene(7, "touati", top=card, beneath=0, hands=False)
        scene.glare, scene.blur, scene.motion = None, 0.0, 0.0
        image = render(scene)
        vectors.append(template_vector(warp(image, find_cards(image)[0])))
        cards.append(card)
    shifted = EnrolledDeck(tuple(cards[1:] + cards[:1]), np.stack(vectors))
    plain, lying = Recogniser(), Recogniser(shifted)
    named = 0
    for seed in range(40, 56):
        scene = random_scene(seed, "touati", beneath=0, hands=False)
        frame = render(scene)
        truth, liar = plain.read(frame), lying.read(frame)
        assert liar.card is None or liar.card == scene.top, (seed, liar)
        named += truth.card == scene.top
    assert named >= 8  # the plain recogniser reads most of these scenes: the test has teeth


def test_the_top_card_is_wholly_in_view(decks: None) -> None:
    """The virtual camera is mounted over the pile: the top card's corners lie in the frame."""
    for seed in range(300):
        scene = random_scene(seed, "anglo")
        corners = corners_in_frame(scene, scene.cards[-1])
        assert (corners >= 0).all() and (corners[:, 0] < 640).all() \
            and (corners[:, 1] < 480).all(), seed


def test_read_to_json() -> None:
    assert Read(Card.parse("QH"), 0.91234, None).to_json("a.png") == {
        "image": "a.png", "card": "QH", "confidence": 0.9123}
    assert Read(None, 0.2).to_json("b.png") == {"image": "b.png", "card": None,
                                               "confidence": 0.2}


def test_an_outline_that_reads_another_card_than_the_whole_card_there_is_unclear() -> None:
    """A whole card read unclear whose two corners both named 5C, then an outline found from
    a corner on the same place, a few pixels off onto the card beneath, reading 5S: unclear.
    The same outline reading 5C, or lying elsewhere, stands."""
    from hardware.camera.reader.recognise import _unless_disputed

    whole = np.array([[100, 100], [240, 100], [240, 300], [100, 300]], np.float32)
    doubt = Read(None, 0.74, whole, "unclear", Card.parse("5C"))
    near = whole + np.float32(6)
    other = Read(Card.parse("5S"), 0.82, near)
    got = _unless_disputed(other, [doubt])
    assert got.card is None and got.reason == "outlines disagree"
    assert got.guess == Card.parse("5S")
    same = Read(Card.parse("5C"), 0.9, near)
    assert _unless_disputed(same, [doubt]) is same
    elsewhere = Read(Card.parse("5S"), 0.82, whole + np.float32(300))
    assert _unless_disputed(elsewhere, [doubt]) is elsewhere


def test_two_corners_that_agree_need_less_than_corners_that_differ(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two corners naming 5C at 0.9 and 0.5 (geometric mean 0.67) name it; the same corners
    under ``agreed=0.8``, or one of them naming 5S, make the read unclear."""
    import hardware.camera.reader.recognise as recognise

    five, spade = Card.parse("5C"), Card.parse("5S")
    quad = np.array([[100, 100], [240, 100], [240, 300], [100, 300]], np.float32)
    frame = np.full((480, 640, 3), 200, np.uint8)
    readings: list[tuple[Card, float] | None] = [(five, 0.9), (five, 0.5)]
    monkeypatch.setattr(recognise, "read_corners", lambda card: list(readings))
    got = Recogniser().read_quad(frame, quad)
    assert got.card == five and got.confidence == pytest.approx(0.45 ** 0.5)
    assert Recogniser(agreed=0.8).read_quad(frame, quad).card is None
    readings[1] = (spade, 0.5)
    assert Recogniser().read_quad(frame, quad).card is None

    class Unsure:
        """An enrolled deck whose template cannot tell (best 0.7, runner-up 0.69)."""

        def look(self, card: np.ndarray) -> TemplateMatch:
            return TemplateMatch(five, 0.7, 0.69, 0.69)

    readings[1] = (five, 0.5)
    # with an enrolled deck, the template must confirm a read below THRESHOLD
    assert Recogniser(deck=Unsure()).read_quad(frame, quad).card is None  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_template_names_the_card_through_an_outline_a_little_off(decks: None) -> None:
    """An enrolled deck's template is the whole card, small, without the light's slow change,
    with its redness: through the top card's true outline moved up to 2 px at each corner
    (the locator's outlines are that close), it names the card. The templates before (the
    grey card and its corner index at full size) named it in 45 % of such anglo+plain scenes,
    these in 100 % of 200 (gnomangelo+plain 98.5 %)."""
    deck = "anglo+plain"
    vectors = []
    for card in full_deck():
        scene = random_scene(7, deck, top=card, beneath=0, hands=False)
        scene.glare, scene.blur, scene.motion = None, 0.0, 0.0
        image = render(scene)
        vectors.append(template_vector(warp(image, find_cards(image)[0])))
    enrolled = EnrolledDeck(tuple(full_deck()), np.stack(vectors))
    rng = np.random.default_rng(5)
    named = 0
    for seed in range(2000, 2040):
        scene = random_scene(seed, deck)
        quad = order(corners_in_frame(scene, scene.cards[-1]) + rng.uniform(-2, 2, (4, 2)))
        named += enrolled.look(warp(render(scene), quad)).card == scene.top
    assert named >= 37, named


def test_cards_alike_to_a_template_are_one_rank_and_colour() -> None:
    ah, ad, as_, kh = (Card.parse(c) for c in ("AH", "AD", "AS", "KH"))
    assert alike(ah, ad) and alike(ad, ah) and alike(ah, ah)
    assert not alike(ah, as_) and not alike(ah, kh)
    assert alike(Card.parse("10S"), Card.parse("10C"))


def test_a_template_that_names_the_same_rank_and_colour_leaves_the_suit_to_the_corners(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Both corners read AH (0.98); the template, a pixel off, clearly prefers AD, the ace of
    the other red suit (it cannot tell a heart from a diamond pip at its size): the read is
    AH, not unclear. A template clearly naming a king makes it unclear; corners that differ
    (6D and QH) take the side of the one alike the template (QD: QH, the corner's card)."""
    import hardware.camera.reader.recognise as recognise

    ah, ad = Card.parse("AH"), Card.parse("AD")
    quad = np.array([[100, 100], [240, 100], [240, 300], [100, 300]], np.float32)
    frame = np.full((480, 640, 3), 200, np.uint8)
    readings: list[tuple[Card, float] | None] = [(ah, 0.98), (ah, 0.98)]
    monkeypatch.setattr(recognise, "read_corners", lambda card: list(readings))

    class Deck:
        match = TemplateMatch(ad, 0.79, 0.69, 0.45)

        def look(self, card: np.ndarray) -> TemplateMatch:
            return self.match

    deck = Deck()
    reader = Recogniser(deck=deck)  # type: ignore[arg-type]
    assert reader.read_quad(frame, quad).card == ah
    deck.match = TemplateMatch(Card.parse("KS"), 0.79, 0.6, 0.6)
    got = reader.read_quad(frame, quad)
    assert got.card is None and got.reason == "template disagrees"
    readings[:] = [(Card.parse("6D"), 0.6), (Card.parse("QH"), 0.95)]
    deck.match = TemplateMatch(Card.parse("QD"), 0.85, 0.8, 0.7)
    got = reader.read_quad(frame, quad)
    assert got.card == Card.parse("QH") and got.confidence == pytest.approx(0.95)


def test_a_plain_deck_is_the_deck_without_its_border(decks: None) -> None:
    """``anglo+plain``: anglo's cards with the black line round their edge painted white (a
    borderless deck, for the finder's figures), the rest of the card as it was."""
    import cv2

    from hardware.camera.synthetic.scene import PLAIN, card_rgba

    for card in (Card.parse("KH"), Card.parse("5C")):
        lined, plain = card_rgba("anglo", card), card_rgba("anglo" + PLAIN, card)
        solid = (lined[..., 3] == 255).astype(np.uint8)
        inner = cv2.erode(solid, np.ones((7, 7), np.uint8), borderType=cv2.BORDER_CONSTANT,
                          borderValue=0)
        ring = (solid > 0) & (inner == 0)  # 3 px in from the card's edge
        assert lined[ring, :3].min() < 60  # the border line is dark
        assert plain[ring, :3].min() >= 250  # and gone
        assert (plain[8:-8, 8:-8] == lined[8:-8, 8:-8]).all()


class Seen:
    """A stand-in locator whose map holds one chance everywhere and which outlines nothing:
    the recogniser then reads the edge finder's outline, if the map takes it for the top
    card."""

    def __init__(self, chance: float) -> None:
        self.chance = chance

    def look(self, frame: np.ndarray) -> Sight:
        h, w = frame.shape[:2]
        return Sight(np.full((h // 2, w // 2), self.chance, np.float32), [])


def test_an_outline_the_locator_takes_for_a_card_beneath_is_not_read(decks: None) -> None:
    scene = random_scene(1000, "anglo")
    frame = render(scene)
    assert Recogniser(locator=False).read(frame).card == scene.top  # the edge finder alone
    assert Recogniser(locator=Seen(1.0)).read(frame).card == scene.top  # type: ignore[arg-type]
    vetoed = Recogniser(locator=Seen(0.05)).read(frame)  # type: ignore[arg-type]
    assert vetoed.card is None and vetoed.reason == "beneath the top card"
    assert vetoed.guess == scene.top



def card_quad(short: float, long: float, turn: float = 20.0) -> np.ndarray:
    """A card's outline, corners clockwise from one end of a short side."""
    from hardware.camera.reader.warp import order_corners

    return order_corners(np.asarray(cv2.boxPoints(((320.0, 240.0), (short, long), turn)),
                                    np.float32))


def near(a: np.ndarray, b: np.ndarray) -> float:
    """The largest difference of a corner coordinate of two quads, whichever corner each
    starts at."""
    from hardware.camera.reader.warp import order_corners

    a, b = order_corners(a), order_corners(b)
    return min(float(np.abs(np.roll(a, k, axis=0) - b).max()) for k in range(4))


def test_an_outline_one_side_off_is_given_a_cards_shape() -> None:
    """reshaped: one side of a poker-sized card's outline found 20 px out (on a card
    beneath), or 10 px into the card: among the reshaped quads is the card, within half a
    pixel; an outline already of a card's shape is left as it is."""
    from hardware.camera.reader.warp import CARD_ASPECTS, reshaped

    true = card_quad(126.0, 126.0 * CARD_ASPECTS[0])
    along_long = (true[2] - true[1]) / np.linalg.norm(true[2] - true[1])
    out = true.copy()
    out[2:] += 20 * along_long  # a short side 20 px out
    assert near(out, true) > 15
    assert min(near(q, true) for q in reshaped(out)) < 0.5
    along_short = (true[1] - true[0]) / np.linalg.norm(true[1] - true[0])
    inside = true.copy()
    inside[1:3] -= 10 * along_short  # a long side 10 px in
    assert near(inside, true) > 7
    assert min(near(q, true) for q in reshaped(inside)) < 0.5
    assert reshaped(true, CARD_ASPECTS[:1]) == []

class Spotted:
    """A stand-in locator that sees the top card at one quad, its map all top card."""

    def __init__(self, quad: np.ndarray) -> None:
        self.quad = quad

    def look(self, frame: np.ndarray) -> Sight:
        from hardware.camera.reader.locate import Spot

        h, w = frame.shape[:2]
        return Sight(np.ones((h // 2, w // 2), np.float32), [Spot(self.quad, 1.0)])


@pytest.mark.slow
def test_the_locators_place_one_side_off_is_read_as_a_card(
        decks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """touati cards whose outline from the locator runs 30 px on past one short side (onto
    the card beneath, squared up): such an outline mostly reads no card, and the recogniser
    then reads the card in one of its reshaped outlines (the edge finder left out), never
    another card."""
    from hardware.camera.reader.warp import order_corners

    monkeypatch.setattr(Recogniser, "read_outlines",
                        lambda self, frame: Read(None, 0.0, None, "no card"))
    plain = Recogniser(locator=False)
    failed = rescued = 0
    for seed in range(1000, 1030):
        scene = random_scene(seed, "touati")
        frame = render(scene)
        true = order_corners(corners_in_frame(scene, scene.cards[-1]))
        out = true.copy()
        out[2:] += 30 * (true[2] - true[1]) / np.linalg.norm(true[2] - true[1])
        if plain.read_quad(frame, out).card is not None:
            continue
        failed += 1
        got = Recogniser(locator=Spotted(out)).read(frame)  # type: ignore[arg-type]
        assert got.card in (None, scene.top), seed
        if got.card is not None:
            assert got.quad is not None and near(got.quad, true) <= near(out, true) + 1, seed
            rescued += 1
    assert failed >= 12 and rescued >= failed - 1, (failed, rescued)  # measured 15 and 15
