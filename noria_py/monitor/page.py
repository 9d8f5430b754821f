"""The dashboard: one self-contained HTML page (inline CSS and JavaScript, nothing fetched
from elsewhere) that polls ``/api/state`` every second and redraws its tables and SVG charts."""

from __future__ import annotations

HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>noria-py dashboard</title>
<style>
  body { font: 13px/1.4 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
  header { background: #1d2330; color: #fff; padding: 10px 18px; display: flex;
           align-items: baseline; gap: 24px; flex-wrap: wrap; }
  header h1 { font-size: 16px; margin: 0; }
  .stat b { font-size: 15px; }
  main { padding: 12px 18px; display: grid; grid-template-columns: 1fr 1fr; gap: 14px; }
  section { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 10px 12px;
            min-width: 0; }
  section.wide { grid-column: 1 / span 2; }
  h2 { font-size: 13px; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .04em;
       color: #4a5366; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: right; padding: 3px 8px; border-bottom: 1px solid #eef0f3;
           white-space: nowrap; }
  th { color: #4a5366; font-weight: 600; }
  td.sql, th.sql { text-align: left; white-space: normal; font-family: ui-monospace, monospace;
                   font-size: 12px; max-width: 560px; word-break: break-word; }
  td.name, th.name { text-align: left; }
  .empty { color: #8a93a6; font-style: italic; }
  #graphbox { overflow: auto; max-height: 760px; }
  svg text { font: 11px ui-monospace, monospace; }
  .legend span { display: inline-block; margin-right: 14px; }
  .swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
            vertical-align: -1px; margin-right: 4px; border: 1px solid #777; }
  #status.stale { color: #ffb4a8; }
</style>
</head>
<body>
<header>
  <h1>noria-py</h1>
  <span class="stat">reads/s <b id="reads-rate">-</b></span>
  <span class="stat">writes/s <b id="writes-rate">-</b></span>
  <span class="stat">deltas/s <b id="deltas-rate">-</b></span>
  <span class="stat">state <b id="state-bytes">-</b></span>
  <span class="stat">budget <b id="budget">-</b></span>
  <span class="stat">evictions <b id="evictions">-</b></span>
  <span class="stat">connections <b id="connections">-</b></span>
  <span class="stat" id="errors-stat" hidden>errors <b id="errors">-</b></span>
  <span class="stat" id="lag-stat" hidden>replication lag <b id="lag">-</b></span>
  <span class="stat" id="status">connecting</span>
</header>
<main>
  <section class="wide">
    <h2>Caches</h2>
    <table id="caches">
      <thead><tr><th class="name">name</th><th class="sql">query</th><th>hits</th>
        <th>misses</th><th>hit rate</th><th>keys</th><th>bytes</th><th>p50 read</th>
        <th>p99 read</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section class="wide">
    <h2>Proxied queries</h2>
    <table id="proxied">
      <thead><tr><th class="name">name</th><th class="sql">query</th><th>runs</th>
        <th class="sql">why not cached</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section>
    <h2>Memory</h2>
    <svg id="memory-chart" width="100%" height="180" viewBox="0 0 600 180"
         preserveAspectRatio="none"></svg>
    <div class="legend"><span><i class="swatch" style="background:#3b6fd8"></i>state</span>
      <span><i class="swatch" style="background:#e08a1e"></i>counted against budget</span>
      <span><i class="swatch" style="background:#c0392b"></i>budget</span></div>
  </section>
  <section>
    <h2>Reads and writes per second</h2>
    <svg id="rate-chart" width="100%" height="180" viewBox="0 0 600 180"
         preserveAspectRatio="none"></svg>
    <div class="legend"><span><i class="swatch" style="background:#2e9e5b"></i>reads/s</span>
      <span><i class="swatch" style="background:#8e44ad"></i>writes/s</span></div>
  </section>
  <section class="wide">
    <h2>Dataflow graph</h2>
    <div class="legend">
      <span><i class="swatch" style="background:#f3f4f6"></i>stateless</span>
      <span><i class="swatch" style="background:#cfe0ff"></i>full state</span>
      <span><i class="swatch" style="background:#ffe3b8"></i>partial state</span>
      <span>border colour: domain</span> <span id="graph-note"></span>
    </div>
    <div id="graphbox"><svg id="graph" width="10" height="10"></svg></div>
  </section>
</main>
<script>
"use strict";
const NS = "http://www.w3.org/2000/svg";
const FILL = {none: "#f3f4f6", full: "#cfe0ff", partial: "#ffe3b8"};
const DOMAIN = ["#4a5366", "#d35400", "#16a085", "#8e44ad", "#2c3e50", "#c0392b",
                "#27ae60", "#2980b9"];
let refreshes = 0;
let graphKey = "";

function el(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function bytes(n) {
  if (n === null || n === undefined) return "-";
  const u = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n.toFixed(0)) + " " + u[i];
}
function num(n, digits) {
  if (n === null || n === undefined) return "-";
  return Number(n).toLocaleString("en-US", {maximumFractionDigits: digits || 0});
}
function ms(v) {
  if (v === null || v === undefined) return "-";
  return v < 1 ? (v * 1000).toFixed(1) + " \\u00b5s" : v.toFixed(2) + " ms";
}
function row(cells) {
  const tr = document.createElement("tr");
  for (const [cls, text] of cells) {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
  }
  return tr;
}
function fillTable(id, rows, cols, emptyText) {
  const body = document.querySelector("#" + id + " tbody");
  body.replaceChildren();
  if (!rows.length) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = cols; td.className = "empty"; td.textContent = emptyText;
    tr.appendChild(td); body.appendChild(tr);
    return;
  }
  for (const r of rows) body.appendChild(r);
}

function drawGraph(g) {
  const key = JSON.stringify(g.nodes.map(n => [n.id, n.materialization, n.layer, n.slot]));
  const svg = document.getElementById("graph");
  document.getElementById("graph-note").textContent =
    g.omitted ? "(" + g.omitted + " more nodes not drawn)" : "";
  if (key === graphKey) {  // same shape: update the numbers only
    for (const n of g.nodes) {
      const t = svg.querySelector('[data-id="' + n.id + '"] .size');
      if (t) t.textContent = sizeText(n);
    }
    return;
  }
  graphKey = key;
  svg.replaceChildren();
  const W = 190, H = 46, GX = 22, GY = 34;
  let width = 0, height = 0;
  const pos = {};
  for (const n of g.nodes) {
    const x = 8 + n.slot * (W + GX), y = 8 + n.layer * (H + GY);
    pos[n.id] = [x, y];
    width = Math.max(width, x + W + 8); height = Math.max(height, y + H + 8);
  }
  svg.setAttribute("width", width); svg.setAttribute("height", height);
  const edges = el("g", {});
  for (const [a, b] of g.edges) {
    const [x1, y1] = pos[a], [x2, y2] = pos[b];
    const sx = x1 + W / 2, sy = y1 + H, tx = x2 + W / 2, ty = y2;
    edges.appendChild(el("path", {
      d: "M" + sx + "," + sy + " C" + sx + "," + (sy + GY / 2) + " " + tx + "," +
         (ty - GY / 2) + " " + tx + "," + ty,
      fill: "none", stroke: "#9aa3b5", "stroke-width": 1.2, class: "edge"}));
  }
  svg.appendChild(edges);
  for (const n of g.nodes) {
    const [x, y] = pos[n.id];
    const grp = el("g", {class: "node " + n.materialization, "data-id": n.id,
                         "data-domain": n.domain, transform: "translate(" + x + "," + y + ")"});
    grp.appendChild(el("title", {}, n.id + ": " + n.label + " [" + n.materialization +
                                    ", domain " + n.domain + "]"));
    grp.appendChild(el("rect", {width: W, height: H, rx: 5, fill: FILL[n.materialization],
                                stroke: DOMAIN[n.domain % DOMAIN.length], "stroke-width": 2}));
    const label = n.id + " " + n.kind + (n.queries.length ? " " + n.queries.join(",") : "") +
      "  d" + n.domain;
    grp.appendChild(el("text", {x: 7, y: 15, "font-weight": "bold"}, label));
    const desc = n.label.length > 27 ? n.label.slice(0, 26) + "\\u2026" : n.label;
    grp.appendChild(el("text", {x: 7, y: 28}, desc));
    grp.appendChild(el("text", {x: 7, y: 40, class: "size", fill: "#4a5366"}, sizeText(n)));
    svg.appendChild(grp);
  }
}
function sizeText(n) {
  return n.materialization === "none" ? "stateless" :
    n.materialization + ": " + num(n.keys) + " keys, " + bytes(n.bytes);
}

function lineChart(id, history, series, extra) {
  const svg = document.getElementById(id);
  svg.replaceChildren();
  const W = 600, H = 180, P = 4;
  let max = 1;
  for (const s of series) for (const p of history) {
    const v = p[s.key]; if (v !== null && v !== undefined) max = Math.max(max, v);
  }
  if (extra) max = Math.max(max, extra.value);
  max *= 1.1;
  const n = history.length;
  const x = i => n <= 1 ? W - P : P + (W - 2 * P) * i / (n - 1);
  const y = v => H - P - (H - 2 * P) * v / max;
  svg.appendChild(el("text", {x: 6, y: 14, fill: "#4a5366"}, series[0].fmt(max)));
  if (extra) {
    svg.appendChild(el("line", {x1: 0, x2: W, y1: y(extra.value), y2: y(extra.value),
                                stroke: extra.color, "stroke-dasharray": "6 4",
                                class: "budget"}));
  }
  for (const s of series) {
    const pts = [];
    history.forEach((p, i) => {
      const v = p[s.key];
      if (v !== null && v !== undefined) pts.push(x(i).toFixed(1) + "," + y(v).toFixed(1));
    });
    if (pts.length) svg.appendChild(el("polyline", {points: pts.join(" "), fill: "none",
                                     stroke: s.color, "stroke-width": 2, class: s.key}));
  }
}

function render(s) {
  refreshes++;
  const r = s.rates || {};
  document.getElementById("reads-rate").textContent = num(r.reads_per_s);
  document.getElementById("writes-rate").textContent = num(r.writes_per_s);
  document.getElementById("deltas-rate").textContent = num(r.deltas_per_s);
  document.getElementById("state-bytes").textContent = bytes(s.memory.state_bytes);
  document.getElementById("budget").textContent =
    s.memory.budget === null ? "unlimited" : bytes(s.memory.budget);
  document.getElementById("evictions").textContent = num(s.totals.evictions);
  document.getElementById("connections").textContent =
    s.totals.connections === null ? "embedded" : num(s.totals.connections);
  document.getElementById("errors-stat").hidden = s.totals.connections === null;
  document.getElementById("errors").textContent = num(s.totals.errors);
  const behind = s.totals.log_behind;
  document.getElementById("lag-stat").hidden = behind === null;
  document.getElementById("lag").textContent = num(behind) + " entries";
  const st = document.getElementById("status");
  st.className = "";
  st.textContent = "updated " + new Date(s.time * 1000).toLocaleTimeString() +
    " (" + refreshes + ")";
  st.dataset.refreshes = refreshes;

  fillTable("caches", s.caches.map(c => {
    const tr = row([["name", c.name], ["sql", c.sql], ["", num(c.hits)], ["", num(c.misses)],
      ["", c.hit_rate === null ? "-" : (100 * c.hit_rate).toFixed(1) + "%"], ["", num(c.keys)],
      ["", bytes(c.bytes)], ["", ms(c.p50_ms)], ["", ms(c.p99_ms)]]);
    tr.dataset.name = c.name;
    return tr;
  }), 9, "no cached queries yet");
  fillTable("proxied", s.proxied.map(p => {
    const tr = row([["name", p.name], ["sql", p.sql], ["", num(p.runs)],
                    ["sql", p.reason || "(no reason recorded)"]]);
    tr.dataset.name = p.name;
    return tr;
  }), 4, "no proxied queries");
  drawGraph(s.graph);
  const h = s.history;
  lineChart("memory-chart", h, [
    {key: "state_bytes", color: "#3b6fd8", fmt: bytes},
    {key: "accounted", color: "#e08a1e", fmt: bytes}],
    s.memory.budget === null ? null : {value: s.memory.budget, color: "#c0392b"});
  lineChart("rate-chart", h, [
    {key: "reads_per_s", color: "#2e9e5b", fmt: v => num(v) + "/s"},
    {key: "writes_per_s", color: "#8e44ad", fmt: v => num(v) + "/s"}]);
}

async function poll() {
  try {
    const resp = await fetch("/api/state", {cache: "no-store"});
    if (!resp.ok) throw new Error(resp.status + " " + (await resp.text()));
    render(await resp.json());
  } catch (e) {
    const st = document.getElementById("status");
    st.className = "stale";
    st.textContent = "not updated: " + e.message;
  }
  setTimeout(poll, 1000);
}
poll();
</script>
</body>
</html>
"""
