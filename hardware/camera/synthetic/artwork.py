"""Card artwork: the decks the virtual camera films, rendered once to PNG files in a cache.

Three real decks, fetched by ``.ci/run`` (never committed: their licences are the LGPL-3.0 and
the GPL-3+), and decks drawn here with the system's fonts:

- ``touati``: the npm package ``@younestouati/playing-cards-standard-deck`` (one SVG per card);
- ``anglo`` and ``gnomangelo``: Debian's ``gnome-cards-data`` (one SVG sheet of 13 x 5 cards);
- ``font-<n>``: plain cards whose corner indices and pips are text in a system font (DejaVu,
  Liberation, FreeFont and the URW base 35 fonts), made here for training;
- ``pips-<n>`` (1 to :data:`PIP_DECKS`): cards laid out as real decks are, drawn here from a
  seed: the pips of each rank in their usual places, court cards as a framed picture of
  coloured shapes turned about the card's centre, indices in a system font, borders, corner
  rounding and proportions (poker or bridge size) as decks differ. Made for training the
  locator (:mod:`hardware.camera.reader.locate`).

Rendering uses ``rsvg-convert`` (librsvg2-bin). PNGs go to the cache folder
(``$REFEREE_CAMERA_CACHE``, else ``.cache/camera`` in the source tree, else
``~/.cache/card-referee/camera``), one file per card, ``<deck>/<card>.png`` with alpha.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from pathlib import Path

from referee.cards import RANK_TEXT, Card, full_deck
from referee.errors import RefereeError

#: The npm package of the ``touati`` deck and where ``.ci/run`` installs it.
NPM_PACKAGE = "@younestouati/playing-cards-standard-deck"
AISLERIOT = Path("/usr/share/aisleriot/cards")
REAL_DECKS = ("touati", "anglo", "gnomangelo")
#: Height in pixels of a rendered card.
CARD_HEIGHT = 360

_SHEET_ROWS = {"C": 0, "D": 1, "H": 2, "S": 3}
_SHEET_COLS = {14: 0, **{r: r - 1 for r in range(2, 14)}}
_TOUATI_RANK = {14: 1, **{r: r for r in range(2, 14)}}
_SYMBOLS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}


class ArtworkError(RefereeError, OSError):
    """A deck's artwork is not installed, or it cannot be rendered."""


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


def available(deck: str) -> bool:
    """Whether a deck's artwork can be rendered here."""
    if deck == "touati":
        return (touati_dir() / "12h.svg").exists()
    if deck in ("anglo", "gnomangelo"):
        return (AISLERIOT / f"{deck}.svgz").exists()
    return deck.startswith(("font-", "pips-")) and shutil.which("rsvg-convert") is not None


def _rsvg(args: list[str]) -> None:
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise ArtworkError("rsvg-convert is not installed (apt-get install librsvg2-bin)")
    done = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ArtworkError(f"rsvg-convert failed: {done.stderr.strip()}")


def _svg_to_png(svg: str, out: Path, card: Card) -> None:
    """Render one drawn card's SVG text to ``<out>/<card>.png``."""
    path = out / f"{card}.svg"
    path.write_text(svg, encoding="utf-8")
    _rsvg(["-h", str(CARD_HEIGHT), str(path), "-o", str(out / f"{card}.png")])
    path.unlink()


def card_png(deck: str, card: Card) -> Path:
    """The PNG of one card of a deck, rendered on first use."""
    out = cache_dir() / "png" / deck / f"{card}.png"
    if not out.exists():
        render_deck(deck)
    return out


