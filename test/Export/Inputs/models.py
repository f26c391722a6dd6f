# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Small modules for the exporter's tests, as dtensor-export --module
factories: each returns (module, example_args[, parallelize_plan])."""

import torch
from torch import nn
from torch.distributed.tensor import Shard
from torch.distributed.tensor.parallel import (ColwiseParallel,
                                               RowwiseParallel,
                                               SequenceParallel)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(32)
        self.up = nn.Linear(32, 96)
        self.down = nn.Linear(96, 32)

    def forward(self, x):
        h = self.norm(x)
        h = self.up(h)
        # Composite activations from parts: sigmoid, pow, a folded sqrt.
        h = h * torch.sigmoid(1.702 * h) + 0.01 * torch.pow(h, 2)
        return x + self.down(h) / torch.sqrt(torch.tensor(2.0))


def mlp():
    """A feed-forward block: a sequence-parallel norm, a colwise up
    projection reading Shard(1), a rowwise down projection giving Shard(1)."""
    torch.manual_seed(0)
    module = FeedForward()
    x = torch.randn(2, 6, 32)
    plan = {
        "norm": SequenceParallel(),
        "up": ColwiseParallel(input_layouts=Shard(1)),
        "down": RowwiseParallel(output_layouts=Shard(1)),
    }
    return module, (x,), plan


class Cumulative(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.inner = Inner()

    def forward(self, x):
        return self.inner(self.proj(x))


class Inner(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=-1)  # no lowering: the error names this line


def unsupported():
    return Cumulative(), (torch.randn(2, 8),)


def bad_plan():
    """A pattern that matches no module (PyTorch would raise too)."""
    return FeedForward(), (torch.randn(2, 6, 32),), {"up.*": ColwiseParallel()}
