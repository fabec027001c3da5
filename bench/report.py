"""Tables and plots from bench/relay.py results (JSON in bench/out/).

    .venv/bin/python bench/report.py bench/out/human-500.json bench/out/saturation-50.json ... [--plots docs]

Prints one markdown table row per target of every file given (what docs/bench.md quotes) and,
with ``--plots DIR``, writes ``bench_latency_cdf.png`` (partner latency, every run given) and
``bench_latency_time.png`` (p99 per second of the human-pace runs) there.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

HEADER = ("| run | server | pairs | pace | offered/s | acked/s | p50 ms | p99 ms | max ms | lost | dup | "
          "log check | CPU % server / PG / Redis / bots / other |")


def fmt_ms(value) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def rows(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    out = []
    for r in data["results"]:
        lat, cpu = r["latency_ms"], r["cpu_pct_of_one_core"]
        if r["target"] == "bare":
            server = f"bare relay x{r['server_workers']}"
        else:
            server = f"GroundTalk, {r['server']} x{r['server_workers']}, {r['layer']}"
            if r.get("route") == "match":
                server += ", route by match"
            if r.get("patches"):
                server += f", patches {r['patches']}"
        check = "-"
        if r.get("db_check"):
            c = r["db_check"]
            check = "ok" if c["ok"] else "FAIL"
            check += f" ({c['actions_logged']} logged)"
        lost_txt = str(r["lost"]) if not r.get("unacked_at_end") else f"{r['lost']} + {r['unacked_at_end']} unacked"
        out.append(f"| {data['label']} | {server} | {r['pairs']} | {r['mode']} | {r['offered_per_s']:.0f} | "
                   f"{r['acked_per_s']:.0f} | {fmt_ms(lat.get('p50'))} | {fmt_ms(lat.get('p99'))} | "
                   f"{fmt_ms(lat.get('max'))} | {lost_txt} | {r['duplicated']} | {check} | "
                   f"{cpu['server']:.0f} / {cpu['postgres']:.0f} / {cpu['redis']:.0f} / {cpu['bots']:.0f} / "
                   f"{cpu['other']:.0f} |")
    return out


def _runs(paths: list[Path]):
    """(result, legend name) of every target in every file."""
    for path in paths:
        data = json.loads(path.read_text())
        for r in data["results"]:
            yield r, f"{data['label']}: {'bare relay' if r['target'] == 'bare' else 'GroundTalk'}"


def _save(fig, ax, path: Path, *, bar_on_x: bool, xlabel: str, ylabel: str, title: str) -> None:
    """Mark the 100 ms bar, label, save."""
    (ax.axvline if bar_on_x else ax.axhline)(100, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right" if bar_on_x else "best")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plots(paths: list[Path], outdir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.set_xscale("log")
    for r, name in _runs(paths):
        sample = np.sort(np.array(r.get("latency_sample_ms") or []))
        if len(sample):
            ax.plot(sample, np.arange(1, len(sample) + 1) / len(sample), label=name)
    _save(fig, ax, outdir / "bench_latency_cdf.png", bar_on_x=True, xlabel="action sent -> partner receives it (ms, log scale)",
          ylabel="fraction of messages", title="Partner latency (CDF); dotted: the 100 ms bar")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.set_yscale("log")
    for r, name in _runs(paths):
        if r["mode"] == "human" and r.get("latency_per_second"):
            series = np.array(r["latency_per_second"], dtype=float)
            ax.plot(series[:, 0], series[:, 3], label=name)
    _save(fig, ax, outdir / "bench_latency_time.png", bar_on_x=False, xlabel="second of the run (by send time)",
          ylabel="p99 partner latency of that second (ms, log)",
          title="Human pace (one action per player every 2 s): p99 over time")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--plots", default="", help="directory for the PNG plots")
    args = parser.parse_args()
    paths = [Path(f) for f in args.files]
    print(HEADER)
    print("|" + "|".join("---" for _ in range(HEADER.count("|") - 1)) + "|")
    for path in paths:
        for row in rows(path):
            print(row)
    if args.plots:
        outdir = Path(args.plots)
        outdir.mkdir(parents=True, exist_ok=True)
        plots(paths, outdir)
        print(f"\nplots written to {outdir}/bench_latency_cdf.png and bench_latency_time.png")


if __name__ == "__main__":
    main()