def render_deck(deck: str) -> Path:
    """Render the 52 cards of a deck into the cache (if not there yet); their folder."""
    out = cache_dir() / "png" / deck
    if all((out / f"{c}.png").exists() for c in full_deck()):
        return out
    if not available(deck):
        raise ArtworkError(f"the artwork of deck {deck!r} is not installed (run .ci/run, or "
                           f"npm install --prefix {cache_dir() / 'npm'} {NPM_PACKAGE}; "
                           "apt-get install gnome-cards-data librsvg2-bin)")
    # drawn in a folder of this process's own, then each card moved into place whole: other
    # processes drawing or reading the same deck at the same time never see half a file
    work = out.parent / f".{deck}.{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        if deck == "touati":
            for c in full_deck():
                svg = touati_dir() / f"{_TOUATI_RANK[c.rank]}{c.suit.lower()}.svg"
                _rsvg(["-h", str(CARD_HEIGHT), str(svg), "-o", str(work / f"{c}.png")])
        elif deck in ("anglo", "gnomangelo"):
            _render_sheet(deck, work)
        elif deck.startswith("pips-"):
            _render_pip_deck(deck, work)
        else:
            _render_font_deck(deck, work)
        out.mkdir(parents=True, exist_ok=True)
        for c in full_deck():
            os.replace(work / f"{c}.png", out / f"{c}.png")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def _render_sheet(deck: str, out: Path) -> None:
    import cv2

    svg = out / "sheet.svg"
    svg.write_bytes(gzip.decompress((AISLERIOT / f"{deck}.svgz").read_bytes()))
    cell_w, cell_h = 202.5, 315.0  # 13 x 5 cells of a 2632.5 x 1575 sheet
    scale = CARD_HEIGHT / cell_h
    sheet_png = out / "sheet.png"
    _rsvg(["-w", str(round(2632.5 * scale)), str(svg), "-o", str(sheet_png)])
    sheet = cv2.imread(str(sheet_png), cv2.IMREAD_UNCHANGED)
    if sheet is None:
        raise ArtworkError(f"cannot read the rendered sheet of {deck}")
    for c in full_deck():
        x0 = round(_SHEET_COLS[c.rank] * cell_w * scale)
        y0 = round(_SHEET_ROWS[c.suit] * cell_h * scale)
        cell = sheet[y0:y0 + round(cell_h * scale) - 1, x0:x0 + round(cell_w * scale) - 1]
        cv2.imwrite(str(out / f"{c}.png"), cell)
    svg.unlink()
    sheet_png.unlink()


#: The font decks: (font family, weight, style of the index, red colour), then optionally the
#: index's layout: rank size, suit size, the suit's baseline, the index's centre, the 10's
#: letter spacing, the suits' font (some fonts have no suit symbols, and FreeSerif Bold has
#: the spade and the club swapped). Decks 7 to 16 use the fonts of fonts-liberation2,
#: fonts-freefont-ttf and fonts-urw-base35.
FONT_DECKS: dict[str, tuple[str | float, ...]] = {
    "font-1": ("DejaVu Sans", "bold", "normal", "#d00000"),
    "font-2": ("DejaVu Serif", "normal", "normal", "#c01818"),
    "font-3": ("DejaVu Sans Mono", "bold", "normal", "#e02020"),
    "font-4": ("DejaVu Serif", "bold", "normal", "#b00000"),
    "font-5": ("DejaVu Sans Condensed", "normal", "normal", "#d83030"),
    "font-6": ("DejaVu Sans", "normal", "oblique", "#c00000"),
    "font-7": ("Liberation Sans", "bold", "normal", "#d81010", 38, 26, 72, 22, -3, "FreeSans"),
    "font-8": ("Liberation Serif", "bold", "normal", "#c00000", 36, 30, 78, 25, -1, "DejaVu Serif"),
    "font-9": ("Nimbus Sans Narrow", "bold", "normal",
                "#e00000", 40, 24, 70, 20, -2, "Standard Symbols PS"),
    "font-10": ("C059", "bold", "normal", "#b81818", 32, 28, 74, 24, -2, "DejaVu Sans"),
    "font-11": ("URW Bookman", "normal", "normal", "#cc0000", 30, 26, 70, 24, -3, "FreeSans"),
    "font-12": ("P052", "bold", "normal", "#d00010", 36, 32, 80, 26, 0, "Standard Symbols PS"),
    "font-13": ("URW Gothic", "bold", "normal", "#e01010", 34, 24, 68, 22, -2, "DejaVu Sans"),
    "font-14": ("Nimbus Sans", "bold", "normal", "#c01010", 40, 30, 80, 24, -2, "DejaVu Serif"),
    "font-15": ("Nimbus Roman", "normal", "normal",
                "#b00000", 38, 28, 76, 23, -1, "Standard Symbols PS"),
    "font-16": ("FreeSans", "bold", "normal", "#d82020", 30, 22, 64, 20, -1, "FreeSans"),
}


