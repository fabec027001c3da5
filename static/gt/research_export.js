// The export page (templates/research/export.html).
(function () {
  "use strict";
  // The count of matches the filters select, refreshed as they change (the download itself is a plain
  // GET: the browser shows its progress as bytes arrive).
  var form = document.getElementById("export-form"), out = document.getElementById("export-count");
  if (!form) return;
  // Each change asks again; answers can arrive out of order (two quick changes), so only the answer
  // to the latest question is shown: a stale count never overwrites the current one.
  var asked = 0, warning = document.getElementById("export-warning"), latest = null, warned = false;
  // an empty file (a format of another game than the batch's, or nothing selected) is announced, and
  // the first click on Download only repeats the warning: a second click downloads it anyway
  function showWarning(text) {
    warning.hidden = !text;
    warning.textContent = text || "";
    warned = false;
  }
  function refresh() {
    var params = new URLSearchParams(new FormData(form));
    params.set("count", "1");
    var mine = ++asked;
    fetch(form.action + "?" + params.toString(), {credentials: "same-origin"})
      .then(function (r) { return r.json(); })
      .then(function (j) {
        if (mine !== asked) return;
        latest = j;
        out.textContent = j.errors ? "Fix the form to see a count." : j.matches + " matches selected (" + j.filename + ").";
        showWarning(j.errors ? "" : j.warning);
      })
      .catch(function () { if (mine === asked) out.textContent = ""; });
  }
  form.addEventListener("change", refresh);
  form.addEventListener("submit", function (ev) {
    if (ev.submitter && ev.submitter.id === "export-download" && latest && latest.warning && !warned) {
      ev.preventDefault();
      warning.hidden = false;
      warning.textContent = latest.warning + " Click Download again to download the empty file anyway.";
      warned = true;
      return;
    }
    if (ev.submitter && ev.submitter.id === "export-download") {
      document.getElementById("export-progress").textContent = "Download started: the file streams as it is written.";
    }
  });
  refresh();
})();
