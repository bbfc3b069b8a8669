"""``referee camera read`` and ``referee camera enroll`` as a script calls them (issue 12):
their output, the deck file they write and read, and bad input as one clear line."""

from __future__ import annotations

import io
import json
import os
import re
import resource
import zipfile
from pathlib import Path

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from cardtable.cli import main  # noqa: E402
from hardware.camera.reader.templates import EnrolledDeck  # noqa: E402
from hardware.camera.synthetic.evaluate import photo  # noqa: E402
from hardware.camera.synthetic.scene import random_scene, render  # noqa: E402
from referee.cards import Card, full_deck  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402

DECK = "anglo"


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """52 clean photos of the deck, named by card, as a table would take them to enroll."""
    need_artwork(DECK)  # this fixture is made before the tests' function-scoped ``decks``
    folder = tmp_path_factory.mktemp("photos")
    for card in full_deck():
        cv2.imwrite(str(folder / f"{card}.png"), render(photo(DECK, card, 7)))
    return folder


@pytest.mark.slow
def test_enroll_from_photos_then_read_with_the_deck(
        decks: None, photos: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "anglo.npz"
    assert main(["camera", "enroll", "--images", str(photos), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"{out}: 52 cards enrolled" in said
    assert ("self-check: each card, read again from its photo turned round and askew, was read "
            "right") in said
    deck = EnrolledDeck.load(out)
    assert {str(c) for c in deck.cards} == {str(c) for c in full_deck()}
    scenes = {tmp_path / f"{seed}.jpg": random_scene(seed, DECK, size=(640, 480),
                                                      length=(180.0, 400.0))
              for seed in range(1000, 1006)}
    for path, scene in scenes.items():
        cv2.imwrite(str(path), render(scene))
    assert main(["camera", "read", "--deck", str(out), "--json", *map(str, scenes)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["image"] for line in lines] == [str(p) for p in scenes]
    right = sum(line["card"] == str(s.top) for line, s in zip(lines, scenes.values(),
                                                              strict=True))
    wrong = sum(line["card"] not in (None, str(s.top)) for line, s in zip(
        lines, scenes.values(), strict=True))
    assert right >= 5 and wrong == 0, lines
    assert all(0.0 <= line["confidence"] <= 1.0 for line in lines)


@pytest.mark.slow
def test_read_shows_what_the_camera_saw(decks: None, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    scene = random_scene(5, DECK, size=(640, 480), length=(200.0, 300.0), hands=False)
    image, drawn = tmp_path / "pile.png", tmp_path / "seen.png"
    cv2.imwrite(str(image), render(scene))
    assert main(["camera", "read", "--show", str(drawn), str(image)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"{image}: {scene.top} (")
    seen = cv2.imread(str(drawn))
    assert seen.shape == (480, 640, 3)
    # the outline is drawn in green where the card was read
    green = (seen[..., 1] > 180) & (seen[..., 0] < 100) & (seen[..., 2] < 100)
    assert green.sum() > 200


def test_show_never_draws_over_an_image_read_or_another_drawing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the CLI audit: ``--show keep.jpg`` replaced the photo read with its drawing,
    ``--show`` into the photos' own folder drew over a .png read, two images of one name drew
    over each other, and ``--show out.txt`` ended in OpenCV's error (exit 70)."""
    table = np.full((480, 640, 3), 40, np.uint8)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for name in ("keep.jpg", "a/x.png", "b/x.png"):
        cv2.imwrite(str(tmp_path / name), table)
    before = {n: (tmp_path / n).read_bytes() for n in ("keep.jpg", "a/x.png", "b/x.png")}
    keep = str(tmp_path / "keep.jpg")
    assert main(["camera", "read", keep, "--show", keep]) == 2
    assert "that is the image read" in capsys.readouterr().err
    assert main(["camera", "read", str(tmp_path / "a/x.png"), str(tmp_path / "b/x.png"),
                 "--show", str(tmp_path / "a")]) == 0
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["x-2.png", "x-3.png", "x.png"]
    assert {n: (tmp_path / n).read_bytes() for n in before} == before  # no image read touched
    for show, said in (("out.txt", "give a picture's name (.png or .jpg), or a folder"),
                       ("none/out.png", "the folder")):
        capsys.readouterr()
        assert main(["camera", "read", keep, "--show", str(tmp_path / show)]) == 2
        assert said in capsys.readouterr().err


def test_index_letters_must_be_known_sets(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    image = tmp_path / "x.png"
    cv2.imwrite(str(image), np.zeros((480, 640, 3), np.uint8))
    assert main(["camera", "read", "--index-letters", "klingon", str(image)]) == 2
    assert "unknown index set 'klingon'" in capsys.readouterr().err
    assert main(["camera", "read", "--index-letters", "french,dutch", str(image)]) == 2
    assert "name one of the two" in capsys.readouterr().err
    assert main(["camera", "read", "--index-letters", "german", "--json", str(image)]) == 0
    assert json.loads(capsys.readouterr().out)["card"] is None


def test_a_deck_file_of_another_template_kind_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A deck enrolled by an earlier version (its templates made another way, no kind in the
    file) cannot be matched: one line saying to enroll again, not a wrong match."""
    old = tmp_path / "old.npz"
    np.savez_compressed(old, cards=np.array([str(c) for c in full_deck()]),
                        vectors=np.zeros((52, 6558), np.float32), kind=np.array("card-light-red"))
    image = tmp_path / "x.png"
    cv2.imwrite(str(image), np.zeros((480, 640, 3), np.uint8))
    assert main(["camera", "read", "--deck", str(old), str(image)]) == 2
    err = capsys.readouterr().err
    assert "enroll the deck again" in err and "Traceback" not in err
    with pytest.raises(ValueError, match="enroll the deck again"):
        EnrolledDeck.load(old)
    with pytest.raises(ValueError, match="enroll the deck again"):
        EnrolledDeck.load(old)


def test_a_deck_file_whose_sizes_do_not_fit_the_classifier_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A deck file of the right kind whose features are not four of the classifier's (made
    by hand, or another program) is one clear line, not a crash on the first card seen."""
    from hardware.camera.reader.classify import GLYPHS

    rng = np.random.default_rng(4)
    bad = tmp_path / "bad.npz"
    EnrolledDeck(tuple(full_deck()), rng.normal(size=(52, 96)).astype(np.float32),
                 np.zeros((len(GLYPHS) + 1, 13), np.float32)).save(bad)
    assert main(["camera", "read", "--deck", str(bad), "docs/camera/queen.jpg"]) == 2
    err = capsys.readouterr().err
    assert "not a camera deck file" in err and "unexpected" not in err


@pytest.mark.parametrize(("make", "said"), [
    (lambda d: d, ": Is a directory"),
    (lambda d: d / "missing.npz", ": No such file or directory"),
    # numpy takes any other file for a pickle, and its message says how to load it unsafely
    (lambda d: (d / "photo.npz", (d / "photo.npz").write_bytes(b"\x89PNG\r\n\x1a\n..."))[0],
     "is not a camera deck file (not the zip of arrays that referee camera enroll writes)"),
    (lambda d: (d / "one.npy", np.save(d / "one.npy", np.zeros(3)))[0],
     "is not a camera deck file (not the zip of arrays"),
    # a pipe was opened, and waited on for ever
    (lambda d: (d / "pipe.npz", os.mkfifo(d / "pipe.npz"))[0],
     "is not a camera deck file (not a regular file: a device or a pipe)"),
])
def test_what_is_not_a_deck_file_is_named_in_one_line(
        tmp_path: Path, make: object, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    deck = make(tmp_path)  # type: ignore[operator]
    assert main(["camera", "read", "--deck", str(deck), "docs/camera/queen.jpg"]) == 2
    err = capsys.readouterr().err
    assert err == f"referee: --deck {deck}: " + err.split(f"--deck {deck}: ", 1)[1]
    assert said in err and "pickle" not in err and "Errno" not in err
    assert len(err.splitlines()) == 1


def _npy_header(shape: tuple[int, ...]) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return buf.getvalue()


@pytest.mark.parametrize(("shape", "zeros", "said"), [
    # about 500 kB that unpack to 512 MiB
    ((2**27,), 2**29, r"\(it unpacks to 5368\d{5} bytes in 2 arrays; an enrolled deck holds "
                      r"about 1 MB in at most 6\)"),
    # a header declaring 4 TiB over 100 bytes: numpy would allocate the shape first
    ((2**40,), 100, r"\(descriptors.npy says it holds more than it does\)"),
])
def test_a_deck_file_that_would_unpack_to_too_much_is_refused_unread(
        tmp_path: Path, shape: tuple[int, ...], zeros: int, said: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from hardware.camera.reader.templates import TEMPLATE_KIND

    bomb = tmp_path / "bomb.npz"
    kind = io.BytesIO()
    np.save(kind, np.array(TEMPLATE_KIND))
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("kind.npy", kind.getvalue())
        with zf.open("descriptors.npy", "w", force_zip64=True) as fh:  # written a MiB a time
            fh.write(_npy_header(shape))
            for start in range(0, zeros, 1 << 20):
                fh.write(bytes(min(1 << 20, zeros - start)))
    assert bomb.stat().st_size < 600_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(["camera", "read", "--deck", str(bomb), "docs/camera/queen.jpg"]) == 2
    err = capsys.readouterr().err
    assert re.search(f"{re.escape(str(bomb))} is not a camera deck file {said}", err), err
    assert len(err.splitlines()) == 1
    # nothing was unpacked: the peak grew by less than a tenth of the 512 MiB
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KiB


def test_a_zip_whose_member_is_no_array_is_named_not_a_deck_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A zip of other files (numpy's own words, "the magic string is not correct", had been
    the whole message)."""
    other = tmp_path / "other.npz"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("kind.npy", "not an array")
    assert main(["camera", "read", "--deck", str(other), "docs/camera/queen.jpg"]) == 2
    err = capsys.readouterr().err
    assert f"{other} is not a camera deck file (kind.npy: " in err and len(err.splitlines()) == 1


def test_no_index_set_at_all_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """No letters would name no ace or court: a mistake, refused by name."""
    for letters in ("", " , "):
        assert main(["camera", "read", "--index-letters", letters,
                     "docs/camera/queen.jpg"]) == 2
        assert "--index-letters: name at least one index set (known: english" in \
            capsys.readouterr().err


def test_a_deck_file_with_an_earlier_version_s_pictures_is_read_with_a_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A deck file whose card pictures an earlier version made smaller still reads (by its
    features), and the command says once that enrolling again would use the pictures."""
    from hardware.camera.reader.classify import FEATURES, GLYPHS

    rng = np.random.default_rng(3)
    d = rng.normal(size=(52, 4 * FEATURES)).astype(np.float32)
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    earlier = tmp_path / "earlier.npz"
    EnrolledDeck(tuple(full_deck()), d, np.zeros((len(GLYPHS) + 1, 13), np.float32),
                 rng.normal(size=(52, 2, 16 * 22 * 3)).astype(np.float32)).save(earlier)
    image = tmp_path / "x.png"
    cv2.imwrite(str(image), np.zeros((480, 640, 3), np.uint8))
    assert main(["camera", "read", "--json", "--deck", str(earlier), str(image)]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["card"] is None
    assert got.err.count("enroll the deck again") == 1 and "pictures" in got.err


@pytest.mark.slow
def test_enroll_refuses_a_folder_short_of_cards_and_an_existing_file(
        decks: None, photos: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    some = tmp_path / "some"
    some.mkdir()
    for name in ("QH.png", "10S.png", "2C.png"):
        (some / name).write_bytes((photos / name).read_bytes())
    (some / "notes.txt").write_text("not a card")
    out = tmp_path / "d.npz"
    assert main(["camera", "enroll", "--images", str(some), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "49 of the 52 cards are missing" in err and not out.exists()
    out.write_bytes(b"keep me")
    assert main(["camera", "enroll", "--images", str(photos), "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err and out.read_bytes() == b"keep me"


def test_an_enrolled_deck_is_written_whole_and_only_where_a_file_may_be(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the CLI audit: ``--out`` was written in place (a write the disk refused left
    the deck before it cut short), a FIFO hung the command, ``/dev/null`` "held" 52 cards, and
    a folder that is not there was found after all 52 cards were laid."""
    import subprocess
    import sys

    empty = tmp_path / "photos"
    empty.mkdir()
    fifo = tmp_path / "deck.fifo"
    os.mkfifo(fifo)
    for out, said in ((fifo, "not a file (a folder, a device or a FIFO)"),
                      (Path("/dev/null"), "not a file"),
                      (tmp_path / "none" / "d.npz", "the folder")):
        assert main(["camera", "enroll", "--images", str(empty), "--out", str(out),
                     "--overwrite"]) == 2
        err = capsys.readouterr().err
        assert f"--out {out}: {said}" in err, err  # said before any photo is looked at
    deck = tmp_path / "d.npz"
    root = Path(__file__).resolve().parents[3]
    script = ("import numpy as np, resource, sys\n"
              "from hardware.camera.reader.templates import EnrolledDeck\n"
              "from hardware.camera.reader.classify import glyph_ranks\n"
              "from referee.cards import full_deck\n"
              "d = np.random.default_rng(3).normal(size=(52, 4 * 96)).astype(np.float32)\n"
              "deck = EnrolledDeck(tuple(full_deck()), d, glyph_ranks(('english',)))\n"
              "deck.save(sys.argv[1])\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (40000, 40000))\n"
              "try:\n    deck.save(sys.argv[1])\nexcept OSError as exc:\n    print(exc.errno)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(deck)], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "27", proc.stdout + proc.stderr  # EFBIG: the second write
    assert len(EnrolledDeck.load(deck).cards) == 52  # the first deck, whole
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_watch_says_when_no_card_was_laid_and_checks_its_frames(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the CLI audit: a video in which no card was laid (or a file OpenCV reads as
    one frame of noise) printed nothing at all, and ``--frames -5`` was taken."""
    video = tmp_path / "table.avi"
    out = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (640, 480))
    for _ in range(6):
        out.write(np.full((480, 640, 3), 40, np.uint8))
    out.release()
    assert main(["camera", "watch", str(video)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{video}: 6 frames read, no card laid" in captured.err
    with pytest.raises(SystemExit):
        main(["camera", "watch", str(video), "--frames", "-5"])
    assert "argument --frames: must be 1..30" in capsys.readouterr().err


def test_read_an_image_that_is_not_one(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    assert main(["camera", "read", "--json", str(bad)]) == 2
    captured = capsys.readouterr()
    assert "bad.png" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""


def test_read_says_why_a_card_is_unclear(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A card found but not named is printed with the reason: a black-and-white photo says
    "no colour" (red and black suits cannot be told apart in it)."""
    need_artwork(DECK)
    image = render(photo(DECK, Card.parse("QH"), 7))
    grey = tmp_path / "grey.png"
    cv2.imwrite(str(grey), cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY),
                                        cv2.COLOR_GRAY2BGR))
    assert main(["camera", "read", str(grey)]) == 0
    assert capsys.readouterr().out == f"{grey}: unclear: no colour\n"
    assert main(["camera", "read", "--json", str(grey)]) == 0
    assert json.loads(capsys.readouterr().out) == {"image": str(grey), "card": None,
                                                   "confidence": 0.0, "reason": "no colour"}


@pytest.mark.parametrize("argv", [["camera", "watch", ""], ["camera", "watch", "  "],
                                  ["camera", "enroll", "--device", "", "--out", "d.npz"]])
def test_a_blank_camera_is_a_usage_error_that_says_what_to_give(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "give a camera: /dev/videoN or its number, picamera, a video file or a stream URL" \
        in capsys.readouterr().err


def test_live_enrolment_says_what_keeps_a_card_from_being_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A camera over an empty table: the terminal says once that it sees no card (after
    ``STUCK_S``); the camera ending before the first card is taken ends in one line, nothing
    written."""
    import cardtable.commands.camera as camera_command
    import hardware.camera.reader.sources as sources
    from hardware.camera.reader.sources import Frame

    class EmptyTable:
        def frames(self) -> object:
            for t in range(6):
                yield Frame(t * 33_000_000, np.full((480, 640, 3), 90, np.uint8))

        def close(self) -> None:
            pass

    monkeypatch.setattr(sources, "open_source", lambda device: EmptyTable())
    monkeypatch.setattr(camera_command, "STUCK_S", 0.0)
    out = tmp_path / "deck.npz"
    assert main(["camera", "enroll", "--device", "/dev/video0", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("the camera sees no card: lay it in view, flat and alone") == 1, err
    assert "[ 1/52] lay 2 of clubs (2C) alone under the camera" in err
    assert err.rstrip().endswith("the camera stopped before 2C was taken")
    assert not out.exists()


@pytest.mark.slow
def test_live_enrolment_from_a_video_takes_each_card_and_checks_the_deck(
        decks: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``camera enroll --device`` on a real OpenCV source (a video file, as a camera gives its
    frames): each of the 52 cards lies still for 8 frames in turn; all are taken in order, the
    deck is written and its self-check reads every card again."""
    video = tmp_path / "cards.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 30, (640, 480))
    assert writer.isOpened()
    for card in full_deck():
        image = render(photo(DECK, card, 7))
        for _ in range(8):
            writer.write(image)
    writer.release()
    out = tmp_path / "deck.npz"
    assert main(["camera", "enroll", "--device", str(video), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err.count(": taken; take it away") == 52
    assert "[52/52] lay ace of spades (AS)" in captured.err
    assert f"{out}: 52 cards enrolled" in captured.out
    assert ("self-check: each card, read again from its photo turned round and askew, was "
            "read right") in captured.out
    assert len(set(EnrolledDeck.load(out).cards)) == 52


def test_an_unclear_read_is_printed_without_a_figure() -> None:
    """An unclear read's confidence may be that of a card it did not name (``--deck``: the
    classifier sure, the deck not), so a person is not shown "unclear … (1.00)"."""
    from cardtable.commands.camera import read_words
    from hardware.camera.reader.recognise import Read

    quad = np.zeros((4, 2), np.float32)
    assert read_words(Read(Card.parse("8H"), 0.987, quad)) == "8H (0.99)"
    assert read_words(Read(None, 1.0, quad, "deck unsure", Card.parse("8S"))) == (
        "unclear: deck unsure")
    assert read_words(Read(None, 0.7, quad, "unclear", Card.parse("8S"))) == "unclear"
    assert read_words(Read(None, 0.0, None, "no card")) == "no card"


def test_enroll_takes_photos_or_a_camera_and_its_usage_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "d.npz")
    for args in ([], ["--images", str(tmp_path), "--device", "0"]):
        with pytest.raises(SystemExit) as stop:
            main(["camera", "enroll", "--out", out, *args])
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert "(--images DIR | --device DEV)" in err  # the usage shows one or the other
    assert not Path(out).exists()


@pytest.mark.parametrize("unread, hint", [
    ([("QH", "8H", ""), ("2C", None, "no index")], True),
    ([("2C", None, "no index")], False),
    # more than half the deck unread (52 near-copies of one photo, each a pixel off)
    ([(str(c), None, "deck unsure") for c in full_deck()[:27]], True)])
def test_the_self_check_asks_for_the_photos_names_where_a_card_was_read_as_another(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        unread: list[tuple[str, str | None, str]], hint: bool) -> None:
    from hardware.camera.reader import enroll
    from hardware.camera.reader.classify import FEATURES, GLYPHS
    from referee.cards import full_deck

    seen = {card: enroll.Seen(np.zeros((1, 4 * FEATURES), np.float32),
                              np.zeros(len(GLYPHS) + 1, np.float32)) for card in full_deck()}
    monkeypatch.setattr(enroll, "see_images", lambda folder: (seen, []))
    monkeypatch.setattr(enroll, "self_check", lambda deck, seen: [
        (Card.parse(c), None if g is None else Card.parse(g), why) for c, g, why in unread])
    out = tmp_path / "d.npz"
    assert main(["camera", "enroll", "--images", str(tmp_path), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"self-check: {len(unread)} of its cards, " + (
        "read again from its photo turned round and askew, was not read right"
        if len(unread) == 1 else
        "read again from their photos turned round and askew, were not read right") in said
    assert ("check that each photo shows the card it is named after" in said) == hint
    assert said.rstrip().endswith("enroll the deck again from clearer photos to read it")


def test_a_stream_that_refuses_is_said_in_one_line_without_ffmpeg_s_own() -> None:
    """The 2026-12-07 CLI audit: FFmpeg's "[tcp @ 0x…] Connection … refused" came first."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "OPENCV_FFMPEG_LOGLEVEL"}
    url = f"rtsp://127.0.0.1:{port}/x"
    run = subprocess.run([sys.executable, "-m", "cardtable.cli", "camera", "watch", url],
                         capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 2
    assert run.stderr == f"referee: cannot open {url}\n"
