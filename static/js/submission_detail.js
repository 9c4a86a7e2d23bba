// Polls the submission's progress until it is final, then reloads to show the results.
(function () {
  const box = document.getElementById("progress");
  if (!box || box.dataset.final === "1") return;
  const bar = document.getElementById("run-progress");
  async function poll() {
    const response = await fetch(box.dataset.url, { headers: { Accept: "application/json" } });
    if (!response.ok) return setTimeout(poll, 5000);
    const p = await response.json();
    if (p.final) return window.location.reload();
    box.querySelector('[data-field="status_label"]').textContent = p.status_label;
    box.querySelector('[data-field="counts"]').textContent = `checked ${p.runs_checked} of ${p.runs_total} runs`;
    bar.max = p.runs_total || 1;
    bar.value = p.runs_checked;
    setTimeout(poll, 1500);
  }
  setTimeout(poll, 1500);
})();
