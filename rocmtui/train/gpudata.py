"""The dataset as uint8 NCHW tensors on the training device; batches, normalisation and augmentation there.

Nothing here syncs with the GPU: the permutation, the gathers and the augmentation are all device work. An
epoch's images are gathered and augmented in one pass at its start (``epoch_images``); its steps then take
slices of them, so a step launches two copies and its graph, not a dozen small kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from rocmtui.train.dataset import Arrays

# Per-channel mean and std of pixel/255 over the training split (CIFAR-10, MNIST).
CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
MNIST_MEAN, MNIST_STD = (0.1307,), (0.3081,)


@dataclass
class DeviceData:
    """Both splits on ``device`` as uint8 NCHW images and int64 labels."""

    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    classes: tuple[str, ...]

    @property
    def channels(self) -> int:
        return int(self.train_x.shape[1])

    @property
    def size(self) -> int:
        return int(self.train_x.shape[-1])


def to_device(arrays: Arrays, device: torch.device) -> DeviceData:
    """One host-to-device copy per array; images go NHWC -> NCHW on the device."""

    def images(a: object) -> torch.Tensor:
        return torch.from_numpy(a).to(device).permute(0, 3, 1, 2).contiguous()

    def labels(a: object) -> torch.Tensor:
        return torch.from_numpy(a).to(device=device, dtype=torch.int64)

    return DeviceData(
        images(arrays.train_images),
        labels(arrays.train_labels),
        images(arrays.test_images),
        labels(arrays.test_labels),
        arrays.classes,
    )


def channel_stats(channels: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The per-channel mean and std of pixel/255 for images of ``channels`` channels (CIFAR-10's or MNIST's)."""
    return (CIFAR_MEAN, CIFAR_STD) if channels == 3 else (MNIST_MEAN, MNIST_STD)


class Normalizer:
    """uint8 -> float ``(x/255 - mean)/std`` as one multiply-add kernel; ``plain`` keeps ToTensor's x/255."""

    def __init__(self, channels: int, device: torch.device, plain: bool) -> None:
        mean, std = channel_stats(channels)
        if plain:
            mean, std = (0.0,) * channels, (1.0,) * channels
        std_t = torch.tensor(std, device=device).view(1, -1, 1, 1)
        self.scale = 1.0 / (255.0 * std_t)
        self.shift = -torch.tensor(mean, device=device).view(1, -1, 1, 1) / std_t

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addcmul(self.shift, x, self.scale)  # reads uint8, writes float32: one kernel


def permutation(n: int, generator: torch.Generator) -> torch.Tensor:
    """A shuffled index order, drawn on the generator's device."""
    return torch.randperm(n, generator=generator, device=generator.device)


def batch_rows(rows: torch.Tensor, step: int, batch_size: int, full: bool) -> torch.Tensor:
    """Batch ``step`` of ``rows`` (an epoch's order, images or labels): a slice, no copy; with ``full`` the last
    batch wraps to the start to keep its size fixed."""
    start = step * batch_size
    part = rows[start : start + batch_size]
    if full and part.shape[0] < batch_size:
        part = torch.cat((part, rows[: batch_size - part.shape[0]]))
    return part


@dataclass(frozen=True)
class Augmentation:
    """A random translation of up to ``pad`` pixels, edges zero-filled or reflected, and a horizontal flip:
    drawn per image and batch, or (``alternating_flip``) drawn once per image and inverted every other epoch,
    as airbench does: every image is seen both ways round in any two epochs in a row."""

    pad: int
    reflect: bool = False
    alternating_flip: bool = False
    jitter: float = 0.0
    """Brightness and contrast jitter: each image shifted by up to this many standard deviations and its
    contrast about the data set's mean scaled by up to 1 +- this (0: none)."""


Placement = Callable[..., torch.Tensor]
"""``place_images`` itself, or the same compiled into one fused kernel (``train.fused.compiled_placement``)."""


def epoch_images(  # noqa: PLR0917 - the epoch's parts, each its own argument
    images: torch.Tensor,
    order: torch.Tensor,
    generator: torch.Generator,
    aug: Augmentation | None,
    flips: torch.Tensor | None = None,
    crop: int | None = None,
    placement: Placement | None = None,
) -> torch.Tensor:
    """The epoch's training images in ``order``, augmented by ``aug`` (None: as they are), in one gather;
    ``crop``: cut to ``crop`` x ``crop`` pixels (``augment``'s ``size``); ``placement``: a compiled
    ``place_images`` (None: the eager one)."""
    if aug is None:
        return images[order]
    return augment(images, generator, aug, flips, which=order, size=crop, placement=placement)


def alternating_flips(base: torch.Tensor, idx: torch.Tensor, epoch: int) -> torch.Tensor:
    """Which images of the batch ``idx`` are mirrored in ``epoch``: their first-epoch draw, inverted in odd epochs."""
    flips = base[idx]
    return ~flips if epoch % 2 else flips


