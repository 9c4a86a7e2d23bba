// Polls the submission's progress until it is final, then reloads to show the results.
(function () {
  const box = document.getElementById("progress");
  if (!box || box.dataset.final === "1") return;
  const bar = document.getElementById("run-progress");
  // The page's words for what progress.json gives as codes and numbers (its language: portal/language.py).
  const words = JSON.parse(document.getElementById("step-words")?.textContent || "{}");
  const counts = box.dataset.counts || "checked {checked} of {total} runs";
  // The steps (submissions/checking/status.py), as the page first drew them.
  function renderSteps(steps) {
    const list = box.querySelector('[data-field="steps"]');
    if (!list || !steps) return;
    list.replaceChildren(
      ...steps.map((step) => {
        const item = document.createElement("li");
        item.className = `step step-${step.state}`;
        item.dataset.code = step.code;
        const label = document.createElement("strong");
        label.textContent = step.label;
        const state = document.createElement("span");
        state.className = "step-state";
        state.textContent = words[step.state] || step.state;
        item.append(label, ": ", state);
        if (step.detail) {
          const detail = document.createElement("span");
          detail.className = "step-detail";
          detail.textContent = step.detail;
          item.append(box.dataset.sentenceGap || ". ", detail);
        }
        return item;
      }),
    );
  }
  async function poll() {
    const response = await fetch(box.dataset.url, { headers: { Accept: "application/json" } });
    if (!response.ok) return setTimeout(poll, 5000);
    const p = await response.json();
    if (p.final) return window.location.reload();
    box.querySelector('[data-field="status_label"]').textContent = p.status_label;
    box.querySelector('[data-field="counts"]').textContent = counts
      .replace("{checked}", p.runs_checked)
      .replace("{total}", p.runs_total);
    renderSteps(p.steps);
    bar.max = p.runs_total || 1;
    bar.value = p.runs_checked;
    setTimeout(poll, 1500);
  }
  setTimeout(poll, 1500);
})();
