"""Train the locator network (:mod:`hardware.camera.reader.locate`) from scenes rendered here;
writes ``hardware/camera/reader/locator.onnx``.

``python3 -m training.locator [--scenes N] [--epochs N] [--jobs N] [--threads N]
[--leave-out DECK,...] [--full-share F] [--out PATH]``

Needs PyTorch (``python3 -m pip install -e '.[train]'``; the recogniser itself runs the network
with OpenCV alone). The scenes are piles filmed by the virtual camera
(:mod:`hardware.camera.synthetic.scene`) with more spread than the benchmark's: 0 to 5 cards
beneath, sometimes squared almost exactly on one another, cards 140 to 300 pixels long, a hand now
and then (sometimes over the pile), any of 200 table textures, stronger tilt and glare. The decks
are the training decks only: ``anglo`` and ``gnomangelo`` (gnome-cards-data), the ``font-<n>``
decks and the ``pips-<n>`` decks drawn here (:mod:`hardware.camera.synthetic.artwork`), each also
with its border painted white (``+plain``). ``touati`` (the npm deck) is never used: it is the
held-out deck of the benchmark. The target of each scene is the top card's outline, filled, at an
eighth of the frame's size. Rendered scenes are kept in the cache (``.cache/camera/locator``), so a
second run trains at once.
"""

from __future__ import annotations

import argparse
import hashlib
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
    MAP_H,
    MAP_W,
    Array,
    fit_box,
    fit_sides,
)
from hardware.camera.synthetic import scene as scene_module
from hardware.camera.synthetic.artwork import FONT_DECKS, PIP_DECKS, cache_dir, render_deck
from hardware.camera.synthetic.scene import (
    FILM_SCALE,
    FRAME_H,
    FRAME_W,
    PLAIN,
    Placed,
    Scene,
    corners_in_frame,
    half_extent,
    random_hand,
    random_look,
    render,
)
from referee.cards import full_deck

TRAIN_DECKS = ("anglo", "gnomangelo", *FONT_DECKS,
               *(f"pips-{n}" for n in range(1, PIP_DECKS + 1)))
#: Scenes rendered (those set aside included), passes over them, and the first scene's seed
#: (the benchmark's scenes are seeds 10 000 to 12 000 of ``random_scene``, which draws them
#: otherwise).
SCENES, EPOCHS, FIRST_SEED = 40_000, 5, 100_000
#: The share of the training scenes filmed whole (the rest at half size): all of them for
#: the network that ships; less renders faster but gave a network that outlines worse.
FULL_SHARE = 1.0
#: Scenes kept aside to report how often the outline is found.
CHECK = 500


def train_scene(seed: int, decks: tuple[str, ...] = TRAIN_DECKS) -> Scene:
    """A random pile for training, drawn from ``seed``."""
    rng = random.Random(f"locator-{seed}")
    deck = rng.choice(decks)
    if rng.random() < 0.5:
        deck += PLAIN
    scene = Scene(deck=deck, background=rng.randrange(200), seed=seed)
    random_look(scene, rng)
    scene.tilt = (rng.uniform(-0.08, 0.08), rng.uniform(-0.08, 0.08))
    if rng.random() < 0.15:
        scene.glare = (rng.uniform(0, FRAME_W), rng.uniform(0, FRAME_H), rng.uniform(20, 90))
    if rng.random() < 0.03:
        return scene  # an empty table
    cards = full_deck()
    rng.shuffle(cards)
    n_below = rng.choice((0, 1, 1, 2, 2, 3, 4, 5))
    height = rng.uniform(140, 300)
    angle = rng.uniform(-180, 180)
    half_w, half_h = half_extent(height, angle)
    cx, cy = FRAME_W / 2, FRAME_H / 2
    for _ in range(30):  # the top card wholly in view
        cx = rng.uniform(min(half_w, FRAME_W / 2), max(FRAME_W - half_w, FRAME_W / 2))
        cy = rng.uniform(min(half_h, FRAME_H / 2), max(FRAME_H - half_h, FRAME_H / 2))
        c = corners_in_frame(scene, Placed(cards[-1], cx, cy, height, angle))
        if (c.min(axis=0) >= 2).all() and (c[:, 0] <= FRAME_W - 3).all() \
                and (c[:, 1] <= FRAME_H - 3).all():
            break
    squared = rng.random() < 0.15
    for i in range(n_below):
        if squared:
            d, turn = rng.uniform(0.0, 0.12) * height, rng.uniform(-8, 8)
        else:
            d, turn = rng.uniform(0.1, 0.5) * height, rng.uniform(-45, 45)
        b = rng.uniform(0, 2 * math.pi)
        scene.cards.append(Placed(cards[i], cx + d * math.cos(b), cy + d * math.sin(b), height,
                                  angle + turn))
    scene.cards.append(Placed(cards[-1], cx, cy, height, angle))
    r = rng.random()
    if r < 0.3:
        scene.hands.append(random_hand(rng, (cx, cy, 0.95 * height)))
    elif r < 0.38:
        scene.hands.append(random_hand(rng, (cx, cy, 0.6 * height)))
    return scene


