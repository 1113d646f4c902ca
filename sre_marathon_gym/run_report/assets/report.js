// The run report's page: unpacks plotly.js, draws each run's lanes from the embedded data, and
// redraws them when a filter changes. Everything it reads is in this file's page; nothing is fetched.
"use strict";
(function () {
  const MARKS = {
    alert: { symbol: "line-ns-open", color: "#555", size: 9, name: "alert" },
    credit: { symbol: "star", color: "#111", size: 9, name: "stage credited" },
    incident: { symbol: "circle", color: "#2166ac", size: 9, name: "incident opened" },
    incident_late: { symbol: "circle-open", color: "#2166ac", size: 9, name: "incident matched late (no credit)" },
    claim_right: { symbol: "diamond", color: "#1a9850", size: 10, name: "right root cause" },
    claim_late: { symbol: "diamond-open", color: "#1a9850", size: 10, name: "right root cause, late (no credit)" },
    claim_false: { symbol: "x", color: "#d73027", size: 9, name: "false root cause" },
    action_ok: { symbol: "triangle-up", color: "#762a83", size: 10, name: "intervention" },
    action_forbidden: { symbol: "triangle-down", color: "#e08214", size: 9, name: "forbidden (penalised)" },
    action_guard_failed: { symbol: "triangle-down", color: "#fdb863", size: 9, name: "refused: guard failed" },
    action_invalid: { symbol: "triangle-down", color: "#b35806", size: 9, name: "failed: invalid arguments" },
    action_error: { symbol: "triangle-down", color: "#8c510a", size: 9, name: "failed: tool error" },
    change_benign: { symbol: "circle-open", color: "#888", size: 7, name: "harmless change" },
    change_faulty: { symbol: "circle", color: "#d73027", size: 8, name: "faulty change" },
  };
  const LANE_PX = 20;

  const data = JSON.parse(document.getElementById("report-data").textContent);
  const OUTCOME_COLORS = data[0].outcome_colors;
  const filters = {
    service: document.getElementById("filter-service"),
    category: document.getElementById("filter-category"),
    outcome: document.getElementById("filter-outcome"),
  };

  function escapeText(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  function hover(title, lines) {
    return "<b>" + escapeText(title) + "</b><br>" + lines.filter((l) => l).map(escapeText).join("<br>");
  }

  async function loadPlotly() {
    const packed = document.getElementById("plotly-gz").textContent.trim();
    const binary = atob(packed);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const source = await new Response(stream).text();
    const script = document.createElement("script");
    script.textContent = source;
    document.head.appendChild(script);
  }

  function fillOptions(select, values) {
    for (const v of [...new Set(values)].sort()) {
      const o = document.createElement("option");
      o.value = v;
      o.textContent = v;
      select.appendChild(o);
    }
  }

  function current() {
    return { service: filters.service.value, category: filters.category.value, outcome: filters.outcome.value };
  }

  function lanesOf(run, f) {
    // Noise lanes first (their items filtered by service), then the fault lanes the filters keep.
    const lanes = [];
    for (const lane of run.noise) {
      const items = f.service ? lane.items.filter((it) => it.services.includes(f.service)) : lane.items;
      lanes.push({ label: escapeText(lane.name + " (" + items.length + ")"), items: items, fault: null });
    }
    for (const fault of run.faults) {
      if (f.service && !fault.services.includes(f.service)) continue;
      if (f.category && fault.category !== f.category) continue;
      if (f.outcome && fault.outcome !== f.outcome) continue;
      lanes.push({ label: escapeText(fault.fault_id + " · " + fault.target), items: fault.items, fault: fault });
    }
    return lanes;
  }

  function timelineTraces(lanes) {
    const traces = [];
    const bars = {};
    const probe = { x: [], base: [], y: [] };
    lanes.forEach((lane, y) => {
      const f = lane.fault;
      if (!f) return;
      const b = (bars[f.outcome] = bars[f.outcome] || { x: [], base: [], y: [], text: [] });
      b.base.push(f.start_s / 60);
      b.x.push(Math.max(f.end_s - f.start_s, 1) / 60);
      b.y.push(y);
      b.text.push(
        hover(f.fault_id + ": " + f.outcome, [
          f.category + " / " + f.mechanism,
          "target: " + f.target,
          "artifact: " + f.artifact,
          "active " + f.start_s.toFixed(0) + "-" + f.end_s.toFixed(0) + " s (" + f.end_kind + ")",
          "stage points: " + f.points,
          "incident: " + (f.incident_id || (f.late_incident_id ? f.late_incident_id + " (matched late: no credit)" : "none matched")),
        ])
      );
      for (const [a, z] of f.probe_failing) {
        probe.base.push(a / 60);
        probe.x.push((z - a) / 60);
        probe.y.push(y);
      }
    });
    for (const outcome of Object.keys(OUTCOME_COLORS)) {
      const b = bars[outcome];
      if (!b) continue;
      traces.push({
        type: "bar", orientation: "h", name: outcome, x: b.x, base: b.base, y: b.y, width: 0.7,
        marker: { color: OUTCOME_COLORS[outcome] }, hovertext: b.text, hoverinfo: "text", legendgroup: "outcome",
      });
    }
    traces.push({
      type: "bar", orientation: "h", name: "probe failing", x: probe.x, base: probe.base, y: probe.y, width: 0.18,
      marker: { color: "rgba(40,0,50,0.85)" }, hoverinfo: "skip",
    });
    const marks = {};
    lanes.forEach((lane, y) => {
      for (const it of lane.items) {
        const m = (marks[it.kind] = marks[it.kind] || { x: [], y: [], text: [] });
        m.x.push(it.t / 60);
        m.y.push(y);
        m.text.push(hover(it.label, ["t = " + it.t.toFixed(0) + " s"].concat(it.details)));
      }
    });
    for (const kind of Object.keys(MARKS)) {
      const m = marks[kind];
      if (!m) continue;
      const s = MARKS[kind];
      traces.push({
        type: "scatter", mode: "markers", name: s.name, x: m.x, y: m.y, hovertext: m.text, hoverinfo: "text",
        marker: { symbol: s.symbol, color: s.color, size: s.size, line: { color: s.color, width: 1.5 } },
      });
    }
    return traces;
  }

  function timelineLayout(run, lanes) {
    return {
      barmode: "overlay",
      height: 90 + LANE_PX * Math.max(lanes.length, 1),
      margin: { l: 240, r: 10, t: 30, b: 40 },
      xaxis: { title: { text: "minutes since the run started" }, range: [0, run.run_s / 60], zeroline: false },
      yaxis: {
        tickmode: "array", tickvals: lanes.map((_, i) => i), ticktext: lanes.map((l) => l.label),
        autorange: false, range: [lanes.length - 0.5, -0.5], fixedrange: true, tickfont: { size: 10 },
      },
      legend: { orientation: "h", x: 0, y: 1.0, yanchor: "bottom", font: { size: 10 } },
      hovermode: "closest",
      shapes: [{
        type: "line", x0: run.injection_s / 60, x1: run.injection_s / 60, yref: "paper", y0: 0, y1: 1,
        line: { color: "#999", dash: "dot", width: 1 },
      }],
    };
  }

  function degradationFigure(run) {
    const t = run.degradation.times.map((s) => s / 60);
    const traces = [
      { type: "scatter", mode: "lines", name: "this run", x: t, y: run.degradation.run, line: { color: "#762a83" } },
    ];
    if (run.degradation.no_action.length) {
      traces.push({
        type: "scatter", mode: "lines", name: "no-action run", x: t, y: run.degradation.no_action,
        line: { color: "#999", dash: "dash" },
      });
    }
    return [traces, {
      height: 200, margin: { l: 60, r: 10, t: 24, b: 40 },
      title: { text: "share of requests degraded per interval", font: { size: 12 } },
      xaxis: { title: { text: "minutes" }, range: [0, run.run_s / 60] }, yaxis: { rangemode: "tozero" },
      legend: { orientation: "h", x: 0, y: 1.15 },
    }];
  }

  const config = { displaylogo: false, responsive: true };

  async function draw() {
    const f = current();
    let shown = 0;
    await Promise.all(data.map((run, i) => {
      const lanes = lanesOf(run, f);
      shown += lanes.filter((l) => l.fault).length;
      return Plotly.react("timeline-" + i, timelineTraces(lanes), timelineLayout(run, lanes), config);
    }));
    document.getElementById("filter-count").textContent =
      shown + " of " + data.reduce((n, r) => n + r.faults.length, 0) + " fault lanes shown";
  }

  async function main() {
    await loadPlotly();
    for (const run of data) {
      fillOptions(filters.service, run.faults.flatMap((f) => f.services));
      fillOptions(filters.category, run.faults.map((f) => f.category));
    }
    fillOptions(filters.outcome, Object.keys(OUTCOME_COLORS));
    // Options filled from several runs may repeat; keep the first of each value.
    for (const select of Object.values(filters)) {
      const seen = new Set();
      for (const o of [...select.options]) {
        if (seen.has(o.value)) o.remove();
        else seen.add(o.value);
      }
    }
    await draw();
    await Promise.all(data.map((run, i) => {
      const [traces, layout] = degradationFigure(run);
      return Plotly.newPlot("degradation-" + i, traces, layout, config);
    }));
    for (const select of Object.values(filters)) {
      select.addEventListener("change", async () => {
        document.body.dataset.ready = "0";
        await draw();
        document.body.dataset.ready = "1";
      });
    }
    window.reportReadyMs = performance.now();
    document.body.dataset.ready = "1";
  }

  main().catch((err) => {
    document.body.dataset.ready = "error";
    const p = document.createElement("p");
    p.className = "incomplete";
    p.textContent = "The report could not be drawn: " + err;
    document.body.prepend(p);
  });
})();
