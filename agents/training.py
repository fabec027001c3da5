"""What the neural agents' training commands share (``manage.py train_agent``): the epoch loop, the
training plot and the split of people's data by game or dialog. Each game's ``neural/*train.py`` builds its data, model and loss; this runs them.
Imported only by training code (it imports torch); the web process never loads it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import random

import numpy as np
import torch
from torch import nn
from tqdm import tqdm


def split_by_group(rows: list[dict], key: str, val_fraction: float, seed: str, what: str
                   ) -> tuple[list[dict], list[dict], list]:
    """``(train rows, validation rows, validation group ids sorted)``: a seeded ``val_fraction`` of
    the ``rows``' groups (their ``key``: a game or dialog id; at least one group each side) and all
    their rows, so no game or dialog is on both sides. ``seed`` seeds the draw (each game's corpus
    its own string, so its splits stay as recorded); fewer than two groups is a ValueError naming
    ``what`` they are."""
    groups = sorted({r[key] for r in rows})
    if len(groups) < 2:
        raise ValueError(f"Need rounds of at least 2 {what}s to split by {what}, got {len(groups)}.")
    n_val = min(max(1, round(val_fraction * len(groups))), len(groups) - 1)
    chosen = set(random.Random(seed).sample(groups, n_val))
    return [r for r in rows if r[key] not in chosen], [r for r in rows if r[key] in chosen], sorted(chosen)


def run_epochs(*, model: nn.Module, optimizer: torch.optim.Optimizer, n_examples: int, batch_size: int,
               epochs: int, seed: int, loss_of: Callable[[list[int]], torch.Tensor],
               evaluate: Callable[[], dict], history: list[dict], desc: str, progress: bool = True,
               clip_norm: float = 5.0) -> None:
    """Train ``model`` for ``epochs`` epochs and append one row per epoch to ``history``.

    Each epoch shuffles the example indices with a generator seeded once by ``seed`` (so a run is
    reproducible), takes mini-batches of ``batch_size`` indices, and for each one calls
    ``loss_of(indices)``, then steps ``optimizer`` with the gradient norm clipped at
    ``clip_norm``. A progress bar shows the running loss; after each epoch ``evaluate()`` gives the
    held-out figures, and ``{"epoch", "loss" (the epoch's mean), **those}`` is appended to
    ``history`` (and printed when ``progress``). The model is left in eval mode.
    """
    order_gen = torch.Generator().manual_seed(seed)
    n_batches = (n_examples + batch_size - 1) // batch_size
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.randperm(n_examples, generator=order_gen).tolist()
        losses = []
        bar = tqdm(range(n_batches), desc=f"{desc} epoch {epoch}/{epochs}", unit="batch", disable=not progress,
                   leave=False)
        for b in bar:
            loss = loss_of(order[b * batch_size:(b + 1) * batch_size])
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
            optimizer.step()
            losses.append(loss.item())
            bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
        row = {"epoch": epoch, "loss": float(np.mean(losses)), **evaluate()}
        history.append(row)
        if progress:
            tqdm.write(f"epoch {epoch}: " + ", ".join(f"{k}={v:.3f}" for k, v in row.items() if k != "epoch"))
    model.eval()


@dataclass
class Panel:
    """One panel of the training plot beside the loss: curves of ``history`` keys (those present),
    and horizontal reference lines (chance, a majority baseline)."""

    ylabel: str
    curves: dict[str, str]                                  # history key -> legend label
    lines: dict[str, float] = field(default_factory=dict)    # legend label -> value
    ylim: tuple[float, float] | None = (0, 1.02)
    dashed: tuple[str, ...] = ()                             # curves drawn as baselines (dashed, no markers)


def plot_history(history: list[dict], path, *, title: str, panels: list[Panel], width: float = 8.0) -> None:
    """The training loss per epoch and, beside it, each panel's held-out curves; a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [row["epoch"] for row in history]
    fig, axes = plt.subplots(1, 1 + len(panels), figsize=(width, 3.2))
    ax_loss = axes[0]
    ax_loss.plot(epochs, [row["loss"] for row in history], marker="o")
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("training loss")
    ax_loss.set_title(title)
    for ax, panel in zip(axes[1:], panels):
        labelled = False
        for key, label in panel.curves.items():
            if history and key in history[0]:
                baseline = key in panel.dashed
                ax.plot(epochs, [row[key] for row in history], marker=None if baseline else "o",
                        linestyle="--" if baseline else "-", label=label)
                labelled = labelled or bool(label)
        for label, value in panel.lines.items():
            ax.axhline(value, color="grey", linestyle="--", linewidth=1, label=label)
            labelled = True
        if panel.ylim is not None:
            ax.set_ylim(*panel.ylim)
        ax.set_xlabel("epoch")
        ax.set_ylabel(panel.ylabel)
        if labelled:
            ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
