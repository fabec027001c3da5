// The export page (templates/research/export.html).
(function () {
  "use strict";
  // The count of matches the filters select, refreshed as they change (the download itself is a plain
  // GET: the browser shows its progress as bytes arrive).
  var form = document.getElementById("export-form"), out = document.getElementById("export-count");
  if (!form) return;
  // Each change asks again; answers can arrive out of order (two quick changes), so only the answer
  // to the latest question is shown: a stale count never overwrites the current one.
  var asked = 0;
  function refresh() {
    var params = new URLSearchParams(new FormData(form));
    params.set("count", "1");
    var mine = ++asked;
    fetch(form.action + "?" + params.toString(), {credentials: "same-origin"})
      .then(function (r) { return r.json(); })
      .then(function (j) {
        if (mine !== asked) return;
        out.textContent = j.errors ? "Fix the form to see a count." : j.matches + " matches selected (" + j.filename + ").";
      })
      .catch(function () { if (mine === asked) out.textContent = ""; });
  }
  form.addEventListener("change", refresh);
  form.addEventListener("submit", function (ev) {
    if (ev.submitter && ev.submitter.id === "export-download") {
      document.getElementById("export-progress").textContent = "Download started: the file streams as it is written.";
    }
  });
  refresh();
})();
