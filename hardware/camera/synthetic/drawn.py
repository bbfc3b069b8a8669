"""Decks drawn here from a seed (``drawn-<n>``), for training: the corner index in one of the
system's fonts and in one of the index sets (A/K/Q/J, B/D/K, R/D/V, В/Д/К/Т, Kn/D/K, F/D/R,
H/V/B), laid out as decks differ (suit beneath the rank or beside it, no suit, the rank in the
other top corner, an index in all four corners), the suits from a font or drawn, red and black
or four colours, white, cream, tinted, gradient or dark paper, borders and frames, the pips of
each rank in their usual places, court cards as a framed picture of shapes, a large letter or
a figure. Each deck is the same for the same seed and fonts; :func:`draw_deck` gives its SVGs.

The fonts are those of the Debian font packages named in ``training/README.md``; a family
missing here is drawn by fontconfig's fallback (the deck then differs).
"""

from __future__ import annotations

import random

from hardware.camera.config import INDEX_SETS
from referee.cards import Card, full_deck

#: Families for the index (Latin and Cyrillic letters and digits).
INDEX_FONTS = (
    "DejaVu Sans", "DejaVu Serif", "DejaVu Sans Condensed", "DejaVu Sans Mono", "Liberation Sans",
    "Liberation Serif", "Liberation Mono", "FreeSans", "FreeSerif", "FreeMono", "Nimbus Sans",
    "Nimbus Sans Narrow", "Nimbus Roman", "Nimbus Mono PS", "C059", "P052", "URW Bookman",
    "URW Gothic", "Z003", "Cantarell", "Carlito", "Comfortaa", "EB Garamond", "Fira Code", "Hack",
    "Jura", "Lato", "Linux Biolinum O", "Linux Libertine O", "Noto Sans", "Noto Serif",
    "Noto Sans Display", "Old Standard TT", "Open Sans", "Open Sans Condensed", "PT Sans",
    "PT Sans Narrow", "PT Serif", "PT Mono", "Play", "Tuffy", "Yanone Kaffeesatz",
    "Berenis ADF Pro", "TeX Gyre Adventor", "TeX Gyre Bonum", "TeX Gyre Heros",
    "TeX Gyre Pagella", "TeX Gyre Schola", "TeX Gyre Termes", "TeX Gyre Heros Cn", "Gentium",
    "Caladea", "Cardo", "Dosis", "Quicksand", "League Spartan", "Accanthis ADF Std",
    "Gillius ADF", "Universalis ADF Std", "Averia Sans GWF", "Averia Serif GWF",
)
#: The index sets whose letters only Latin-only fonts lack.
_CYRILLIC = {"russian"}
_LATIN_ONLY = {"TeX Gyre Adventor", "TeX Gyre Bonum", "TeX Gyre Heros", "TeX Gyre Pagella",
               "TeX Gyre Schola", "TeX Gyre Termes", "TeX Gyre Heros Cn", "Gentium", "Caladea",
               "Cardo", "Dosis", "Quicksand", "League Spartan", "Accanthis ADF Std",
               "Gillius ADF", "Universalis ADF Std", "Averia Sans GWF", "Averia Serif GWF"}
#: Families with the four suit symbols.
SUIT_FONTS = ("DejaVu Sans", "DejaVu Serif", "FreeSans", "FreeSerif", "Standard Symbols PS",
              "Liberation Sans", "Liberation Serif", "Linux Libertine O", "Noto Sans Symbols2",
              "URW Bookman", "P052", "C059", "Nimbus Sans", "TeX Gyre Pagella", "URW Gothic")
_SYMBOLS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
#: Suits drawn as paths in a unit box centred on 0 (the spade's and club's stems below).
_PATHS = {
    "H": "M0,.44 C-.12,.3 -.5,.06 -.5,-.16 C-.5,-.36 -.32,-.47 -.18,-.47 C-.07,-.47 0,-.39 "
         "0,-.3 C0,-.39 .07,-.47 .18,-.47 C.32,-.47 .5,-.36 .5,-.16 C.5,.06 .12,.3 0,.44 Z",
    "S": "M0,-.48 C-.12,-.34 -.5,-.12 -.5,.1 C-.5,.28 -.34,.36 -.21,.36 C-.12,.36 -.05,.31 "
         "-.03,.27 L-.12,.48 L.12,.48 L.03,.27 C.05,.31 .12,.36 .21,.36 C.34,.36 .5,.28 .5,.1 "
         "C.5,-.12 .12,-.34 0,-.48 Z",
    "C": "M-.04,.04 L-.13,.48 L.13,.48 L.04,.04 Z",
}
_CLUB_LOBES = ((0.0, -0.24), (-0.25, 0.1), (0.25, 0.1))
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
_REDS = ("#d00000", "#c01818", "#e02020", "#b00010", "#d83030", "#c8102e", "#a01010", "#e8383d")
_BLACKS = ("#101010", "#000000", "#202028", "#1a1a2e", "#2a2a2a", "#0b1a30")
_PALETTE = ("#c82020", "#2040b0", "#e8c020", "#101010", "#f0c8a0", "#208040", "#7030a0",
            "#e07020", "#60a0e0", "#804020", "#f0e0c0", "#a0a0a0")


