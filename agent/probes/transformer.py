"""Decoder-only language models of the Llama family: Llama 3.1 8B pretraining, Llama 2 70B LoRA.

The blocks are Llama's (RMSNorm, rotary positions, grouped-query attention through
scaled_dot_product_attention, SwiGLU MLP; fused QKV and gate/up projections, as NeMo runs
them). The 8B probe trains every parameter with AdamW; the 70B probe freezes a bf16 base
and trains only LoRA adapters (rank 16, alpha 32, dropout 0.1) on the QKV and output
projections, the MLPerf reference's targets.

On CUDA the probe finds how many layers of full width fit: it measures the peak memory of one
training step at 1 and 2 layers, runs the most that fit, and when that is fewer than the model
has, scales the figure by layer count (common.layer_scaled) and labels it so.
"""

import math
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn

from . import common


@dataclass(frozen=True)
class Shape:
    model: str
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    seq_len: int
    rope_theta: float
    lora_rank: int = 0  # 0: every parameter is trained
    lora_alpha: int = 0
    lora_dropout: float = 0.0

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def layer_params(self) -> int:
        qkv = self.hidden * (self.heads + 2 * self.kv_heads) * self.head_dim
        return qkv + self.heads * self.head_dim * self.hidden + 3 * self.hidden * self.ffn

    def layer_flops(self) -> float:
        """Forward FLOPs per token of one layer: its matmuls, and causal attention (half of the
        S x S scores and their product with V)."""
        return 2 * self.layer_params() + 2 * self.seq_len * self.hidden

    def fixed_flops(self) -> float:
        """Forward FLOPs per token outside the layers: the output head (the embedding is a lookup)."""
        return 2 * self.vocab * self.hidden


SHAPES = {
    "llama31_8b": Shape(
        "Llama 3.1 8B",
        vocab=128256,
        hidden=4096,
        layers=32,
        heads=32,
        kv_heads=8,
        ffn=14336,
        seq_len=8192,
        rope_theta=500000.0,
    ),
    "llama2_70b_lora": Shape(
        "Llama 2 70B + LoRA",
        vocab=32000,
        hidden=8192,
        layers=80,
        heads=64,
        kv_heads=8,
        ffn=28672,
        seq_len=8192,
        rope_theta=10000.0,
        lora_rank=16,
        lora_alpha=32,
        lora_dropout=0.1,
    ),
}


def cpu_shape(shape: Shape) -> Shape:
    """CPU mode: the same blocks at a tiny size (2 layers, width 64); it proves the path, no more."""
    return replace(
        shape,
        model=shape.model + " (CPU-mode miniature)",
        vocab=512,
        hidden=64,
        layers=2,
        heads=4,
        kv_heads=2,
        ffn=224,
        seq_len=min(shape.seq_len, 64),
    )


class RMSNorm(nn.Module):
    def __init__(self, dim: int, **factory):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, **factory))

    def forward(self, x):
        y = x.float()
        y = y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-5)
        return y.to(x.dtype) * self.weight.to(x.dtype)


class LoRALinear(nn.Module):
    """A frozen projection plus a trained low-rank update (B A x) * alpha / r."""

    def __init__(self, inp: int, out: int, rank: int, alpha: int, dropout: float, *, device, dtype):
        super().__init__()
        self.base = nn.Linear(inp, out, bias=False, device=device, dtype=dtype)
        self.base.weight.requires_grad_(False)
        self.a = nn.Parameter(torch.empty(rank, inp, device=device))
        self.b = nn.Parameter(torch.zeros(out, rank, device=device))
        nn.init.kaiming_uniform_(self.a, a=math.sqrt(5))
        self.drop = nn.Dropout(dropout)
        self.scale = alpha / rank

    def forward(self, x):
        return self.base(x) + F.linear(F.linear(self.drop(x), self.a), self.b) * self.scale


def rope_tables(seq_len: int, head_dim: int, theta: float, device):
    inv = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    freqs = torch.outer(torch.arange(seq_len, device=device).float(), inv)
    return freqs.cos(), freqs.sin()


def apply_rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


class Block(nn.Module):
    def __init__(self, s: Shape, *, device, dtype):
        super().__init__()
        self.s = s
        factory = {"device": device, "dtype": dtype}
        if s.lora_rank:
            lora = (s.lora_rank, s.lora_alpha, s.lora_dropout)
            self.qkv = LoRALinear(
                s.hidden, (s.heads + 2 * s.kv_heads) * s.head_dim, *lora, **factory
            )
            self.o = LoRALinear(s.heads * s.head_dim, s.hidden, *lora, **factory)
        else:
            self.qkv = nn.Linear(
                s.hidden, (s.heads + 2 * s.kv_heads) * s.head_dim, bias=False, **factory
            )
            self.o = nn.Linear(s.heads * s.head_dim, s.hidden, bias=False, **factory)
        self.attn_norm = RMSNorm(s.hidden, **factory)
        self.mlp_norm = RMSNorm(s.hidden, **factory)
        self.gate_up = nn.Linear(s.hidden, 2 * s.ffn, bias=False, **factory)
        self.down = nn.Linear(s.ffn, s.hidden, bias=False, **factory)

    def forward(self, x, cos, sin):
        s = self.s
        b, t, _ = x.shape
        q, k, v = self.qkv(self.attn_norm(x)).split(
            [s.heads * s.head_dim, s.kv_heads * s.head_dim, s.kv_heads * s.head_dim], dim=-1
        )
        q = apply_rope(q.view(b, t, s.heads, s.head_dim).transpose(1, 2), cos, sin)
        k = apply_rope(k.view(b, t, s.kv_heads, s.head_dim).transpose(1, 2), cos, sin)
        v = v.view(b, t, s.kv_heads, s.head_dim).transpose(1, 2)
        # Grouped-query attention: each K/V head serves heads / kv_heads query heads (expanded
        # rather than enable_gqa=, which older PyTorch 2.x on a GPU host may lack).
        groups = s.heads // s.kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, -1))
        gate, up = self.gate_up(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Decoder(nn.Module):
    def __init__(self, s: Shape, layers: int, *, device, dtype):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.embed = nn.Embedding(s.vocab, s.hidden, **factory)
        self.blocks = nn.ModuleList(Block(s, device=device, dtype=dtype) for _ in range(layers))
        self.norm = RMSNorm(s.hidden, **factory)
        self.head = nn.Linear(s.hidden, s.vocab, bias=False, **factory)
        self.cos, self.sin = rope_tables(s.seq_len, s.head_dim, s.rope_theta, device)
        if s.lora_rank:  # only the adapters train
            for name, p in self.named_parameters():
                p.requires_grad_(name.endswith((".a", ".b")))

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, self.cos, self.sin)
        return self.head(self.norm(x))


