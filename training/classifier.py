"""Train the classifier (:mod:`hardware.camera.reader.classify`) on cards filmed here; writes
``hardware/camera/reader/classifier.onnx``.

``python3 -m training.classifier [--fold K] [--out PATH] [--per-real N] [--per-drawn N]
[--epochs N] [--jobs N] [--threads N] [--seed S]``

Needs PyTorch and onnx (``python3 -m pip install -e '.[train]'``; the recogniser runs what it
writes with OpenCV alone) and the font packages of ``training/README.md`` (the drawn decks).

The decks are issue 33's allowed decks that are decks of French playing cards
(:data:`hardware.camera.synthetic.artwork.REAL_DECKS`) and the decks drawn here
(``drawn-1`` … ``drawn-120``). Each card is filmed alone by the virtual camera (its outline a
little off, as the locator finds it) and read as the recogniser reads it: its four corner
views (:mod:`training.samples`). The network learns, for each view, the rank glyph it shows
upright (or none) and the card's suit.

``--fold K`` (1 to 5) leaves out the decks of fold K (:data:`FOLDS`: decks that share artwork
are in one fold) and writes ``.cache/camera/models/classifier-fold-K.onnx``: the
leave-decks-out figures of ``bench/camera_decks.py`` read each fold's decks with the network
that never saw them. Without ``--fold`` every deck is used and the shipped file is written.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from hardware.camera.reader.classify import CLASSIFIER_PATH, FEATURES, GLYPHS
from hardware.camera.reader.warp import VIEW_H, VIEW_W
from hardware.camera.synthetic.artwork import (
    DRAWN_DECKS,
    FOLDS,
    REAL_DECKS,
    cache_dir,
    render_deck,
)
from training.manifest import REPRODUCIBLE, record
from training.samples import deck_samples

DRAWN = tuple(f"drawn-{n}" for n in range(1, DRAWN_DECKS + 1))
#: Cards filmed per card of a real deck and of a drawn deck.
PER_REAL, PER_DRAWN = 30, 10
EPOCHS, BATCH = 6, 256
#: The share of views printed anew in one ink of a random colour (:func:`recolour`): none by
#: default, as half cost small cards more than it saved on oddly coloured decks (docs/camera.md).
RECOLOUR = 0.0
#: The share of views turned on their side and labelled "no glyph" (:func:`sideways`).
SIDEWAYS = 0.0
#: The share of views blurred further (:func:`blurred`), and the most blur (Gaussian sigma,
#: pixels of the view).
BLUR, MOST_BLUR = 0.0, 3.0
#: The share of views smeared as by the camera's motion (:func:`smeared`), and the longest
#: smear (pixels of the view). In the bench's scenes a small card in a 1280x960 frame is
#: smeared by up to 14 pixels of the warped card; in the filmed samples, each card filling
#: most of its frame, by 3 at most.
MOTION, MOST_MOTION = 0.0, 10.0


def fold_path(k: int) -> Path:
    """Where the network of fold ``k`` is written."""
    return cache_dir() / "models" / f"classifier-fold-{k}.onnx"


def network() -> Any:
    """The classifier (PyTorch): six 3x3 convolutions (three of them halving the view), the
    mean over the view, then the glyph (``len(GLYPHS)`` + none) and suit heads. In: corner
    views, 3 x VIEW_H x VIEW_W, BGR scaled to -0.5..0.5; out: glyph and suit logits and the
    features (what an enrolled deck is matched on)."""
    from torch import nn

    def cbr(i: int, o: int, stride: int = 1) -> Any:
        return nn.Sequential(nn.Conv2d(i, o, 3, stride, 1, bias=False), nn.BatchNorm2d(o),
                             nn.ReLU(inplace=True))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(cbr(3, 16, 2), cbr(16, 24), cbr(24, 32, 2), cbr(32, 48),
                                      cbr(48, 64, 2), cbr(64, FEATURES),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.glyph = nn.Linear(FEATURES, len(GLYPHS) + 1)
            self.suit = nn.Linear(FEATURES, 4)

        def forward(self, x: Any) -> tuple[Any, Any, Any]:
            f = self.body(x)
            return self.glyph(f), self.suit(f), f

    return Net()


def _make(args: tuple[str, int]) -> tuple[str, int]:
    import cv2

    cv2.setNumThreads(1)
    deck, per = args
    render_deck(deck)
    v, _, _ = deck_samples(deck, per)
    return deck, len(v)


def samples(decks: list[str], jobs: int) -> tuple[Any, Any, Any]:
    """Every deck's samples (made where the cache has none), concatenated."""
    todo = [(d, PER_DRAWN if d.startswith("drawn-") else PER_REAL) for d in decks]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            for deck, n in pool.map(_make, todo):
                print(f"  {deck}: {n} cards", file=sys.stderr, flush=True)
    parts = [deck_samples(d, per) for d, per in todo]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def recolour(xb: Any, share: float, gen: Any) -> Any:
    """Views (N x 3 x H x W, 0..1) of which about ``share`` are printed anew: their greys
    stretched from one ink of a random colour (the darkest grey) to a paper of a random light
    colour (the lightest). Red and black ink then look alike, so that the suit is learnt from
    its shape as well: some decks print spades red and hearts green."""
    import torch

    if share <= 0:
        return xb  # no draws either: the other changes' draws stay those of before
    n = xb.shape[0]
    pick = torch.rand(n, 1, 1, 1, generator=gen) < share
    grey = xb.mean(dim=1, keepdim=True)
    lo = grey.amin(dim=(2, 3), keepdim=True)
    hi = grey.amax(dim=(2, 3), keepdim=True)
    g = (grey - lo) / (hi - lo).clamp_min(0.05)
    ink = torch.rand(n, 3, 1, 1, generator=gen) * 0.55
    paper = 1.0 - torch.rand(n, 3, 1, 1, generator=gen) * 0.25
    return torch.where(pick, ink + (paper - ink) * g, xb)