def target(scene: Scene) -> Array:
    """The top card's outline, filled, at the map's size (0-255)."""
    full = np.zeros((FRAME_H, FRAME_W), np.uint8)
    if scene.cards:
        quad = corners_in_frame(scene, scene.cards[-1])
        cv2.fillConvexPoly(full, np.round(quad * 8).astype(np.int32).reshape(-1, 1, 2), 255,
                           cv2.LINE_AA, 3)
    return np.asarray(cv2.resize(full, (MAP_W, MAP_H), interpolation=cv2.INTER_AREA))


def sample(seed: int, decks: tuple[str, ...] = TRAIN_DECKS,
           full: bool = True) -> tuple[Array, Array]:
    """One training pair: the frame at the network's input size, and its target. The frame is
    filmed at 640x480 and shrunk as the locator shrinks a camera's frame (JPEG and all: about
    65 ms, the network that ships), or unless ``full`` at half size (320x240,
    :func:`~hardware.camera.synthetic.scene.render` with a scale: about 9 ms) and shrunk by area."""
    scene = train_scene(seed, decks)
    frame = render(scene) if full else render(scene, FILM_SCALE)
    return np.asarray(cv2.resize(frame, (IN_W, IN_H), interpolation=cv2.INTER_AREA)), \
        target(scene)


def _chunk(args: tuple[int, int, tuple[str, ...], bool]) -> tuple[Array, Array]:
    cv2.setNumThreads(1)
    first, count, decks, full = args
    pairs = [sample(s, decks, full) for s in range(first, first + count)]
    return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])


def scenes(first: int, count: int, decks: tuple[str, ...], jobs: int,
           full: bool = True) -> tuple[Array, Array]:
    """``count`` pairs (:func:`sample`) from seed ``first`` on, from the cache or rendered by
    ``jobs`` processes (then cached, under a key that changes with the virtual camera's
    code)."""
    kind = "full" if full else f"scale-{FILM_SCALE}"
    drawn = hashlib.sha256(Path(scene_module.__file__).read_bytes()).hexdigest()
    key = hashlib.sha256(f"{kind}-{first}-{count}-{','.join(decks)}-{drawn}".encode()
                         ).hexdigest()[:16]
    path = cache_dir() / "locator" / f"scenes-{key}.npz"
    if path.exists():
        with np.load(path) as z:
            return np.asarray(z["x"]), np.asarray(z["y"])
    step = 250
    parts = [(s, min(step, first + count - s), decks, full)
             for s in range(first, first + count, step)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(render_deck, sorted({d.removesuffix(PLAIN) for d in decks})))  # each once
        done = list(pool.map(_chunk, parts))
    x = np.concatenate([d[0] for d in done])
    y = np.concatenate([d[1] for d in done])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        np.savez(fh, x=x, y=y)
    return x, y


