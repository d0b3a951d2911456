"""The model zoo: the guide's simple CNN, a CIFAR-stem ResNet-18 and ``fastnet``, a compact fast CNN.

``fastnet`` follows the ideas of the fastest known CIFAR-10 trainings (KellerJordan/cifar10-airbench):
a frozen patch-whitening first layer, three conv groups of widths 64/256/256 each with a max-pool,
BatchNorm and GELU, identity-initialised convs, a scaled linear head; its data augmentation (reflected
translations and alternating flips, ``augmentation``) and its test-time augmentation (``evaluate``).
"""

from __future__ import annotations

import torch
from torch import nn

from rocmtui.train.gpudata import Augmentation


def simplecnn(channels: int, size: int, num_classes: int) -> nn.Module:
    """Exactly the ROCm guide's model: Conv2d(3, 32, 3) -> ReLU -> flatten -> Linear(32*30*30, 10)."""
    return nn.Sequential(
        nn.Conv2d(channels, 32, 3),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(32 * (size - 2) * (size - 2), num_classes),
    )


def resnet18(channels: int, size: int, num_classes: int) -> nn.Module:
    """torchvision's ResNet-18 with a CIFAR stem: a 3x3 stride-1 first conv and no max-pool."""
    from torchvision.models import resnet18 as tv_resnet18

    model = tv_resnet18(num_classes=num_classes)
    model.conv1 = nn.Conv2d(channels, 64, kernel_size=3, stride=1, padding=1, bias=False)
    model.maxpool = nn.Identity()
    assert isinstance(model, nn.Module)
    return model


class _Conv(nn.Conv2d):
    """A 3x3 'same' conv without bias whose first filters start as the identity (an implicit residual)."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(cin, cout, kernel_size=3, padding="same", bias=False)
        with torch.no_grad():
            nn.init.dirac_(self.weight[: min(cin, cout)])


def _norm(width: int) -> nn.BatchNorm2d:
    """BatchNorm with a frozen unit scale (only the shift learns) and fast running statistics."""
    bn = nn.BatchNorm2d(width, eps=1e-12, momentum=0.4)
    bn.weight.requires_grad_(False)
    return bn


class _Group(nn.Sequential):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(_Conv(cin, cout), nn.MaxPool2d(2), _norm(cout), nn.GELU(), _Conv(cout, cout), _norm(cout))
        self.append(nn.GELU())


WHITEN_CHANNEL_MULTIPLE = 8
"""On a GPU the whitening conv sees its input channels zero-padded to a multiple of this (``_Whiten``)."""


class _Whiten(nn.Conv2d):
    """The frozen 2x2 whitening conv. On a GPU its input channels are zero-padded to a multiple of 8, and its
    filters with zeros: the same sums, where cuDNN has tensor-core kernels for channels_last inputs of 8
    channels and only a generic one for 3 (docs/benchmarks/recipe.md)."""

    pad_channels = True
    """False: the conv as it is, for a benchmark to set beside."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.padded(x) if x.is_cuda and self.pad_channels else super().forward(x)

    def padded(self, x: torch.Tensor) -> torch.Tensor:
        """The conv over ``x`` and its filters zero-padded to a multiple of 8 channels, keeping channels_last."""
        extra = -int(x.shape[1]) % WHITEN_CHANNEL_MULTIPLE
        if not extra:
            return super().forward(x)
        last = x.is_contiguous(memory_format=torch.channels_last)
        padded = nn.functional.pad(x, (0, 0, 0, 0, 0, extra))
        weight = nn.functional.pad(self.weight, (0, 0, 0, 0, 0, extra))
        if last:
            padded = padded.contiguous(memory_format=torch.channels_last)
            weight = weight.contiguous(memory_format=torch.channels_last)
        return nn.functional.conv2d(padded, weight, self.bias)


class _Scale(nn.Module):
    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.factor


