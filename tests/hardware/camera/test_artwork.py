"""The camera's card artwork (hardware/camera/synthetic/artwork.py): only the decks issue 33
allows can be rendered, every other deck of the two packages is refused without being read, and
the decks drawn here are 52 cards each, printing the index sets they say."""

from __future__ import annotations

from pathlib import Path

import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.synthetic import artwork  # noqa: E402
from hardware.camera.synthetic.artwork import AISLERIOT, DECKS, KDE, ArtworkError  # noqa: E402
from referee.cards import full_deck  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402

#: Issue 33's lists, as the issue gives them.
ISSUE_AISLERIOT = {
    "ancient_french", "anglo", "anglo_bitmap", "anglo_modern", "anglo_modern_4_color",
    "anglo_poker", "atlasnye", "atlasnye_skat", "bellot", "berlin", "dondorf", "gnomangelo",
    "gnomangelo_bitmap", "guyenne-classic", "lattmann", "orell", "ornamental", "paris",
    "rheinland", "simplistic", "slavic_costumes", "swiss-xvii", "tarocco", "tigullio"}
ISSUE_KDE = {"penguins", "gm-paris", "tigullio-international", "xskat-french", "oxygen",
             "oxygen-air", "nicu-ornamental", "konqi-modern", "ancient-egyptians", "dondorf",
             "jolly-royal", "future"}


def test_the_allowed_decks_are_the_issue_s_lists() -> None:
    aisleriot = {d.name for d in DECKS.values() if d.source == "aisleriot"}
    kde = {d.name.removeprefix("kde-") for d in DECKS.values() if d.source == "kde"}
    assert aisleriot == ISSUE_AISLERIOT
    assert kde == ISSUE_KDE
    # each allowed deck names its own file in its package, and no two name one file
    files = [(d.source, d.file) for d in DECKS.values() if d.source in ("aisleriot", "kde")]
    assert len(files) == len(set(files))
    for d in DECKS.values():
        if d.source == "aisleriot":
            assert d.file == f"{d.name}.svgz"
        elif d.source == "kde":
            assert d.file.startswith(f"svg-{d.name.removeprefix('kde-')}/")


def _package_files() -> list[tuple[str, Path]]:
    """Every deck file of the two packages on this machine (names only: none is opened)."""
    out = [("aisleriot", p) for p in sorted(AISLERIOT.glob("*.svgz"))]
    out += [("kde", p) for p in sorted(KDE.glob("*/*.svgz"))]
    return out


def test_every_other_deck_of_the_packages_is_refused_unread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A deck file of the packages that the list does not allow is reachable by no name: the
    loader refuses its name, its file's name and its path, and never reads a file for it."""
    files = _package_files()
    if not files:
        pytest.skip("the card packages are not installed (run .ci/run)")
    allowed = {(d.source, d.file) for d in DECKS.values()}
    kept_aside = [(src, p) for src, p in files
                  if (src, p.name if src == "aisleriot" else f"{p.parent.name}/{p.name}")
                  not in allowed]
    assert kept_aside, "the packages hold decks the issue keeps aside"
    opened: list[str] = []
    real_open = Path.read_bytes

    def spy(self: Path) -> bytes:
        opened.append(str(self))
        return real_open(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    for _, path in kept_aside:
        for name in {path.stem, path.parent.name, f"kde-{path.parent.name.removeprefix('svg-')}",
                     str(path), path.name}:
            if name in DECKS:  # a folder's name that is also an allowed aisleriot deck's
                continue
            assert not artwork.available(name)
            with pytest.raises(ArtworkError, match="not a deck the camera may render"):
                artwork.render_deck(name)
            with pytest.raises(ArtworkError):
                artwork.card_png(name, full_deck()[0])
    assert not [p for p in opened if p.startswith(("/usr/share/aisleriot", "/usr/share/carddecks"))]


def test_names_that_are_paths_are_refused(tmp_path: Path) -> None:
    for name in ("../anglo", "/usr/share/aisleriot/cards/anglo.svgz", "anglo/../paris", "",
                 "ANGLO", "drawn-0", f"drawn-{artwork.DRAWN_DECKS + 1}"):
        with pytest.raises(ArtworkError):
            artwork.deck(name)


def test_a_deck_that_renders_wrong_here_says_why() -> None:
    with pytest.raises(ArtworkError, match="cut off"):
        artwork.render_deck("kde-nicu-ornamental")
    assert "kde-nicu-ornamental" not in artwork.REAL_DECKS
    assert "kde-future" not in artwork.REAL_DECKS  # no deck of playing cards
    assert "swiss-xvii" not in artwork.REAL_DECKS  # Swiss suits


def test_every_real_deck_lies_in_one_fold() -> None:
    folded = [d for fold in artwork.FOLDS for d in fold]
    assert sorted(folded) == sorted(artwork.REAL_DECKS)


@pytest.mark.slow
def test_a_drawn_deck_is_52_cards_of_one_shape(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    need_artwork("drawn-2")
    monkeypatch.setenv("REFEREE_CAMERA_CACHE", str(tmp_path))
    folder = artwork.render_deck("drawn-2")
    assert folder.is_relative_to(tmp_path)
    images = {c: cv2.imread(str(folder / f"{c}.png"), cv2.IMREAD_UNCHANGED) for c in full_deck()}
    assert all(im is not None and im.shape[2] == 4 for im in images.values())
    assert {im.shape[0] for im in images.values()} == {artwork.CARD_HEIGHT}
    assert len({im.shape for im in images.values()}) == 1
    assert len({im.tobytes() for im in images.values()}) == 52


def test_drawn_decks_print_every_index_set() -> None:
    from hardware.camera.synthetic.drawn import letters_of

    sets = {letters_of(n)[0] for n in range(1, artwork.DRAWN_DECKS + 1)}
    assert sets == {"english", "german", "french", "russian", "swedish", "italian", "dutch"}


def _read_deck(deck: str) -> int:
    """In a process of its own: every card of a deck read from the cache (drawn on first
    use); how many read whole."""
    from hardware.camera.synthetic.artwork import card_png

    return sum(cv2.imread(str(card_png(deck, c)), cv2.IMREAD_UNCHANGED) is not None
               for c in full_deck())


@pytest.mark.slow
def test_processes_drawing_and_reading_a_deck_at_once_each_read_every_card_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Training renders in several processes, each drawing a deck on first use: none may read
    a card another is still writing."""
    from concurrent.futures import ProcessPoolExecutor

    need_artwork("drawn-6")
    monkeypatch.setenv("REFEREE_CAMERA_CACHE", str(tmp_path))
    with ProcessPoolExecutor(3) as pool:
        read = list(pool.map(_read_deck, ["drawn-6"] * 3))
    assert read == [52] * 3
    folder = tmp_path / f"png-{artwork.CARD_HEIGHT}"
    assert sorted(p.name for p in folder.iterdir()) == ["drawn-6"]  # no work folder left
    assert len(list((folder / "drawn-6").iterdir())) == 52