def rank_glyphs(letters: str) -> dict[int, str]:
    """What an index set prints for each rank (the first glyph it lists for the rank), the
    numbers as themselves."""
    out = {r: str(r) for r in range(2, 11)}
    for glyph, rank in INDEX_SETS[letters].items():
        out.setdefault(rank, glyph)
    return out


#: Cyrillic letters printed for the glyph classes they look like.
_PRINTED = {("russian", "B"): "\u0412", ("russian", "K"): "\u041a"}


class _Style:
    """A deck's look, drawn from its seed."""

    def __init__(self, n: int) -> None:
        rng = random.Random(f"drawn-deck-{n}")
        self.rng = rng
        self.w = 250.0
        self.h = round(self.w * rng.choice((1.4, 1.4, 1.43, 1.556, rng.uniform(1.36, 1.6))), 1)
        self.radius = 0.0 if rng.random() < 0.05 else rng.uniform(0.02, 0.09) * self.w
        r = rng.random()
        self.dark = r < 0.04
        if self.dark:
            self.paper = rng.choice(("#1c1c1c", "#222838", "#3a0c0c", "#0c2a1a", "#2b2b2b"))
        elif r < 0.62:
            self.paper = rng.choice(("#ffffff", "#fdfdfa", "#fbfbf8", "#f9f9f9"))
        elif r < 0.82:
            self.paper = rng.choice(("#fbf6e8", "#f7f0dc", "#f5ecd6", "#fdf8ec", "#efe9d8"))
        elif r < 0.9:
            self.paper = rng.choice(("#eeeeee", "#e6e6e6", "#f0f0f4"))
        else:
            self.paper = rng.choice(("#eaf2fb", "#eef8ee", "#fbeef2", "#fbf8dc", "#f2eefb"))
        self.gradient = not self.dark and rng.random() < 0.08
        self.pattern = not self.dark and rng.random() < 0.12
        self.border = rng.choice(("none", "none", "none", "line", "line", "frame", "frame",
                                  "band", "double"))
        letters = rng.choices(list(INDEX_SETS), weights=[
            {"english": 50, "german": 12, "french": 9, "russian": 8, "swedish": 6,
             "italian": 6, "dutch": 5}.get(k, 3) for k in INDEX_SETS])[0]
        self.letters = letters
        self.glyphs = rank_glyphs(letters)
        if letters == "french" and rng.random() < 0.3:
            self.glyphs[14] = "1"
        fonts = [f for f in INDEX_FONTS if letters not in _CYRILLIC or f not in _LATIN_ONLY]
        self.font = rng.choice(fonts)
        self.weight = rng.choice(("normal", "bold", "bold", "600"))
        self.italic = rng.random() < 0.08
        self.squeeze = rng.choice((1.0, 1.0, 1.0, rng.uniform(0.7, 1.15)))
        self.spacing = rng.uniform(-0.12, 0.02)
        self.suit_font = rng.choice(SUIT_FONTS)
        self.suit_paths = rng.random() < 0.3
        self.diamond_curve = rng.uniform(0.0, 0.14)
        self.reds = rng.choice(_REDS)
        self.black = rng.choice(_BLACKS)
        if self.dark:
            self.black = rng.choice(("#f4f4f4", "#e8e0c8", "#d8d8e8"))
            self.reds = rng.choice(("#ff5050", "#ff7070", "#f04848"))
        self.colours = {"C": self.black, "S": self.black, "D": self.reds, "H": self.reds}
        c = rng.random()
        if c < 0.12:  # a four-colour deck
            self.colours = {"C": rng.choice(("#107010", "#0a8040", "#2a7a2a")), "S": self.black,
                            "D": rng.choice(("#1030b0", "#e0a010", "#e07010", "#2050d0")),
                            "H": self.reds}
        elif c < 0.15:  # four colours of any kind
            picks = rng.sample(("#c01010", "#108010", "#1030c0", "#101010", "#d08000",
                                "#8020a0", "#108080"), 4)
            self.colours = dict(zip("CDHS", picks, strict=True))
        self.rank_h = rng.uniform(0.065, 0.135) * self.h
        self.suit_h = self.rank_h * rng.uniform(0.55, 1.0)
        self.layout = rng.choices(("stack", "side", "rank", "split", "four"),
                                  weights=(64, 8, 9, 6, 13))[0]
        self.inset_x = rng.uniform(0.025, 0.1) * self.w
        self.inset_y = rng.uniform(0.02, 0.065) * self.h
        self.gap = rng.uniform(0.02, 0.25) * self.rank_h
        self.pip = rng.uniform(0.12, 0.22) * self.w
        self.pip_x = rng.uniform(0.22, 0.3) * self.w
        self.pip_y = rng.uniform(0.15, 0.22) * self.h
        self.ace = rng.uniform(1.3, 3.2) * self.pip
        # the pips clear of the index, as printed decks keep them
        right = self.inset_x + max(self.rank_h * 1.1 * self.squeeze, self.suit_h)
        if self.layout == "side":
            right += self.gap + self.suit_h
        room = 0.37 * self.w - right - 0.03 * self.w
        self.pip = max(0.08 * self.w, min(self.pip, 2 * room, 0.95 * (self.h - 2 * self.pip_y) / 3))
        self.pip_x = min(0.4 * self.w, max(self.pip_x, right + 0.03 * self.w + self.pip / 2))
        self.frame_x = max(rng.uniform(0.16, 0.24) * self.w, right + 0.02 * self.w)
        self.court = rng.choices(("picture", "letter", "figure", "emblem"),
                                 weights=(50, 15, 25, 10))[0]
        self.frame_y = rng.uniform(0.1, 0.16) * self.h