class _GlobalMaxPool(nn.Module):
    """A max-pool over the whole feature map, whatever its size (``--crop-sizes`` trains on smaller inputs):
    the same kernel as ``MaxPool2d`` sized to the map."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.max_pool2d(x, kernel_size=(int(x.shape[-2]), int(x.shape[-1])))


HEAD_SCALE = 1 / 9
"""fastnet's logits are its linear head's output times this."""


class FastNet(nn.Sequential):
    """Whitening 2x2 conv -> GELU -> groups 64/256/256 -> global max-pool -> linear / 9, for images of any
    size from 9 px (``size`` is not needed).

    The head starts with weights of standard deviation 9/256: airbench94_muon's unit-deviation head
    behind a 1/256 output scale, the same function and the same training under our 1/9 scale once its
    learning rate is scaled by (9/256)^2 (``optim.MUON_HEAD_RATE``).
    """

    def __init__(self, channels: int, size: int, num_classes: int) -> None:
        whiten_width = 2 * channels * 4
        widths = (64, 256, 256)
        whiten = _Whiten(channels, whiten_width, kernel_size=2, padding=0, bias=True)
        whiten.weight.requires_grad_(False)
        super().__init__(
            whiten,
            nn.GELU(),
            _Group(whiten_width, widths[0]),
            _Group(widths[0], widths[1]),
            _Group(widths[1], widths[2]),
            _GlobalMaxPool(),
            nn.Flatten(),
            nn.Linear(widths[2], num_classes, bias=False),
            _Scale(HEAD_SCALE),
        )
        with torch.no_grad():
            self.head.weight.mul_(HEAD_SCALE**-1 / widths[2] / self.head.weight.std())

    @property
    def whiten(self) -> nn.Conv2d:
        conv = self[0]
        assert isinstance(conv, nn.Conv2d)
        return conv

    @property
    def head(self) -> nn.Linear:
        linear = self[-2]
        assert isinstance(linear, nn.Linear)
        return linear

    @torch.no_grad()
    def init_whitening(self, images: torch.Tensor, eps: float = 5e-4) -> None:
        """Set the first conv to whiten 2x2 patches of ``images`` (normalised floats, NCHW).

        Its filters are the patch covariance's eigenvectors scaled by 1/sqrt(eigenvalue), and their negatives.
        """
        conv = self.whiten
        c = images.shape[1]
        patches = images.float().unfold(2, 2, 1).unfold(3, 2, 1)  # N, C, H', W', 2, 2
        flat = patches.permute(0, 2, 3, 1, 4, 5).reshape(-1, c * 4)
        cov = (flat.T @ flat / flat.shape[0]).double().cpu()
        # a 12x12 problem: on the host it takes microseconds, where a GPU's first eigh loads its solver library
        values, vectors = torch.linalg.eigh(cov)
        filters = (vectors.T / torch.sqrt(values + eps).view(-1, 1)).reshape(c * 4, c, 2, 2).flip(0)
        conv.weight.copy_(torch.cat((filters, -filters)).to(conv.weight.device, conv.weight.dtype))
        assert conv.bias is not None
        conv.bias.zero_()


MODEL_BUILDERS = {"simplecnn": simplecnn, "resnet18": resnet18, "fastnet": FastNet}


def build_model(name: str, channels: int, size: int, num_classes: int) -> nn.Module:
    """A fresh model for ``channels`` x ``size`` x ``size`` inputs (seed torch first for reproducibility)."""
    return MODEL_BUILDERS[name](channels, size, num_classes)


def uses_plain_inputs(name: str) -> bool:
    """simplecnn sees ToTensor's x/255 as in the guide; the others see mean/std-normalised inputs."""
    return name == "simplecnn"


def augmentation(name: str, jitter: float = 0.0) -> Augmentation:
    """What ``--augment`` does for a model: airbench's for fastnet (translations of up to 2 px with
    reflected edges, every image flipped in alternate epochs), the classic crop and random flip otherwise;
    ``jitter``: brightness and contrast jitter as well."""
    if name == "fastnet":
        return Augmentation(pad=2, reflect=True, alternating_flip=True, jitter=jitter)
    return Augmentation(pad=4, jitter=jitter)


def has_tta(name: str) -> bool:
    """Whether the run's final test pass uses test-time augmentation (mirrors and one-pixel shifts)."""
    return name == "fastnet"
