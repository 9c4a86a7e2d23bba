// The upload page: sends the bundle in chunks through the API's upload protocol (submissions/intake/uploads.py),
// with a progress bar; a dropped connection is retried from the offset the portal holds, and an upload cut
// by a reload resumes when the same file is chosen again (its id is kept in localStorage).
// Without this script the form posts the file whole.
(function () {
  const form = document.querySelector("form.upload");
  if (!form || !window.fetch || !window.localStorage) return;
  const api = form.dataset.api;
  const CHUNK = 8 * 1024 * 1024;
  const csrf = form.querySelector("[name=csrfmiddlewaretoken]").value;
  const box = document.getElementById("upload-progress");
  const bar = box.querySelector("progress");
  const said = box.querySelector("[data-field=text]");
  const button = form.querySelector("button[type=submit]");
  // Words in the page's language: Django's JavaScript catalogue (/jsi18n/, loaded by base.html), else as written.
  const gettext = window.gettext || ((text) => text);
  const interpolate = (text, values) => text.replace(/%\((\w+)\)s/g, (_, name) => values[name]);

  function key(round, file) {
    return `portal-upload:${round}:${file.name}:${file.size}:${file.lastModified}`;
  }

  function say(text) {
    said.textContent = text;
  }

  function mb(bytes) {
    return (bytes / 1e6).toFixed(1) + " MB";
  }

  async function call(method, url, body) {
    const response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrf, "Content-Type": "application/json", Accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try {
      data = await response.json();
    } catch (e) {
      data = null;
    }
    return { status: response.status, data, offset: response.headers.get("Upload-Offset") };
  }

  // One chunk by XMLHttpRequest, for its upload progress events; resolves to {status, offset}.
  function patch(url, offset, blob, onProgress) {
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest();
      xhr.open("PATCH", url);
      xhr.setRequestHeader("X-CSRFToken", csrf);
      xhr.setRequestHeader("Upload-Offset", String(offset));
      xhr.setRequestHeader("Content-Type", "application/offset+octet-stream");
      xhr.upload.onprogress = (event) => onProgress(offset + event.loaded);
      xhr.onload = () => {
        let detail = "";
        try {
          detail = JSON.parse(xhr.responseText || "{}").detail || "";
        } catch (e) {}
        resolve({ status: xhr.status, offset: xhr.getResponseHeader("Upload-Offset"), detail });
      };
      xhr.onerror = xhr.ontimeout = () => resolve({ status: 0 });
      xhr.send(blob);
    });
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  async function held(url) {
    const r = await call("GET", url);
    return r.status === 200 ? Number(r.offset) : null;
  }

  async function send(file, round) {
    const remembered = localStorage.getItem(key(round, file));
    let url = null;
    let offset = 0;
    if (remembered) {
      url = `${api}${remembered}/`;
      offset = await held(url);
      if (offset === null) url = null;
      else say(interpolate(gettext("Resuming at %(at)s of %(size)s."), { at: mb(offset), size: mb(file.size) }));
    }
    if (url === null) {
      const created = await call("POST", api, { round, name: file.name, size: file.size });
      if (created.status !== 201) throw new Error(refusal(created.data));
      localStorage.setItem(key(round, file), created.data.uid);
      url = `${api}${created.data.uid}/`;
    }
    let failures = 0;
    while (offset < file.size) {
      const end = Math.min(offset + CHUNK, file.size);
      const r = await patch(url, offset, file.slice(offset, end), (at) => show(at, file.size));
      if (r.status === 204) {
        offset = Number(r.offset);
        failures = 0;
      } else if (r.status === 409 && r.offset !== null) {
        offset = Number(r.offset);
      } else if (r.status === 0 || r.status >= 500) {
        failures += 1;
        say(
          interpolate(gettext("Connection lost at %(at)s; trying again (%(tries)s)."), {
            at: mb(offset),
            tries: failures,
          }),
        );
        await sleep(Math.min(1000 * 2 ** failures, 30000));
        const h = await held(url);
        if (h !== null) offset = h;
      } else {
        throw new Error(r.detail || interpolate(gettext("The portal answered %(status)s."), { status: r.status }));
      }
      show(offset, file.size);
    }
    say(gettext("Checking the bundle's sha256…"));
    const done = await call("POST", `${url}complete/`, {});
    if (done.status !== 201 && done.status !== 200) throw new Error(refusal(done.data));
    localStorage.removeItem(key(round, file));
    return done.data;
  }

  function refusal(data) {
    if (!data) return gettext("The portal refused the upload.");
    if (data.detail) return data.detail;
    return Object.entries(data)
      .map(([field, errors]) => `${field}: ${[].concat(errors).join(" ")}`)
      .join(" ");
  }

  function show(at, size) {
    bar.max = size;
    bar.value = at;
    say(
      interpolate(gettext("%(at)s of %(size)s (%(percent)s)"), {
        at: mb(at),
        size: mb(size),
        percent: `${Math.floor((100 * at) / size)}%`,
      }),
    );
  }

  form.addEventListener("submit", async (event) => {
    const file = form.querySelector("input[type=file]").files[0];
    const round = form.querySelector("[name=round]").value;
    if (!file) return; // the form says what is missing
    event.preventDefault();
    box.hidden = false;
    button.disabled = true;
    try {
      const submission = await send(file, round);
      say(gettext("Received."));
      window.location.assign(submission.url); // its status, with the receipt linked
    } catch (error) {
      say(error.message);
      box.classList.add("errorlist");
      button.disabled = false;
    }
  });

  // Unfinished uploads of this browser, to be resumed by choosing the same file again.
  const unfinished = Object.keys(localStorage).filter((k) => k.startsWith("portal-upload:"));
  if (unfinished.length) {
    const note = document.getElementById("upload-unfinished");
    note.hidden = false;
    note.querySelector("[data-field=names]").textContent = unfinished
      .map((k) => k.split(":").slice(2, -2).join(":"))
      .join(", ");
  }
})();
