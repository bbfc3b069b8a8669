"""Train the locator network (:mod:`hardware.camera.reader.locate`) on scenes filmed here; writes
``hardware/camera/reader/locator.onnx``.

``python3 -m training.locator [--fold K] [--scenes N] [--zooms N] [--epochs N] [--jobs N]
[--threads N] [--seed S] [--out PATH]``

Needs PyTorch and onnx (``python3 -m pip install -e '.[train]'``; the recogniser runs what it
writes with OpenCV alone). The scenes are piles filmed by the virtual camera
(:mod:`hardware.camera.synthetic.scene`) a little wider than the range the recogniser is held
to: frames of 640x480 to 1280x960 (filmed straight at the network's input size), the top card
100 pixels long to the whole frame's height, 0 to 5 cards beneath (now and then squared on one
another), a hand beside or over the pile, an empty table now and then, any table, tilt up to
32 degrees, glare. The decks are those of :mod:`training.classifier` (``--fold K`` leaves out
fold K's and writes ``.cache/camera/models/locator-fold-K.onnx``), each also with its border
painted white (``+plain``). The target of each scene is the top card's outline, filled, at half
the input's size. Rendered scenes are kept in the cache (``.cache/camera/locator``).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from hardware.camera.reader.locate import (
    IN_H,
    IN_W,
    LOCATOR_PATH,
    ZOOM_BELOW,
    Array,
    input_size,
    shrink,
    zoom_part,
)
from hardware.camera.synthetic.artwork import FOLDS, REAL_DECKS, cache_dir, render_deck
from hardware.camera.synthetic.scene import (
    PLAIN,
    SIZES,
    Scene,
    corners_in_frame,
    pile,
    random_hand,
    random_look,
    render,
)
from referee.cards import full_deck
from training.classifier import DRAWN
from training.manifest import REPRODUCIBLE, record

SCENES, EPOCHS, FIRST_SEED = 40_000, 6, 1_000_000
#: Scenes set aside to report how often the outline is found.
CHECK = 500
#: The kind of scenes the cache holds: change it when the filming changes.
SCENES_KIND = "l1"
#: Second looks at small cards (:func:`zoom_sample`) trained on beside the scenes (none for
#: the shipped locator: tried with 8 000, docs/camera.md), their first seed, and the kind the
#: cache holds.
ZOOMS, ZOOM_FIRST_SEED, ZOOMS_KIND = 0, 3_000_000, "z1"
ALL_DECKS = (*REAL_DECKS, *DRAWN)


def fold_path(k: int) -> Path:
    """Where the network of fold ``k`` is written."""
    return cache_dir() / "models" / f"locator-fold-{k}.onnx"


def train_scene(seed: int, decks: tuple[str, ...], size: tuple[int, int] | None = None,
                longest: float | None = None) -> Scene:
    """A random pile for training, drawn from ``seed``: a real deck in 3 scenes of 5 (a frame
    of ``size``, the top card at most ``longest`` pixels long: else drawn)."""
    rng = random.Random(f"locator-{seed}" if size is None else f"locator-{size}-{seed}")
    real = [d for d in decks if not d.startswith("drawn-")]
    drawn = [d for d in decks if d.startswith("drawn-")]
    deck = rng.choice(real if real and (rng.random() < 0.6 or not drawn) else drawn)
    if rng.random() < 0.3:
        deck += PLAIN
    size = size or rng.choice(SIZES)
    scene = Scene(deck=deck, background=rng.randrange(100_000), seed=seed, size=size)
    random_look(scene, rng, tilt=32.0)
    if rng.random() < 0.15:
        scene.glare = (rng.random(), rng.random(), rng.uniform(0.05, 0.25), rng.uniform(40, 120))
    if rng.random() < 0.03:
        return scene  # an empty table
    cards = full_deck()
    rng.shuffle(cards)
    length = math.exp(rng.uniform(math.log(100), math.log(longest or size[1])))
    below = rng.choice((0, 1, 1, 2, 2, 3, 4, 5))
    if not pile(scene, rng, cards[-1], length, below, cards[:-1], squared=0.2):
        scene.tilt = (0.0, 0.0)
        pile(scene, rng, cards[-1], min(length, 0.8 * size[1]), below, cards[:-1])
    r = rng.random()
    p = scene.cards[-1]
    if r < 0.3:
        scene.hands.append(random_hand(rng, size, (p.cx, p.cy, 0.95 * p.height)))
    elif r < 0.38:  # a hand over the pile
        scene.hands.append(random_hand(rng, size, (p.cx, p.cy, 0.6 * p.height)))
    return scene


def target(scene: Scene) -> Array:
    """The top card's outline, filled, at half the network's input size (0-255)."""
    w, h = scene.size
    if not scene.cards:
        return filled(None)
    return filled(corners_in_frame(scene, scene.cards[-1]) * np.array([IN_W / w, IN_H / h]))


def filled(quad: Array | None) -> Array:
    """``quad`` (pixels of the network's input; None: no card) filled, at half the input's
    size (0-255)."""
    full = np.zeros((IN_H, IN_W), np.uint8)
    if quad is not None:
        pts = np.round((quad + 0.5) * 16 - 0.5 * 16).astype(np.int32).reshape(-1, 1, 2)
        cv2.fillConvexPoly(full, pts, 255, cv2.LINE_AA, 4)
    return np.asarray(cv2.resize(full, (IN_W // 2, IN_H // 2), interpolation=cv2.INTER_AREA))


def zoom_sample(seed: int, decks: tuple[str, ...]) -> tuple[Array, Array, str]:
    """One training pair as the locator's second look at a small card sees it
    (:meth:`~hardware.camera.reader.locate.Locator._zoom`): a pile in a large frame, its top
    card short enough to be looked at again, filmed at the frame's size; the part cut round an
    outline as a first look finds it (the card's own, grown up to half again, as where it took
    in a card beneath, and moved a little), shrunk to the frame's input size (160x128 for
    4:3: the second look itself reads the part at its own, often 160x112, and was changed to
    the frame's when these were tried); its target."""
    rng = random.Random(f"zoom-{seed}")
    size = rng.choice(SIZES[2:])  # 1024x768, 1280x960: a card looked at again is under 358, 448 px
    scene = train_scene(seed, decks, size, longest=ZOOM_BELOW * size[0] / IN_W)
    frame = render(scene)
    deck = scene.deck.removesuffix(PLAIN)
    if not scene.cards:
        part, _, _ = zoom_part(frame, np.array([[0, 0], [0, 200], [140, 200], [140, 0]],
                                               np.float32) + rng.uniform(0, 600))
        return shrink(part, input_size(*size)), filled(None), deck
    true = corners_in_frame(scene, scene.cards[-1])
    centre = true.mean(axis=0)
    length = float(np.linalg.norm(true[0] - true[3]))
    first = (centre + rng.uniform(0.9, 1.5) * (true - centre)
             + rng.gauss(0, 0.12 * length) * np.array([rng.uniform(-1, 1), rng.uniform(-1, 1)]))
    first = np.roll(first, rng.randrange(4), axis=0).astype(np.float32)  # either side first
    part, x0, y0 = zoom_part(frame, first)
    ph, pw = part.shape[:2]
    quad = (true - (x0, y0)) * np.array([IN_W / pw, IN_H / ph])  # as target() scales
    return shrink(part, input_size(*size)), filled(quad), deck


def sample(seed: int, decks: tuple[str, ...]) -> tuple[Array, Array, str]:
    """One training pair: the scene filmed at the network's input size, its target, and its
    deck."""
    scene = train_scene(seed, decks)
    return render(scene, (IN_W, IN_H)), target(scene), scene.deck.removesuffix(PLAIN)


def _chunk(args: tuple[int, int, tuple[str, ...], bool]) -> tuple[Array, Array, list[str]]:
    cv2.setNumThreads(1)
    first, count, decks, zoomed = args
    make = zoom_sample if zoomed else sample
    got = [make(s, decks) for s in range(first, first + count)]
    return (np.stack([g[0] for g in got]), np.stack([g[1] for g in got]), [g[2] for g in got])


def scenes(first: int, count: int, jobs: int, *, zoomed: bool = False
           ) -> tuple[Array, Array, Array]:
    """``count`` pairs (:func:`sample`, or :func:`zoom_sample`: ``zoomed``) of every deck from
    seed ``first`` on, and each one's deck (a fold leaves its decks' scenes out), from the
    cache or rendered by ``jobs`` processes (then cached)."""
    decks = ALL_DECKS
    name = f"zooms-{ZOOMS_KIND}" if zoomed else f"scenes-{SCENES_KIND}"
    path = cache_dir() / "locator" / f"{name}-{first}-{count}.npz"
    if path.exists():
        with np.load(path) as z:
            return np.asarray(z["x"]), np.asarray(z["y"]), np.asarray(z["deck"])
    step = 250
    parts = [(s, min(step, first + count - s), decks, zoomed)
             for s in range(first, first + count, step)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(render_deck, decks))
        done = list(pool.map(_chunk, parts))
    x = np.concatenate([d[0] for d in done])
    y = np.concatenate([d[1] for d in done])
    names = np.array([n for d in done for n in d[2]])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, x=x, y=y, deck=names)
    tmp.replace(path)
    return x, y, names