def _render_font_deck(deck: str, out: Path) -> None:
    spec = FONT_DECKS.get(deck, FONT_DECKS["font-1"])
    family, weight, style, red = (str(v) for v in spec[:4])
    rank_size, suit_size, suit_y, x, spacing, suit_family = (
        spec[4:] or (34, 30, 76, 24, -2, family))
    w, h = 250, 350
    for c in full_deck():
        colour = red if c.suit in "DH" else "#101010"
        rank = RANK_TEXT[c.rank]
        sym = _SYMBOLS[c.suit]
        size = float(rank_size) if len(rank) == 1 else float(rank_size) - 4
        index = (f'<text x="{x}" y="44" font-size="{size}" text-anchor="middle" '
                 f'letter-spacing="{spacing}">{rank}</text>'
                 f'<text x="{x}" y="{suit_y}" font-size="{suit_size}" '
                 f'font-family="{suit_family}" text-anchor="middle">{sym}</text>')
        body = (f'<text x="{w / 2}" y="{h / 2 + 40}" font-size="120" '
                f'font-family="{suit_family}" text-anchor="middle">{sym}</text>')
        if c.rank > 10:
            body = (f'<rect x="52" y="56" width="146" height="238" fill="none" '
                    f'stroke="{colour}" stroke-width="3"/>'
                    f'<text x="{w / 2}" y="{h / 2 + 30}" font-size="96" '
                    f'text-anchor="middle">{rank}</text>')
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">'
               f'<rect x="1" y="1" width="{w - 2}" height="{h - 2}" rx="14" fill="#fdfdfa" '
               f'stroke="#888" stroke-width="1.5"/>'
               f'<g fill="{colour}" font-family="{family}" font-weight="{weight}" '
               f'font-style="{style}">{index}'
               f'<g transform="rotate(180 {w / 2} {h / 2})">{index}</g>{body}</g></svg>')
        _svg_to_png(svg, out, c)


#: The number of ``pips-<n>`` decks.
PIP_DECKS = 24
_PIP_FONTS = ("DejaVu Sans", "DejaVu Serif", "DejaVu Sans Condensed", "Liberation Sans",
              "Liberation Serif", "Nimbus Sans", "Nimbus Sans Narrow", "Nimbus Roman", "C059",
              "P052", "URW Bookman", "URW Gothic", "FreeSans", "FreeSerif")
_SUIT_FONTS = ("DejaVu Sans", "DejaVu Serif", "FreeSans", "Standard Symbols PS")
#: Where the pips of each rank lie, as (column, row): columns -1, 0, 1 (left, middle,
#: right), rows 0 (top) to 1 (bottom); pips in the lower half stand upside down.
_PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    2: ((0, 0), (0, 1)),
    3: ((0, 0), (0, 0.5), (0, 1)),
    4: ((-1, 0), (1, 0), (-1, 1), (1, 1)),
    5: ((-1, 0), (1, 0), (0, 0.5), (-1, 1), (1, 1)),
    6: ((-1, 0), (1, 0), (-1, 0.5), (1, 0.5), (-1, 1), (1, 1)),
    7: ((-1, 0), (1, 0), (0, 0.25), (-1, 0.5), (1, 0.5), (-1, 1), (1, 1)),
    8: ((-1, 0), (1, 0), (0, 0.25), (-1, 0.5), (1, 0.5), (0, 0.75), (-1, 1), (1, 1)),
    9: ((-1, 0), (1, 0), (-1, 1 / 3), (1, 1 / 3), (0, 0.5), (-1, 2 / 3), (1, 2 / 3), (-1, 1),
        (1, 1)),
    10: ((-1, 0), (1, 0), (0, 1 / 6), (-1, 1 / 3), (1, 1 / 3), (-1, 2 / 3), (1, 2 / 3),
         (0, 5 / 6), (-1, 1), (1, 1)),
}


