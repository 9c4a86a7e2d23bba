"""ResNet-50 (and the ResNeXt-50 32x4d backbone of the detector), written out: torchvision is not needed.

The ResNet-50 probe trains at 224 x 224 with 1000 classes, BatchNorm, SGD with momentum, in
channels-last memory order on CUDA. A per-accelerator batch that does not fit is run as
gradient accumulation over micro-batches (one optimizer step per batch) and labelled so.
"""

import torch
import torch.nn.functional as F
from torch import nn

from . import common


class FrozenBatchNorm2d(nn.Module):
    """BatchNorm with fixed statistics and affine parameters, as detection backbones run it
    (torchvision's FrozenBatchNorm2d): one per-channel scale and shift."""

    def __init__(self, channels: int):
        super().__init__()
        self.register_buffer("scale", torch.ones(channels))
        self.register_buffer("shift", torch.zeros(channels))

    def forward(self, x):
        scale, shift = self.scale.view(1, -1, 1, 1), self.shift.view(1, -1, 1, 1)
        return x * scale.to(x.dtype) + shift.to(x.dtype)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inp, planes, stride, groups, base_width, div, norm=nn.BatchNorm2d):
        super().__init__()
        width = int(planes * base_width / 64) * groups // div
        out = planes * self.expansion // div
        self.conv1 = nn.Conv2d(inp, width, 1, bias=False)
        self.bn1 = norm(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, groups=min(groups, width), bias=False)
        self.bn2 = norm(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = norm(out)
        self.down = None
        if stride != 1 or inp != out:
            self.down = nn.Sequential(nn.Conv2d(inp, out, 1, stride, bias=False), norm(out))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(nn.Module):
    """ResNet-50 (groups=1, base_width=64) or ResNeXt-50 32x4d (groups=32, base_width=4);
    `div` divides every width (CPU mode); `norm` is BatchNorm2d or FrozenBatchNorm2d."""

    def __init__(self, groups=1, base_width=64, div=1, classes=1000, norm=nn.BatchNorm2d):
        super().__init__()
        stem = 64 // div
        self.stem = nn.Sequential(
            nn.Conv2d(3, stem, 7, 2, 3, bias=False),
            norm(stem),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
        )
        inp = stem
        self.stages = nn.ModuleList()
        self.channels = []
        for planes, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            stage = []
            for i in range(blocks):
                first = stride if i == 0 else 1
                stage.append(Bottleneck(inp, planes, first, groups, base_width, div, norm))
                inp = planes * Bottleneck.expansion // div
            self.stages.append(nn.Sequential(*stage))
            self.channels.append(inp)
        self.fc = nn.Linear(inp, classes) if classes else None

    def features(self, x):
        """C2..C5, the outputs of the four stages."""
        x = self.stem(x)
        out = []
        for stage in self.stages:
            x = stage(x)
            out.append(x)
        return out

    def forward(self, x):
        x = self.features(x)[-1]
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def count(model) -> int:
    return sum(p.numel() for p in model.parameters())


def accumulating_step(model, optimizer, loss_fn, chunks: int, dev, dtype):
    """One optimizer step over `chunks` micro-batches (one chunk: a plain training step)."""

    def step():
        for _ in range(chunks):
            with common.autocast(dev, dtype):
                loss = loss_fn(model)
            (loss / chunks).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def run_cnn(
    build, *, batch_size, dev, dtype, warmup_steps, steps, max_seconds, min_seconds=0.0
) -> dict:
    """Time `build(micro_batch) -> (model, optimizer, loss_fn(model) -> loss)` over the batch; on
    CUDA out of memory, halve the micro-batch and accumulate."""
    if dev.type == "cuda":
        torch.backends.cudnn.benchmark = True  # as training runs do: the fastest kernel per shape
    micro = batch_size
    while True:
        built = None
        try:
            built = build(micro)
            step = accumulating_step(*built, batch_size // micro, dev, dtype)
            window = common.measure(
                step,
                dev,
                samples_per_step=batch_size,
                warmup_steps=warmup_steps,
                steps=steps,
                max_seconds=max_seconds,
                min_seconds=min_seconds,
            )
            break
        except Exception as exc:
            if not (common.out_of_memory(exc) and dev.type == "cuda" and micro > 1):
                raise
        # Out of memory (freed here, once the exception and its frames are gone).
        built = step = None
        common.free_memory(dev)
        micro = max(1, micro // 2)
        while batch_size % micro:
            micro -= 1
    params = count(built[0])
    trained = sum(p.numel() for p in built[0].parameters() if p.requires_grad)
    built = step = None
    common.free_memory(dev)
    return {
        "micro_batch_size": micro,
        "params_run": params,
        "params_trained": trained,
        "window": window,
    }


def probe(
    key, *, batch_size, seq_len, dev, dtype, warmup_steps, steps, max_seconds, min_seconds=0.0
) -> dict:
    cpu = dev.type == "cpu"
    size, div = (64, 8) if cpu else (224, 1)
    if cpu:
        batch_size = min(batch_size, 4)
    memory_format = torch.channels_last if dev.type == "cuda" else torch.contiguous_format

    def build(micro):
        model = ResNet(div=div).to(dev, memory_format=memory_format)
        optimizer = common.make_optimizer("sgd", model.parameters(), dev, lr=0.1)
        gen = torch.Generator(device=dev).manual_seed(0)
        images = torch.randn(micro, 3, size, size, device=dev, generator=gen)
        images = images.contiguous(memory_format=memory_format)
        labels = torch.randint(0, 1000, (micro,), device=dev, generator=gen)
        return model, optimizer, lambda m: F.cross_entropy(m(images), labels)

    ran = run_cnn(
        build,
        batch_size=batch_size,
        dev=dev,
        dtype=dtype,
        warmup_steps=warmup_steps,
        steps=steps,
        max_seconds=max_seconds,
        min_seconds=min_seconds,
    )
    sps = ran["window"].samples_per_second
    return {
        "model": "ResNet-50" + (" (CPU-mode miniature, widths / 8)" if cpu else ""),
        "shapes": {"batch_size": batch_size, "image": [3, size, size], "classes": 1000},
        "optimizer": "SGD momentum 0.9",
        "samples": "images",
        "measured_samples_per_second": sps,
        "samples_per_second_per_accelerator": sps,
        **ran,
    }
