"""An enrolled deck (``referee camera enroll``): the deck's own 52 faces are its classifier.

Each card of the deck was seen once (a photo, or the camera) and read by the classifier; what is
kept of it is what the classifier's four corner views made of it (:attr:`Look.features
<hardware.camera.reader.classify.Look>`, a few copies each from an outline moved a little) and
the glyph each corner printed. A card on the table is then named by its nearest enrolled card
(:meth:`EnrolledDeck.match`: the cosine of the features, the card turned round or not), with
the margin by which it is nearer than any other card: the deck's artwork decides, whatever it
is. The glyphs the deck prints (``B`` for a jack, ``Т`` for an ace …) are kept as what they
mean in this deck (:attr:`EnrolledDeck.meaning`).
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import stat
import zipfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.reader.classify import FEATURES, GLYPHS, NO_GLYPH, RANKS, Look
from referee.cards import Card, full_deck

Array = npt.NDArray[Any]

#: What a deck file holds: a file of another kind (another classifier) cannot be matched.
TEMPLATE_KIND = "corner-features-v3"
#: The SHA-256 of the shipped classifier whose features a deck file of :data:`TEMPLATE_KIND`
#: holds: a new classifier needs a new kind (tests/hardware/camera/test_weights.py checks).
FEATURES_OF = "23799da35c13a9e9f4a67e27d0e1c4bfc8a3460774c013d41791c44955a6c216"


#: The size (width, height) an enrolled card's picture is shrunk to (:func:`picture`), and how
#: many pixels of it a read card's picture may lie off an enrolled one (its outline a little
#: off): :meth:`EnrolledDeck.match_picture` tries each place within that.
PICTURE_SIZE = (24, 33)
PICTURE_SHIFT = 2
#: The most a deck file may hold unpacked: an enrolled deck is about 1.1 MB (its pictures
#: 1 MB); a small file that unpacks to gigabytes (a zip bomb) is refused before it is read.
DECK_FILE_BYTES = 64 << 20
DECK_FILE_MEMBERS = 16


def picture(card: Array) -> Array:
    """A warped card (BGR, upright) shrunk to :data:`PICTURE_SIZE`, its colours as a flat
    vector: the whole face (pips, courts, colours), which tells apart cards of one deck whose
    corners the classifier finds alike."""
    small = cv2.resize(card, PICTURE_SIZE, interpolation=cv2.INTER_AREA)
    return np.asarray(small, np.float32).reshape(-1)


def centred(images: Array) -> Array:
    """Images (n x h x w x 3) as unit vectors, each colour less its mean (n x h*w*3; a flat
    image is all zeros: like nothing)."""
    flat = images.reshape(len(images), -1, 3).astype(np.float32)
    flat = flat - flat.mean(axis=1, keepdims=True)
    flat = flat.reshape(len(images), -1)
    return np.asarray(flat / (np.linalg.norm(flat, axis=1, keepdims=True) + 1e-6), np.float32)


def descriptor(look: Look) -> Array:
    """A card's four views as one unit vector (each view's features a unit vector of its own,
    in the order the views were read)."""
    f = look.features / (np.linalg.norm(look.features, axis=1, keepdims=True) + 1e-6)
    return np.asarray(f.reshape(-1) / 2.0, np.float32)


def turned(d: Array) -> Array:
    """A descriptor of the same card turned half round: its views in the other order."""
    views = d.reshape(4, -1)
    return np.asarray(views[[2, 3, 0, 1]].reshape(-1), np.float32)


@dataclass(frozen=True)
class Match:
    """An enrolled deck's nearest card to a read, how near (cosine), and the margin over the
    nearest other card."""

    card: Card
    score: float
    margin: float
    runner_up: Card


def check_deck_path(path: Path) -> None:
    """Whether a deck file may be written at ``path``: its folder is there and nothing but a
    file lies at it (checked before an enrolment, whose cards a person has laid by hand, and
    again as it is written); ``OSError`` saying what is in the way."""
    if not path.parent.is_dir():
        raise OSError(errno.ENOENT, f"the folder {path.parent} does not exist", str(path))
    try:
        mode = path.stat().st_mode  # through a symlink: what it points at is what counts
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise OSError(errno.EEXIST, "not a file (a folder, a device or a FIFO): nothing is "
                      "written over it", str(path))


@dataclass(frozen=True)
class EnrolledDeck:
    """A deck's cards as descriptors (several each), and what its glyphs mean."""

    cards: tuple[Card, ...]  # the card of each descriptor
    descriptors: Array  # n x D unit vectors
    meaning: Array  # glyphs x ranks (as hardware.camera.reader.classify.glyph_ranks)
    #: Each card's :func:`picture` upright and turned half round (52 x 2 x P, in the order
    #: of :func:`~referee.cards.full_deck`), or None (a deck file enrolled before pictures).
    pictures: Array | None = None
    #: What of the file is not used, for a person to hear ("" when all of it is).
    outdated: str = ""
    #: Whether the deck prints its index upright in the top-right and bottom-left corners
    #: (as well, or only): then an index seen only there is the deck's own, not one the warp
    #: turned on its side (:func:`~hardware.camera.reader.recognise.in_its_corners`). False
    #: in a deck file enrolled before it was kept.
    other_corners: bool = False

    def save(self, path: str | Path) -> None:
        """Write the deck file (npz) whole: a spare file beside it renamed over it, so a write
        that fails (a full disk) leaves the deck that was there. Something other than a file at
        ``path`` (a FIFO, a device, a folder) is refused (``OSError``), never written into."""
        path = Path(path)
        data = self.to_bytes()
        check_deck_path(path)
        spare = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(spare, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as exc:  # the folder's fault, not the file's (/proc, a missing folder)
            raise OSError(exc.errno, f"no file can be made in {path.parent} "
                          f"({exc.strerror})", str(path)) from None
        try:
            with open(fd, "wb") as fh:
                fh.write(data)
            os.replace(spare, path)
        except BaseException:
            spare.unlink(missing_ok=True)
            raise

    def to_bytes(self) -> bytes:
        """The deck file's bytes (what :meth:`save` writes)."""
        arrays: dict[str, Any] = {
            "cards": np.array([str(c) for c in self.cards]),
            "descriptors": self.descriptors, "meaning": self.meaning,
            "kind": np.array(TEMPLATE_KIND),
            "other_corners": np.array(self.other_corners)}
        if self.pictures is not None:
            arrays["pictures"] = self.pictures
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        return buf.getvalue()

    @classmethod
    def load(cls, path: str | Path) -> EnrolledDeck:
        """Read a deck file; a file that is not one raises ValueError or OSError."""
        mode = os.stat(path).st_mode  # a missing file: OSError, as it says
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):  # a pipe would be waited on for ever
            raise ValueError(f"{path} is not a camera deck file (not a regular file: a device "
                             "or a pipe)")
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic != b"PK\x03\x04":  # numpy would try it as a pickle, and say so
            raise ValueError(f"{path} is not a camera deck file (not the zip of arrays that "
                             "referee camera enroll writes)")
        _check_unpacked_size(path)
        try:
            with np.load(path, allow_pickle=False) as z:
                kind = str(z["kind"]) if "kind" in z.files else "an older kind"
                if kind != TEMPLATE_KIND:
                    raise ValueError(f"{path} was enrolled by an earlier version ({kind}), "
                                     "which this one cannot match: enroll the deck again "
                                     "(referee camera enroll)")
                cards = tuple(Card.parse(str(c)) for c in z["cards"])
                descriptors = np.asarray(z["descriptors"], np.float32)
                meaning = np.asarray(z["meaning"], np.float32)
                pictures = (np.asarray(z["pictures"], np.float32) if "pictures" in z.files
                            else None)
                corners = z["other_corners"] if "other_corners" in z.files else None
        except (KeyError, EOFError) as exc:
            raise ValueError(f"{path} is not a camera deck file ({exc})") from None
        except ValueError as exc:
            if "enroll the deck again" in str(exc):
                raise
            raise ValueError(f"{path} is not a camera deck file ({exc})") from None
        if (descriptors.ndim != 2 or len(cards) != descriptors.shape[0]
                or descriptors.shape[1] != 4 * FEATURES
                or meaning.shape != (len(GLYPHS) + 1, len(RANKS))):
            raise ValueError(f"{path} is not a camera deck file (sizes differ)")
        if not (np.isfinite(descriptors).all() and np.isfinite(meaning).all()):
            raise ValueError(f"{path} is not a camera deck file (values that are not numbers)")
        if set(cards) != set(full_deck()):
            raise ValueError(f"{path} does not hold the 52 cards of a deck")
        if pictures is not None and (pictures.ndim != 3 or pictures.shape[:2] != (52, 2)):
            raise ValueError(f"{path} is not a camera deck file (its pictures' sizes differ)")
        if corners is not None and (corners.shape != () or corners.dtype != np.bool_):
            raise ValueError(f"{path} is not a camera deck file (its other_corners is not "
                             "true or false)")
        other_corners = bool(corners) if corners is not None else False
        w, h = PICTURE_SIZE
        outdated = "" if corners is not None else (
            f"{path} was enrolled by an earlier version, which did not learn where the deck "
            "prints its index: if it prints it only in the top-right corner (as KDE's Oxygen "
            "decks do), enroll the deck again (referee camera enroll)")
        if pictures is not None and pictures.shape[-1] != w * h * 3:
            pictures = None  # an earlier version's smaller pictures: the features decide
            outdated = (f"{path} was enrolled by an earlier version: its card pictures are "
                        "not used, so fewer cards are read surely; enroll the deck again "
                        "(referee camera enroll) to use them")  # (it also lacks the corners)
        return cls(cards, descriptors, meaning, pictures, outdated, other_corners)

    def scores(self, look: Look) -> dict[Card, float]:
        """Each card's best cosine to the read, the card either way round."""
        d = descriptor(look)
        sims = np.maximum(self.descriptors @ d, self.descriptors @ turned(d))
        best: dict[Card, float] = {}
        for card, s in zip(self.cards, sims.tolist(), strict=True):
            if s > best.get(card, -2.0):
                best[card] = s
        return best

    def match_picture(self, seen: Array) -> Match | None:
        """The enrolled card whose :func:`picture` is most like ``seen`` (the read card's),
        either way round, and its margin over any other; None without pictures (or with
        pictures of another size: a deck file enrolled by an earlier version). Likeness is
        the normalised correlation of the colours, the read picture less its edges moved
        up to :data:`PICTURE_SHIFT` pixels each way over the enrolled one."""
        w, h = PICTURE_SIZE
        if (self.pictures is None or seen.shape != (w * h * 3,)
                or self.pictures.shape[-1] != seen.shape[-1]):
            return None
        k = PICTURE_SHIFT
        windows = self._picture_windows
        inner = centred(seen.reshape(1, h, w, 3)[:, k:h - k, k:w - k])[0]
        sims = (windows @ inner).max(axis=0).reshape(52, 2).max(axis=1)
        first, second = (int(i) for i in np.argsort(-sims)[:2])
        deck = full_deck()
        return Match(deck[first], float(sims[first]), float(sims[first] - sims[second]),
                     deck[second])

    def prepare_pictures(self) -> None:
        """Lay out the pictures for :meth:`match_picture` now (a deck without them: nothing)."""
        if self.pictures is not None:
            self._picture_windows  # noqa: B018 - computed and kept by cached_property

    @cached_property
    def _picture_windows(self) -> Array:
        """Each enrolled picture's part at each place a read one's inner part may lie
        (shifts x 104 x P', each a unit vector less its colours' means): one matrix product
        then gives every likeness."""
        assert self.pictures is not None
        w, h = PICTURE_SIZE
        k = PICTURE_SHIFT
        faces = self.pictures.reshape(-1, h, w, 3)
        return np.stack([centred(faces[:, dy:dy + h - 2 * k, dx:dx + w - 2 * k])
                         for dy in range(2 * k + 1) for dx in range(2 * k + 1)])

    def match(self, look: Look) -> Match:
        """The nearest enrolled card to a read, and its margin over any other."""
        ranked = sorted(self.scores(look).items(), key=lambda cs: -cs[1])
        (card, score), (other, second) = ranked[0], ranked[1]
        return Match(card, score, score - second, other)


