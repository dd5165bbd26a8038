"""Regenerate the tiny architecture models of this folder: python tests/data/models/make_models.py

One network per architecture family of benchmarks/real_models.py, at toy widths and input sizes
with random weights (seeded: a rerun writes the same weights), exported with
`torch.onnx.export(..., opset_version=18, dynamo=False)` as `NAME.onnx`, input `x`, output `y`.
tests/frontend/test_real_architectures.py imports each and compares dfir with onnxruntime on it.
Needs torch and transformers (`pip install -e '.[bench]'`); the tests need neither.
"""
from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
IMAGE = (1, 3, 32, 32)
TOKENS, VOCAB = 8, 64


def conv_bn(cin: int, cout: int, kernel: int = 3, stride: int = 1, groups: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeezed: int, gate: nn.Module, act: nn.Module):
        super().__init__()
        self.pool, self.reduce, self.act = nn.AdaptiveAvgPool2d(1), nn.Conv2d(channels, squeezed, 1), act
        self.expand, self.gate = nn.Conv2d(squeezed, channels, 1), gate

    def forward(self, x):
        return x * self.gate(self.expand(self.act(self.reduce(self.pool(x)))))


class Head(nn.Sequential):
    """Global average pool, flatten, dense to 10 classes."""

    def __init__(self, channels: int):
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10))


class BasicBlock(nn.Module):
    """ResNet's: two 3x3 conv-BN, ReLU, identity or 1x1 conv-BN shortcut."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(*conv_bn(cin, cout, 3, stride), nn.ReLU(), *conv_bn(cout, cout))
        self.short = nn.Sequential(*conv_bn(cin, cout, 1, stride)) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        return torch.relu(self.body(x) + self.short(x))


def resnet() -> nn.Module:
    return nn.Sequential(*conv_bn(3, 8, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                         BasicBlock(8, 8, 1), BasicBlock(8, 16, 2), Head(16))


class InvertedResidual(nn.Module):
    """MobileNetV2/V3 and EfficientNet's: 1x1 expand, depthwise, optional squeeze-excite, 1x1 project,
    skip when shapes allow."""

    def __init__(self, cin: int, cout: int, expand: int, kernel: int, stride: int, act, se: nn.Module | None):
        super().__init__()
        hidden = cin * expand
        self.body = nn.Sequential(*conv_bn(cin, hidden, 1), act(), *conv_bn(hidden, hidden, kernel, stride, hidden), act(),
                                  se or nn.Identity(), *conv_bn(hidden, cout, 1))
        self.skip = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.skip else self.body(x)


def mobilenet() -> nn.Module:
    """V2 blocks (ReLU6) then V3 blocks (hard-swish, squeeze-excite with hard-sigmoid)."""
    v3_se = SqueezeExcite(48, 8, nn.Hardsigmoid(), nn.ReLU())
    return nn.Sequential(*conv_bn(3, 8, 3, 2), nn.ReLU6(),
                         InvertedResidual(8, 8, 2, 3, 1, nn.ReLU6, None), InvertedResidual(8, 12, 2, 3, 2, nn.ReLU6, None),
                         InvertedResidual(12, 12, 4, 5, 1, nn.Hardswish, v3_se), *conv_bn(12, 24, 1), nn.Hardswish(),
                         Head(24))


def efficientnet() -> nn.Module:
    """MBConv blocks: SiLU, squeeze-excite with sigmoid."""
    return nn.Sequential(*conv_bn(3, 8, 3, 2), nn.SiLU(),
                         InvertedResidual(8, 8, 1, 3, 1, nn.SiLU, SqueezeExcite(8, 2, nn.Sigmoid(), nn.SiLU())),
                         InvertedResidual(8, 16, 4, 5, 2, nn.SiLU, SqueezeExcite(32, 2, nn.Sigmoid(), nn.SiLU())),
                         *conv_bn(16, 32, 1), nn.SiLU(), Head(32))


def channel_shuffle(x, groups: int):
    n, c, h, w = x.shape
    return x.view(n, groups, c // groups, h, w).transpose(1, 2).reshape(n, c, h, w)


class ShuffleUnit(nn.Module):
    """ShuffleNetV2's stride-1 unit: split the channels, transform one half, concatenate, shuffle."""

    def __init__(self, channels: int):
        super().__init__()
        half = channels // 2
        self.branch = nn.Sequential(*conv_bn(half, half, 1), nn.ReLU(), *conv_bn(half, half, 3, 1, half),
                                    *conv_bn(half, half, 1), nn.ReLU())

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        return channel_shuffle(torch.cat([a, self.branch(b)], 1), 2)