def _step_fn(s: Shape, layers: int, batch: int, dev, dtype):
    """Build the model, its optimizer and synthetic tokens; return (one training step, model)."""
    # Full training keeps fp32 master weights under bf16 autocast; LoRA's frozen base is stored in
    # the compute dtype (bf16 on CUDA), as the reference loads it.
    weights = dtype if s.lora_rank else torch.float32
    model = Decoder(s, layers, device=dev, dtype=weights)
    optimizer = common.make_optimizer("adamw", model.parameters(), dev, lr=1e-4)
    gen = torch.Generator(device=dev).manual_seed(0)
    tokens = torch.randint(0, s.vocab, (batch, s.seq_len + 1), device=dev, generator=gen)
    inputs, targets = tokens[:, :-1], tokens[:, 1:]

    def step():
        with common.autocast(dev, dtype):
            logits = model(inputs)
            loss = F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step, model


def _fit_layers(s: Shape, batch: int, dev, dtype) -> tuple[int, dict]:
    """How many layers of full width fit in this GPU's free memory: the peak of one step at 1 and at
    2 layers gives the cost of a layer and of the rest; keep 8% free for the allocator's slack."""
    common.free_memory(dev)
    free, _total = torch.cuda.mem_get_info(dev)
    budget = 0.92 * free
    peaks = {}
    for n in (1, 2):
        common.free_memory(dev)
        step, model = _step_fn(s, n, batch, dev, dtype)
        step()
        common.synchronize(dev)
        peaks[n] = torch.cuda.max_memory_allocated(dev)
        del step, model
    common.free_memory(dev)
    per_layer = max(peaks[2] - peaks[1], 1)
    fixed = peaks[1] - per_layer
    fit = math.floor((budget - fixed) / per_layer)
    memory = {
        "budget_bytes": int(budget),
        "per_layer_bytes": int(per_layer),
        "fixed_bytes": int(fixed),
    }
    return min(s.layers, fit), memory


def probe(
    key, *, batch_size, seq_len, dev, dtype, warmup_steps, steps, max_seconds, min_seconds=0.0
) -> dict:
    s = SHAPES[key]
    if seq_len:
        s = replace(s, seq_len=int(seq_len))
    full = s
    memory = None
    if dev.type == "cpu":
        s = cpu_shape(s)
        batch_size = min(batch_size, 2)
        layers = s.layers
    else:
        layers, memory = _fit_layers(s, batch_size, dev, dtype)
        if layers < 1:
            raise common.ProbeError(
                f"{s.model} does not fit this accelerator even with one layer "
                f"at batch {batch_size} x {s.seq_len} tokens"
            )
    window = None
    while window is None:
        try:
            step, model = _step_fn(s, layers, batch_size, dev, dtype)
            window = common.measure(
                step,
                dev,
                samples_per_step=batch_size,
                warmup_steps=warmup_steps,
                steps=steps,
                max_seconds=max_seconds,
                min_seconds=min_seconds,
            )
        except Exception as exc:
            if not (common.out_of_memory(exc) and dev.type == "cuda" and layers > 1):
                raise
        if window is None:  # out of memory: the estimate was short; a fifth fewer layers, again
            step = model = None
            common.free_memory(dev)
            layers -= max(1, layers // 5)
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    measured = window.samples_per_second
    scaled = dev.type == "cuda" and layers < full.layers
    result = {
        "model": s.model,
        "shapes": {
            "batch_size": batch_size,
            "seq_len": s.seq_len,
            "hidden": s.hidden,
            "ffn": s.ffn,
            "heads": s.heads,
            "kv_heads": s.kv_heads,
            "vocab": s.vocab,
            "lora_rank": s.lora_rank or None,
        },
        "layers_run": layers,
        "layers_full": full.layers,
        "params_run": total,
        "params_trained": trained,
        "optimizer": "AdamW",
        "samples": "sequences",
        "measured_samples_per_second": measured,
        "samples_per_second_per_accelerator": measured,
        "window": window,
    }
    if memory:
        result["memory"] = memory
    if scaled:
        result["samples_per_second_per_accelerator"] = common.layer_scaled(
            measured,
            layers_run=layers,
            layers_full=full.layers,
            layer_flops=full.layer_flops(),
            fixed_flops=full.fixed_flops(),
        )
        result["scaled_by_layers"] = (
            f"ran {layers} of {full.layers} layers at full width; samples/s scaled by layer count "
            f"(each layer and the output head weighted by its FLOPs)"
        )
    del step, model
    common.free_memory(dev)
    return result
