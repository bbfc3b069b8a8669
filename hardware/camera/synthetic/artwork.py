"""Card artwork: the decks the virtual camera films, rendered once to PNG files in a cache.

Only the decks of :data:`DECKS` can be rendered: the decks issue 33 allows for training and
tuning, and the decks drawn here. Every other deck of the two Debian packages is kept aside for
an independent test, so the loader reaches a package's file only through this list (a name
not in it, or a path, is refused with :class:`ArtworkError`), and nothing here lists a
package's folder.

- Debian's ``gnome-cards-data`` (aisleriot: one SVG sheet of 13 x 5 cards a deck, rows clubs,
  diamonds, hearts, spades, columns ace to king) and ``kdegames-card-data-kf5`` (KDE: one SVG
  a deck, each card an element ``1_club`` … ``king_spade``; a deck's name here is ``kde-`` and
  its folder's name), both fetched by ``.ci/run`` and never committed (GPL and LGPL);
- ``touati``: the npm package ``@younestouati/playing-cards-standard-deck`` (one SVG a card);
- ``drawn-<n>``: decks drawn here from a seed with the system's fonts
  (:mod:`hardware.camera.synthetic.drawn`).

Each deck records what its indices print (:class:`Deck`): the index set of its court cards and
aces (``english`` A/K/Q/J, ``german`` B/D/K, …, see :data:`hardware.camera.config.INDEX_SETS`),
and whether its court cards print a rank at all. Rendering uses ``rsvg-convert``
(librsvg2-bin). PNGs go to the cache folder (``$REFEREE_CAMERA_CACHE``, else ``.cache/camera``
in the source tree, else ``~/.cache/card-referee/camera``), ``png-<height>/<deck>/<card>.png``
with alpha, the card cut to its outline.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.cards import Card, full_deck
from referee.errors import RefereeError

#: The npm package of the ``touati`` deck and where ``.ci/run`` installs it.
NPM_PACKAGE = "@younestouati/playing-cards-standard-deck"
AISLERIOT = Path("/usr/share/aisleriot/cards")
KDE = Path("/usr/share/carddecks")
#: Height in pixels of a rendered card.
CARD_HEIGHT = 480
#: How many ``drawn-<n>`` decks there are.
DRAWN_DECKS = 120


class ArtworkError(RefereeError, OSError):
    """A deck that is not allowed, or whose artwork is not installed or cannot be rendered."""


@dataclass(frozen=True)
class Deck:
    """One deck the camera may be trained and tuned on: where its artwork is, and what its
    indices print."""

    name: str
    source: str  # "aisleriot", "kde", "npm" or "drawn"
    file: str  # the file in its package ("" for a drawn deck)
    letters: str = "english"  # the index set of its courts and ace
    ace: str = "A"  # the glyph its aces print
    courts: bool = True  # its court cards print their rank
    french: bool = True  # French suits (spades, hearts, diamonds, clubs)
    playing: bool = True  # cards a person plays with (rectangles with ranks and suits)
    #: The corner views (:func:`hardware.camera.reader.warp.views`) in which the rank glyph
    #: stands upright: the top-left and the bottom-right (turned) corners in most decks.
    views: tuple[str, ...] = ("tl", "br")
    broken: str = ""  # why the deck cannot be rendered right here, if it cannot


def _aisleriot(name: str, **kw: Any) -> Deck:
    return Deck(name, "aisleriot", f"{name}.svgz", **kw)


def _kde(folder: str, file: str, **kw: Any) -> Deck:
    return Deck(f"kde-{folder}", "kde", f"svg-{folder}/{file}", **kw)


#: Every deck that may be rendered: issue 33's allowed decks and the decks drawn here.
DECKS: dict[str, Deck] = {d.name: d for d in (
    _aisleriot("ancient_french", letters="french", ace="1"),
    _aisleriot("anglo"),
    _aisleriot("anglo_bitmap"),
    _aisleriot("anglo_modern"),
    _aisleriot("anglo_modern_4_color"),
    _aisleriot("anglo_poker"),
    _aisleriot("atlasnye"),
    _aisleriot("atlasnye_skat", letters="german"),
    _aisleriot("bellot"),
    _aisleriot("berlin", letters="german"),
    _aisleriot("dondorf", views=("tl", "tr", "br", "bl")),
    _aisleriot("gnomangelo"),
    _aisleriot("gnomangelo_bitmap"),
    _aisleriot("guyenne-classic", courts=False),
    _aisleriot("lattmann", letters="german"),
    _aisleriot("orell"),
    _aisleriot("ornamental"),
    _aisleriot("paris"),
    _aisleriot("rheinland", letters="german"),
    _aisleriot("simplistic"),
    _aisleriot("slavic_costumes", letters="russian", ace="Т"),
    _aisleriot("swiss-xvii", courts=False, french=False),
    _aisleriot("tarocco", letters="italian"),
    _aisleriot("tigullio"),
    _kde("penguins", "penguins.svgz"),
    _kde("gm-paris", "paris.svgz"),
    _kde("tigullio-international", "tigullio-international.svgz"),
    _kde("xskat-french", "french.svgz", letters="german", views=("tl", "tr", "br", "bl")),
    _kde("oxygen", "oxygen.svgz", views=("tr",)),
    _kde("oxygen-air", "oxygen-air.svgz", views=("tr",)),
    _kde("nicu-ornamental", "ornamental.svgz",
         broken="librsvg draws its clubs cut off; aisleriot's ornamental is the same artwork"),
    _kde("konqi-modern", "konqi.svgz"),
    _kde("ancient-egyptians", "Ancient_Egyptians.svgz", views=("tl",)),  # its lower index upright
    _kde("dondorf", "dondorf.svgz", views=("tl", "tr", "br", "bl")),
    _kde("jolly-royal", "jolly-royal.svgz"),
    # chips printed with binary numbers, not rectangles: allowed, but no deck of playing cards
    _kde("future", "future.svgz", playing=False),
    Deck("touati", "npm", "cards"),
    *(Deck(f"drawn-{n}", "drawn", "") for n in range(1, DRAWN_DECKS + 1)),
)}
#: The decks of real artwork (not drawn here) that are decks of French-suited playing cards
#: with their ranks printed: what the leave-decks-out figures are measured on.
REAL_DECKS = tuple(d.name for d in DECKS.values()
                   if d.source != "drawn" and d.playing and d.french and not d.broken)

#: The leave-decks-out folds of the real decks: decks that share artwork (anglo and its bitmap
#: and gnomangelo copies, the French-pattern portraits of paris, bellot and ancient_french, the
#: two dondorf and tigullio decks, oxygen and oxygen-air …) lie in one fold.
FOLDS: tuple[tuple[str, ...], ...] = (
    ("anglo", "anglo_bitmap", "gnomangelo", "gnomangelo_bitmap", "slavic_costumes",
     "kde-penguins", "kde-jolly-royal"),
    ("paris", "kde-gm-paris", "bellot", "ancient_french", "orell", "kde-konqi-modern"),
    ("dondorf", "kde-dondorf", "anglo_modern", "anglo_modern_4_color", "tarocco",
     "kde-ancient-egyptians", "touati"),
    ("tigullio", "kde-tigullio-international", "berlin", "lattmann", "simplistic",
     "guyenne-classic"),
    ("kde-oxygen", "kde-oxygen-air", "atlasnye", "atlasnye_skat", "anglo_poker", "ornamental",
     "rheinland", "kde-xskat-french"),
)


def deck(name: str) -> Deck:
    """The allowed deck of that name; any other name is refused."""
    try:
        return DECKS[name]
    except KeyError:
        raise ArtworkError(f"{name!r} is not a deck the camera may render (the allowed decks "
                           "are hardware.camera.synthetic.artwork.DECKS; every other deck of "
                           "the card packages is kept aside for an independent test)") from None


def cache_dir() -> Path:
    """The folder of fetched and rendered artwork."""
    env = os.environ.get("REFEREE_CAMERA_CACHE")
    if env:
        return Path(env)
    root = Path(__file__).resolve().parents[3]
    if (root / "pyproject.toml").exists():
        return root / ".cache" / "camera"
    return Path.home() / ".cache" / "card-referee" / "camera"


def touati_dir() -> Path:
    """Where the npm package's card SVGs are (``npm install --prefix <cache>/npm``)."""
    return cache_dir() / "npm" / "node_modules" / NPM_PACKAGE / "cards"


