// judgelab annotate: the page. Everything it loads ships with judgelab; it talks only to the
// server that served it (relative URLs under /<token>/).
"use strict";

const $ = (id) => document.getElementById(id);
let state = null;
let busy = false;
// milliseconds from each request sent to its answer shown (read by workflow/benchmarks/annotate_page.py)
window.annotateTimings = [];

function show(message) {
  $("message").textContent = message || "";
  $("message").hidden = !message;
}

function render(s) {
  state = s;
  const p = s.progress;
  $("who").textContent = "annotator: " + s.annotator;
  $("progress-text").textContent = `${p.labelled} / ${p.total} labelled` + (p.skipped ? `, ${p.skipped} skipped` : "");
  $("progress").max = p.total;
  $("progress").value = p.labelled;
  const scale = $("scale");
  if (scale.childElementCount !== s.scale.length) {
    scale.replaceChildren();
    for (const item of s.scale) {
      const li = document.createElement("li");
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.label = item.label;
      const key = document.createElement("kbd");
      key.textContent = item.label;
      button.append(key, document.createTextNode(item.definition));
      button.addEventListener("click", () => label(item.label));
      li.append(button);
      scale.append(li);
    }
  }
  $("pair").hidden = !s.pair;
  $("done").hidden = !!s.pair;
  for (const b of scale.querySelectorAll("button")) b.disabled = !s.pair;
  $("skip").disabled = !s.pair;
  $("undo").disabled = !s.can_undo;
  if (s.pair) {
    $("ids").textContent = `query ${s.pair.qid} · passage ${s.pair.docid}`;
    $("query").textContent = s.pair.query;
    $("passage").textContent = s.pair.passage;
  }
  document.body.dataset.pair = s.pair ? `${s.pair.qid} ${s.pair.docid}` : "";
  document.body.dataset.labelled = String(p.labelled);
}

async function call(method, path, body) {
  if (busy) return;
  busy = true;
  document.body.classList.add("busy");
  const started = performance.now();
  try {
    const response = await fetch(path, {
      method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
      cache: "no-store",
    });
    const data = await response.json();
    if (response.ok) {
      show("");
      render(data);
      if (body) $("note").value = "";
    } else {
      show("Refused: " + data.error);
      if (data.state) render(data.state);
    }
  } catch (err) {
    show("The server did not answer (" + err + "). Restart `judgelab annotate` and reload: nothing acknowledged is lost.");
  } finally {
    window.annotateTimings.push(performance.now() - started);
    busy = false;
    document.body.classList.remove("busy");
  }
}

function label(value) {
  if (!state || !state.pair) return;
  call("POST", "api/label", { qid: state.pair.qid, docid: state.pair.docid, label: value, note: $("note").value });
}

function skip() {
  if (!state || !state.pair) return;
  call("POST", "api/skip", { qid: state.pair.qid, docid: state.pair.docid, note: $("note").value });
}

function undo() {
  call("POST", "api/undo", {});
}

document.addEventListener("keydown", (event) => {
  if (event.target === $("note")) {
    if (event.key === "Escape") $("note").blur();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (/^[0-9]$/.test(event.key)) {
    const value = Number(event.key);
    if (state && state.scale.some((item) => item.label === value)) label(value);
    else show(`Refused: ${event.key} is not a label of this scale`);
    event.preventDefault();
  } else if (event.key === "s") {
    skip();
    event.preventDefault();
  } else if (event.key === "u") {
    undo();
    event.preventDefault();
  }
});

$("skip").addEventListener("click", skip);
$("undo").addEventListener("click", undo);
call("GET", "api/state");
