"""GuessWhich metrics per ALICE version over stored matches, and a Mann-Whitney test between two.

    python manage.py guesswhich_report                       # every finished guesswhich_v1 match
    python manage.py guesswhich_report --batch pilot-a --batch pilot-b --compare alice_exact alice_noisy
    python manage.py guesswhich_report --plot docs/guesswhich_versions.png

Matches are grouped by the answerer seat: the agent's name (its ALICE version) or "human"
(research/monitor.py, shared with the staff comparison page /research/compare/). ``--compare`` refuses
two versions where one group was played with a person and the other by agents alone; ``--play human``
or ``--play agent`` keeps one kind.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from games.guesswhich.agents import summarize, summary
from live.models import Match
from research.monitor import PLAY_CHOICES, CompareRefused, compare_groups, outcomes_by_role


class Command(BaseCommand):
    help = "Mean rank and MRR (bootstrap CIs), coarse-rank curves per ALICE version; Mann-Whitney between two."

    def add_arguments(self, parser):
        parser.add_argument("--batch", action="append", default=[], help="only these batches (repeatable)")
        parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two versions to test against each other")
        parser.add_argument("--play", choices=list(PLAY_CHOICES), default="all",
                            help="all matches, those with a human seat, or agent-only ones")
        parser.add_argument("--plot", default="", help="write per-round coarse-rank curves per version to a PNG")

    def handle(self, *args, **opts):
        grouped = outcomes_by_role("guesswhich_v1", "answerer", opts["batch"], play=opts["play"])
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
            try:
                result = compare_groups(game_id="guesswhich_v1", batches=opts["batch"], role="answerer", a=a, b=b,
                                        play=opts["play"], statuses=(Match.Status.FINISHED,))
            except CompareRefused as exc:
                raise CommandError(f"{exc} (here: --play human or --play agent)") from None
            test = {k: v for k, v in result["test"]["rows"][0].items() if k != "what"}
            self.stdout.write(f"Mann-Whitney U, ranks of {a} vs {b}: " +
                              ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in test.items()))
        if opts["plot"]:
            self._plot(grouped, opts["plot"])
            self.stdout.write(f"plot written to {opts['plot']}")

    @staticmethod
    def _plot(grouped: dict[str, list[dict]], path: str) -> None:
        import matplotlib   # here: matplotlib takes seconds to load; only --plot needs it

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

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
