// The round table without page loads: filters, sorting and units update the results in
// place and the address bar, so every view stays a permalink. Without this script the
// same form and links work through the server (press "Apply").
(function () {
  "use strict";
  var form = document.getElementById("table-filters");
  var results = document.getElementById("results");
  var live = document.getElementById("live-summary");
  if (!form || !results) return;

  var selected = [];  // compare choices survive a refresh of the table
  var focusAfter = null;  // where keyboard focus goes once the table is swapped (a removed chip's place)
  var pending = null;
  var typingTimer = null;

  function queryOf() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      if (name === "round" || value === "") return;
      params.append(name, value);
    });
    return params.toString();
  }

  function refresh(push) {
    var query = queryOf();
    var url = form.getAttribute("action") + (query ? "?" + query : "");
    if (pending) pending.abort();
    pending = new AbortController();
    results.setAttribute("aria-busy", "true");
    var partial = url + (query ? "&" : "?") + "partial=1";
    fetch(partial, { signal: pending.signal, headers: { "X-Requested-With": "fetch" } })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        results.innerHTML = html;
        results.removeAttribute("aria-busy");
        // The address holds the view's canonical query (defaults left out), as the server wrote it.
        var state = results.querySelector("[data-query]");
        if (state) {
          query = state.dataset.query;
          url = form.getAttribute("action") + (query ? "?" + query : "");
        }
        if (push) history.pushState({ query: query }, "", url);
        else history.replaceState({ query: query }, "", url);
        restoreCompare();
        if (focusAfter) {
          var target = results.querySelector(focusAfter) || results.querySelector("[data-summary]");
          if (target) target.focus();
          focusAfter = null;
        }
        var summary = results.querySelector("[data-summary]");
        if (live && summary) live.textContent = summary.textContent;
        updateFilters();
        if (window.PortalCharts) window.PortalCharts.draw(results);
      })
      .catch(function (error) {
        if (error.name !== "AbortError") window.location.href = url;  // fall back to a page load
      });
  }

  // The filters' counts follow the other filters, and the badge counts the filters in force: the swapped
  // results carry both (the form itself is not swapped, so that focus and open lists stay put).
  function updateFilters() {
    var data = results.querySelector("script[data-filter-counts]");
    if (data) {
      var counts = JSON.parse(data.textContent);
      form.querySelectorAll("fieldset.checklist input[type=checkbox]").forEach(function (box) {
        var shown = box.parentNode.querySelector("[data-count]");
        var of = counts[box.name] || {};
        if (shown) shown.textContent = "(" + (of[box.value] || 0) + ")";
      });
    }
    var badge = document.getElementById("filters-active");
    var now = results.querySelector("[data-active-badge]");
    if (badge && now) {
      badge.textContent = now.textContent;
      badge.hidden = now.dataset.activeBadge === "0";
    }
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    refresh(true);
  });
  form.addEventListener("change", function (event) {
    if (!event.target.name) return;  // a list's search box: not part of the view
    if (event.target.name === "round") {
      var query = queryOf();
      window.location.href = "/r/" + encodeURIComponent(event.target.value) + "/" + (query ? "?" + query : "");
      return;
    }
    if (event.target.name === "q") return;  // handled while typing
    refresh(true);
  });
  form.addEventListener("input", function (event) {
    if (event.target.name !== "q" && event.target.type !== "number") return;
    clearTimeout(typingTimer);
    typingTimer = setTimeout(function () { refresh(false); }, 250);
  });

  // Long lists of checkboxes: a search box narrows what they show (it changes no filter).
  form.querySelectorAll("fieldset.checklist").forEach(function (list) {
    var find = list.querySelector(".list-find");
    if (!find) return;
    find.hidden = false;
    find.addEventListener("input", function () {
      var words = find.value.toLowerCase().trim();
      var heading = null, shown = 0;
      function closeGroup() { if (heading) heading.hidden = shown === 0; }
      Array.prototype.forEach.call(list.querySelector(".options").children, function (el) {
        if (el.classList.contains("group")) {  // a family's heading: hidden when none of its names shows
          closeGroup();
          heading = el;
          shown = 0;
          return;
        }
        el.hidden = Boolean(words) && el.textContent.toLowerCase().indexOf(words) < 0;
        if (!el.hidden) shown++;
      });
      closeGroup();
    });
    find.addEventListener("keydown", function (event) {
      if (event.key === "Enter") event.preventDefault();
    });
  });

  // The chips above the table: each removes its filter (its control in the form is cleared).
  function clearControl(name, value) {
    Array.prototype.forEach.call(form.elements, function (el) {
      if (el.name !== name) return;
      if (el.type === "checkbox" || el.type === "radio") {
        if (el.value === value) el.checked = false;
      } else {
        el.value = "";
      }
    });
  }
  results.addEventListener("click", function (event) {
    var chip = event.target.closest("a[data-chip-name], a[data-chip-clear]");
    if (!chip) return;
    event.preventDefault();
    var chips = chip.hasAttribute("data-chip-clear") ? results.querySelectorAll("a[data-chip-name]") : [chip];
    Array.prototype.forEach.call(chips, function (c) { clearControl(c.dataset.chipName, c.dataset.chipValue); });
    focusAfter = "[data-chips] a";
    refresh(true);
  });

  // Column headers sort through the form's "sort" control.
  results.addEventListener("click", function (event) {
    var link = event.target.closest("a[data-sort]");
    if (!link) return;
    var sort = new URL(link.href, window.location.href).searchParams.get("sort") || "";
    var select = form.elements.namedItem("sort");
    if (!select) return;
    event.preventDefault();
    select.value = sort;
    refresh(true);
    var header = link.textContent;
    setTimeout(function () {  // keep keyboard focus on the same header after the swap
      var again = Array.prototype.find.call(results.querySelectorAll("a[data-sort]"), function (a) {
        return a.textContent === header;
      });
      if (again) again.focus();
    }, 300);
  });

  // Compare: 2 to 4 ticked systems. Once one is ticked the form is a tray fixed to the foot of the screen,
  // its button counting them ("Compare (2)"), in reach however far down the table the next one is.
  // Words in the page's language: Django's JavaScript catalogue (/jsi18n/, loaded by base.html), else as written.
  var gettext = window.gettext || function (text) { return text; };
  function interpolate(text, values) {
    return text.replace(/%\((\w+)\)s/g, function (_, name) { return values[name]; });
  }
  function updateCompare() {
    var button = results.querySelector("[data-compare-button]");
    var count = results.querySelector("[data-compare-count]");
    if (!button) return;
    button.disabled = selected.length < 2 || selected.length > 4;
    button.textContent = selected.length
      ? interpolate(gettext("Compare (%(n)s)"), { n: selected.length })
      : gettext("Compare selected");
    button.closest("form").classList.toggle("tray", selected.length > 0);
    if (count) {
      count.textContent = selected.length
        ? interpolate(
            selected.length > 4
              ? gettext("%(n)s selected: at most 4")
              : selected.length < 2
                ? gettext("%(n)s selected: pick one more")
                : gettext("%(n)s selected"),
            { n: selected.length },
          )
        : gettext("Tick 2 to 4 systems.");
    }
  }
  function restoreCompare() {
    results.querySelectorAll("input[name=s][form=compare-form]").forEach(function (box) {
      box.checked = selected.indexOf(box.value) >= 0;
    });
    var compareForm = results.querySelector("#compare-form");
    if (compareForm) {
      // Ticked systems that the filters now hide still count.
      compareForm.querySelectorAll("input[type=hidden][name=s]").forEach(function (el) { el.remove(); });
      selected.forEach(function (value) {
        if (!results.querySelector('input[name=s][form=compare-form][value="' + CSS.escape(value) + '"]')) {
          var hidden = document.createElement("input");
          hidden.type = "hidden"; hidden.name = "s"; hidden.value = value;
          compareForm.appendChild(hidden);
        }
      });
    }
    updateCompare();
  }
  results.addEventListener("change", function (event) {
    var box = event.target;
    if (box.name !== "s") return;
    var at = selected.indexOf(box.value);
    if (box.checked && at < 0) selected.push(box.value);
    if (!box.checked && at >= 0) selected.splice(at, 1);
    updateCompare();
  });

  window.addEventListener("popstate", function () { window.location.reload(); });
  updateCompare();
})();