def _render_pip_deck(deck: str, out: Path) -> None:
    import random

    n = int(deck.removeprefix("pips-") or "1")
    rng = random.Random(f"pip-deck-{n}")
    w = 250.0
    h = round(w * rng.choice((1.4, 1.4, 1.4, 1.56)), 1)
    radius = rng.uniform(0.03, 0.08) * w
    paper = rng.choice(("#ffffff", "#fdfdfa", "#fbf8f0", "#f7f7f2"))
    border = rng.choice(("none", "none", "line", "frame"))
    family = rng.choice(_PIP_FONTS)
    weight = rng.choice(("normal", "bold"))
    suit_family = rng.choice(_SUIT_FONTS)
    red = rng.choice(("#d00000", "#c01818", "#e02020", "#b00010", "#d83030"))
    black = rng.choice(("#101010", "#000000", "#202028"))
    colours = {"C": black, "S": black, "D": red, "H": red}
    if rng.random() < 0.15:  # a four-colour deck
        colours = {"C": "#107010", "S": black, "D": "#1030b0", "H": red}
    rank_size = rng.uniform(0.11, 0.17) * w
    suit_size = rank_size * rng.uniform(0.7, 1.0)
    ix = rng.uniform(0.07, 0.12) * w
    iy = rng.uniform(0.04, 0.07) * h + rank_size * 0.8
    pip_size = rng.uniform(0.17, 0.24) * w
    px, py0, py1 = rng.uniform(0.22, 0.3) * w, rng.uniform(0.17, 0.23) * h, 0.0
    py1 = h - py0
    frame_x, frame_y = rng.uniform(0.17, 0.24) * w, rng.uniform(0.11, 0.16) * h
    palette = ("#c82020", "#2040b0", "#e8c020", "#101010", "#f0c8a0", "#208040")
    for c in full_deck():
        colour = colours[c.suit]
        rank = RANK_TEXT[c.rank]
        sym = _SYMBOLS[c.suit]
        size = rank_size if len(rank) == 1 else rank_size * 0.85
        index = (f'<text x="{ix:.1f}" y="{iy:.1f}" font-size="{size:.1f}" '
                 f'text-anchor="middle" letter-spacing="-2">{rank}</text>'
                 f'<text x="{ix:.1f}" y="{iy + suit_size * 1.05:.1f}" font-size="{suit_size:.1f}" '
                 f'font-family="{suit_family}" text-anchor="middle">{sym}</text>')
        body = ""
        if c.rank in _PIPS:
            for col, row in _PIPS[c.rank]:
                x = w / 2 + col * (w / 2 - px)
                y = py0 + row * (py1 - py0)
                turn = f' transform="rotate(180 {x:.1f} {y:.1f})"' if row > 0.5 else ""
                body += (f'<text x="{x:.1f}" y="{y + pip_size * 0.35:.1f}" '
                         f'font-size="{pip_size:.1f}" font-family="{suit_family}" '
                         f'text-anchor="middle"{turn}>{sym}</text>')
        elif c.rank == 14:
            big = pip_size * rng.uniform(1.8, 3.0)
            body = (f'<text x="{w / 2:.1f}" y="{h / 2 + big * 0.35:.1f}" font-size="{big:.1f}" '
                    f'font-family="{suit_family}" text-anchor="middle">{sym}</text>')
        else:  # a court card: a framed picture, the same upside down
            crng = random.Random(f"pip-deck-{n}-{c}")
            shapes = ""
            for _ in range(crng.randint(7, 14)):
                fill = crng.choice(palette)
                x = crng.uniform(frame_x, w - frame_x)
                y = crng.uniform(frame_y, h / 2)
                if crng.random() < 0.5:
                    shapes += (f'<ellipse cx="{x:.1f}" cy="{y:.1f}" '
                               f'rx="{crng.uniform(6, 30):.1f}" ry="{crng.uniform(6, 30):.1f}" '
                               f'fill="{fill}"/>')
                else:
                    pts = " ".join(f"{x + crng.uniform(-30, 30):.1f},"
                                   f"{min(h / 2, y + crng.uniform(-30, 30)):.1f}"
                                   for _ in range(crng.randint(3, 5)))
                    shapes += f'<polygon points="{pts}" fill="{fill}"/>'
            shapes += (f'<text x="{frame_x + 18:.1f}" y="{frame_y + 30:.1f}" font-size="26" '
                       f'font-family="{suit_family}" text-anchor="middle">{sym}</text>')
            half = f'<g clip-path="url(#top)">{shapes}</g>'
            body = (f'<defs><clipPath id="top"><rect x="{frame_x:.1f}" y="{frame_y:.1f}" '
                    f'width="{w - 2 * frame_x:.1f}" height="{h / 2 - frame_y:.1f}"/>'
                    f'</clipPath></defs>{half}'
                    f'<g transform="rotate(180 {w / 2} {h / 2})">{half}</g>'
                    f'<rect x="{frame_x:.1f}" y="{frame_y:.1f}" width="{w - 2 * frame_x:.1f}" '
                    f'height="{h - 2 * frame_y:.1f}" fill="none" stroke="{colour}" '
                    f'stroke-width="2"/>')
        edge = 'stroke="#999" stroke-width="1.2"' if border == "line" else 'stroke="none"'
        ring = ""
        if border == "frame":
            ring = (f'<rect x="7" y="7" width="{w - 14}" height="{h - 14}" rx="{radius * 0.6:.1f}" '
                    f'fill="none" stroke="{colour}" stroke-width="1.5"/>')
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">'
               f'<rect x="0.5" y="0.5" width="{w - 1}" height="{h - 1}" rx="{radius:.1f}" '
               f'fill="{paper}" {edge}/>{ring}'
               f'<g fill="{colour}" font-family="{family}" font-weight="{weight}">{index}'
               f'<g transform="rotate(180 {w / 2} {h / 2})">{index}</g>{body}</g></svg>')
        _svg_to_png(svg, out, c)
