"""GuessWhich metrics per ALICE version over stored matches, and a Mann-Whitney test between two.

    python manage.py guesswhich_report                       # every finished guesswhich_v1 match
    python manage.py guesswhich_report --batch pilot-a --batch pilot-b --compare alice_exact alice_noisy
    python manage.py guesswhich_report --plot docs/guesswhich_versions.png

Matches are grouped by the answerer seat: the agent's name (its ALICE version) or "human".
"""
from __future__ import annotations

from collections import defaultdict

from django.core.management.base import BaseCommand, CommandError

from games.clevr.metrics import compare_versions
from games.guesswhich.agents import summarize
from games.models import Match, Seat


def outcomes_by_version(batches: list[str]) -> dict[str, list[dict]]:
    matches = Match.objects.filter(game_id="guesswhich_v1", status=Match.Status.FINISHED)
    if batches:
        matches = matches.filter(batch__slug__in=batches)
    answerer = {s.match_id: (s.agent_name or "human") for s in
                Seat.objects.filter(match__in=matches, role="answerer").only("match_id", "agent_name")}
    grouped: dict[str, list[dict]] = defaultdict(list)
    for match in matches.only("id", "outcome").iterator(chunk_size=500):
        grouped[answerer.get(match.id, "unknown")].append(match.outcome)
    return dict(grouped)


class Command(BaseCommand):
    help = "Mean rank and MRR (bootstrap CIs), coarse-rank curves per ALICE version; Mann-Whitney between two."

    def add_arguments(self, parser):
        parser.add_argument("--batch", action="append", default=[], help="only these batches (repeatable)")
        parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two versions to test against each other")
        parser.add_argument("--plot", default="", help="write per-round coarse-rank curves per version to a PNG")

    def handle(self, *args, **opts):
        grouped = outcomes_by_version(opts["batch"])
        if not grouped:
            raise CommandError("No finished GuessWhich matches match these filters.")
        for version in sorted(grouped):
            self.stdout.write(f"== {version}")
            self.stdout.write(summarize(grouped[version]))
        if opts["compare"]:
            a, b = opts["compare"]
            missing = [v for v in (a, b) if v not in grouped]
            if missing:
                raise CommandError(f"No matches for {', '.join(missing)}; have {', '.join(sorted(grouped))}")
            ranks = {v: [o["rank"] for o in grouped[v] if o.get("found")] for v in (a, b)}
            test = compare_versions(ranks[a], ranks[b])
            self.stdout.write(f"Mann-Whitney U, ranks of {a} vs {b}: " +
                              ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in test.items()))
        if opts["plot"]:
            self._plot(grouped, opts["plot"])
            self.stdout.write(f"plot written to {opts['plot']}")

    @staticmethod
    def _plot(grouped: dict[str, list[dict]], path: str) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from games.guesswhich.agents import summary

        fig, ax = plt.subplots(figsize=(5.5, 3.4))
        for version, outcomes in sorted(grouped.items()):
            curve = summary(outcomes)["per_round_mean_coarse_rank"]
            ax.plot(range(1, len(curve) + 1), [c if c is not None else float("nan") for c in curve], marker="o",
                    label=f"{version} (n={len(outcomes)})")
        ax.set_xlabel("round")
        ax.set_ylabel("mean coarse rank of best guess")
        ax.set_title("GuessWhich: best guess per round (lower is better)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
