// The smprof report page: draws the panels from the summary that smppy.analysis.summarize()
// computed (docs/ANALYSIS.md has its schema; docs/REPORT.md describes the panels). The page only
// displays those numbers; it computes no metric of its own.
//
// Every string from a trace (kernel and annotation names, hosts, command lines) is data: it
// reaches the DOM through textContent, <option> text or plotly's text rendering (escaped with
// plotlyText first, so a name is shown exactly as it is), never through innerHTML.
"use strict";

(function () {
  const payload = JSON.parse(document.getElementById("smprof-data").textContent);
  const summary = payload.summary;
  const gpu = summary.gpu;
  const cpu = summary.cpu;
  const timeline = summary.timeline;
  const TOP_N = 15;
  const { COLORS, el, append, table, duration, percent, bytes, plotlyText, shortLabel, processLabel,
    panel, whyEmpty, plot, statLine } = smprofPage;  // page.js

  // Why a GPU panel is empty: the summary's reason (which quotes the cuda collector's) when no GPU
  // activity was recorded at all, else that the trace holds none of `what`.
  function gpuReason(what) {
    return gpu.reason || "no " + what + " in the trace";
  }

  // Why a CPU panel is empty: the summary's reason, and the reasons the cpu collectors recorded.
  function cpuReason() {
    const off = summary.collectors.filter((c) => c.name === "cpu" && !c.active && c.reason);
    const reasons = [...new Set(off.map((c) => c.reason))];
    return (cpu.reason || "no CPU samples in the trace") + (reasons.length ? ": " + reasons.join("; ") : "");
  }

  function statsText(stats) {
    return stats.count + " × · mean " + duration(stats.mean_ns) + " · p50 " + duration(stats.p50_ns) +
      " · p90 " + duration(stats.p90_ns) + " · p99 " + duration(stats.p99_ns) + " · max " +
      duration(stats.max_ns) + " · total " + duration(stats.total_ns);
  }

  // The unit that shows `ns` with one to three digits before the point.
  function timeUnit(ns) {
    if (ns >= 1e9) return { scale: 1e9, name: "s" };
    if (ns >= 1e6) return { scale: 1e6, name: "ms" };
    if (ns >= 1e3) return { scale: 1e3, name: "µs" };
    return { scale: 1, name: "ns" };
  }

  // Values spread over more than this ratio (largest over smallest) are drawn on a log axis: on a
  // linear one, a warm-up step 900 times the others leaves every other bar a sliver.
  const LOG_AXIS_SPREAD = 20;

  // A bar chart of a summary histogram ([lo_ns, hi_ns, count] rows): one bar per bucket, as wide
  // as the bucket, on an axis that spans the buckets (a log axis when they spread widely).
  function histogram(body, stats, name) {
    const bins = stats.histogram;
    const lo = bins[0][0];
    const hi = bins[bins.length - 1][1];
    if (hi > LOG_AXIS_SPREAD * Math.max(lo, 1)) return logHistogram(body, bins, name);
    const unit = timeUnit(hi);
    const pad = Math.max((hi - lo) * 0.05, hi - bins[bins.length - 1][0]);
    return plot(body, [{
      type: "bar",
      name: plotlyText(name),
      x: bins.map((b) => (b[0] + b[1]) / 2 / unit.scale),
      width: bins.map((b) => (b[1] - b[0]) / unit.scale),
      y: bins.map((b) => b[2]),
      customdata: bins.map((b) => duration(b[0]) + " – " + duration(b[1])),
      hovertemplate: "%{customdata}: %{y}<extra></extra>",
      marker: { color: COLORS[0] },
    }], {
      xaxis: { title: { text: "duration (" + unit.name + ")" }, range: [Math.max(0, lo - pad) / unit.scale, (hi + pad) / unit.scale] },
      yaxis: { title: { text: "count" } },
      bargap: 0,
    });
  }

  // The same counts on a log axis, the summary's 16 buckets per octave drawn 4 to a bar (or they
  // are slivers): positions and widths in log10(ns), a tick at each power of ten.
  function logHistogram(body, summaryBins, name) {
    const bins = [];
    for (const [lo, , count] of summaryBins) {
      const octaveQuarter = Math.floor(4 * Math.log2(Math.max(lo, 1)));
      const last = bins[bins.length - 1];
      if (last && last.key === octaveQuarter) {
        last[2] += count;
      } else {
        bins.push(Object.assign([2 ** (octaveQuarter / 4), 2 ** ((octaveQuarter + 1) / 4), count], { key: octaveQuarter }));
      }
    }
    const log = (ns) => Math.log10(Math.max(ns, 1));
    const lo = log(bins[0][0]);
    const hi = log(bins[bins.length - 1][1]);
    const ticks = [];
    for (let d = Math.floor(lo); d <= Math.ceil(hi); d++) ticks.push(d);
    return plot(body, [{
      type: "bar",
      name: plotlyText(name),
      x: bins.map((b) => (log(b[0]) + log(b[1])) / 2),
      width: bins.map((b) => log(b[1]) - log(b[0])),
      y: bins.map((b) => b[2]),
      customdata: bins.map((b) => duration(b[0]) + " – " + duration(b[1])),
      hovertemplate: "%{customdata}: %{y}<extra></extra>",
      marker: { color: COLORS[0] },
    }], {
      xaxis: { title: { text: "duration (log scale)" }, tickvals: ticks, ticktext: ticks.map((d) => duration(10 ** d)),
        range: [lo - 0.05, hi + 0.05] },
      yaxis: { title: { text: "count" } },
      bargap: 0,
    });
  }

  function pie(body, rows, label, value, text) {
    return plot(body, [{
      type: "pie",
      labels: rows.map(label),
      values: rows.map(value),
      text: rows.map(text),
      textinfo: "percent",
      hovertemplate: "%{label}<br>%{text}<br>%{percent}<extra></extra>",
      sort: false,
      hole: 0.35,
    }], { margin: { l: 10, r: 10, t: 30, b: 10 }, legend: { font: { size: 11 } } });
  }

  // Kernels listed by the summary, without its "other" row.
  function listed(rows) {
    return rows.filter((r) => !r.other);
  }

  // The first k listed rows plus one row holding everything after them (the summary's own
  // "other" row included), so any k up to the listed count is the same top-k + other view.
  function topKAndOther(rows, k, field) {
    const head = listed(rows).slice(0, k);
    const rest = rows.slice(head.length).reduce((sum, r) => sum + r[field], 0);
    return { head: head, rest: rest };
  }

  // ---- banner and metadata ---------------------------------------------------------------------

  function drawBanner() {
    const banner = document.getElementById("banner");
    const drops = Object.entries(summary.drops).filter((kv) => kv[1] > 0);
    const warnings = payload.report.warnings;  // each distinct warning once (warning_groups.py)
    if (!warnings.length && !drops.length) return;
    banner.hidden = false;
    append(banner, el("strong", "", "Warnings"));
    const list = el("ul");
    for (const [name, count] of drops) {
      append(list, el("li", "drop", count + " " + name.replace(/_/g, " ")));
    }
    for (const warning of warnings) append(list, el("li", "warning", warning));
    append(banner, list);
  }

  function drawMetadata(body) {
    const job = summary.job;
    const facts = [
      ["job", job.jobs.join(", ") || "n/a"],
      ["hosts", job.hosts.join(", ")],
      ["ranks", job.ranks.length + " of world size " + job.world_size],
      ["span", duration(job.span_ns) + " from " + new Date(job.start_wall_ns / 1e6).toISOString()],
      ["files", job.files.length + " (" + bytes(job.files.reduce((s, f) => s + f.bytes, 0)) + ")"],
      ["step pattern", summary.steps.pattern],
    ];
    const dl = el("dl");
    for (const [k, v] of facts) append(dl, el("dt", "", k), el("dd", "", v));
    append(body, dl);
    append(body, el("h3", "", "Processes"));
    append(body, table(
      ["host", "rank", "pid", "span", "annotations", "GPU active", "CPU utilization", "steps", "ended", "command line"],
      job.processes.map((p) => {
        const r = summary.ranks.find((x) => x.host === p.host && x.rank === p.rank && x.pid === p.pid) || {};
        return [p.host, p.rank + (p.worker_of_pid ? " (worker of pid " + p.worker_of_pid + ")" : ""), p.pid, duration(p.span_ns),
          r.annotations ?? "", percent(r.gpu_active_percent), percent(r.cpu_utilization_percent),
          r.steps ? r.steps.count : "", payload.report.ends[summary.ranks.indexOf(r)] ?? "", p.argv.join(" ")];
      })));
    append(body, el("h3", "", "Devices"));
    if (job.devices.length) {
      append(body, table(["host", "rank", "GPU", "name", "UUID", "SMs", "memory", "compute capability"],
        job.devices.map((d) => [d.host, d.rank, d.id, d.name, d.uuid, d.sm_count,
          bytes(d.global_memory_bytes), d.compute_capability])));
    } else {
      append(body, el("p", "note", gpuReason("GPU devices")));
    }
    const inactive = summary.collectors.filter((c) => !c.active);
    if (inactive.length) {
      append(body, el("h3", "", "Collectors that did not run"));
      append(body, table(["host", "rank", "pid", "collector", "reason"],
        inactive.map((c) => [c.host, c.rank, c.pid, c.name, c.reason])));
    }
  }

  // ---- GPU and CPU time ------------------------------------------------------------------------

  function drawGpuActive(body) {
    if (!gpu.devices.length) return whyEmpty(body, gpuReason("GPU activity"));
    statLine(body, "all GPUs: " + duration(gpu.active_ns) + " active, " + percent(gpu.active_percent) +
      " of their processes' spans");
    plot(body, [{
      type: "bar",
      orientation: "h",
      y: gpu.devices.map((d) => plotlyText(processLabel(d))),
      x: gpu.devices.map((d) => d.active_percent),
      text: gpu.devices.map((d) => duration(d.active_ns)),
      hovertemplate: "%{y}<br>%{x:.1f} % active (%{text})<extra></extra>",
    }], { xaxis: { title: { text: "active % of span" }, range: [0, 100] }, margin: { l: 180, r: 20, t: 30, b: 50 } });
  }

  function seconds(i) {
    return (i * timeline.bucket_ns) / 1e9;
  }

  function timeAxis() {
    return { title: { text: "seconds since job start (bucket " + duration(timeline.bucket_ns) + ")" } };
  }

  function drawGpuUtilization(body) {
    if (!timeline.gpu_per_node.length) return whyEmpty(body, gpuReason("GPU activity"));
    const nodes = timeline.gpu_per_node.map((n) => ({
      type: "scatter", mode: "lines", name: plotlyText(n.host + " (" + n.gpus + " GPU" + (n.gpus === 1 ? ")" : "s)")),
      x: n.busy_fraction.map((_, i) => seconds(i)), y: n.busy_fraction.map((f) => f * 100),
    }));
    const devices = timeline.gpu_per_device.map((d) => ({
      type: "scatter", mode: "lines", visible: "legendonly", line: { dash: "dot" },
      name: plotlyText(processLabel(d)),
      x: d.busy_fraction.map((_, i) => seconds(i)), y: d.busy_fraction.map((f) => f * 100),
    }));
    plot(body, nodes.concat(devices), { xaxis: timeAxis(), yaxis: { title: { text: "busy %" }, range: [0, 105] } });
  }

  function drawCpuActive(body) {
    if (!cpu.hosts.length) return whyEmpty(body, cpuReason());
    plot(body, [{
      type: "bar",
      x: cpu.hosts.map((h) => plotlyText(h.host)),
      y: cpu.hosts.map((h) => h.active_ns / 1e9),
      text: cpu.hosts.map((h) => percent(h.utilization_percent) + " of " + h.cores.length + " cores"),
      hovertemplate: "%{x}<br>%{y:.2f} core-seconds busy<br>%{text}<extra></extra>",
    }], { yaxis: { title: { text: "busy core-seconds" } } });
  }

  function drawCpuUtilization(body) {
    if (!timeline.cpu_per_node.length) return whyEmpty(body, cpuReason());
    plot(body, timeline.cpu_per_node.map((n) => ({
      // Markers too: a bucket between two buckets without samples is a point, not a line.
      type: "scatter", mode: "lines+markers", marker: { size: 4 }, name: plotlyText(n.host), connectgaps: false,
      x: n.utilization_percent.map((_, i) => seconds(i)), y: n.utilization_percent,
    })), { xaxis: timeAxis(), yaxis: { title: { text: "machine CPU utilization %" }, range: [0, 105] } });
  }

  // ---- kernels -------------------------------------------------------------------------------

  const kernels = gpu.kernels;
  let topK = Math.max(1, Math.min(payload.report.top_k, listed(kernels.by_time).length || 1));
  const topKRedraws = [];

  // The "top-k + other" pie of `field` over `rows`, redrawn when the page's k changes.
  function drawTopKPie(body, rows, field, describe) {
    if (!kernels.count) return whyEmpty(body, gpuReason("GPU kernels"));
    const holder = el("div");
    append(body, holder);
    const draw = () => {
      const { head, rest } = topKAndOther(rows, topK, field);
      const shown = head.map((r, i) => ({ label: shortLabel(i, r.name), value: r[field], text: describe(r) }));
      if (rest > 0) shown.push({ label: "other", value: rest, text: "all other kernels" });
      holder.replaceChildren();
      pie(holder, shown, (r) => r.label, (r) => r.value, (r) => r.text);
    };
    topKRedraws.push(draw);
    draw();
  }

  function topKControl() {
    const wrap = el("div", "control");
    const label = el("label", "", "kernels shown before \"other\" (k): ");
    const input = el("input");
    input.type = "number";
    input.id = "top-k";
    input.min = "1";
    input.max = String(Math.max(1, listed(kernels.by_time).length, listed(kernels.by_launches).length));
    input.value = String(topK);
    input.addEventListener("change", () => {
      const k = parseInt(input.value, 10);
      if (!(k >= 1)) return;
      topK = Math.min(k, parseInt(input.max, 10));
      input.value = String(topK);
      for (const redraw of topKRedraws) redraw();
    });
    label.htmlFor = "top-k";
    append(wrap, label, input, el("span", "hint", " (up to " + input.max + ", the kernels the summary lists)"));
    return wrap;
  }

  function drawKernelTimeTopK(body) {
    if (kernels.count) {
      append(body, topKControl());
      statLine(body, kernels.distinct + " distinct kernels, " + kernels.count + " launches, " +
        duration(kernels.time_ns) + " in all");
    }
    drawTopKPie(body, kernels.by_time, "time_ns", (r) => duration(r.time_ns) + ", " + r.launches + " launches");
  }

  function drawKernelLaunchesTopK(body) {
    drawTopKPie(body, kernels.by_launches, "launches", (r) => r.launches + " launches, " + duration(r.time_ns));
  }

  // Horizontal bars of the first TOP_N listed rows, the first on top.
  function drawTopKernelsBar(body, rows, field, axisTitle, describe) {
    if (!kernels.count) return whyEmpty(body, gpuReason("GPU kernels"));
    horizontalBars(body, listed(rows).slice(0, TOP_N), (r) => (field === "time_ns" ? r.time_ns / 1e6 : r.launches),
      axisTitle, describe);
  }

  function horizontalBars(body, rows, value, axisTitle, describe) {
    const bottomUp = (f) => rows.map(f).reverse();
    plot(body, [{
      type: "bar",
      orientation: "h",
      y: bottomUp((r, i) => shortLabel(i, r.name)),
      x: bottomUp(value),
      customdata: bottomUp((r) => plotlyText(r.name)),
      text: bottomUp(describe),
      textposition: "none",
      hovertemplate: "%{customdata}<br>%{text}<extra></extra>",
    }], {
      height: Math.max(240, 60 + 26 * rows.length),
      xaxis: { title: { text: axisTitle } },
      yaxis: { automargin: true },
      margin: { l: 20, r: 20, t: 30, b: 50 },
    });
  }

  // ---- shares ----------------------------------------------------------------------------------

  function drawShares(body, rows, key, what) {
    const present = rows.filter((r) => r.time_ns > 0);
    if (!present.length) return whyEmpty(body, gpuReason(what));
    pie(body, present, (r) => r[key], (r) => r.time_ns,
      (r) => duration(r.time_ns) + ", " + r.count + " ×" + (r.bytes ? ", " + bytes(r.bytes) : ""));
  }

  // ---- steps and annotations ---------------------------------------------------------------------

  function noSteps() {
    return "no steps: no annotation matches the step pattern " + summary.steps.pattern +
      " (set another with smprof report --step-pattern)";
  }

  function drawStepDistribution(body) {
    const stats = summary.steps.stats;
    if (!stats.count) return whyEmpty(body, noSteps());
    statLine(body, "steps: " + statsText(stats));
    if (payload.report.input_wait) statLine(body, "input-pipeline wait: " + payload.report.input_wait);
    histogram(body, stats, "step time");
    const outlying = payload.report.outlying_steps;  // diagnose/steps.py
    if (!outlying.steps.length) return;
    statLine(body, outlying.steps.length + " step(s) over " + outlying.factor + "× their rank's median " +
      "steady-state step" + (outlying.steps.length > outlying.listed ? ", the " + outlying.listed + " longest:" : ":"));
    append(body, table(["host", "rank", "step", "duration", "× median", "what"],
      outlying.steps.slice(0, outlying.listed).map((s) => [s.host, s.rank, s.step, duration(s.dur_ns),
        s.times_median.toFixed(0) + "×", s.kind])));
  }

  function drawStepsPerRank(body) {
    const perRank = summary.steps.per_rank.filter((r) => r.stats.count);
    if (!perRank.length) return whyEmpty(body, noSteps());
    const slowest = summary.steps.slowest_rank;
    const isSlowest = (r) => slowest && r.host === slowest.host && r.rank === slowest.rank && r.pid === slowest.pid;
    if (slowest) {
      statLine(body, "slowest rank: " + slowest.host + " rank " + slowest.rank + " (pid " + slowest.pid +
        "), mean step " + duration(slowest.mean_ns));
    }
    const x = perRank.map((r) => plotlyText(r.host + " · rank " + r.rank + " · pid " + r.pid));
    const ms = (f) => perRank.map((r) => r.stats[f] / 1e6);
    const spread = perRank.some((r) => r.stats.max_ns > LOG_AXIS_SPREAD * Math.max(r.stats.p50_ns, 1));
    plot(body, [
      { type: "bar", name: "mean", x: x, y: ms("mean_ns"),
        marker: { color: perRank.map((r) => (isSlowest(r) ? "#e45756" : COLORS[0])) } },
      { type: "scatter", mode: "markers", name: "p50", x: x, y: ms("p50_ns"), marker: { symbol: "circle", size: 9, color: "#333" } },
      { type: "scatter", mode: "markers", name: "p90", x: x, y: ms("p90_ns"), marker: { symbol: "triangle-up", size: 9, color: "#f58518" } },
      { type: "scatter", mode: "markers", name: "max", x: x, y: ms("max_ns"), marker: { symbol: "x", size: 9, color: "#b279a2" } },
    ], { yaxis: spread ? { type: "log", title: { text: "step time (ms, log scale)" } } : { title: { text: "step time (ms)" } } });
  }

  function drawLaunchLatency(body) {
    const stats = gpu.launch_latency;
    if (!stats.count) {
      return whyEmpty(body, gpu.reason || "no kernel could be joined to its launch (no correlation ids in the trace)");
    }
    statLine(body, "launch to start: " + statsText(stats));
    histogram(body, stats, "launch latency");
  }

  function drawAnnotationHistogram(body) {
    const annotations = summary.annotations;
    if (!annotations.length) return whyEmpty(body, "no annotations recorded in the trace");
    const wrap = el("div", "control");
    const label = el("label", "", "annotation: ");
    const select = el("select");
    select.id = "annotation-picker";
    label.htmlFor = select.id;
    annotations.forEach((a, i) => {
      const option = el("option", "", a.name + " (" + a.stats.count + ")");
      option.value = String(i);
      append(select, option);
    });
    append(wrap, label, select);
    append(body, wrap);
    const cut = payload.report.annotations_not_listed;
    if (cut) {
      append(body, el("p", "note", "and " + cut.names + " more annotation names, " + cut.count + " calls, " +
        duration(cut.total_ns) + " in all, not listed here: smprof export --format parquet has every name"));
    }
    const name = el("p", "stat annotation-name");
    const stats = el("p", "stat");
    const holder = el("div");
    append(body, name, stats, holder);
    const draw = () => {
      const a = annotations[parseInt(select.value, 10)];
      name.textContent = a.name;
      stats.textContent = statsText(a.stats);
      holder.replaceChildren();
      histogram(holder, a.stats, a.name);
    };
    select.addEventListener("change", draw);
    draw();
  }

  function drawGpuPerAnnotation(body) {
    const rows = gpu.per_annotation.slice(0, TOP_N);
    if (!rows.length) {
      return whyEmpty(body, gpu.reason ||
        "no GPU work ran under an annotation (no external correlation records in the trace)");
    }
    horizontalBars(body, rows, (r) => r.gpu_time_ns / 1e6, "GPU time (ms)",
      (r) => duration(r.gpu_time_ns) + ", " + r.activities + " GPU activities");
  }

  // Findings of smprof diagnose (docs/DIAGNOSE.md), most costly first: title, cost, action.
  function drawFindings(body) {
    const findings = payload.findings || [];
    if (!findings.length) {
      whyEmpty(body, "no findings: no detector found a problem in this run");
      return;
    }
    const list = el("ol", "findings");
    for (const f of findings) {
      const item = el("li", "finding severity-" + f.severity);
      append(item, el("p", "finding-title", "[" + f.severity + "] " + f.title),
        el("p", "stat", "costs ~" + duration(f.cost_per_step_ns) + " per step, " + duration(f.cost_total_ns) +
          " of rank time in all (" + f.cost_basis + ")"),
        el("p", "finding-action", "→ " + f.recommendation));
      append(list, item);
    }
    append(body, list);
  }

  // ---- collectives -------------------------------------------------------------------------------

  function drawCollectives(body) {
    const c = summary.collectives;
    if (!c.calls) {
      return whyEmpty(body, "no collectives recorded: they are recorded under TorchAutoSteps=1 when the job " +
        "uses torch.distributed (docs/PYTORCH.md, Collectives)");
    }
    statLine(body, c.calls + " calls, " + c.instances_matched + " of " + c.instances +
      " instances matched across ranks" + (c.dropped ? ", " + c.dropped + " dropped" : ""));
    // On GPUs the NCCL kernels' starts are the arrivals that matter (the host only enqueues).
    const gpu = c.kernels_linked > 0;
    if (gpu) {
      statLine(body, c.kernels_linked + " NCCL kernels linked to their calls, " + c.instances_matched_on_device +
        " instances matched on the kernels' starts" +
        (c.kernels_not_linked ? ", " + c.kernels_not_linked + " kernels not linked" : ""));
    }
    const ranks = c.ranks.filter((r) => r.calls);
    const x = ranks.map((r) => plotlyText(r.host + " · rank " + r.rank + " · pid " + r.pid));
    const bars = [
      { type: "bar", name: "wait (ms)", x: x, y: ranks.map((r) => r.wait_ns / 1e6), yaxis: "y" },
      { type: "bar", name: "arrived last (instances)", x: x, y: ranks.map((r) => r.last_arrivals), yaxis: "y2" },
    ];
    if (gpu) {
      bars.push({ type: "bar", name: "GPU wait (ms)", x: x, y: ranks.map((r) => r.device_wait_ns / 1e6), yaxis: "y" });
      bars.push({ type: "bar", name: "GPU arrived last (instances)", x: x,
        y: ranks.map((r) => r.device_last_arrivals), yaxis: "y2" });
    }
    plot(body, bars, {
      barmode: "group",
      yaxis: { title: { text: "wait for the last rank (ms)" } },
      yaxis2: { title: { text: "arrived last" }, overlaying: "y", side: "right", rangemode: "tozero" },
    });
    append(body, table(["op", "group", "ranks", "calls", "bytes", "call time", "Work.wait", "wait", "skew p50",
      "skew max"]
      .concat(gpu ? ["GPU time", "GPU wait", "GPU skew p50"] : []),
      c.ops.slice(0, TOP_N).map((o) => [o.op, o.group, o.group_size, o.calls, bytes(o.bytes), duration(o.call_ns),
        duration(o.work_wait_ns), duration(o.wait_ns), duration(o.skew.p50_ns), duration(o.skew.max_ns)]
        .concat(gpu ? [duration(o.device_ns), duration(o.device_wait_ns), duration(o.device_skew.p50_ns)] : []))));
  }

  // ---- the page ----------------------------------------------------------------------------------

  document.getElementById("subtitle").textContent = summary.job.hosts.length + " host(s), " +
    summary.job.ranks.length + " rank(s), " + duration(summary.job.span_ns) + " · written " + payload.report.written;
  drawBanner();
  panel("findings", "Findings", "Why the run is slow and what to change, most costly first (smprof diagnose).", drawFindings);
  panel("metadata", "Job", "Hosts, ranks, devices and command lines of the traced processes.", drawMetadata);
  panel("gpu-active", "GPU active time", "Per GPU, the union of its kernel, memcpy and memset intervals over its process's span.", drawGpuActive);
  panel("gpu-utilization", "GPU utilization over time per node", "Busy fraction of each node's GPUs per time bucket (per-GPU lines in the legend).", drawGpuUtilization);
  panel("cpu-active", "CPU active time", "Busy core-seconds per host, from the per-core utilization counters.", drawCpuActive);
  panel("cpu-utilization", "CPU utilization over time", "Machine CPU utilization per host and time bucket.", drawCpuUtilization);
  panel("kernel-time-topk", "Time spent by all GPU kernels", "Kernel time of the top k kernels and all others.", drawKernelTimeTopK);
  panel("kernel-time-top15", "Time by the top 15 kernels", "The 15 kernels with the most GPU time.", (b) =>
    drawTopKernelsBar(b, kernels.by_time, "time_ns", "GPU time (ms)", (r) => duration(r.time_ns) + ", " + r.launches + " launches"));
  panel("kernel-launches-topk", "Launch counts of all kernels", "Launches of the top k kernels and all others (k as above).", drawKernelLaunchesTopK);
  panel("kernel-launches-top15", "Launch counts of the top 15 kernels", "The 15 most launched kernels.", (b) =>
    drawTopKernelsBar(b, kernels.by_launches, "launches", "launches", (r) => r.launches + " launches, " + duration(r.time_ns)));
  panel("step-time", "Step time distribution", "Durations of the step annotations of all ranks.", drawStepDistribution);
  panel("step-time-per-rank", "Step time per rank", "Mean (bar), p50, p90 and max step time of each rank; the slowest rank is red.", drawStepsPerRank);
  panel("precision", "Kernel precision distribution", "Kernel time by arithmetic precision, inferred from kernel names.", (b) =>
    drawShares(b, gpu.precision, "precision", "GPU kernels"));
  panel("gpu-activity", "GPU activity distribution", "GPU time of kernels, memory copies, memory sets and synchronizations.", (b) =>
    drawShares(b, gpu.activity, "kind", "GPU activity"));
  panel("memory-ops", "GPU memory operations distribution", "Time of memory copies by direction, and of memory sets.", (b) =>
    drawShares(b, gpu.memory_ops, "kind", "memory copies or sets"));
  panel("launch-latency", "Kernel launch latency", "From the launch API call's start to the kernel's start on the GPU.", drawLaunchLatency);
  panel("annotation-histogram", "Annotation durations", "The duration histogram of the annotation picked from the list.", drawAnnotationHistogram);
  panel("collectives", "Collectives", "Per rank, its wait from its arrival to the last rank's and the instances it " +
    "arrived at last (matched across ranks by process group and sequence number); per op, the calls and waits.",
    drawCollectives);
  panel("gpu-per-annotation", "GPU time per annotation", "GPU work launched under each annotation (the innermost one).", drawGpuPerAnnotation);
  document.body.dataset.rendered = "true";
})();