def _suit(s: _Style, suit: str, x: float, y: float, size: float, colour: str,
          turned: bool = False) -> str:
    """A suit symbol of height ``size`` centred on (x, y), upside down if ``turned``."""
    turn = " rotate(180)" if turned else ""
    if s.suit_paths:
        body = ""
        if suit == "D":
            k = s.diamond_curve
            body = (f'<path d="M0,-.5 Q{k},{-k} .38,0 Q{k},{k} 0,.5 Q{-k},{k} -.38,0 '
                    f'Q{-k},{-k} 0,-.5 Z"/>')
        elif suit == "C":
            body = "".join(f'<circle cx="{cx}" cy="{cy}" r=".22"/>' for cx, cy in _CLUB_LOBES)
            body += f'<path d="{_PATHS["C"]}"/>'
        else:
            body = f'<path d="{_PATHS[suit]}"/>'
        return (f'<g transform="translate({x:.1f},{y:.1f}){turn} scale({size:.1f})" '
                f'fill="{colour}">{body}</g>')
    em = size / 0.72
    return (f'<g transform="translate({x:.1f},{y:.1f}){turn}"><text x="0" y="{0.36 * em:.1f}" '
            f'font-size="{em:.1f}" font-family="{s.suit_font}" text-anchor="middle" '
            f'fill="{colour}">{_SYMBOLS[suit]}</text></g>')


def _rank_text(s: _Style, glyph: str, x: float, y: float, colour: str) -> str:
    """The rank glyph, its cap height ``rank_h``, its top at ``y``, centred on ``x``."""
    printed = _PRINTED.get((s.letters, glyph), glyph)
    em = s.rank_h / 0.72
    if len(printed) > 1:
        em *= 0.86
    style = ' font-style="italic"' if s.italic else ""
    return (f'<g transform="translate({x:.1f},{y + s.rank_h:.1f}) scale({s.squeeze:.2f},1)">'
            f'<text x="0" y="0" font-size="{em:.1f}" font-family="{s.font}" '
            f'font-weight="{s.weight}"{style} text-anchor="middle" '
            f'letter-spacing="{s.spacing * em:.1f}" fill="{colour}">{printed}</text></g>')


def _index(s: _Style, card: Card, colour: str) -> str:
    """The top-left index (and, by layout, the top-right one), upright."""
    glyph = s.glyphs[card.rank]
    rank_w = s.rank_h * (0.62 if len(glyph) == 1 else 1.1) * s.squeeze
    x = s.inset_x + rank_w / 2
    y = s.inset_y
    rank = _rank_text(s, glyph, x, y, colour)
    below = _suit(s, card.suit, x, y + s.rank_h + s.gap + s.suit_h / 2, s.suit_h, colour)
    if s.layout == "stack":
        return rank + below
    if s.layout == "side":
        return rank + _suit(s, card.suit, x + rank_w / 2 + s.gap + s.suit_h / 2,
                            y + s.rank_h / 2, s.suit_h, colour)
    if s.layout == "rank":
        return rank
    if s.layout == "split":  # the rank in the top-right corner, the suit in the top-left
        return (_rank_text(s, glyph, s.w - x, y, colour)
                + _suit(s, card.suit, x, y + s.suit_h / 2, s.suit_h, colour))
    return rank + below + _rank_text(s, glyph, s.w - x, y, colour) + _suit(
        s, card.suit, s.w - x, y + s.rank_h + s.gap + s.suit_h / 2, s.suit_h, colour)