def blurred(xb: Any, share: float, gen: Any) -> Any:
    """Views (N x 3 x H x W) of which about ``share`` are blurred by a Gaussian of sigma 0.5 to
    :data:`MOST_BLUR` pixels, labels kept: blurred past 1.5-2 pixels, a club's lobes merge and
    the network had read clubs of decks it never saw as spades at 0.99 or more; shown blurred
    clubs as clubs, it is to be as unsure of them as they are alike."""
    import torch
    from torch.nn import functional as F

    if share <= 0:
        return xb  # no draws either: the other changes' draws stay those of before
    n, c, h, w = xb.shape
    pick = torch.rand(n, generator=gen) < share
    sigma = torch.empty(n).uniform_(0.5, MOST_BLUR, generator=gen)
    if not bool(pick.any()):
        return xb
    radius = int(np.ceil(3 * MOST_BLUR))
    t = torch.arange(-radius, radius + 1, dtype=torch.float32)
    k = torch.exp(-0.5 * (t[None] / sigma[pick][:, None]) ** 2)
    k = (k / k.sum(dim=1, keepdim=True)).repeat_interleave(c, dim=0)  # (m*c) x taps
    m = int(pick.sum())
    flat = F.pad(xb[pick].reshape(1, m * c, h, w), (radius, radius, radius, radius),
                 mode="replicate")
    flat = F.conv2d(flat, k[:, None, None, :], groups=m * c)
    flat = F.conv2d(flat, k[:, None, :, None], groups=m * c)
    out = xb.clone()
    out[pick] = flat.reshape(m, c, h, w)
    return out