def augment(  # noqa: PLR0917 - the batch's parts, each its own argument
    x: torch.Tensor,
    generator: torch.Generator,
    aug: Augmentation,
    flips: torch.Tensor | None = None,
    which: torch.Tensor | None = None,
    size: int | None = None,
    placement: Placement | None = None,
) -> torch.Tensor:
    """``aug`` applied to a whole uint8 batch; ``flips`` (one bool per image) instead of random flips;
    ``which``: the images of ``x`` to take, in that order (None: all of them), as ``augment(x[which])``;
    ``size``: square crops of this side (None: the images' own size), placed anywhere in the image moved by
    up to ``aug.pad`` pixels, so that objects keep their scale and a crop sees less of the scene.

    The random draws are made here, on ``generator``, in one order whatever does the rest; the images are then
    cut, mirrored and jittered by ``placement`` (``place_images``, eager or compiled).
    """
    _, _, h, w = x.shape
    n = x.shape[0] if which is None else int(which.shape[0])
    dev, pad = x.device, aug.pad
    side = min(h, w) if size is None else size
    if not 0 < side <= min(h, w):
        raise ValueError(f"a crop of {side} px does not fit {h}x{w} images")
    out_h, out_w = (h, w) if size is None else (side, side)
    # one draw for both axes: at the images' own size the range is -pad..pad, the translation alone
    shifts = torch.randint(-pad, pad + 1 + min(h, w) - side, (2, n), generator=generator, device=dev)
    if flips is None:
        flips = torch.rand(n, generator=generator, device=dev) < 0.5
    draws = jitter_draws(n, generator, aug.jitter, dev) if aug.jitter > 0 else None
    # compiled, the jitter needs no parts: its floats stay in the kernel's registers
    place, chunk = (place_images, JITTER_CHUNK) if placement is None else (placement, None)
    return place(x, shifts, flips, which, draws, out_h=out_h, out_w=out_w, pad=pad, reflect=aug.reflect, chunk=chunk)


def place_images(
    x: torch.Tensor,
    shifts: torch.Tensor,
    flips: torch.Tensor,
    which: torch.Tensor | None,
    draws: torch.Tensor | None,
    *,
    out_h: int,
    out_w: int,
    pad: int,
    reflect: bool,
    chunk: int | None,
) -> torch.Tensor:
    """The images ``which`` of ``x`` (all when None), each moved by its ``shifts`` (rows, columns), mirrored
    where ``flips``, cut to ``out_h`` x ``out_w`` and jittered by its ``draws`` (None: not jittered; ``chunk``
    images at a time, None: all at once). No random draw: the same inputs give the same images.

    One gather with per-image offsets (through a padded copy for zero fill, through reflected indexes otherwise)
    that also reads a mirrored image's columns backwards, and picks the images.
    """
    _, _, h, w = x.shape
    n, dev = int(flips.shape[0]), x.device
    j = torch.arange(out_w, device=dev).view(1, out_w)
    j = torch.where(flips.view(n, 1), (out_w - 1) - j, j)
    rows = torch.arange(out_h, device=dev).view(1, out_h) + shifts[0].view(n, 1)
    cols = j + shifts[1].view(n, 1)
    if reflect:
        source, rows, cols = x, _reflected(rows, h), _reflected(cols, w)
    else:
        source, rows, cols = torch.nn.functional.pad(x, (pad, pad, pad, pad)), rows + pad, cols + pad
    batch = (torch.arange(n, device=dev) if which is None else which).view(n, 1, 1, 1)
    chans = torch.arange(x.shape[1], device=dev).view(1, -1, 1, 1)
    out = source[batch, chans, rows.view(n, 1, out_h, 1), cols.view(n, 1, 1, out_w)]
    return out if draws is None else jitter_with(out, draws, chunk)


JITTER_CHUNK = 8192
"""Images jittered at once with eager kernels: their float copy is 100 MB for CIFAR-10's, where a whole epoch's
would be 600 MB."""


def jittered(x: torch.Tensor, generator: torch.Generator, amount: float) -> torch.Tensor:
    """uint8 images with their brightness and contrast changed, per image: ``((z + b) * c)`` on the normalised
    values ``z``, ``b`` and ``c - 1`` uniform in ``[-amount, amount]``, written back as clamped pixels (as
    torchvision's ColorJitter clamps)."""
    return jitter_with(x, jitter_draws(int(x.shape[0]), generator, amount, x.device), JITTER_CHUNK)


def jitter_draws(n: int, generator: torch.Generator, amount: float, device: torch.device) -> torch.Tensor:
    """Each image's brightness shift ``b`` and contrast change ``c - 1`` (``jittered``), uniform in
    ``[-amount, amount]``: shape (2, n, 1, 1, 1)."""
    return torch.rand(2, n, 1, 1, 1, generator=generator, device=device) * (2 * amount) - amount


def jitter_with(x: torch.Tensor, draws: torch.Tensor, chunk: int | None) -> torch.Tensor:
    """``x`` jittered by ``draws`` (``jitter_draws``), ``chunk`` images at a time (None: all at once)."""
    channels = x.shape[1]
    mean, std = (torch.tensor(v, device=x.device).view(1, -1, 1, 1) * 255 for v in channel_stats(channels))
    contrast = 1 + draws[1]
    offset = (draws[0] * std - mean) * contrast + mean + 0.5  # per image and channel; + 0.5: the cast rounds
    if chunk is None:
        return torch.addcmul(offset, x, contrast).clamp_(0, 255).to(torch.uint8)
    out = torch.empty_like(x)
    for start in range(0, int(x.shape[0]), chunk):  # floats for a part at a time: an epoch's would be 4 bytes a pixel
        part = slice(start, start + chunk)
        # three passes (multiply-add, clamp, cast) where the formula written out takes eight
        out[part] = torch.addcmul(offset[part], x[part], contrast[part]).clamp_(0, 255)
    return out


def _reflected(index: torch.Tensor, size: int) -> torch.Tensor:
    """Indexes outside ``0..size-1`` mirrored back inside, without repeating the edge (``F.pad``'s reflect)."""
    index = index.abs()
    return torch.where(index > size - 1, 2 * (size - 1) - index, index)
