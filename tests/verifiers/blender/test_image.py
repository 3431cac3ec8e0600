"""PSNR and SSIM against hand-computed values."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from rewardsmith.verifiers.blender.image import psnr, read_image, ssim


def test_psnr_of_a_constant_offset() -> None:
    a = np.zeros((8, 8, 3))
    assert psnr(a, a + 0.1) == pytest.approx(20.0)  # MSE 0.01 -> 10 log10(100)
    assert psnr(a, a + 0.01) == pytest.approx(40.0)
    assert psnr(a, a) == 99.0


def test_ssim_of_constant_images_is_the_luminance_term() -> None:
    # No variance: SSIM = (2ab + C1) / (a^2 + b^2 + C1), with C1 = 0.01^2.
    a, b = 0.2, 0.6
    x, y = np.full((32, 32, 3), a), np.full((32, 32, 3), b)
    c1 = 0.01**2
    assert ssim(x, y) == pytest.approx((2 * a * b + c1) / (a * a + b * b + c1), rel=1e-9)
    assert ssim(x, x) == pytest.approx(1.0)


def test_ssim_drops_with_noise_and_is_symmetric() -> None:
    rng = np.random.default_rng(0)
    img = rng.random((48, 48, 3))
    noisy = np.clip(img + rng.normal(0, 0.2, img.shape), 0, 1)
    assert 0 < ssim(img, noisy) < 0.9
    assert ssim(img, noisy) == pytest.approx(ssim(noisy, img))


def test_read_image_round_trip() -> None:
    pixels = (np.arange(4 * 5 * 3) % 256).astype(np.uint8).reshape(4, 5, 3)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    assert np.array_equal(read_image(buffer.getvalue()), pixels / 255.0)


def test_decompression_bomb_is_refused() -> None:
    buffer = io.BytesIO()
    Image.new("1", (20000, 20000)).save(buffer, format="PNG")  # 50 kB file, 400 Mpx
    with pytest.raises(Image.DecompressionBombError):
        read_image(buffer.getvalue())
