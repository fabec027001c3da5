// The match page (templates/research/match.html): the replay of the event log that the server
// wrote into the json_script block "match-log" (static/gt/monitor.js).
(function () {
  "use strict";
  const log = document.getElementById("match-log");
  if (log) GTMonitor.matchReplay(JSON.parse(log.textContent));
})();
