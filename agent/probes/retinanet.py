"""A RetinaNet-like detector: MLPerf's shape (ResNeXt-50 32x4d + FPN P3-P7 + shared heads).

800 x 800 images, 264 classes (MLPerf's OpenImages subset), 9 anchors per location, the
classification and box heads of four 3x3 convolutions each, Adam. Synthetic targets: every
anchor gets a class (about 1% positive) and a box offset, so the focal loss and the L1 box
loss run over all anchors; there is no anchor matching, no NMS and no evaluation, which the
timed part of a real run spends little of. As in the MLPerf reference (torchvision's
retinanet_resnext50_32x4d_fpn), BatchNorm is frozen and the stem and first stage do not train.
"""

import torch
import torch.nn.functional as F
from torch import nn

from . import common
from .resnet import FrozenBatchNorm2d, ResNet, run_cnn

CLASSES = 264
ANCHORS = 9


class FPN(nn.Module):
    """P3-P5 from C3-C5 (lateral 1x1, top-down sum, 3x3), P6 from P5, P7 from P6 (torchvision's
    LastLevelP6P7)."""

    def __init__(self, channels: list[int], width: int):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, width, 1) for c in channels)
        self.output = nn.ModuleList(nn.Conv2d(width, width, 3, padding=1) for _ in channels)
        self.p6 = nn.Conv2d(width, width, 3, 2, 1)
        self.p7 = nn.Conv2d(width, width, 3, 2, 1)

    def forward(self, feats):
        laterals = [conv(f) for conv, f in zip(self.lateral, feats)]
        for i in range(len(laterals) - 1, 0, -1):
            up = F.interpolate(laterals[i], size=laterals[i - 1].shape[-2:], mode="nearest")
            laterals[i - 1] = laterals[i - 1] + up
        outs = [conv(x) for conv, x in zip(self.output, laterals)]
        p6 = self.p6(outs[-1])
        return [*outs, p6, self.p7(F.relu(p6))]


def head(width: int, out: int) -> nn.Sequential:
    layers = []
    for _ in range(4):
        layers += [nn.Conv2d(width, width, 3, padding=1), nn.ReLU(inplace=True)]
    return nn.Sequential(*layers, nn.Conv2d(width, out, 3, padding=1))


class RetinaNet(nn.Module):
    def __init__(self, div: int = 1):
        super().__init__()
        self.backbone = ResNet(
            groups=32, base_width=4, div=div, classes=None, norm=FrozenBatchNorm2d
        )
        # torchvision's default of 3 trainable backbone layers (the MLPerf reference's): the stem
        # and the first stage are frozen, so backward stops at the second stage.
        for part in (self.backbone.stem, self.backbone.stages[0]):
            part.requires_grad_(False)
        width = 256 // div
        self.fpn = FPN(self.backbone.channels[1:], width)
        self.cls = head(width, ANCHORS * CLASSES)
        self.box = head(width, ANCHORS * 4)

    def forward(self, images):
        levels = self.fpn(self.backbone.features(images)[1:])
        n = images.shape[0]
        # (N, A*K, H, W) per level -> (N, anchors, K), all levels concatenated
        cls = torch.cat(
            [self.cls(p).permute(0, 2, 3, 1).reshape(n, -1, CLASSES) for p in levels], 1
        )
        box = torch.cat([self.box(p).permute(0, 2, 3, 1).reshape(n, -1, 4) for p in levels], 1)
        return cls, box


def anchor_count(size: int) -> int:
    """Anchors over P3-P7 of a size x size image: every stride-2 layer (the stem, its pool, the
    stages, P6, P7) rounds its input size up when halving it."""
    sides = []
    for _ in range(7):
        size = -(-size // 2)
        sides.append(size)
    return ANCHORS * sum(side * side for side in sides[2:])


def focal_loss(logits, targets, alpha=0.25, gamma=2.0):
    """Sigmoid focal loss (Lin et al.), summed; torchvision's sigmoid_focal_loss."""
    logits = logits.float()
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * (1 - p_t) ** gamma
    return ((alpha * targets + (1 - alpha) * (1 - targets)) * loss).sum()


def probe(
    key, *, batch_size, seq_len, dev, dtype, warmup_steps, steps, max_seconds, min_seconds=0.0
) -> dict:
    cpu = dev.type == "cpu"
    size, div = (64, 16) if cpu else (800, 1)
    if cpu:
        batch_size = min(batch_size, 2)
    memory_format = torch.channels_last if dev.type == "cuda" else torch.contiguous_format

    def build(micro):
        model = RetinaNet(div=div).to(dev, memory_format=memory_format)
        optimizer = common.make_optimizer("adam", model.parameters(), dev, lr=1e-4)
        gen = torch.Generator(device=dev).manual_seed(0)
        images = torch.randn(micro, 3, size, size, device=dev, generator=gen)
        images = images.contiguous(memory_format=memory_format)
        anchors = anchor_count(size)
        positive = torch.rand(micro, anchors, device=dev, generator=gen) < 0.01
        classes = torch.randint(0, CLASSES, (micro, anchors), device=dev, generator=gen)
        cls_targets = torch.zeros(micro, anchors, CLASSES, device=dev)
        cls_targets[positive, classes[positive]] = 1.0
        box_targets = torch.randn(micro, anchors, 4, device=dev, generator=gen)
        num_pos = max(1, int(positive.sum()))

        def loss_fn(m):
            cls, box = m(images)
            box_loss = F.l1_loss(box.float()[positive], box_targets[positive], reduction="sum")
            return (focal_loss(cls, cls_targets) + box_loss) / num_pos

        return model, optimizer, loss_fn

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
        "model": "RetinaNet (ResNeXt-50 32x4d, FPN P3-P7)"
        + (" (CPU-mode miniature, widths / 16)" if cpu else ""),
        "shapes": {
            "batch_size": batch_size,
            "image": [3, size, size],
            "classes": CLASSES,
            "anchors_per_location": ANCHORS,
        },
        "optimizer": "Adam",
        "samples": "images",
        "measured_samples_per_second": sps,
        "samples_per_second_per_accelerator": sps,
        **ran,
    }