def _body(s: _Style, card: Card, colour: str, rng: random.Random) -> str:
    """The middle of the card: pips, an ace's large pip, or a court card's picture."""
    w, h = s.w, s.h
    if card.rank in _PIPS:
        out = ""
        top, bottom = s.pip_y, h - s.pip_y
        for col, row in _PIPS[card.rank]:
            x = w / 2 + col * (w / 2 - s.pip_x)
            y = top + row * (bottom - top)
            out += _suit(s, card.suit, x, y, s.pip, colour, turned=row > 0.5)
        return out
    if card.rank == 14:
        return _suit(s, card.suit, w / 2, h / 2, s.ace, colour)
    fx, fy = s.frame_x, s.frame_y
    if s.court == "letter":
        em = 0.3 * h / 0.72
        printed = _PRINTED.get((s.letters, s.glyphs[card.rank]), s.glyphs[card.rank])
        return (f'<text x="{w / 2}" y="{h / 2 + 0.15 * h:.1f}" font-size="{em:.1f}" '
                f'font-family="{s.font}" text-anchor="middle" fill="{colour}">{printed}</text>'
                + _suit(s, card.suit, w - fx, h - fy, 0.6 * s.pip, colour, turned=True))
    if s.court == "emblem":
        return (f'<ellipse cx="{w / 2}" cy="{h / 2}" rx="{w / 2 - fx:.1f}" '
                f'ry="{h / 2 - fy:.1f}" fill="none" stroke="{colour}" stroke-width="3"/>'
                + _suit(s, card.suit, w / 2, h / 2, 1.6 * s.pip, colour))
    shapes = ""
    if s.court == "figure":  # a head, a crown or a hat, shoulders: half a figure, turned round
        skin = rng.choice(("#f0c8a0", "#e8b890", "#f8d8b8"))
        cloth = rng.choice(_PALETTE)
        hx, hy, hr = w / 2 + rng.uniform(-8, 8), h * rng.uniform(0.2, 0.27), rng.uniform(16, 26)
        shapes += (f'<path d="M{fx:.1f},{h / 2:.1f} Q{w / 2:.1f},{hy + hr * 0.6:.1f} '
                   f'{w - fx:.1f},{h / 2:.1f} Z" fill="{cloth}" stroke="#101010"/>'
                   f'<circle cx="{hx:.1f}" cy="{hy:.1f}" r="{hr:.1f}" fill="{skin}" '
                   f'stroke="#101010"/>')
        if card.rank >= 12:
            shapes += (f'<path d="M{hx - hr:.1f},{hy - hr * 0.7:.1f} l{hr * 0.4:.1f},'
                       f'{-hr:.1f} l{hr * 0.6:.1f},{hr * 0.6:.1f} l{hr * 0.6:.1f},'
                       f'{-hr * 0.6:.1f} l{hr * 0.4:.1f},{hr:.1f} Z" fill="#e8c020" '
                       f'stroke="#101010"/>')
        else:
            shapes += (f'<rect x="{hx - hr:.1f}" y="{hy - hr * 1.4:.1f}" width="{2 * hr:.1f}" '
                       f'height="{hr * 0.7:.1f}" fill="{rng.choice(_PALETTE)}"/>')
    for _ in range(rng.randint(5, 12)):
        fill = rng.choice(_PALETTE)
        x = rng.uniform(fx, w - fx)
        y = rng.uniform(fy, h / 2)
        if rng.random() < 0.5:
            shapes += (f'<ellipse cx="{x:.1f}" cy="{y:.1f}" rx="{rng.uniform(4, 24):.1f}" '
                       f'ry="{rng.uniform(4, 24):.1f}" fill="{fill}" opacity="0.85"/>')
        else:
            pts = " ".join(f"{x + rng.uniform(-28, 28):.1f},"
                           f"{min(h / 2, y + rng.uniform(-28, 28)):.1f}"
                           for _ in range(rng.randint(3, 5)))
            shapes += f'<polygon points="{pts}" fill="{fill}" opacity="0.85"/>'
    shapes += _suit(s, card.suit, fx + 0.35 * s.pip + 4, fy + 0.35 * s.pip + 4, 0.6 * s.pip,
                    colour)
    half = f'<g clip-path="url(#top)">{shapes}</g>'
    framed = s.court == "picture" or rng.random() < 0.5
    return (f'<defs><clipPath id="top"><rect x="{fx:.1f}" y="{fy:.1f}" '
            f'width="{w - 2 * fx:.1f}" height="{h / 2 - fy:.1f}"/></clipPath></defs>{half}'
            f'<g transform="rotate(180 {w / 2} {h / 2})">{half}</g>'
            + (f'<rect x="{fx:.1f}" y="{fy:.1f}" width="{w - 2 * fx:.1f}" '
               f'height="{h - 2 * fy:.1f}" fill="none" stroke="{colour}" stroke-width="2"/>'
               if framed else ""))