def network() -> Any:
    """The locator network (PyTorch): a small encoder-decoder. In: the frame at a quarter of
    its size (3x120x160, BGR scaled to -0.5..0.5); out: one logit per cell of an eighth of it
    (1x60x80)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    def cbr(i: int, o: int, stride: int = 1) -> Any:
        return nn.Sequential(nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o),
                             nn.ReLU(inplace=True))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.s1 = nn.Sequential(cbr(3, 12, 2), cbr(12, 12))  # 60x80
            self.s2 = nn.Sequential(cbr(12, 24, 2), cbr(24, 24))  # 30x40
            self.s3 = nn.Sequential(cbr(24, 48, 2), cbr(48, 48), cbr(48, 48))  # 15x20
            self.s4 = nn.Sequential(cbr(48, 64, 2), cbr(64, 64))  # 8x10
            self.u3, self.u2, self.u1 = cbr(64 + 48, 32), cbr(32 + 24, 24), cbr(24 + 12, 12)
            self.out = nn.Conv2d(12, 1, 1)

        def forward(self, x: Any) -> Any:
            x1 = self.s1(x)
            x2 = self.s2(x1)
            x3 = self.s3(x2)
            x4 = self.s4(x3)
            y = self.u3(torch.cat([F.interpolate(x4, size=(15, 20), mode="nearest"), x3], 1))
            y = self.u2(torch.cat([F.interpolate(y, scale_factor=2.0, mode="nearest"), x2], 1))
            y = self.u1(torch.cat([F.interpolate(y, scale_factor=2.0, mode="nearest"), x1], 1))
            return self.out(y)

    return Net()


def outline_found(chance: Array, true: Array, within: float = 8.0) -> bool:
    """Whether the likeliest blob of a map, fitted as the locator fits it (before the sides
    go onto the edges in the frame), lies within ``within`` pixels of the true outline."""
    up = cv2.resize(chance, (FRAME_W // 2, FRAME_H // 2), interpolation=cv2.INTER_LINEAR)
    n, labels, stats, _ = cv2.connectedComponentsWithStats((up > 0.5).astype(np.uint8))
    if n < 2:
        return False
    i = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    contours, _ = cv2.findContours((labels == i).astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)
    outline = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float32)
    quad = fit_box(up, fit_sides(outline, cv2.boxPoints(cv2.minAreaRect(outline)))) * 2.0
    return min(float(np.abs(quad - np.roll(t, k, axis=0)).max())
               for t in (true, true[::-1]) for k in range(4)) <= within


def train(x: Array, y: Array, epochs: int, seed: int, log: Any = None) -> Any:
    """Fit the network to the pairs (flips and colour changes of the table added at random)."""
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
            swap = torch.rand(batch, generator=gen) < 0.3  # other table colours
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


def chances(net: Any, x: Array) -> Array:
    """The network's maps of frames at its input size (PyTorch, for checking)."""
    import torch

    with torch.no_grad():
        out = []
        for i in range(0, len(x), 100):
            xb = torch.from_numpy(x[i:i + 100]).float().permute(0, 3, 1, 2) / 255.0 - 0.5
            out.append(torch.sigmoid(net(xb.contiguous())).numpy()[:, 0])
    return np.concatenate(out)


def export(net: Any, path: Path) -> None:
    """Write the network as ONNX, for OpenCV's dnn module."""
    import torch

    net = net.eval().to(memory_format=torch.contiguous_format)
    with warnings.catch_warnings():  # the TorchScript exporter on purpose: OpenCV reads its
        warnings.simplefilter("ignore", DeprecationWarning)  # opset 13 graph
        torch.onnx.export(net, (torch.zeros(1, 3, IN_H, IN_W),), str(path), dynamo=False,
                          opset_version=13, input_names=["frame"], output_names=["chance"])


