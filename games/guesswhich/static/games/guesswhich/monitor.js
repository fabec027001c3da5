/* The research monitor's view of GuessWhich (GameSpec.monitor_script, loaded after
 * static/gt/monitor.js): the score table's columns, the charts of a batch or comparison, and the
 * replay's board (what research/monitor.py's board holds for it). */
(function () {
  "use strict";
  const { el, fmt, ci, color, chart, opts, chatLines } = window.GTMonitor;
  const GAME_CHARTS = window.GTMonitor.GAME_CHARTS;
  GAME_CHARTS.guesswhich_v1 = {
    head: ["Group", "Matches", "Found", "Mean rank (95 % CI)", "MRR (95 % CI)", "Chance rank", "Bonus"],
    row(g) {
      const s = g.scores;
      return [g.label, s.matches, s.found, s.found ? `${fmt(s.mean_rank.value)} ${ci(s.mean_rank.ci95)}` : "–",
              s.found ? `${fmt(s.mrr.value, 3)} ${ci(s.mrr.ci95, (x) => fmt(x, 3))}` : "–", fmt(s.chance_mean_rank, 1), fmt(s.mean_bonus, 1)];
    },
    charts: ["curve", "rank"],
    draw(prefix, groups) {
      const n = Math.max(0, ...groups.map((g) => g.scores.per_round_mean_coarse_rank.length));
      chart(prefix + "curve", { type: "line", data: {
        labels: Array.from({ length: n }, (_, k) => k + 1),
        datasets: groups.map((g, i) => ({ label: g.label, borderColor: color(i), backgroundColor: color(i), spanGaps: true,
          data: g.scores.per_round_mean_coarse_rank })) },
        options: opts("Coarse rank of the best guess per round (lower is better)", "mean coarse rank", { scales: { x: { title: { display: true, text: "round" } }, y: { beginAtZero: true, title: { display: true, text: "mean coarse rank" } } } }) });
      chart(prefix + "rank", { type: "bar", data: {
        labels: groups.map((g) => g.label),
        datasets: [{ label: "mean rank of the secret", backgroundColor: groups.map((g, i) => color(i) + "bb"),
          data: groups.map((g) => g.scores.mean_rank.value), ci: groups.map((g) => g.scores.mean_rank.ci95) }] },
        options: opts("Mean rank of the secret (95 % bootstrap CI)", "rank (1 = first click)", { plugins: { title: { display: true, text: "Mean rank of the secret (95 % bootstrap CI)" }, legend: { display: false } } }) });
    },
    board(b) {
      return [el("p", {}, el("b", { text: b.phase === "done" ? "Game over" : `Round ${b.round} of ${b.rounds} · ${b.phase}` }),
        ` · bonus ${b.bonus}` + (b.final_clicks.length ? ` · final clicks: ${b.final_clicks.join(", ")}` : "")),
        chatLines(b.dialog.flatMap((d) => [{ who: "Q" + d.round, text: d.question }].concat(d.answer ? [{ who: "A" + d.round, text: d.answer }] : [])
          .concat(d.guess ? [{ who: "guess", text: d.guess }] : [])))];
    },
  };
})();