def shufflenet() -> nn.Module:
    return nn.Sequential(*conv_bn(3, 16, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1), ShuffleUnit(16), ShuffleUnit(16),
                         Head(16))


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int):
        super().__init__()
        self.body = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, 2 * growth, 1, bias=False),
                                  nn.BatchNorm2d(2 * growth), nn.ReLU(), nn.Conv2d(2 * growth, growth, 3, 1, 1, bias=False))

    def forward(self, x):
        return torch.cat([x, self.body(x)], 1)


def densenet() -> nn.Module:
    """Dense layers (each concatenates its output to its input) and a transition (1x1 conv, avg pool)."""
    return nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), DenseLayer(8, 4), DenseLayer(12, 4),
                         nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 8, 1, bias=False), nn.AvgPool2d(2, 2),
                         DenseLayer(8, 4), nn.BatchNorm2d(12), nn.ReLU(), Head(12))


class ChannelsLastNorm(nn.Module):
    """LayerNorm over the channels of NCHW: permute to NHWC, normalize, permute back."""

    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.LayerNorm(channels, eps=1e-6)

    def forward(self, x):
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    """Depthwise 7x7, LayerNorm channels-last, 4x MLP with GELU, layer scale, residual."""

    def __init__(self, channels: int):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, 7, padding=3, groups=channels)
        self.norm = nn.LayerNorm(channels, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(channels, 4 * channels), nn.GELU(), nn.Linear(4 * channels, channels))
        self.scale = nn.Parameter(torch.rand(channels))

    def forward(self, x):
        y = self.norm(self.dw(x).permute(0, 2, 3, 1))
        return x + (self.scale * self.mlp(y)).permute(0, 3, 1, 2)


def convnext() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 16, 4, 4), ChannelsLastNorm(16), ConvNeXtBlock(16), ConvNeXtBlock(16),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.LayerNorm(16), nn.Linear(16, 10))


class RegNetBlock(nn.Module):
    """RegNetY's bottleneck: 1x1, grouped 3x3 (group width 4), squeeze-excite, 1x1, shortcut."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(*conv_bn(cin, cout, 1), nn.ReLU(), *conv_bn(cout, cout, 3, stride, cout // 4), nn.ReLU(),
                                  SqueezeExcite(cout, cin // 4, nn.Sigmoid(), nn.ReLU()), *conv_bn(cout, cout, 1))
        self.short = nn.Sequential(*conv_bn(cin, cout, 1, stride)) if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        return torch.relu(self.body(x) + self.short(x))


def regnet() -> nn.Module:
    return nn.Sequential(*conv_bn(3, 8, 3, 2), nn.ReLU(), RegNetBlock(8, 16, 2), RegNetBlock(16, 16, 1), Head(16))


class LastHidden(nn.Module):
    """A transformers model's last hidden state, with an all-ones attention mask (traceable)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state


def bert() -> nn.Module:
    from transformers import BertConfig, BertModel
    config = BertConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=16, attn_implementation="eager")
    return LastHidden(BertModel(config, add_pooling_layer=False))


def gpt2() -> nn.Module:
    from transformers import GPT2Config, GPT2Model
    config = GPT2Config(vocab_size=VOCAB, n_positions=16, n_embd=32, n_layer=2, n_head=2, use_cache=False,
                        bos_token_id=0, eos_token_id=0, attn_implementation="eager")
    return LastHidden(GPT2Model(config))


MODELS = {"resnet": resnet, "mobilenet": mobilenet, "efficientnet": efficientnet, "shufflenet": shufflenet,
          "densenet": densenet, "convnext": convnext, "regnet": regnet, "bert": bert, "gpt2": gpt2}


def randomize_norms(model: nn.Module) -> None:
    """Batch norms with running statistics and affine parameters away from the identity."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)


def main() -> None:
    for seed, (name, build) in enumerate(MODELS.items()):
        torch.manual_seed(seed)
        model = build().eval()
        randomize_norms(model)
        tokens = name in ("bert", "gpt2")
        example = torch.randint(0, VOCAB, (1, TOKENS)) if tokens else torch.randn(*IMAGE)
        path = HERE / f"{name}.onnx"
        with torch.no_grad():
            torch.onnx.export(model, (example,), str(path), opset_version=18, dynamo=False,
                              input_names=["x"], output_names=["y"])
        print(f"{path.name}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