def main(argv: list[str] | None = None) -> int:
    """Render, train, check and write the locator."""
    ap = argparse.ArgumentParser(prog="python3 -m training.locator",
                                 description="Train the camera's locator network from scenes "
                                 "of the training decks rendered here (touati is held out).")
    ap.add_argument("--out", type=Path, default=LOCATOR_PATH,
                    help="where to write the network (default: the package's locator.onnx)")
    ap.add_argument("--scenes", type=int, default=SCENES,
                    help=f"scenes rendered (default {SCENES})")
    ap.add_argument("--epochs", type=int, default=EPOCHS,
                    help=f"passes over them (default {EPOCHS})")
    ap.add_argument("--jobs", type=int, default=2, help="processes rendering (default 2)")
    ap.add_argument("--threads", type=int, default=2, help="threads training (default 2)")
    ap.add_argument("--leave-out", default="", metavar="DECK,...",
                    help="training decks left out (to measure on decks the network has not "
                    "seen; the network written is then not the one to ship)")
    ap.add_argument("--seed", type=int, default=1, help="the seed of the training (default 1)")
    ap.add_argument("--full-share", type=float, default=FULL_SHARE, metavar="F",
                    help="the share of training scenes filmed at 640x480 and shrunk, as a "
                    "camera's frames are; the rest are filmed at half size, about 7 times "
                    f"faster (default {FULL_SHARE}, the network that ships; --full-share 0 "
                    "--scenes 30500 --epochs 4 takes about 20 minutes instead of 44, but its "
                    "network outlines worse: docs/camera.md)")
    args = ap.parse_args(argv)
    if args.scenes <= 2 * CHECK:
        ap.error(f"--scenes must be more than {2 * CHECK} ({CHECK} are set aside to check)")
    if not 0.0 <= args.full_share <= 1.0:
        ap.error("--full-share must be between 0 and 1")
    try:
        import torch
    except ImportError:
        ap.error("PyTorch is not installed (python3 -m pip install -e '.[train]')")
    left_out = {d for d in args.leave_out.split(",") if d}
    unknown = left_out - set(TRAIN_DECKS)
    if unknown:
        ap.error(f"not training decks: {', '.join(sorted(unknown))}")
    decks = tuple(d for d in TRAIN_DECKS if d not in left_out)
    torch.set_num_threads(args.threads)
    t0 = time.monotonic()
    seeds = range(FIRST_SEED, FIRST_SEED + CHECK)
    check_x, _ = scenes(seeds.start, len(seeds), decks, args.jobs, full=True)
    # the scenes after those set aside
    count = args.scenes - CHECK
    full = round(count * args.full_share)
    parts = [scenes(first, n, decks, args.jobs, full=whole)  # the last seeds filmed whole
             for first, n, whole in ((seeds.stop, count - full, False),
                                     (seeds.stop + count - full, full, True)) if n]
    x, y = (parts[0] if len(parts) == 1 else
            (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])))
    print(f"{len(x)} scenes of {len(decks)} decks, and {len(check_x)} set aside, in "
          f"{time.monotonic() - t0:.0f} s", file=sys.stderr)
    true = [train_scene(s, decks) for s in seeds]
    outlines = [(i, corners_in_frame(sc, sc.cards[-1])) for i, sc in enumerate(true)
                if sc.cards]

    def log(epoch: int, loss: float, net: Any) -> None:
        net.eval()
        maps = chances(net, check_x)
        found = sum(outline_found(maps[i], q) for i, q in outlines)
        print(f"epoch {epoch + 1}: loss {loss:.4f}, outline within 8 px in {found} of "
              f"{len(outlines)} scenes set aside ({time.monotonic() - t0:.0f} s)",
              file=sys.stderr)

    net = train(x, y, args.epochs, args.seed, log)
    export(net, args.out)
    print(f"wrote {args.out} ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
