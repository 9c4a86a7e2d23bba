// Draws every chart on the page: a <script type="application/json" data-chart="ID"> holds a
// plotly figure ({data, layout}) for the element with that id. plotly.js is served locally.
(function () {
  "use strict";

  function draw(root) {
    if (!window.Plotly) return;
    (root || document).querySelectorAll("script[data-chart]").forEach(function (script) {
      var target = document.getElementById(script.dataset.chart);
      if (!target) return;
      var figure = JSON.parse(script.textContent);
      window.Plotly.react(target, figure.data, figure.layout, {
        responsive: true, displaylogo: false,
        modeBarButtonsToRemove: ["select2d", "lasso2d"],
      }).then(function () {
        target.dataset.drawn = String(figure.data.length);
      });
      if (!target.dataset.clickBound) {
        target.dataset.clickBound = "1";
        target.on("plotly_click", function (event) {
          var url = event.points && event.points[0] && event.points[0].customdata;
          if (typeof url === "string" && url.charAt(0) === "/") window.location.href = url;
        });
      }
    });
  }

  window.PortalCharts = { draw: draw };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { draw(); });
  } else {
    draw();
  }
})();