def smeared(xb: Any, share: float, gen: Any) -> Any:
    """Views (N x 3 x H x W) of which about ``share`` are smeared along a line of 1.5 to
    :data:`MOST_MOTION` pixels at any angle (a camera's motion blur), labels kept."""
    import torch
    from torch.nn import functional as F

    if share <= 0:
        return xb
    n, c, h, w = xb.shape
    pick = torch.rand(n, generator=gen) < share
    length = torch.empty(n).uniform_(1.5, MOST_MOTION, generator=gen)
    angle = torch.empty(n).uniform_(0.0, float(np.pi), generator=gen)
    if not bool(pick.any()):
        return xb
    radius = int(np.ceil(MOST_MOTION / 2))
    t = torch.arange(-radius, radius + 1, dtype=torch.float32)
    yy, xx = torch.meshgrid(t, t, indexing="ij")
    ux, uy = torch.cos(angle[pick])[:, None, None], torch.sin(angle[pick])[:, None, None]
    along = xx[None] * ux + yy[None] * uy
    across = (yy[None] * ux - xx[None] * uy).abs()
    half = length[pick][:, None, None] / 2
    # each tap weighted by how much of a one-pixel-wide segment covers it
    k = (1 - across).clamp(min=0) * (half + 0.5 - along.abs()).clamp(0, 1)
    k = (k / k.sum(dim=(1, 2), keepdim=True)).repeat_interleave(c, dim=0)
    m = int(pick.sum())
    flat = F.pad(xb[pick].reshape(1, m * c, h, w), (radius, radius, radius, radius),
                 mode="replicate")
    flat = F.conv2d(flat, k[:, None], groups=m * c)
    out = xb.clone()
    out[pick] = flat.reshape(m, c, h, w)
    return out


def sideways(xb: Any, yb: Any, share: float, gen: Any) -> tuple[Any, Any]:
    """Views (N x 3 x H x W) of which about ``share`` are turned a quarter either way (drawn
    back to H x W) and labelled as showing no glyph upright: an outline that makes a card
    nearly square, or half a card, warps its index on its side, and the network is to say
    "none" there rather than read a rank (it read such an index as a 10, surely)."""
    import torch
    from torch.nn import functional as F

    if share <= 0:
        return xb, yb  # no draws either: the other changes' draws stay those of before
    n, _, h, w = xb.shape
    pick = torch.rand(n, generator=gen) < share
    turn = torch.rand(n, generator=gen) < 0.5
    out, labels = xb.clone(), yb.clone()
    for k, mask in ((1, pick & turn), (3, pick & ~turn)):
        if bool(mask.any()):
            turned = torch.rot90(xb[mask], k, dims=(2, 3))
            out[mask] = F.interpolate(turned, size=(h, w), mode="bilinear",
                                      align_corners=False)
    labels[pick] = len(GLYPHS)
    return out, labels