def _source_file(d: Deck) -> Path:
    if d.source == "aisleriot":
        return AISLERIOT / d.file
    if d.source == "kde":
        return KDE / d.file
    return touati_dir() / "12h.svg"


def available(name: str) -> bool:
    """Whether an allowed deck's artwork can be rendered here (False for any other name)."""
    d = DECKS.get(name)
    if d is None or shutil.which("rsvg-convert") is None:
        return False
    return d.source == "drawn" or _source_file(d).exists()


def _rsvg(args: list[str]) -> None:
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise ArtworkError("rsvg-convert is not installed (apt-get install librsvg2-bin)")
    done = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ArtworkError(f"rsvg-convert failed: {done.stderr.strip()}")


def folder(name: str) -> Path:
    """Where the rendered cards of a deck lie (whether rendered yet or not)."""
    return cache_dir() / f"png-{CARD_HEIGHT}" / deck(name).name


def card_png(name: str, card: Card) -> Path:
    """The PNG of one card of an allowed deck, rendered on first use."""
    out = folder(name) / f"{card}.png"
    if not out.exists():
        render_deck(name)
    return out


def render_deck(name: str) -> Path:
    """Render the 52 cards of an allowed deck into the cache (if not there yet); their folder."""
    d = deck(name)
    out = folder(name)
    if all((out / f"{c}.png").exists() for c in full_deck()):
        return out
    if d.broken:
        raise ArtworkError(f"deck {name!r} is not rendered here: {d.broken}")
    if not available(name):
        raise ArtworkError(f"the artwork of deck {name!r} is not installed (run .ci/run, or "
                           f"npm install --prefix {cache_dir() / 'npm'} {NPM_PACKAGE}; "
                           "apt-get install gnome-cards-data kdegames-card-data-kf5 "
                           "librsvg2-bin)")
    # drawn in a folder of this process's own, then each card moved into place whole: other
    # processes drawing or reading the same deck at the same time never see half a file
    work = out.parent / f".{name}.{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        if d.source == "npm":
            _render_touati(work)
        elif d.source == "aisleriot":
            _render_sheet(_source_file(d), work)
        elif d.source == "kde":
            _render_kde(_source_file(d), work)
        else:
            from hardware.camera.synthetic.drawn import draw_deck

            for card, svg in draw_deck(int(name.removeprefix("drawn-"))).items():
                path = work / f"{card}.svg"
                path.write_text(svg, encoding="utf-8")
                _rsvg(["-h", str(CARD_HEIGHT), str(path), "-o", str(work / f"{card}.png")])
        _check_shapes(name, work)
        out.mkdir(parents=True, exist_ok=True)
        for c in full_deck():
            os.replace(work / f"{c}.png", out / f"{c}.png")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def _check_shapes(name: str, work: Path) -> None:
    """Every card of a deck has one shape (within 2 %): a card drawn cut off is refused."""
    import cv2

    shapes = {}
    for c in full_deck():
        image = cv2.imread(str(work / f"{c}.png"), cv2.IMREAD_UNCHANGED)
        if image is None or image.ndim != 3 or image.shape[2] != 4:
            raise ArtworkError(f"deck {name!r}: card {c} was not rendered")
        shapes[c] = image.shape[0] / image.shape[1]
    typical = sorted(shapes.values())[len(shapes) // 2]
    odd = [str(c) for c, r in shapes.items() if abs(r / typical - 1) > 0.02]
    if odd:
        raise ArtworkError(f"deck {name!r}: cards {' '.join(odd)} are not of the deck's shape")


_TOUATI_RANK = {14: 1, **{r: r for r in range(2, 14)}}


def _render_touati(out: Path) -> None:
    for c in full_deck():
        svg = touati_dir() / f"{_TOUATI_RANK[c.rank]}{c.suit.lower()}.svg"
        _rsvg(["-h", str(CARD_HEIGHT), str(svg), "-o", str(out / f"{c}.png")])


def _cut(image: Any, height: int = CARD_HEIGHT) -> Any:
    """A rendered card cut to its outline (where it is more than a quarter opaque) and scaled
    to ``height`` pixels."""
    import cv2
    import numpy as np

    ys, xs = np.nonzero(image[..., 3] > 64)
    if len(xs) == 0:
        raise ArtworkError("a card rendered as nothing")
    card = image[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    width = max(1, round(card.shape[1] * height / card.shape[0]))
    return cv2.resize(card, (width, height), interpolation=cv2.INTER_AREA)


_SHEET_ROWS = {"C": 0, "D": 1, "H": 2, "S": 3}
_SHEET_COLS = {14: 0, **{r: r - 1 for r in range(2, 14)}}


def _render_sheet(source: Path, out: Path) -> None:
    """An aisleriot sheet: 13 columns (ace to king) by 5 rows (clubs, diamonds, hearts, spades,
    then the jokers and back), each card cut from its cell."""
    import cv2

    svg = out / "sheet.svg"
    svg.write_bytes(gzip.decompress(source.read_bytes()))
    sheet_png = out / "sheet.png"
    # each of the 5 rows a little more than a card high, so cutting shrinks
    _rsvg(["-h", str(round(5 * CARD_HEIGHT * 1.15)), str(svg), "-o", str(sheet_png)])
    sheet = cv2.imread(str(sheet_png), cv2.IMREAD_UNCHANGED)
    if sheet is None or sheet.shape[2] != 4:
        raise ArtworkError(f"cannot read the rendered sheet of {source.name}")
    cell_h, cell_w = sheet.shape[0] / 5, sheet.shape[1] / 13
    for c in full_deck():
        x0, y0 = round(_SHEET_COLS[c.rank] * cell_w), round(_SHEET_ROWS[c.suit] * cell_h)
        cell = sheet[y0:round(y0 + cell_h), x0:round(x0 + cell_w)]
        cv2.imwrite(str(out / f"{c}.png"), _cut(cell))
    svg.unlink()
    sheet_png.unlink()


_KDE_RANKS = {14: "1", 11: "jack", 12: "queen", 13: "king", **{r: str(r) for r in range(2, 11)}}
_KDE_SUITS = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}
#: A user stylesheet that shows one element of a KDE deck's sheet and hides the rest (ids such
#: as ``1_club`` begin with a digit, which an id selector cannot name).
_ONLY = ("* { visibility: inherit !important; }\n:root { visibility: hidden !important; }\n"
         '[id="{id}"] { visibility: visible !important; }\n')


def _render_kde(source: Path, out: Path) -> None:
    """A KDE deck: each card's element alone on the sheet (:data:`_ONLY`), found at a small
    zoom, then rendered on a page cut around it at about the card's height."""
    import cv2
    import numpy as np

    svg = out / "deck.svg"
    svg.write_bytes(gzip.decompress(source.read_bytes()))
    css, png = out / "only.css", out / "only.png"
    for c in full_deck():
        css.write_text(_ONLY.replace("{id}", f"{_KDE_RANKS[c.rank]}_{_KDE_SUITS[c.suit]}"))
        zoom = 0.5
        _rsvg(["-z", f"{zoom}", "-s", str(css), str(svg), "-o", str(png)])
        image = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
        if image is None or image.ndim != 3 or image.shape[2] != 4:
            raise ArtworkError(f"{source.name}: card {c} was not rendered")
        ys, xs = np.nonzero(image[..., 3] > 64)
        if len(xs) == 0:
            raise ArtworkError(f"{source.name}: no card {c} on the sheet")
        zoom *= 1.05 * CARD_HEIGHT / (ys.max() - ys.min() + 1)
        for _ in range(4):  # some sheets run out of memory at a zoom: a smaller one, enlarged
            k = zoom / 0.5
            x0, y0 = int(xs.min() * k) - 12, int(ys.min() * k) - 12
            w = int((xs.max() - xs.min() + 1) * k) + 24
            h = int((ys.max() - ys.min() + 1) * k) + 24
            try:
                _rsvg(["-z", f"{zoom:.5f}", f"--left={-x0}", f"--top={-y0}",
                       f"--page-width={w}", f"--page-height={h}", "-s", str(css), str(svg),
                       "-o", str(png)])
                break
            except ArtworkError:
                zoom *= 0.8
        else:
            raise ArtworkError(f"{source.name}: card {c} cannot be rendered")
        image = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
        cv2.imwrite(str(out / f"{c}.png"), _cut(image))
    for p in (svg, css, png):
        p.unlink()


def render_all(names: list[str], jobs: int = 1) -> None:
    """Render several decks, ``jobs`` at a time (the first render of the KDE decks takes about
    a minute each)."""
    if jobs <= 1:
        for n in names:
            render_deck(n)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(jobs) as pool:
        list(pool.map(render_deck, names))