def _paper(s: _Style) -> str:
    """The card's face: its paper, a faint pattern, a border."""
    w, h, r = s.w, s.h, s.radius
    fill = s.paper
    defs = ""
    if s.gradient:
        defs = ('<defs><linearGradient id="paper" x1="0" y1="0" x2="1" y2="0">'
                '<stop offset="0" stop-color="#d8d8d8"/><stop offset="0.5" stop-color="#ffffff"/>'
                '<stop offset="1" stop-color="#d0d0d0"/></linearGradient></defs>')
        fill = "url(#paper)"
    edge = 'stroke="#999" stroke-width="1.2"' if s.border == "line" else 'stroke="none"'
    out = (f'{defs}<rect x="0.5" y="0.5" width="{w - 1}" height="{h - 1}" rx="{r:.1f}" '
           f'fill="{fill}" {edge}/>')
    ink = s.colours["S"] if not s.dark else "#888888"
    if s.pattern:
        step = s.rng.uniform(6, 14)
        lines = "".join(f'<line x1="{x:.1f}" y1="0" x2="{x + h:.1f}" y2="{h}"/>'
                        for x in [i * step - h for i in range(int((w + h) / step) + 1)])
        out += (f'<g stroke="{ink}" stroke-width="0.6" opacity="0.08">{lines}</g>')
    if s.border == "frame":
        m = s.rng.uniform(0.03, 0.07) * w
        out += (f'<rect x="{m:.1f}" y="{m:.1f}" width="{w - 2 * m:.1f}" height="{h - 2 * m:.1f}" '
                f'rx="{r * 0.6:.1f}" fill="none" stroke="{ink}" stroke-width="1.2" '
                f'opacity="0.7"/>')
    elif s.border == "band":
        m = s.rng.uniform(0.025, 0.05) * w
        band = s.rng.choice(("#c01818", "#1a3a8a", "#202020", "#1a6a3a", "#806020"))
        out += (f'<rect x="{m / 2:.1f}" y="{m / 2:.1f}" width="{w - m:.1f}" height="{h - m:.1f}" '
                f'rx="{r:.1f}" fill="none" stroke="{band}" stroke-width="{m:.1f}"/>')
    elif s.border == "double":
        for m in (0.03 * w, 0.045 * w):
            out += (f'<rect x="{m:.1f}" y="{m:.1f}" width="{w - 2 * m:.1f}" '
                    f'height="{h - 2 * m:.1f}" fill="none" stroke="{ink}" stroke-width="0.8"/>')
    return out


def draw_deck(n: int) -> dict[Card, str]:
    """The 52 cards of ``drawn-<n>`` as SVG text."""
    s = _Style(n)
    out: dict[Card, str] = {}
    for card in full_deck():
        colour = s.colours[card.suit]
        rng = random.Random(f"drawn-deck-{n}-{card}")
        index = _index(s, card, colour)
        turned = f'<g transform="rotate(180 {s.w / 2} {s.h / 2})">{index}</g>'
        if s.layout == "split":  # the suit alone in the lower-left too
            turned = (f'<g transform="rotate(180 {s.w / 2} {s.h / 2})">'
                      + _suit(s, card.suit, s.w - s.inset_x - s.suit_h / 2,
                              s.inset_y + s.suit_h / 2, s.suit_h, colour) + "</g>")
        out[card] = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{s.w}" height="{s.h}">'
                     f'{_paper(s)}{index}{turned}{_body(s, card, colour, rng)}</svg>')
    return out


def letters_of(n: int) -> tuple[str, str]:
    """The index set of ``drawn-<n>`` and the glyph its aces print."""
    s = _Style(n)
    return s.letters, s.glyphs[14]
