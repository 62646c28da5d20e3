// The dashboard's page: plain HTML, a style sheet and a script of its own,
// nothing loaded from the network. The script reads /api/devices and
// /api/topology once, draws the topology as inline SVG, and polls
// /api/metrics every second. Text from the server is set with textContent,
// never parsed as HTML (device and tenant names come from drivers and
// applications).
#include "serve.h"

namespace accel::info::serve {

const char* PageHtml() {
  return R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Accel dashboard</title>
<style>
body { font-family: sans-serif; margin: 16px; color: #222; background: #fafafa; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
h2 { font-size: 15px; margin: 18px 0 6px 0; }
#status, #legend { color: #666; font-size: 12px; }
table { border-collapse: collapse; font-size: 12px; background: #fff; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.row { display: flex; gap: 24px; align-items: flex-start; flex-wrap: wrap; }
svg { background: #fff; border: 1px solid #ccc; }
.error { color: #b00; }
</style>
</head>
<body>
<h1>Accel dashboard</h1>
<div id="status">loading...</div>
<h2>Devices</h2>
<table id="devices"><thead><tr><th>#</th><th>stable id</th><th>kind</th><th>name</th><th>memory</th>
<th>in use</th><th>peak</th><th>buffers</th><th>share free</th><th>backends</th></tr></thead><tbody></tbody></table>
<div class="row">
<div>
<h2>Topology</h2>
<svg id="topology" width="360" height="360" viewBox="0 0 420 420"></svg>
<div id="legend"></div>
</div>
<div>
<h2>Tenants</h2>
<table id="tenants"><thead><tr><th>tenant</th><th>device</th><th>in use</th><th>limit</th><th>peak</th>
<th>buffers</th><th>refused</th></tr></thead><tbody></tbody></table>
<h2>Queues</h2>
<table id="queues"><thead><tr><th>queue</th><th>devices</th><th>memory</th><th>pending</th><th>running</th>
<th>finished</th><th>dominant share</th></tr></thead><tbody></tbody></table>
<h2>Streams</h2>
<table id="streams"><thead><tr><th>stream</th><th>state</th><th>copies</th><th>bytes copied</th></tr></thead>
<tbody></tbody></table>
<h2>Recent decisions</h2>
<table id="decisions"><thead><tr><th>#</th><th>at</th><th>decision</th><th>what</th><th>devices</th></tr></thead>
<tbody></tbody></table>
</div>
<div>
<h2>Scheduler</h2>
<table id="scheduler"><tbody></tbody></table>
</div>
</div>
<div id="errors" class="error"></div>
<script>
"use strict";
const SVG = "http://www.w3.org/2000/svg";

function bytes(n) {
  if (n === null || n === undefined) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
}

function cell(row, text, numeric) {
  const td = document.createElement("td");
  td.textContent = String(text);
  if (numeric) td.className = "num";
  row.appendChild(td);
  return td;
}

function fillRows(table, items, fill) {
  const body = document.querySelector("#" + table + " tbody");
  body.replaceChildren();
  for (const item of items) {
    const tr = document.createElement("tr");
    fill(tr, item);
    body.appendChild(tr);
  }
}

let devices = [];

function drawDevices(report) {
  devices = report.physical_devices;
  fillRows("devices", devices, (tr, d) => {
    tr.className = "device";
    tr.dataset.index = d.index;
    tr.dataset.stableId = d.stable_id;
    cell(tr, d.index, true);
    cell(tr, d.stable_id);
    cell(tr, d.kind);
    cell(tr, d.name);
    cell(tr, bytes(d.memory_total), true);
    cell(tr, "-", true).className = "num used";
    cell(tr, "-", true).className = "num peak";
    cell(tr, "-", true).className = "num buffers";
    cell(tr, "-", true).className = "num share";
    cell(tr, d.access_paths.map((p) => p.backend).join(", "));
  });
}

// Devices on a circle; one line per pair with a path (not self, none or
// unknown), fabric links thick.
function drawTopology(topo) {
  const svg = document.getElementById("topology");
  svg.replaceChildren();
  const n = topo.devices.length;
  const cx = 210, cy = 210, r = n > 1 ? 160 : 0;
  const at = (i) => [cx + r * Math.cos(2 * Math.PI * i / n - Math.PI / 2),
                     cy + r * Math.sin(2 * Math.PI * i / n - Math.PI / 2)];
  const classes = new Set();
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const link = topo.links[i][j];
      if (["X", "-", "?"].includes(link.short)) continue;
      const [x1, y1] = at(i), [x2, y2] = at(j);
      const line = document.createElementNS(SVG, "line");
      line.setAttribute("class", "edge");
      line.setAttribute("x1", x1); line.setAttribute("y1", y1);
      line.setAttribute("x2", x2); line.setAttribute("y2", y2);
      const fabric = link.link_count > 0 && link.fabric !== "";
      line.setAttribute("stroke", fabric ? "#2a6" : "#999");
      line.setAttribute("stroke-width", fabric ? 2.5 : 1);
      line.dataset.a = i; line.dataset.b = j; line.dataset.link = link.short;
      const title = document.createElementNS(SVG, "title");
      title.textContent = "DEV" + i + " - DEV" + j + ": " + link.short;
      line.appendChild(title);
      svg.appendChild(line);
      classes.add(link.short);
    }
  }
  for (let i = 0; i < n; i++) {
    const [x, y] = at(i);
    const g = document.createElementNS(SVG, "g");
    g.setAttribute("class", "node");
    g.dataset.index = i;
    g.dataset.stableId = topo.devices[i].stable_id;
    const c = document.createElementNS(SVG, "circle");
    c.setAttribute("cx", x); c.setAttribute("cy", y); c.setAttribute("r", 22);
    c.setAttribute("fill", "#def"); c.setAttribute("stroke", "#357");
    const t = document.createElementNS(SVG, "text");
    t.setAttribute("x", x); t.setAttribute("y", y + 4);
    t.setAttribute("text-anchor", "middle"); t.setAttribute("font-size", "12");
    t.textContent = "DEV" + i;
    const title = document.createElementNS(SVG, "title");
    title.textContent = topo.devices[i].stable_id + " (" + topo.devices[i].backend + ": " + topo.devices[i].name + ")";
    g.append(c, t, title);
    svg.appendChild(g);
  }
  document.getElementById("legend").textContent =
      n + " devices; links: " + (classes.size ? Array.from(classes).join(", ") : "none");
}

function drawMetrics(m) {
  for (const d of m.devices) {
    const tr = document.querySelector('#devices tr[data-index="' + d.index + '"]');
    if (!tr) continue;
    tr.querySelector(".used").textContent = bytes(d.memory.used_bytes);
    tr.querySelector(".peak").textContent = bytes(d.memory.peak_bytes);
    tr.querySelector(".buffers").textContent = d.memory.buffers;
    tr.querySelector(".share").textContent = d.scheduler ? d.scheduler.share_free.toFixed(2) : "-";
  }
  fillRows("tenants", m.tenants, (tr, t) => {
    cell(tr, t.tenant); cell(tr, t.device, true);
    cell(tr, bytes(t.memory.used_bytes), true); cell(tr, bytes(t.memory.limit_bytes), true);
    cell(tr, bytes(t.memory.peak_bytes), true); cell(tr, t.memory.buffers, true);
    cell(tr, t.memory.refused, true);
  });
  fillRows("queues", m.queues, (tr, q) => {
    cell(tr, q.queue); cell(tr, q.devices.toFixed(2), true); cell(tr, bytes(q.memory_bytes), true);
    cell(tr, q.pending, true); cell(tr, q.running, true); cell(tr, q.finished, true);
    cell(tr, q.dominant_share.toFixed(3), true);
  });
  fillRows("streams", m.streams, (tr, s) => {
    cell(tr, s.stream);
    cell(tr, s.error ? "failed: " + s.error : (s.busy ? "busy" : "idle"));
    const c = s.copies;
    const sum = (f) => c ? ["host_to_device", "device_to_host", "local", "peer", "staged"]
        .reduce((a, k) => a + c[k][f], 0) : "-";
    cell(tr, sum("copies"), true);
    cell(tr, c ? bytes(sum("bytes")) : "-", true);
  });
  const s = m.scheduler;
  fillRows("scheduler", s ? Object.entries(s) : [["runtime", "none"]], (tr, [k, v]) => {
    cell(tr, k); cell(tr, v, true);
  });
  fillRows("decisions", m.decisions.slice().reverse(), (tr, e) => {
    tr.className = "decision";
    cell(tr, e.sequence, true);
    cell(tr, e.time_seconds.toFixed(3) + " s", true);
    cell(tr, e.kind + (e.status !== "ACCEL_SUCCESS" ? " (" + e.status + ")" : ""));
    cell(tr, e.name);
    cell(tr, e.device === null ? "-" : e.device_count > 1 ? e.device + " +" + (e.device_count - 1) : e.device);
  });
  document.getElementById("errors").textContent = m.errors.join("\n");
  document.getElementById("status").textContent =
      "up " + m.uptime_seconds.toFixed(0) + " s; updated " + new Date().toLocaleTimeString();
  document.body.dataset.metricsUpdates = Number(document.body.dataset.metricsUpdates || 0) + 1;
}

async function getJson(path) {
  const response = await fetch(path, {cache: "no-store"});
  if (!response.ok) throw new Error(path + ": HTTP " + response.status);
  return response.json();
}

async function poll() {
  try {
    drawMetrics(await getJson("/api/metrics"));
  } catch (e) {
    document.getElementById("status").textContent = "metrics: " + e.message;
  }
  setTimeout(poll, 1000);
}

async function start() {
  try {
    drawDevices(await getJson("/api/devices"));
    drawTopology(await getJson("/api/topology"));
  } catch (e) {
    document.getElementById("status").textContent = e.message;
    return;
  }
  poll();
}
start();
</script>
</body>
</html>
)html";
}

}  // namespace accel::info::serve
