"""The classifier's training (training/classifier.py): some views printed anew in one ink of a
random colour, so that a suit is learnt from its shape and not from its colour alone; some
turned on their side and labelled as showing no glyph; some blurred; some smeared as by the
camera's motion. Needs PyTorch (the train
extra); skipped without it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hardware.camera.reader.classify import GLYPHS  # noqa: E402
from training.classifier import (  # noqa: E402
    MOST_BLUR,
    MOST_MOTION,
    blurred,
    recolour,
    sideways,
    smeared,
)


def _view(ink: tuple[float, float, float]) -> np.ndarray:
    """A cream view with a blot of the ink in its middle (3 x 20 x 16)."""
    v = np.empty((3, 20, 16), np.float32)
    v[:] = np.array([0.95, 0.97, 0.98], np.float32)[:, None, None]
    v[:, 6:14, 4:12] = np.array(ink, np.float32)[:, None, None]
    return v


def test_a_recoloured_view_no_longer_tells_red_ink_from_black() -> None:
    red, black = _view((0.1, 0.1, 0.8)), _view((0.05, 0.05, 0.05))  # BGR
    xb = torch.from_numpy(np.stack([red, black]))
    # the same draws for both views: the same ink and paper
    out_red = recolour(xb[:1], 1.0, torch.Generator().manual_seed(5))
    out_black = recolour(xb[1:], 1.0, torch.Generator().manual_seed(5))
    assert torch.allclose(out_red, out_black, atol=1e-6)
    # and the blot stays darker than the paper around it
    grey = out_red[0].mean(dim=0)
    assert float(grey[6:14, 4:12].mean()) + 0.2 < float(grey[:4].mean())


def test_recolouring_takes_about_the_share_asked_and_none_at_zero() -> None:
    xb = torch.from_numpy(np.stack([_view((0.1, 0.1, 0.8))] * 400))
    gen = torch.Generator().manual_seed(1)
    assert torch.equal(recolour(xb, 0.0, gen), xb)
    # and at none it draws nothing, so that training without it draws as it did before
    fresh = torch.Generator().manual_seed(1)
    assert torch.equal(torch.rand(3, generator=gen), torch.rand(3, generator=fresh))
    changed = (recolour(xb, 0.5, torch.Generator().manual_seed(1)) != xb).flatten(1).any(1)
    assert 150 < int(changed.sum()) < 250


def test_a_view_turned_on_its_side_shows_no_glyph_and_keeps_its_size() -> None:
    v = _view((0.05, 0.05, 0.05))
    v[:, 1:3, 1:12] = 0.0  # a bar along the top: turned, it runs down a side
    xb = torch.from_numpy(np.stack([v] * 200))
    yb = torch.full((200,), 6)
    out, labels = sideways(xb, yb, 1.0, torch.Generator().manual_seed(2))
    assert out.shape == xb.shape and bool((labels == len(GLYPHS)).all())
    dark_top = out[:, :, :3].mean(dim=(1, 2, 3))  # the top rows: paper now
    assert bool((dark_top > float(xb[0, :, :3].mean()) + 0.1).all())
    turns = {int(out[k, 0, :, :3].mean() < out[k, 0, :, -3:].mean()) for k in range(200)}
    assert turns == {0, 1}  # both ways round
    # about the share asked, and nothing drawn or changed at none
    gen = torch.Generator().manual_seed(1)
    same, same_labels = sideways(xb, yb, 0.0, gen)
    assert same is xb and same_labels is yb
    assert torch.equal(torch.rand(3, generator=gen),
                       torch.rand(3, generator=torch.Generator().manual_seed(1)))
    _, some = sideways(xb, yb, 0.3, torch.Generator().manual_seed(3))
    assert 30 < int((some == len(GLYPHS)).sum()) < 90


def _none_at_zero_about_a_share_else(augment: Any, xb: Any, low: int, high: int) -> None:
    """``augment`` at share 0 changes nothing and draws nothing (the other changes' draws
    stay those of before); at 0.3 it changes between ``low`` and ``high`` of the views."""
    gen = torch.Generator().manual_seed(1)
    assert augment(xb, 0.0, gen) is xb
    assert torch.equal(torch.rand(3, generator=gen),
                       torch.rand(3, generator=torch.Generator().manual_seed(1)))
    some = (augment(xb, 0.3, torch.Generator().manual_seed(3)) != xb).flatten(1).any(1)
    assert low < int(some.sum()) < high


def test_a_blurred_view_keeps_its_ink_and_spreads_it_and_none_is_drawn_at_zero() -> None:
    v = _view((0.05, 0.05, 0.05))
    xb = torch.from_numpy(np.stack([v] * 300))
    out = blurred(xb, 1.0, torch.Generator().manual_seed(4))
    assert out.shape == xb.shape
    # the paper's edge is repeated, so the ink is kept, only spread: the blot's corner lighter,
    # the paper just beyond it darker, and its middle by as much as each view's own sigma
    assert torch.allclose(out.mean(dim=(2, 3)), xb.mean(dim=(2, 3)), atol=0.02)
    corner, beyond, middle = out[:, 0, 6, 4], out[:, 0, 5, 3], out[:, 0, 10, 8]
    assert bool((corner > float(xb[0, 0, 6, 4]) + 0.1).all())
    assert bool((beyond < float(xb[0, 0, 5, 3]) - 0.005).all())
    assert float(middle.max() - middle.min()) > 0.1  # sigmas from 0.5 to MOST_BLUR
    assert MOST_BLUR >= 2.0  # past 1.5-2 px a club's lobes merge (docs/camera.md)
    _none_at_zero_about_a_share_else(blurred, xb, 60, 120)


def test_a_smeared_view_keeps_its_ink_and_draws_it_out_along_one_line() -> None:
    xb = torch.zeros(400, 3, 31, 31)
    xb[:, :, 15, 15] = 1.0  # one bright dot in each view
    out = smeared(xb, 1.0, torch.Generator().manual_seed(5))
    assert out.shape == xb.shape
    assert torch.allclose(out.sum(dim=(2, 3)), xb.sum(dim=(2, 3)), atol=1e-4)  # ink kept
    lit = out[:, 0] > 1e-3
    ys, xs = torch.meshgrid(torch.arange(31.0), torch.arange(31.0), indexing="ij")
    spans = []
    for k in range(len(out)):
        w = out[k, 0][lit[k]]
        p = torch.stack([xs[lit[k]], ys[lit[k]]], 1) - 15.0
        cov = (p * w[:, None]).T @ p / w.sum()
        big, small = (float(e) for e in torch.linalg.eigvalsh(cov).flip(0))
        assert small < 0.35  # a line one pixel wide, at any angle
        spans.append((12 * big) ** 0.5)  # a uniform line's length from its spread
    assert min(spans) < 3.0 and max(spans) > 0.8 * MOST_MOTION  # lengths 1.5 to MOST_MOTION
    assert max(spans) <= MOST_MOTION + 1.5
    _none_at_zero_about_a_share_else(smeared, xb, 80, 160)
