// The batch monitor page (templates/research/batch.html): its live view (static/gt/monitor.js)
// reads the JSON at #monitor's data-url.
(function () {
  "use strict";
  const monitor = document.getElementById("monitor");
  if (monitor) GTMonitor.batchMonitor(monitor);
})();
