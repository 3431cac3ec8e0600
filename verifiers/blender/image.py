"""Compare a rendered preview with a reference image: PSNR and SSIM.

Both images are read as RGB in [0, 1] and must have the same size.

- **PSNR** = ``10 log10(1 / MSE)`` dB, MSE over all pixels and channels; infinite for
  identical images (reported as 99.0 so it stays JSON).
- **SSIM** (Wang, Bovik, Sheikh, Simoncelli, "Image quality assessment: from error
  visibility to structural similarity", IEEE TIP 2004) on luminance
  ``Y = 0.299 R + 0.587 G + 0.114 B``, with an 11-tap Gaussian window (sigma 1.5),
  ``C1 = (0.01)^2``, ``C2 = (0.03)^2``:
  ``SSIM = mean[(2 mu_x mu_y + C1)(2 sigma_xy + C2)
  / ((mu_x^2 + mu_y^2 + C1)(sigma_x^2 + sigma_y^2 + C2))]``.

    >>> import numpy as np
    >>> a = np.zeros((16, 16, 3)); b = a + 0.1
    >>> round(psnr(a, b), 3), round(ssim(a, a), 3)
    (20.0, 1.0)
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter

__all__ = ["psnr", "read_image", "ssim"]

_MAX_PIXELS = 4096 * 4096


def read_image(data: bytes) -> np.ndarray:
    """PNG (or any PIL format) bytes -> float array (h, w, 3) in [0, 1]."""
    Image.MAX_IMAGE_PIXELS = _MAX_PIXELS  # refuse decompression bombs
    with Image.open(io.BytesIO(data)) as img:
        return np.asarray(img.convert("RGB"), dtype=np.float64) / 255.0


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """Peak signal-to-noise ratio in dB for images in [0, 1]; 99.0 when identical."""
    mse = float(np.mean((a - b) ** 2))
    return 99.0 if mse == 0.0 else min(99.0, 10.0 * np.log10(1.0 / mse))


def ssim(a: np.ndarray, b: np.ndarray) -> float:
    """Mean structural similarity of the luminance (see the module docstring)."""
    weights = np.array([0.299, 0.587, 0.114])
    x, y = a @ weights, b @ weights

    def blur(img: np.ndarray) -> np.ndarray:
        return gaussian_filter(img, sigma=1.5, truncate=3.5)  # radius 5: 11 taps

    mu_x, mu_y = blur(x), blur(y)
    var_x = blur(x * x) - mu_x**2
    var_y = blur(y * y) - mu_y**2
    cov = blur(x * y) - mu_x * mu_y
    c1, c2 = 0.01**2, 0.03**2
    index = ((2 * mu_x * mu_y + c1) * (2 * cov + c2)) / (
        (mu_x**2 + mu_y**2 + c1) * (var_x + var_y + c2)
    )
    return float(index.mean())
