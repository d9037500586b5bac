// Helpers every smprof page shares (the job report, dashboard.js, and the run comparison,
// comparison.js): text-only DOM building, formatting, titled panels and plotly charts.
//
// Every string from a trace reaches the DOM through textContent or plotly's text rendering
// (escaped with plotlyText first), never through innerHTML.
"use strict";

const smprofPage = (function () {
  // No "Share chart" button: it would upload the chart to Plotly's cloud.
  const PLOT_CONFIG = { displaylogo: false, responsive: true, showSendToCloud: false, showLink: false, showTips: false };
  const COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2",
    "#ff9da6", "#9d755d", "#bab0ac"];

  // ---- DOM helpers: text only --------------------------------------------------------------

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function append(parent, ...children) {
    for (const child of children) parent.appendChild(child);
    return parent;
  }

  function table(headers, rows) {
    const t = el("table");
    const head = t.createTHead().insertRow();
    for (const h of headers) append(head, el("th", "", h));
    const body = t.createTBody();
    for (const row of rows) {
      const tr = body.insertRow();
      for (const cell of row) append(tr, el("td", "", cell));
    }
    return t;
  }

  // ---- formatting ----------------------------------------------------------------------------

  function duration(ns) {
    if (ns === null || ns === undefined) return "n/a";
    const abs = Math.abs(ns);
    if (abs >= 60e9) return (ns / 60e9).toFixed(2) + " min";
    if (abs >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (abs >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (abs >= 1e3) return (ns / 1e3).toFixed(2) + " µs";
    return ns + " ns";
  }

  function percent(value) {
    return value === null || value === undefined ? "n/a" : value.toFixed(1) + " %";
  }

  function bytes(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? n : n.toFixed(1)) + " " + units[i];
  }

  // Plotly parses a few HTML-like tags (<b>, <br>, <a>) in its text and decodes entities; escaping
  // the entity characters makes it show a name exactly as written, "<" and all.
  function plotlyText(name) {
    return String(name).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }

  // An axis label for the i-th listed name: numbered (so truncated names never merge) and short.
  function shortLabel(i, name) {
    const s = String(name);
    return plotlyText((i + 1) + ". " + (s.length > 60 ? s.slice(0, 57) + "…" : s));
  }

  function processLabel(row) {
    return row.host + " · rank " + row.rank + (row.device !== undefined ? " · GPU " + row.device : "");
  }

  // ---- panels --------------------------------------------------------------------------------

  const panels = document.getElementById("panels");

  // A panel: a titled section whose body the draw function fills; a draw function that throws
  // shows the error in its panel (and the console) without taking the other panels down.
  function panel(id, title, help, draw) {
    const section = el("section", "panel");
    section.dataset.panel = id;
    append(section, el("h2", "", title), el("p", "help", help));
    const body = el("div", "body");
    append(section, body);
    append(panels, section);
    try {
      draw(body);
    } catch (err) {
      console.error("smprof report: panel " + id + " failed:", err);
      append(body, el("p", "why-empty", "this panel could not be drawn: " + err));
    }
  }

  function whyEmpty(body, reason) {
    append(body, el("p", "why-empty", reason));
  }

  function plot(body, traces, layout) {
    const div = el("div", "plot");
    append(body, div);
    const base = {
      margin: { l: 60, r: 20, t: 30, b: 50 },  // the top margin holds plotly's toolbar
      height: 340,
      font: { family: "system-ui, sans-serif", size: 12 },
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
      colorway: COLORS,
    };
    Plotly.newPlot(div, traces, Object.assign(base, layout || {}), PLOT_CONFIG);
    return div;
  }

  function statLine(body, text) {
    append(body, el("p", "stat", text));
  }

  return { COLORS, el, append, table, duration, percent, bytes, plotlyText, shortLabel,
    processLabel, panel, whyEmpty, plot, statLine };
})();
