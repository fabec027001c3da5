/* The research monitor's view of the visual-dialog chat (GameSpec.monitor_script, loaded after
 * static/gt/monitor.js): the score table's columns, the charts of a batch or comparison, and the
 * replay's board (what research/monitor.py's board holds for it). */
(function () {
  "use strict";
  const { el, fmt, pct, ciPct, color, chart, opts, chatLines } = window.GTMonitor;
  const GAME_CHARTS = window.GTMonitor.GAME_CHARTS;
  GAME_CHARTS.visdial_v1 = {
    head: ["Group", "Matches", "Complete (95 % CI)", "Rounds answered", "Words / question", "Words / answer"],
    row(g) {
      const s = g.scores;
      return [g.label, s.matches, s.complete.n ? `${pct(s.complete.value)} ${ciPct(s.complete.ci95)}` : "–",
              fmt(s.mean_rounds_completed, 1), fmt(s.mean_question_words, 1), fmt(s.mean_answer_words, 1)];
    },
    charts: ["words"],
    draw(prefix, groups) {
      chart(prefix + "words", { type: "bar", data: {
        labels: ["rounds answered", "words per question", "words per answer"],
        datasets: groups.map((g, i) => ({ label: g.label, backgroundColor: color(i) + "bb",
          data: [g.scores.mean_rounds_completed, g.scores.mean_question_words, g.scores.mean_answer_words] })) },
        options: opts("Dialogs of ended matches (means)", "mean") });
    },
    board(b) {
      return [el("p", {}, el("b", { text: b.phase === "done" ? "Dialog complete" : `Round ${b.round} of ${b.rounds} · ${b.phase}` })),
        chatLines(b.dialog.flatMap((d) => [{ who: "Q" + d.round, text: d.question }].concat(d.answer ? [{ who: "A" + d.round, text: d.answer }] : [])))];
    },
  };
})();