def deck_meaning(glyph_reads: dict[Card, Array]) -> Array:
    """What each glyph means in an enrolled deck, from the glyph chances its cards were read
    with (each card's views summed): a glyph stands for the rank of the cards it was read on
    most; the numbers always stand for themselves."""
    m = np.zeros((len(GLYPHS) + 1, len(RANKS)), np.float32)
    for r in range(2, 11):
        m[GLYPHS.index(str(r)), RANKS.index(r)] = 1
    weight = np.zeros((len(GLYPHS) + 1, len(RANKS)), np.float32)
    for card, chances in glyph_reads.items():
        weight[:, RANKS.index(card.rank)] += chances
    for g, name in enumerate(GLYPHS):
        if name.isdigit() and name != "1":
            continue
        if float(weight[g].max()) >= 0.5:  # read on at least one card, half sure
            m[g, int(weight[g].argmax())] = 1
    m[NO_GLYPH] = 0
    return m


def _check_unpacked_size(path: str | Path) -> None:
    """Refuse a deck file that would unpack to more than :data:`DECK_FILE_BYTES` before numpy
    reads it: zipfile stops each member at the size its directory declares, and numpy
    allocates the shape each array's header declares, so both are checked."""
    try:
        with zipfile.ZipFile(path) as zf:
            members = zf.infolist()
            unpacked = sum(m.file_size for m in members)
            if len(members) > DECK_FILE_MEMBERS or unpacked > DECK_FILE_BYTES:
                raise ValueError(
                    f"{path} is not a camera deck file (it unpacks to {unpacked} bytes in "
                    f"{len(members)} arrays; an enrolled deck holds about 1 MB in at most 6)")
            for m in members:
                shape, dtype = _array_header(zf, m, path)
                if dtype.hasobject or int(np.prod(shape, dtype=object)) * dtype.itemsize \
                        > m.file_size:
                    raise ValueError(f"{path} is not a camera deck file ({m.filename} says it "
                                     "holds more than it does)")
    except (zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"{path} is not a camera deck file ({exc})") from None


def _array_header(zf: zipfile.ZipFile, member: zipfile.ZipInfo,
                  path: str | Path) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The shape and kind an array of a deck file declares, read without the array; a member
    that is no array numpy writes is not a deck file (numpy's own words had been shown)."""
    with zf.open(member) as fh:
        try:
            version = np.lib.format.read_magic(fh)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read_header is None:  # 3.0: names numpy writes only for other arrays
                raise ValueError(f"of array format {version}")
            shape, _fortran, dtype = read_header(fh)
        except ValueError as exc:
            raise ValueError(f"{path} is not a camera deck file ({member.filename}: "
                             f"{exc})") from None
    return shape, dtype
