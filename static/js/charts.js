// Draws every chart on the page: a <script type="application/json" data-chart="ID"> holds a
// plotly figure ({data, layout}) for the element with that id. plotly.js (its basic bundle,
// served locally: the URL is this script's data-plotly) is loaded only when a chart comes
// near the screen, so a page whose charts are below the fold costs no 400 KB up front.
(function () {
  "use strict";
  var source = document.currentScript && document.currentScript.dataset.plotly;
  var rules = document.currentScript && document.currentScript.dataset.plotlyRules;
  var loading = null;
  var observer = null;

  // plotly.js writes its own CSS rules (the mode bar's, the hover labels', the notifier's) into the
  // stylesheet of id "plotly.js-style-global", and makes a <style> element of that id where there is
  // none, which the site's Content-Security-Policy refuses (style-src 'self': no inline styles). So
  // that id is given first to an empty stylesheet of the site's (data-plotly-rules): plotly adds its
  // rules to it through the CSSOM (insertRule), which the policy does not govern.
  function rulesSheet() {
    return new Promise(function (resolve) {
      if (!rules || document.getElementById("plotly.js-style-global")) return resolve();
      var link = document.createElement("link");
      link.id = "plotly.js-style-global";
      link.rel = "stylesheet";
      link.href = rules;
      link.onload = link.onerror = function () { resolve(); };
      document.head.appendChild(link);
    });
  }

  function plotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!loading) {
      loading = rulesSheet().then(function () {
        return new Promise(function (resolve, reject) {
          var script = document.createElement("script");
          script.src = source;
          script.async = true;
          script.onload = function () { resolve(window.Plotly); };
          script.onerror = function () { loading = null; reject(new Error("plotly.js did not load")); };
          document.head.appendChild(script);
        });
      });
    }
    return loading;
  }

  function drawOne(script) {
    var target = document.getElementById(script.dataset.chart);
    if (!target || !window.Plotly) return;
    var figure = JSON.parse(script.textContent);
    if (target.clientWidth < 600) narrow(figure.layout, figure.data.length);
    clearOfModeBar(figure.layout, target.clientWidth);
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
  }

  // At a phone's width the legend (a line per series below the plot) would take the plot's height, and
  // two-line tick labels would overlap: the chart grows by the legend's lines and ticks keep their first line.
  function narrow(layout, series) {
    layout.height = (layout.height || 450) + 20 * Math.max(series - 3, 0);
    layout.legend = Object.assign({}, layout.legend, { font: { size: 11 } });
    ["xaxis", "yaxis"].forEach(function (name) {
      var axis = layout[name];
      if (axis && axis.ticktext) {
        axis.ticktext = axis.ticktext.map(function (t) { return String(t).split("<br>")[0]; });
        axis.tickangle = 0;
      }
    });
  }

  // The mode bar (plotly's toolbar: zoom, pan, download) sits in the figure's top right corner, where the
  // title ran under it (issue 39): the title goes below the bar's row, in lines that fit the chart's
  // width, and the plot below the title.
  var MODEBAR = 30;
  function clearOfModeBar(layout, width) {
    var title = layout.title;
    if (!title || !title.text) return;
    var size = (title.font && title.font.size) || 17;
    var perLine = Math.max(Math.floor((width - 20) / (size * 0.6)), 12);
    var lines = [];
    String(title.text).split("<br>").forEach(function (line) {
      var words = line.split(" "), current = "";
      words.forEach(function (word) {
        if (current && (current + " " + word).length > perLine) { lines.push(current); current = word; }
        else current = current ? current + " " + word : word;
      });
      lines.push(current);
    });
    layout.title = Object.assign({}, title, {
      text: lines.join("<br>"), yref: "container", y: 1, yanchor: "top",
      pad: Object.assign({}, title.pad, { t: MODEBAR + 4 }),
    });
    layout.margin = Object.assign({}, layout.margin);
    layout.margin.t = Math.max(layout.margin.t || 0, MODEBAR + 4 + Math.ceil(lines.length * size * 1.3) + 8);
    layout.height = (layout.height || 450) + layout.margin.t - 40;
  }

  function whenNear(script) {
    var target = document.getElementById(script.dataset.chart);
    if (!target) return;
    if (window.Plotly || !("IntersectionObserver" in window)) {
      plotly().then(function () { drawOne(script); });
      return;
    }
    if (!observer) {
      observer = new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (!entry.isIntersecting) return;
          observer.unobserve(entry.target);
          var json = document.querySelector('script[data-chart="' + CSS.escape(entry.target.id) + '"]');
          if (json) plotly().then(function () { drawOne(json); });
        });
      }, { rootMargin: "400px 0px" });
    }
    observer.observe(target);
  }

  function draw(root) {
    (root || document).querySelectorAll("script[data-chart]").forEach(whenNear);
  }

  window.PortalCharts = { draw: draw };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { draw(); });
  } else {
    draw();
  }
})();