def network() -> Any:
    """The locator network (PyTorch): a small encoder-decoder. In: the frame at the network's
    input size (3 x IN_H x IN_W, or any size a multiple of 16: BGR scaled to -0.5..0.5); out: one
    logit a cell of half that size."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    def cbr(i: int, o: int, stride: int = 1) -> Any:
        return nn.Sequential(nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o),
                             nn.ReLU(inplace=True))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.s1 = nn.Sequential(cbr(3, 12, 2), cbr(12, 12))  # 1/2
            self.s2 = nn.Sequential(cbr(12, 24, 2), cbr(24, 24))  # 1/4
            self.s3 = nn.Sequential(cbr(24, 48, 2), cbr(48, 48), cbr(48, 48))  # 1/8
            self.s4 = nn.Sequential(cbr(48, 64, 2), cbr(64, 64), cbr(64, 64))  # 1/16
            self.u3, self.u2, self.u1 = cbr(64 + 48, 32), cbr(32 + 24, 24), cbr(24 + 12, 12)
            self.out = nn.Conv2d(12, 1, 1)

        def forward(self, x: Any) -> Any:
            x1 = self.s1(x)
            x2 = self.s2(x1)
            x3 = self.s3(x2)
            x4 = self.s4(x3)
            y = self.u3(torch.cat([F.interpolate(x4, scale_factor=2.0, mode="nearest"), x3], 1))
            y = self.u2(torch.cat([F.interpolate(y, scale_factor=2.0, mode="nearest"), x2], 1))
            y = self.u1(torch.cat([F.interpolate(y, scale_factor=2.0, mode="nearest"), x1], 1))
            return self.out(y)

    return Net()


def train(x: Array, y: Array, epochs: int, seed: int, log: Any = None) -> Any:
    """Fit the network to the pairs (flips, colour changes and other table colours added at
    random)."""
    import torch
    from torch.nn import functional as F

    torch.manual_seed(seed)
    net = network().to(memory_format=torch.channels_last)
    batch = 32
    steps = epochs * (len(x) // batch)
    opt = torch.optim.AdamW(net.parameters(), 4e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 4e-3, total_steps=steps, pct_start=0.15)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(len(x))
        total = 0.0
        for i in range(0, len(x) - batch + 1, batch):
            idx = np.sort(order[i:i + batch])
            xb = torch.from_numpy(x[idx]).float().permute(0, 3, 1, 2) / 255.0
            yb = torch.from_numpy(y[idx]).float()[:, None] / 255.0
            gain = (torch.empty(batch, 3, 1, 1).uniform_(0.8, 1.2, generator=gen)
                    * torch.empty(batch, 1, 1, 1).uniform_(0.75, 1.2, generator=gen))
            xb = (xb * gain).clamp(0, 1)
            swap = torch.rand(batch, generator=gen) < 0.3  # other colours
            xb[swap] = xb[swap][:, torch.randperm(3, generator=gen)]
            if torch.rand(1, generator=gen) < 0.5:
                xb, yb = xb.flip(3), yb.flip(3)
            if torch.rand(1, generator=gen) < 0.5:
                xb, yb = xb.flip(2), yb.flip(2)
            xb = (xb - 0.5).contiguous(memory_format=torch.channels_last)
            out = net(xb)
            p = torch.sigmoid(out)
            overlap = (p * yb).sum((1, 2, 3))
            dice = 1 - (2 * overlap + 1) / (p.sum((1, 2, 3)) + yb.sum((1, 2, 3)) + 1)
            loss: Any = F.binary_cross_entropy_with_logits(out, yb) + 0.5 * dice.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.item())
        if log is not None:
            log(epoch, total / max(1, len(x) // batch), net)
    return net.eval()


def export(net: Any, path: Path) -> None:
    """Write the network as ONNX, for OpenCV's dnn module."""
    import torch

    net = net.eval().to(memory_format=torch.contiguous_format)
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the TorchScript exporter on purpose: OpenCV reads its
        warnings.simplefilter("ignore", DeprecationWarning)  # opset 13 graph
        torch.onnx.export(net, (torch.zeros(1, 3, IN_H, IN_W),), str(path), dynamo=False,
                          opset_version=13, input_names=["frame"], output_names=["chance"],
                          dynamic_axes={"frame": {2: "h", 3: "w"}, "chance": {2: "h", 3: "w"}})


