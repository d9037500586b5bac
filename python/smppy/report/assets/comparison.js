// The smprof comparison page: draws run B against run A from the dict smppy.diff.diff_summaries()
// computed (docs/DIFF.md has its schema and the panels). The page only displays those numbers.
// Names from the traces reach the DOM as text only (page.js).
"use strict";

(function () {
  const payload = JSON.parse(document.getElementById("smprof-data").textContent);
  const diff = payload.diff;
  const TOP_N = 15;
  const { COLORS, el, append, table, duration, plotlyText, shortLabel, panel, whyEmpty, plot, statLine } =
    smprofPage;  // page.js
  const SLOWER = "#e45756";
  const FASTER = "#54a24b";

  function change(row) {
    if (row.a_ns === null) return "new in B";
    if (row.b_ns === null) return "gone in B";
    const sign = row.change_ns > 0 ? "+" : "";
    const relative = row.change === null ? "" : " (" + sign + (100 * row.change).toFixed(1) + " %)";
    return sign + duration(row.change_ns) + relative;
  }

  function value(ns) {
    return ns === null ? "–" : duration(ns);
  }

  // The changes of the first TOP_N rows (sorted by change: the diff's order) as bars, red where B
  // takes longer.
  function changeBars(body, rows) {
    const shown = rows.slice(0, TOP_N);
    const bottomUp = (f) => shown.map(f).reverse();
    plot(body, [{
      type: "bar",
      orientation: "h",
      x: bottomUp((r) => r.change_ns / 1e6),
      y: bottomUp((r, i) => shortLabel(i, r.name)),
      text: bottomUp((r) => plotlyText(change(r))),
      hovertemplate: "%{y}<br>%{text}<extra></extra>",
      marker: { color: bottomUp((r) => (r.change_ns > 0 ? SLOWER : FASTER)) },
    }], {
      height: Math.max(200, 60 + 24 * shown.length),
      margin: { l: 320, r: 20, t: 30, b: 50 },
      xaxis: { title: { text: "change B − A (ms)" }, zeroline: true },
    });
  }

  function changeTable(body, rows, extraHeaders, extraCells) {
    append(body, table(["", "A", "B", "change", ...extraHeaders],
      rows.map((r) => [r.name, value(r.a_ns), value(r.b_ns), change(r), ...extraCells(r)])));
  }

  function changes(body, rows, what, extraHeaders, extraCells) {
    if (!rows.length) return whyEmpty(body, "no " + what + " in either run");
    changeBars(body, rows);
    changeTable(body, rows, extraHeaders, extraCells);
  }

  function counts(a, b) {
    return (a === null ? "–" : a) + " → " + (b === null ? "–" : b);
  }

  function drawRuns(body) {
    const h = diff.headline;
    const verdict = el("p", "headline", h.name + ": " + value(h.a_ns) + " → " + value(h.b_ns) + ", " + change(h));
    verdict.dataset.direction = h.change_ns > 0 ? "slower" : h.change_ns < 0 ? "faster" : "same";
    append(body, verdict);
    const runs = ["a", "b"].map((side) => {
      const run = diff[side];
      return [side.toUpperCase(), run.location, run.jobs.join(", ") || "–", run.ranks.join(", "),
        String(run.steps), duration(run.span_ns), String(run.warnings.length)];
    });
    append(body, table(["run", "location", "job", "ranks", "steps", "span", "warnings"], runs));
    for (const side of ["a", "b"]) {
      for (const warning of diff[side].warnings) statLine(body, side.toUpperCase() + ": " + warning);
    }
  }

  function drawSteps(body) {
    const rows = diff.steps;
    if (!rows.length) {
      return whyEmpty(body, "no step annotations in either run: the comparison uses the span (" +
        change(diff.headline) + ")");
    }
    const scopes = [...new Set(rows.map((r) => r.name.replace(/ (mean|p50|p90)$/, "")))].sort();
    const stats = ["mean", "p50", "p90"];
    const byName = new Map(rows.map((r) => [r.name, r]));
    const traces = ["a", "b"].map((side, i) => ({
      type: "bar",
      name: side.toUpperCase(),
      x: scopes.flatMap((s) => stats.map((st) => plotlyText(s + " " + st))),
      y: scopes.flatMap((s) => stats.map((st) => {
        const row = byName.get(s + " " + st);
        const ns = row ? row[side + "_ns"] : null;
        return ns === null ? null : ns / 1e6;
      })),
      marker: { color: COLORS[i] },
    }));
    plot(body, traces, { barmode: "group", yaxis: { title: { text: "step time (ms)" } } });
    changeTable(body, rows, ["steps A → B"], (r) => [counts(r.count_a, r.count_b)]);
  }

  function drawFindings(body) {
    const rows = diff.findings;
    if (!rows.length) return whyEmpty(body, "no findings in either run (smprof diagnose found nothing)");
    const where = { a: "A only", b: "B only", both: "both" };
    append(body, table(["finding", "in", "cost A", "cost B", "change", "recommendation"],
      rows.map((r) => [r.name + ": " + r.title, where[r.presence], value(r.a_ns), value(r.b_ns), change(r),
        (r.b || r.a).recommendation])));
  }

  document.getElementById("subtitle").textContent = "B: " + diff.b.location + " against A: " + diff.a.location +
    " · written " + payload.report.written;
  panel("runs", "Runs", "The two runs and the number the regression gate compares.", drawRuns);
  panel("steps", "Step time", "Mean, p50 and p90 step time of the job and of each rank, A and B.", drawSteps);
  panel("annotations", "Annotations: total time", "Total time per annotation name, by change.", (b) =>
    changes(b, diff.annotations, "annotations", ["count A → B", "mean A → B"],
      (r) => [counts(r.count_a, r.count_b), value(r.mean_ns_a) + " → " + value(r.mean_ns_b)]));
  panel("kernels", "Kernels: total time", "GPU time per kernel the summaries list, by change.", (b) =>
    changes(b, diff.kernels, "GPU kernels", ["launches A → B"], (r) => [counts(r.launches_a, r.launches_b)]));
  panel("gpu", "GPU activity and idle time", "GPU active time, time per activity kind and the idle breakdown.",
    (b) => changes(b, diff.gpu, "GPU activity", [], () => []));
  panel("collectives", "Collectives: wait", "Per op and group, and per rank, the wait for the last rank to arrive " +
    "(docs/PYTORCH.md, Collectives), by change.", (b) =>
    changes(b, diff.collectives, "collectives", ["calls A → B"], (r) => [counts(r.calls_a, r.calls_b)]));
  panel("findings", "Findings", "smprof diagnose's findings in A only, B only or both, by change of cost.",
    drawFindings);
  document.body.dataset.rendered = "true";
})();
