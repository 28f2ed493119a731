/// The preview page: one HTML document with its CSS and JavaScript inline, no external assets.
///
/// It shows the MJPEG stream (output or input), builds controls from `/state`'s parameters (sliders
/// with their ranges, colour pickers, checkboxes, dropdowns), overlays the current compile error with
/// its line, and shows fps and per-pass GPU times. Snapshot downloads `/snapshot`; record toggles
/// `/record` with a running timer. With a camera input a Camera dropdown lists `/state`'s cameras and
/// posts the choice to `/camera` (the switch happens between frames; the page shows it pending until then).
/// Pressing and dragging on the output posts the pointer to `/mouse` (ShaderToy's `iMouse`), one request
/// in flight at a time: moves coalesce to the newest, presses and releases are always sent.
///
/// With `?selftest=stream`, `?selftest=error` or `?selftest=mouse` in the URL the page tests itself and reports the result
/// in `#selftest` (and to `/selftest` when the server allows it): whether the stream shows a non-blank
/// picture, whether moving the first slider changes it, whether the error overlay is up and its text,
/// whether pressing and dragging on the picture changes it (a shader reading `iMouse`).
enum PreviewPage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>prism dev</title>
<style>
  :root { color-scheme: dark; --bg:#111418; --panel:#1b2027; --line:#2c333d; --text:#d8dee6; --dim:#8b95a3; --accent:#4fa3ff; --bad:#ff5a5a; }
  * { box-sizing: border-box; }
  body { margin:0; background:var(--bg); color:var(--text); font:14px/1.4 system-ui, sans-serif; }
  header { display:flex; gap:16px; align-items:baseline; padding:8px 14px; border-bottom:1px solid var(--line); }
  header h1 { font-size:15px; margin:0; font-weight:600; }
  header .dim { color:var(--dim); font-size:12px; }
  main { display:flex; gap:14px; padding:14px; align-items:flex-start; flex-wrap:wrap; }
  #stage { position:relative; flex:1 1 640px; min-width:320px; background:#000; border:1px solid var(--line); }
  #video { display:block; width:100%; height:auto; min-height:120px; touch-action:none; }
  #error { position:absolute; left:0; right:0; bottom:0; margin:0; padding:10px 12px; background:rgba(120,0,0,.88);
           color:#fff; font:13px/1.35 ui-monospace, monospace; white-space:pre-wrap; max-height:60%; overflow:auto; }
  #error .line { font-weight:700; color:#ffd0d0; }
  aside { flex:0 1 340px; min-width:280px; display:flex; flex-direction:column; gap:12px; }
  section { background:var(--panel); border:1px solid var(--line); border-radius:6px; padding:10px 12px; }
  section h2 { margin:0 0 8px; font-size:12px; text-transform:uppercase; letter-spacing:.06em; color:var(--dim); }
  .row { display:flex; gap:8px; align-items:center; margin:6px 0; }
  .row label { flex:0 0 110px; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
  .row input[type=range] { flex:1; }
  .row output { flex:0 0 56px; text-align:right; font-variant-numeric:tabular-nums; color:var(--dim); }
  button, .button { background:#2a3340; color:var(--text); border:1px solid var(--line); border-radius:4px; padding:5px 10px;
           font:inherit; cursor:pointer; text-decoration:none; }
  button:hover, .button:hover { border-color:var(--accent); }
  #record.on { background:#7a1f1f; border-color:var(--bad); }
  #timer { font-variant-numeric:tabular-nums; margin-left:6px; }
  table { width:100%; border-collapse:collapse; font-size:12px; }
  td { padding:2px 0; } td.ms { text-align:right; font-variant-numeric:tabular-nums; }
  .toggle label { margin-right:10px; }
  #selftest { display:none; }
</style>
</head>
<body>
<header><h1 id="title">prism dev</h1><span class="dim" id="fps">– fps</span><span class="dim" id="info"></span></header>
<main>
  <div id="stage">
    <img id="video" alt="live preview">
    <pre id="error" hidden></pre>
  </div>
  <aside>
    <section>
      <h2>View</h2>
      <div class="toggle">
        <label><input type="radio" name="view" value="output" checked> output</label>
        <label><input type="radio" name="view" value="input"> input</label>
      </div>
      <div class="row">
        <a class="button" id="snapshot" href="/snapshot" download>Snapshot (PNG)</a>
        <button id="record" type="button">● Record</button><span id="timer"></span>
      </div>
      <div class="dim" id="recinfo"></div>
    </section>
    <section id="camerabox" hidden><h2>Camera</h2>
      <div class="row"><select id="camera" aria-label="camera"></select></div>
      <div class="dim" id="camerainfo"></div>
    </section>
    <section><h2>Parameters</h2><div id="params"><span class="dim">none</span></div></section>
    <section><h2>GPU passes</h2><table id="passes"></table><div class="dim" id="timing"></div></section>
  </aside>
</main>
<pre id="selftest"></pre>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let view = "output";
let signature = "";
let recording = null;      // {since: ms timestamp} while recording
let lastState = null;
const pendingSends = new Map();

function startStream() {
  $("video").src = "/stream?view=" + view + "&t=" + Date.now();
}
for (const radio of document.querySelectorAll("input[name=view]")) {
  radio.addEventListener("change", () => { view = radio.value; startStream(); });
}

function post(path, body) {
  return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
    .then((r) => r.json().then((j) => ({ ok: r.ok, body: j })));
}

// The pointer over the output, for ShaderToy's iMouse, in output pixels from the bottom left.
const mouseQueue = [];
let mouseBusy = false, pointerDown = false;
function sendMouse(e, down, move) {
  if (view !== "output" || !lastState) return;
  const r = $("video").getBoundingClientRect();
  if (!r.width || !r.height) return;
  const w = lastState.size[0], h = lastState.size[1];
  const body = { x: Math.min(w, Math.max(0, (e.clientX - r.left) / r.width * w)),
                 y: Math.min(h, Math.max(0, (1 - (e.clientY - r.top) / r.height) * h)), down };
  const last = mouseQueue[mouseQueue.length - 1];
  if (move && last && last.move) last.body = body; else mouseQueue.push({ body, move });
  pumpMouse();
}
function pumpMouse() {
  if (mouseBusy || !mouseQueue.length) return;
  mouseBusy = true;
  post("/mouse", mouseQueue.shift().body).catch(() => {}).finally(() => { mouseBusy = false; pumpMouse(); });
}
$("video").addEventListener("pointerdown", (e) => {
  pointerDown = true;
  try { $("video").setPointerCapture(e.pointerId); } catch (_) { /* a synthetic pointer (the self-test) has nothing to capture */ }
  e.preventDefault();
  sendMouse(e, true, false);
});
$("video").addEventListener("pointermove", (e) => { if (pointerDown) sendMouse(e, true, true); });
for (const type of ["pointerup", "pointercancel"]) {
  $("video").addEventListener(type, (e) => { if (pointerDown) { pointerDown = false; sendMouse(e, false, false); } });
}

// Parameter changes: at most one request in flight per parameter, the newest value wins.
function sendParam(p, value) {
  const key = p.node + "." + p.name;
  const entry = pendingSends.get(key);
  if (entry) { entry.value = value; return; }
  const slot = { value };
  pendingSends.set(key, slot);
  const go = () => {
    const v = slot.value;
    slot.value = undefined;
    post("/param", { node: p.node, name: p.name, value: v }).catch(() => {}).finally(() => {
      if (slot.value !== undefined) go(); else pendingSends.delete(key);
    });
  };
  go();
}

function hex(c) {
  return "#" + c.slice(0, 3).map((v) => Math.round(Math.min(1, Math.max(0, v)) * 255).toString(16).padStart(2, "0")).join("");
}
function fromHex(h, alpha) {
  return [1, 3, 5].map((i) => parseInt(h.substr(i, 2), 16) / 255).concat([alpha]);
}
function fmt(v) { return (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3)).replace(/\.?0+$/, "") || "0"; }

function buildControls(params) {
  const box = $("params");
  box.textContent = "";
  if (!params.length) { box.innerHTML = '<span class="dim">none</span>'; return; }
  for (const p of params) {
    const row = document.createElement("div");
    row.className = "row";
    const label = document.createElement("label");
    label.textContent = p.name;
    label.title = (p.summary || "") + " (" + p.filter + ")";
    row.appendChild(label);
    let input;
    if (p.type === "float" || p.type === "int") {
      input = document.createElement("input");
      input.type = "range";
      input.min = p.min; input.max = p.max;
      input.step = p.type === "int" ? 1 : ((p.max - p.min) / 1000 || 0.001);
      input.value = p.value;
      const out = document.createElement("output");
      out.textContent = fmt(p.value);
      input.addEventListener("input", () => {
        const v = p.type === "int" ? parseInt(input.value, 10) : parseFloat(input.value);
        out.textContent = fmt(v);
        sendParam(p, v);
      });
      row.appendChild(input); row.appendChild(out);
      input._sync = (v) => { input.value = v; out.textContent = fmt(v); };
    } else if (p.type === "bool") {
      input = document.createElement("input");
      input.type = "checkbox";
      input.checked = p.value;
      input.addEventListener("change", () => sendParam(p, input.checked));
      row.appendChild(input);
      input._sync = (v) => { input.checked = v; };
    } else if (p.type === "color") {
      input = document.createElement("input");
      input.type = "color";
      input.value = hex(p.value);
      input.addEventListener("input", () => sendParam(p, fromHex(input.value, p.value[3])));
      row.appendChild(input);
      input._sync = (v) => { input.value = hex(v); };
    } else if (p.type === "choice") {
      input = document.createElement("select");
      for (const option of p.options) {
        const o = document.createElement("option");
        o.value = option; o.textContent = option;
        input.appendChild(o);
      }
      input.value = p.value;
      input.addEventListener("change", () => sendParam(p, input.value));
      row.appendChild(input);
      input._sync = (v) => { input.value = v; };
    } else if (p.type === "point") {
      input = document.createElement("span");
      const xs = [0, 1].map((i) => {
        const n = document.createElement("input");
        n.type = "number"; n.step = "any"; n.style.width = "70px"; n.value = p.value[i];
        n.addEventListener("change", () => sendParam(p, xs.map((e) => parseFloat(e.value) || 0)));
        input.appendChild(n);
        return n;
      });
      row.appendChild(input);
      input._sync = (v) => { xs[0].value = v[0]; xs[1].value = v[1]; };
    } else {
      input = document.createElement("span");
      input.className = "dim";
      input.textContent = String(p.value);
      row.appendChild(input);
      input._sync = (v) => { input.textContent = String(v); };
    }
    input.dataset.key = p.node + "." + p.name;
    input.dataset.type = p.type;
    box.appendChild(row);
  }
}

function render(state) {
  lastState = state;
  $("title").textContent = "prism dev — " + state.shader.split("/").pop();
  $("fps").textContent = state.fps.toFixed(1) + " fps · frame " + state.frames;
  $("info").textContent = state.size[0] + "×" + state.size[1] + " · " + state.renderer;
  const sig = JSON.stringify(state.parameters.map((p) => [p.node, p.name, p.type, p.min, p.max, p.options]));
  if (sig !== signature) { signature = sig; buildControls(state.parameters); }
  else {
    for (const p of state.parameters) {
      const el = document.querySelector('[data-key="' + p.node + "." + p.name + '"]');
      if (el && el._sync && document.activeElement !== el && !pendingSends.has(p.node + "." + p.name)) el._sync(p.value);
    }
  }
  const err = $("error");
  if (state.error) {
    err.hidden = false;
    err.textContent = "";
    const where = document.createElement("span");
    where.className = "line";
    where.textContent = state.error.file.split("/").pop() + (state.error.line ? " line " + state.error.line : "")
      + (state.error.column ? ", column " + state.error.column : "") + "\n";
    err.appendChild(where);
    err.appendChild(document.createTextNode(state.error.text + "\n(the last good shader keeps running)"));
  } else {
    err.hidden = true;
  }
  const table = $("passes");
  table.textContent = "";
  for (const pass of state.passes) {
    const tr = table.insertRow();
    tr.insertCell().textContent = pass.label;
    const ms = tr.insertCell(); ms.className = "ms"; ms.textContent = pass.ms.toFixed(2) + " ms";
  }
  $("timing").textContent = state.timing;
  const rec = state.recording;
  if (rec.active && !recording) recording = { since: performance.now() - rec.seconds * 1000 };
  if (!rec.active) recording = null;
  $("record").classList.toggle("on", rec.active);
  $("record").textContent = rec.active ? "■ Stop" : "● Record";
  $("recinfo").textContent = rec.error ? "recording failed: " + rec.error
    : (rec.active ? rec.path : (rec.note ? rec.note : (rec.last ? "saved " + rec.last : "")));
  renderCamera(state.camera);
}

let cameraSignature = "";
function renderCamera(cam) {
  $("camerabox").hidden = !cam;
  if (!cam) return;
  const select = $("camera");
  const sig = JSON.stringify(cam.cameras);
  if (sig !== cameraSignature) {
    cameraSignature = sig;
    select.textContent = "";
    for (const c of cam.cameras) {
      const option = document.createElement("option");
      option.value = c.path;
      option.textContent = c.path + (c.card ? " — " + c.card : "");
      select.appendChild(option);
    }
  }
  if (document.activeElement !== select && !cam.pending) select.value = cam.device;
  $("camerainfo").textContent = cam.error ? cam.error : (cam.pending ? "switching to " + cam.pending + "…" : "");
}
$("camera").addEventListener("change", (e) => {
  const device = e.target.value;
  post("/camera", { device }).then(poll);
  e.target.blur();
});

function tickTimer() {
  if (!recording) { $("timer").textContent = ""; return; }
  const s = Math.floor((performance.now() - recording.since) / 1000);
  $("timer").textContent = String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
}
setInterval(tickTimer, 250);

$("record").addEventListener("click", () => {
  const action = lastState && lastState.recording.active ? "stop" : "start";
  if (action === "start") recording = { since: performance.now() };
  post("/record", { action }).then(poll);
});

function poll() {
  return fetch("/state", { cache: "no-store" }).then((r) => r.json()).then(render).catch(() => {});
}
setInterval(poll, 500);

// ---- self-test (?selftest=stream | ?selftest=error) ----
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function grab() {
  const img = $("video");
  if (!img.naturalWidth) return null;
  const c = document.createElement("canvas");
  c.width = 64; c.height = 36;
  const g = c.getContext("2d", { willReadFrequently: true });
  g.drawImage(img, 0, 0, c.width, c.height);
  return g.getImageData(0, 0, c.width, c.height).data;
}
function stats(d) {
  let sum = 0, sq = 0, n = 0;
  for (let i = 0; i < d.length; i += 4) { const l = (d[i] + d[i + 1] + d[i + 2]) / 3; sum += l; sq += l * l; n++; }
  const mean = sum / n;
  return { mean, variance: sq / n - mean * mean };
}
function diff(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i += 4) s += Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]);
  return s / (a.length / 4) / 3;
}
async function waitFor(check, ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) { const v = check(); if (v) return v; await sleep(100); }
  return null;
}
async function selfTest(mode) {
  const result = { mode, loaded: false };
  try {
    await waitFor(() => lastState, 10000);
    const first = await waitFor(grab, 15000);
    result.loaded = !!first;
    if (first) {
      const s = stats(first);
      result.mean = s.mean; result.variance = s.variance;
      result.nonBlank = s.variance > 20;
    }
    if (mode === "stream") {
      const slider = document.querySelector('#params input[type=range]');
      result.slider = slider ? slider.dataset.key : null;
      if (slider && first) {
        const before = grab();
        slider.value = (parseFloat(slider.value) - parseFloat(slider.min) > (parseFloat(slider.max) - parseFloat(slider.min)) / 2)
          ? slider.min : slider.max;
        slider.dispatchEvent(new Event("input", { bubbles: true }));
        let changed = 0;
        await waitFor(() => { const now = grab(); changed = now ? diff(before, now) : 0; return changed > 8; }, 8000);
        result.sliderDifference = changed;
        result.sliderChanges = changed > 8;
      }
    } else if (mode === "mouse") {
      // Press at a quarter of the width and height from the top left, drag to three quarters across,
      // release there: the shader's picture must change while the pointer is down.
      const img = $("video"), r = img.getBoundingClientRect();
      const at = (fx, fy) => ({ clientX: r.left + r.width * fx, clientY: r.top + r.height * fy, pointerId: 1,
                                bubbles: true, button: 0, buttons: 1, isPrimary: true });
      const before = grab();
      img.dispatchEvent(new PointerEvent("pointerdown", at(0.25, 0.25)));
      img.dispatchEvent(new PointerEvent("pointermove", at(0.75, 0.25)));
      let changed = 0;
      await waitFor(() => { const now = grab(); changed = now && before ? diff(before, now) : 0; return changed > 8; }, 8000);
      result.mouseDifference = changed;
      result.mouseChanges = changed > 8;
      img.dispatchEvent(new PointerEvent("pointerup", at(0.75, 0.25)));
      await waitFor(() => !mouseBusy && !mouseQueue.length, 4000);
      result.mouseSent = !mouseBusy && !mouseQueue.length;
    } else if (mode === "error") {
      const shown = await waitFor(() => !$("error").hidden && $("error").textContent, 10000);
      result.errorShown = !!shown;
      result.errorText = shown || "";
      result.errorLine = lastState && lastState.error ? lastState.error.line : null;
      result.errorVisible = !!shown && $("error").getBoundingClientRect().height > 0;
    }
  } catch (e) {
    result.exception = String(e);
  }
  $("selftest").textContent = JSON.stringify(result);
  document.title = "selftest:done";
  fetch("/selftest", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(result) }).catch(() => {});
}

window.addEventListener("load", () => {
  startStream();
  poll();
  const mode = new URLSearchParams(location.search).get("selftest");
  if (mode === "stream" || mode === "error" || mode === "mouse") selfTest(mode);
});
</script>
</body>
</html>
"""#
}