def main(argv: list[str] | None = None) -> int:
    """Render, train, check and write the locator."""
    ap = argparse.ArgumentParser(prog="python3 -m training.locator", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fold", type=int, choices=range(1, len(FOLDS) + 1),
                    help="leave out the decks of this fold (for leave-decks-out figures)")
    ap.add_argument("--out", type=Path, help="where to write (default: the shipped file, or "
                    "the fold's file in the cache)")
    ap.add_argument("--scenes", type=int, default=SCENES)
    ap.add_argument("--zooms", type=int, default=ZOOMS,
                    help="second looks at small cards trained on beside the scenes (default "
                    "%(default)s; tried with 8000, not shipped: docs/camera.md)")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--jobs", type=int, default=2, help="processes rendering")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's threads")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        ap.error("PyTorch is not installed (python3 -m pip install -e '.[train]')")

    from hardware.camera.reader.locate import Locator

    torch.set_num_threads(args.threads)
    left_out = set(FOLDS[args.fold - 1]) if args.fold else set()
    decks = tuple(d for d in ALL_DECKS if d not in left_out)
    out = args.out or (fold_path(args.fold) if args.fold else LOCATOR_PATH)
    t0 = time.monotonic()
    x, y, names = scenes(FIRST_SEED, args.scenes, args.jobs)
    if args.zooms:
        zx, zy, znames = scenes(ZOOM_FIRST_SEED, args.zooms, args.jobs, zoomed=True)
        x, y, names = np.concatenate([x, zx]), np.concatenate([y, zy]), np.concatenate(
            [names, znames])
    keep = ~np.isin(names, sorted(left_out))
    x, y = x[keep], y[keep]
    check = [train_scene(s, decks) for s in range(FIRST_SEED - CHECK, FIRST_SEED)]
    print(f"{len(x)} scenes of {len(decks)} decks in {time.monotonic() - t0:.0f} s",
          file=sys.stderr, flush=True)

    def log(epoch: int, loss: float, net: Any) -> None:
        export(net, out)
        net.train()
        found = outlines_found(Locator(out, fresh=True), check)
        print(f"epoch {epoch + 1}: loss {loss:.4f}, outline within 3 % in {found} of "
              f"{sum(1 for s in check if s.cards)} scenes set aside "
              f"({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)

    net = train(x, y, args.epochs, args.seed, log)
    export(net, out)
    record(out, "python3 -m training.locator", REPRODUCIBLE)
    print(f"wrote {out} ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    return 0


def outlines_found(locator: Any, check: list[Scene], within: float = 0.03) -> int:
    """In how many scenes the locator's likeliest place is the top card, each corner within
    ``within`` of the card's length."""
    found = 0
    for s in check:
        if not s.cards:
            continue
        true = corners_in_frame(s, s.cards[-1])
        spots = locator.look(render(s)).spots
        if spots and corner_error(spots[0].quad, true) <= within * max(
                float(np.linalg.norm(true[0] - true[3])), 1.0):
            found += 1
    return found


def corner_error(quad: Array, true: Array) -> float:
    """The largest distance between a found quad's corners and the true ones (pixels), the
    two in the same order or turned half round."""
    q = quad.reshape(4, 2)
    return min(float(np.linalg.norm(q - np.roll(t, k, axis=0), axis=1).max())
               for t in (true, true[::-1]) for k in range(4))


if __name__ == "__main__":
    sys.exit(main())
