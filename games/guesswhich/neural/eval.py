"""Evaluation of the neural ALICE (``manage.py guesswhich_neural_eval``).

1. Answer agreement with the exact grounded ALICE on generated dialogs over held-out scenes
   (``neural_data`` split ``test``), per question type (the grounded answer's kind: yesno, count,
   attr, refuse ...), beside the majority answer of the training dialogs; Wilson 95% intervals.
2. GuessWhich games through the rules (games/guesswhich/rules.py): the rule QBot asks and guesses,
   the answerer is the exact grounded ALICE, the neural ALICE or the weaker ``alice_weak``; the
   secret's rank in the final phase is summarised as the paper does (mean rank and MRR with
   bootstrap 95% CIs, :func:`clevr.metrics.summarize_ranks`) and each ALICE is compared with
   the exact one by a two-sided Mann-Whitney U test (:func:`clevr.metrics.compare_versions`).
"""
from __future__ import annotations

from collections import Counter, defaultdict

from scipy.stats import binomtest

from clevr.metrics import compare_versions, summarize_ranks
from clevr.qbot import QBot
from games.guesswhich import content as gw_content
from games.guesswhich import rules
from games.guesswhich.neural import data as neural_data
from games.guesswhich.neural.train import predict


def wilson(hits: int, n: int) -> list[float]:
    if not n:
        return [float("nan"), float("nan")]
    ci = binomtest(hits, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [float(ci.low), float(ci.high)]


def answer_accuracy(agent, *, dialogs: int, seed: int, train_dialogs: int, train_seed: int) -> dict:
    """Per question type: n, neural accuracy (+ CI), majority-answer accuracy."""
    held = neural_data.make_dialogs(dialogs, seed, "test")
    top = Counter(it["answer"] for it in neural_data.make_dialogs(train_dialogs, train_seed, "train")).most_common(1)[0][0]
    pred = predict(agent.module, agent.vocab, agent.answers, held, agent.device)
    groups: dict[str, list] = defaultdict(list)
    for p, it in zip(pred, held):
        groups[it["qtype"]].append((p == it["answer"], it["answer"] == top))
        groups["all"].append((p == it["answer"], it["answer"] == top))
    out = {}
    for qtype, rows in sorted(groups.items(), key=lambda kv: (kv[0] == "all", -len(kv[1]))):
        hits = sum(r[0] for r in rows)
        out[qtype] = {"n": len(rows), "accuracy": hits / len(rows), "ci95": wilson(hits, len(rows)),
                      "majority": sum(r[1] for r in rows) / len(rows)}
    return {"majority_answer": top, "per_type": out}


def play(content: dict, seed: int, answerer, rounds: int, questioner=None) -> dict:
    """One game of ``questioner`` (the rule QBot unless given) and ``answerer``; its outcome."""
    state = rules.initial_state(content, seed, {"rounds": rounds})
    qbot, t = questioner or QBot(), 0
    while not rules.is_over(state):
        role = rules.to_act(state)[0]
        action = (qbot if role == "questioner" else answerer).act(rules.view_for(state, role))
        t += 1
        state, _ = rules.apply(state, role, {**action, "at": t})
    return rules.outcome(state)


def games(players: dict, *, n: int, seed: int, pool_size: int, rounds: int, progress: bool = False,
          against: dict | None = None) -> dict:
    """The same ``n`` pools and secrets for every entry of ``players`` (name -> answerer, played
    with the rule QBot, or name -> (questioner, answerer)); mean rank and MRR with bootstrap CIs,
    and a Mann-Whitney test of each against the first (``vs_first``), or against the entry
    ``against[name]`` names (``vs``)."""
    from tqdm import tqdm

    contents = [gw_content.generate(seed + k, {"pool_size": pool_size, "difficulty": "medium"}) for k in range(n)]
    ranks = {name: [] for name in players}
    for k in tqdm(range(n), desc="guesswhich games", disable=not progress):
        for name, pair in players.items():
            questioner, answerer = pair if isinstance(pair, tuple) else (None, pair)
            ranks[name].append(play(contents[k], seed + k, answerer, rounds, questioner=questioner)["rank"])
    first = next(iter(players))
    out = {name: {**summarize_ranks(r), "ranks": r,
                  "vs_first": compare_versions(ranks[first], r) if name != first else None}
           for name, r in ranks.items()}
    for name, other in (against or {}).items():
        out[name]["vs"] = {"name": other, **compare_versions(ranks[other], ranks[name])}
    return out


def _f(x, d=3) -> str:
    return "-" if x is None or x != x else f"{x:.{d}f}"


def markdown(report: dict) -> str:
    acc, g = report["accuracy"], report["games"]
    lines = ["| question type (grounded answer's kind) | rounds | neural ALICE agrees with grounded ALICE (95% CI) "
             "| majority answer |", "|---|---|---|---|"]
    for qtype, row in acc["per_type"].items():
        lines.append(f"| {qtype} | {row['n']} | {_f(row['accuracy'])} [{_f(row['ci95'][0])}, {_f(row['ci95'][1])}] "
                     f"| {_f(row['majority'])} |")
    first = next(iter(g))
    lines += ["", f"GuessWhich, rule QBot questioner, pool of {report['pool_size']}, {report['rounds']} rounds, "
              f"{report['n_games']} games (same pools and secrets for every answerer); chance mean rank "
              f"{(report['pool_size'] + 1) / 2:.1f}.", "",
              f"| answerer | mean rank (95% CI) | MRR (95% CI) | Mann-Whitney vs {first} (p) |", "|---|---|---|---|"]
    for name, row in g.items():
        mr, rr = row["mean_rank"], row["mrr"]
        p = "-" if row["vs_first"] is None else _f(row["vs_first"]["p_value"], 4)
        lines.append(f"| {name} | {_f(mr['value'], 2)} [{_f(mr['ci95'][0], 2)}, {_f(mr['ci95'][1], 2)}] "
                     f"| {_f(rr['value'])} [{_f(rr['ci95'][0])}, {_f(rr['ci95'][1])}] | {p} |")
    if report.get("questioners"):
        q = report["questioners"]
        first = next(iter(q))
        lines += ["", f"Questioners with the grounded ALICE answering (alice_exact), the same pools, {report['rounds']} "
                  f"rounds, {report['n_games']} games. The rule QBot's answer model is the grounded ALICE's own "
                  "executor (a home advantage); the neural QBot's is the neural ALICE network above.", "",
                  f"| questioner | mean rank (95% CI) | MRR (95% CI) | Mann-Whitney vs {first} (p) |", "|---|---|---|---|"]
        for name, row in q.items():
            mr, rr = row["mean_rank"], row["mrr"]
            p = "-" if row["vs_first"] is None else _f(row["vs_first"]["p_value"], 4)
            lines.append(f"| {name} | {_f(mr['value'], 2)} [{_f(mr['ci95'][0], 2)}, {_f(mr['ci95'][1], 2)}] "
                         f"| {_f(rr['value'])} [{_f(rr['ci95'][0])}, {_f(rr['ci95'][1])}] | {p} |")
    if report.get("cooperative"):
        lines += ["", cooperative_markdown(report["cooperative"], report)]
    return "\n".join(lines) + "\n"


def cooperative_markdown(coop: dict, report: dict) -> str:
    """The cooperative fine-tune's table: each pair's mean rank and MRR, each fine-tuned pair
    tested against its supervised counterpart, and ALICE's agreement with the grounded ALICE."""
    args = coop["training"]
    lines = [f"Cooperative fine-tune (games/guesswhich/neural/coop.py: {args['epochs']} epochs over "
             f"{args['games']} generated games, pool of {args['pool_size']}, {args['rounds']} rounds, anchor "
             f"{args['anchor']}), evaluated on the pools above ({report['rounds']} rounds, {report['n_games']} games; "
             "the fine-tune's games are other scenes).", "",
             "| questioner + answerer | mean rank (95% CI) | MRR (95% CI) | Mann-Whitney (p) |", "|---|---|---|---|"]
    for name, row in coop["pairs"].items():
        mr, rr = row["mean_rank"], row["mrr"]
        p = f"vs {row['vs']['name']}: {_f(row['vs']['p_value'], 4)}" if row.get("vs") else "-"
        lines.append(f"| {name} | {_f(mr['value'], 2)} [{_f(mr['ci95'][0], 2)}, {_f(mr['ci95'][1], 2)}] "
                     f"| {_f(rr['value'])} [{_f(rr['ci95'][0])}, {_f(rr['ci95'][1])}] | {p} |")
    agree = coop["agreement"]
    lines += ["", "ALICE's answers agreeing with the grounded ALICE on the held-out rounds: supervised "
              f"{_f(agree['supervised']['accuracy'])} [{_f(agree['supervised']['ci95'][0])}, "
              f"{_f(agree['supervised']['ci95'][1])}], cooperative {_f(agree['cooperative']['accuracy'])} "
              f"[{_f(agree['cooperative']['ci95'][0])}, {_f(agree['cooperative']['ci95'][1])}]."]
    return "\n".join(lines)


def _mean_ranks(rows: dict) -> tuple[list[float], list[list[float]]]:
    """Each row's mean rank and its CI as matplotlib error bars (below, above)."""
    mr = [row["mean_rank"]["value"] for row in rows.values()]
    return mr, [[m - row["mean_rank"]["ci95"][0] for m, row in zip(mr, rows.values())],
                [row["mean_rank"]["ci95"][1] - m for m, row in zip(mr, rows.values())]]


def plot_cooperative(coop: dict, report: dict, path) -> None:
    """Left: the fine-tune's held-out mean rank per epoch (greedy self-play); right: each pair's
    mean rank with its 95% CI on the evaluation pools."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_p) = plt.subplots(1, 2, figsize=(10, 3.6))
    history = coop["history"]
    ax_t.plot([h["epoch"] for h in history], [h["val_mean_rank"] for h in history], marker="o")
    ax_t.axhline(coop["training"]["chance_rank"], color="grey", linestyle="--", label="chance")
    ax_t.set_xlabel("epoch (0: the supervised start)")
    ax_t.set_ylabel("mean rank, held-out self-play")
    ax_t.set_title(f"fine-tune (pool {coop['training']['pool_size']}, {coop['training']['rounds']} rounds)")
    ax_t.legend(fontsize=8)
    pairs = coop["pairs"]
    names = list(pairs)
    mr, err = _mean_ranks(pairs)
    colors = ["tab:orange" if "cooperative" in k else "tab:blue" for k in names]
    ax_p.barh(range(len(names)), mr, xerr=err, color=colors)
    ax_p.set_yticks(range(len(names)), names, fontsize=7)
    ax_p.invert_yaxis()
    ax_p.axvline((report["pool_size"] + 1) / 2, color="grey", linestyle="--")
    ax_p.set_xlabel("mean rank of the secret (lower is better)")
    ax_p.set_title(f"evaluation pools ({report['n_games']} games)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(report: dict, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    per = report["accuracy"]["per_type"]
    fig, (ax_a, ax_g) = plt.subplots(1, 2, figsize=(9, 3.4))
    names = list(per)
    xs = range(len(names))
    acc = [per[k]["accuracy"] for k in names]
    err = [[a - per[k]["ci95"][0] for a, k in zip(acc, names)], [per[k]["ci95"][1] - a for a, k in zip(acc, names)]]
    ax_a.bar([x - 0.2 for x in xs], acc, 0.4, yerr=err, label="neural ALICE")
    ax_a.bar([x + 0.2 for x in xs], [per[k]["majority"] for k in names], 0.4, label="majority answer")
    ax_a.set_xticks(list(xs), names, fontsize=8)
    ax_a.set_ylim(0, 1.05)
    ax_a.set_ylabel("agrees with grounded ALICE")
    ax_a.set_title("held-out scenes")
    ax_a.legend(fontsize=8)
    g = report["games"]
    labels = list(g)
    mr, mre = _mean_ranks(g)
    ax_g.bar(range(len(labels)), mr, yerr=mre, color="tab:green")
    ax_g.axhline((report["pool_size"] + 1) / 2, color="grey", linestyle="--", label="chance")
    ax_g.set_xticks(range(len(labels)), [k.split(" (")[0] for k in labels], fontsize=8)
    ax_g.set_ylabel("mean rank of the secret (lower is better)")
    ax_g.set_title("GuessWhich with the rule QBot")
    ax_g.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
