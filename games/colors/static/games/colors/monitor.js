/* The research monitor's view of the color game (GameSpec.monitor_script, loaded after
 * static/gt/monitor.js): the score table's columns, the charts of a batch or comparison, and the
 * replay's board (what research/monitor.py's board holds for it). */
(function () {
  "use strict";
  const { el, fmt, pct, ciPct, color, chart, opts, chatLines, hsl } = window.GTMonitor;
  const GAME_CHARTS = window.GTMonitor.GAME_CHARTS;
  GAME_CHARTS.colors_v1 = {
    head: ["Group", "Matches", "Rounds", "Accuracy (95 % CI)", "far", "split", "close", "Response", "Words"],
    row(g) {
      const s = g.scores, a = s.accuracy;
      const cond = (c) => { const p = s.by_condition[c]; return p.n ? `${pct(p.value)} ${ciPct(p.ci95)} n=${p.n}` : "–"; };
      return [g.label, s.matches, a.n, a.n ? `${pct(a.value)} ${ciPct(a.ci95)}` : "–", cond("far"), cond("split"), cond("close"),
              s.mean_response_ms === null ? "–" : fmt(s.mean_response_ms / 1000, 1) + " s", fmt(s.mean_speaker_words, 1)];
    },
    charts: ["accuracy"],
    draw(prefix, groups) {
      const keys = ["all", "far", "split", "close"];
      chart(prefix + "accuracy", { type: "bar", data: {
        labels: ["all rounds", "far", "split", "close"],
        datasets: groups.map((g, i) => {
          const ps = keys.map((k) => k === "all" ? g.scores.accuracy : g.scores.by_condition[k]);
          return { label: g.label, backgroundColor: color(i) + "bb", data: ps.map((p) => p.value === null ? null : 100 * p.value),
                   ci: ps.map((p) => p.ci95[0] === null ? null : [100 * p.ci95[0], 100 * p.ci95[1]]) };
        }) }, options: opts("Listener accuracy per condition (95 % Wilson CI)", "% correct", { scales: { y: { min: 0, max: 100, title: { display: true, text: "% correct" } } } }) });
    },
    board(b) {
      const parts = [el("p", {}, el("b", { text: b.over ? "Game over" : `Round ${b.round} of ${b.rounds}` }),
        b.condition ? ` (${b.condition})` : "", ` · score ${b.correct}/${b.played}`)];
      if (b.colors.length) parts.push(el("div", { class: "swatches" }, b.colors.map((c, i) =>
        el("span", { class: "sw" + (i === 0 ? " target" : ""), style: `background:${hsl(c)}`, title: i === 0 ? "target" : "distractor" }, i === 0 ? "target" : ""))));
      if (b.messages.length) parts.push(chatLines(b.messages));
      if (b.last) parts.push(el("p", { class: "muted" }, `Last round (${b.last.round}, ${b.last.condition}): `,
        el("span", { class: "sw small", style: `background:${hsl(b.last.colors[b.last.chosen])}` }), b.last.correct ? " clicked the target" : " clicked a distractor"));
      return parts;
    },
  };
})();
