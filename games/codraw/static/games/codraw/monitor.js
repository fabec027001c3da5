/* The research monitor's view of CoDraw (GameSpec.monitor_script, loaded after
 * static/gt/monitor.js): the score table's columns, the charts of a batch or comparison, and the
 * replay's board (what research/monitor.py's board holds for it). */
(function () {
  "use strict";
  const { el, fmt, ci, color, chart, opts, chatLines } = window.GTMonitor;
  const GAME_CHARTS = window.GTMonitor.GAME_CHARTS;
  GAME_CHARTS.codraw_v1 = {
    head: ["Group", "Matches", "Mean score (95 % CI)", "Rounds", "Peeked"],
    row(g) {
      const s = g.scores;
      return [g.label, s.matches, s.score.n ? `${fmt(s.score.value)} ${ci(s.score.ci95)} of ${fmt(s.max_score, 0)}` : "–",
              fmt(s.mean_rounds, 1), `${s.peeked} of ${s.matches}`];
    },
    charts: ["histogram", "rounds"],
    draw(prefix, groups) {
      const edges = groups.length ? groups[0].scores.histogram.edges : [];
      chart(prefix + "histogram", { type: "bar", data: {
        labels: edges.slice(0, -1).map((e, i) => `${fmt(e, 1)}–${fmt(edges[i + 1], 1)}`),
        datasets: groups.map((g, i) => ({ label: g.label, backgroundColor: color(i) + "bb", data: g.scores.histogram.counts })) },
        options: opts("Similarity scores of ended matches", "matches", { scales: { y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: "matches" } }, x: { title: { display: true, text: "similarity (0–5)" } } } }) });
      const n = Math.max(0, ...groups.map((g) => g.scores.per_round_mean_score.length));
      chart(prefix + "rounds", { type: "line", data: {
        labels: Array.from({ length: n }, (_, k) => k + 1),
        datasets: groups.map((g, i) => ({ label: g.label, borderColor: color(i), backgroundColor: color(i),
          data: g.scores.per_round_mean_score.map((r) => r.mean) })) },
        options: opts("Mean score after each round", "similarity (0–5)", { scales: { x: { title: { display: true, text: "round" } }, y: { min: 0, max: 5, title: { display: true, text: "similarity" } } } }) });
    },
    board(b) {
      return [el("p", {}, el("b", { text: b.phase === "over" ? "Game over" : `Round ${b.round}, ${b.phase}'s turn` }),
        ` · ${b.pieces} pieces on the canvas · similarity ${fmt(b.score)} of 5` + (b.peek ? " · peeked" : "")),
        el("img", { class: "replay-canvas", src: b.canvas_svg, width: 375, height: 300, alt: "the Drawer's canvas at this step" }),
        b.chat.length ? chatLines(b.chat.slice(-6)) : null];
    },
  };
})();