def train(views: Any, glyphs: Any, suits: Any, epochs: int, seed: int, log: Any = None,
          recolour_share: float = RECOLOUR, sideways_share: float = SIDEWAYS,
          blur_share: float = BLUR, motion_share: float = MOTION) -> Any:
    """Fit the network to the samples (each card's four views, each a sample of its own),
    with the views' light, contrast and colour changed at random, ``recolour_share`` of
    them printed in one ink (:func:`recolour`), ``sideways_share`` turned on their side
    (:func:`sideways`), ``blur_share`` blurred (:func:`blurred`) and ``motion_share``
    smeared (:func:`smeared`)."""
    import torch
    from torch.nn import functional as F

    torch.manual_seed(seed)
    net = network()
    x = views.reshape(-1, VIEW_H, VIEW_W, 3)
    yg = glyphs.reshape(-1)
    ys = np.repeat(suits, 4)
    steps = epochs * (len(x) // BATCH)
    opt = torch.optim.AdamW(net.parameters(), 3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=steps, pct_start=0.15)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(len(x))
        total, t0 = 0.0, time.monotonic()
        for i in range(0, len(x) - BATCH + 1, BATCH):
            idx = np.sort(order[i:i + BATCH])
            xb = torch.from_numpy(x[idx]).float().permute(0, 3, 1, 2) / 255.0
            xb = recolour(xb, recolour_share, gen)
            xb, gb = sideways(xb, torch.from_numpy(yg[idx]), sideways_share, gen)
            xb = blurred(xb, blur_share, gen)
            xb = smeared(xb, motion_share, gen)
            gain = torch.empty(BATCH, 3, 1, 1).uniform_(0.85, 1.15, generator=gen)
            contrast = torch.empty(BATCH, 1, 1, 1).uniform_(0.6, 1.3, generator=gen)
            mean = xb.mean(dim=(1, 2, 3), keepdim=True)
            xb = ((xb - mean) * contrast + mean) * gain
            xb = xb + 0.02 * torch.randn(xb.shape, generator=gen)
            xb = xb.clamp(0, 1) - 0.5
            g, s, _ = net(xb)
            loss: Any = F.cross_entropy(g, gb) + \
                F.cross_entropy(s, torch.from_numpy(ys[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.item())
        if log is not None:
            n = max(1, len(x) // BATCH)
            print(f"epoch {epoch + 1}/{epochs}: loss {total / n:.4f} "
                  f"({time.monotonic() - t0:.0f} s)", file=log, flush=True)
    return net


def export(net: Any, path: Path) -> None:
    """Write the network as ONNX, as OpenCV's dnn module reads it."""
    import torch

    net.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(4, 3, VIEW_H, VIEW_W)
    torch.onnx.export(net, (dummy,), str(path), input_names=["views"],
                      output_names=["glyph", "suit", "features"], opset_version=13,
                      dynamic_axes={"views": {0: "n"}}, dynamo=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.classifier", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fold", type=int, choices=range(1, len(FOLDS) + 1),
                    help="leave out the decks of this fold (for leave-decks-out figures)")
    ap.add_argument("--out", type=Path, help="where to write (default: the shipped file, or "
                    "the fold's file in the cache)")
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--jobs", type=int, default=2, help="processes filming the samples")
    ap.add_argument("--threads", type=int, default=2, help="PyTorch's threads")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--recolour", type=float, default=RECOLOUR, metavar="SHARE",
                    help="the share of views printed anew in one ink of a random colour "
                    f"(default {RECOLOUR}; 0: none)")
    ap.add_argument("--sideways", type=float, default=SIDEWAYS, metavar="SHARE",
                    help="the share of views turned on their side and labelled as showing "
                    f"no glyph (default {SIDEWAYS}; 0: none)")
    ap.add_argument("--blur", type=float, default=BLUR, metavar="SHARE",
                    help="the share of views blurred further, by a Gaussian of sigma 0.5 to "
                    f"{MOST_BLUR} pixels (default {BLUR}; 0: none)")
    ap.add_argument("--motion", type=float, default=MOTION, metavar="SHARE",
                    help="the share of views smeared as by the camera's motion, along 1.5 to "
                    f"{MOST_MOTION} pixels (default {MOTION}; 0: none)")
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        ap.error("PyTorch is not installed (python3 -m pip install -e '.[train]')")

    torch.set_num_threads(args.threads)
    left_out = set(FOLDS[args.fold - 1]) if args.fold else set()
    real = [d for d in REAL_DECKS if d not in left_out]
    out = args.out or (fold_path(args.fold) if args.fold else CLASSIFIER_PATH)
    t0 = time.monotonic()
    views, glyphs, suits = samples(real + list(DRAWN), args.jobs)
    print(f"{len(views)} cards ({len(real)} real decks, {len(DRAWN)} drawn) in "
          f"{time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    net = train(views, glyphs, suits, args.epochs, args.seed, log=sys.stderr,
                recolour_share=args.recolour, sideways_share=args.sideways,
                blur_share=args.blur, motion_share=args.motion)
    export(net, out)
    record(out, "python3 -m training.classifier", REPRODUCIBLE)
    print(f"wrote {out} ({time.monotonic() - t0:.0f} s in all)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
