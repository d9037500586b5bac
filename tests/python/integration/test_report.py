"""``smprof report``: the HTML dashboard, opened in real headless Chromium.

Synthetic jobs (written by the real TraceWriter, with GPU tables) and the real example training
run are summarized and rendered; the page is then checked in the browser: no network request, no
console error, every panel drawn or saying why it is empty, the controls work, and names from the
trace stay text.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import synthetic_trace as st
from conftest import EXAMPLE_STEPS, REPO, run_python
from driverless_job import GROUPED, NO_DRIVER, write_driverless_job
from report_page import embedded_payload
from smppy import analysis
from smppy.diagnose import diagnose
from smppy.report import build_report, write_report
from smppy.report.html_document import script_safe_json, script_safe_source
from smppy.report.terminal_progress import TerminalProgress

pytestmark = [pytest.mark.slow, pytest.mark.torch]

XSS_SCRIPT = "<script>window.__xss=1</script>"
XSS_IMG = "<img src=x onerror=window.__xss=1>"
STEPS = 6
STEP_NS = {0: 20_000_000, 1: 30_000_000}  # rank 1 is the slow one
WALL_NS = 1_767_000_000_000_000_000
GPU_PANELS = {
    "gpu-active",
    "gpu-utilization",
    "kernel-time-topk",
    "kernel-time-top15",
    "kernel-launches-topk",
    "kernel-launches-top15",
    "precision",
    "gpu-activity",
    "memory-ops",
    "launch-latency",
    "gpu-per-annotation",
}
ALL_PANELS = GPU_PANELS | {
    "findings",
    "metadata",
    "cpu-active",
    "cpu-utilization",
    "step-time",
    "step-time-per-rank",
    "annotation-histogram",
    "collectives",
}


# ---- synthetic jobs -----------------------------------------------------------------------------


def _rank_frame(rank: int, with_gpu: bool):
    """One frame of a rank: STEPS steps each holding a Forward and two XSS-named annotations, CPU
    counters, and (with_gpu) per step two kernels (one XSS-named) and a HtoD copy, each launched
    by an API call under the step's annotation."""
    frame = st.pb().Frame(sequence=0)
    st.string_index(frame, "")  # index 0 is "", as the writer's string tables have it
    tid = 100 + rank
    step_ns = STEP_NS[rank]
    starts = [1_000_000 + i * (step_ns + 1_000_000) for i in range(STEPS)]
    rows = []
    for start in starts:
        rows.append((start, step_ns, "step", tid, 0))
        rows.append((start + 1000, step_ns // 2, "Forward", tid, 1))
        rows.append((start + 2000, 1_000_000, XSS_SCRIPT, tid, 2))
        rows.append((start + step_ns // 2 + 2000, 2_000_000, XSS_IMG, tid, 1))
    st.add_annotations(frame, rows)
    # The gradient all-reduce at each step's end: rank 1 arrives last (its steps are longer).
    end = STEP_NS[1] + 1_000_000
    st.add_collectives(
        frame,
        [
            (1_000_000 + i * end + step_ns, 50_000, "allreduce_", "0", 2, rank, i + 1, 1 << 20, tid)
            for i in range(STEPS)
        ],  # fmt: skip
    )
    samples = [1_000_000 + i * 10_000_000 for i in range(STEPS * 3)]
    st.add_counter(frame, "cpu.utilization", "percent", [(t, 40.0 + 10 * rank) for t in samples], 0.01)
    st.add_counter(frame, "cpu0.utilization", "percent", [(t, 80.0) for t in samples], 0.01)
    if not with_gpu:
        return frame
    frame.devices.add(id=0, name="NVIDIA H200", uuid=f"GPU-{rank}", sm_count=132,
                      global_memory_bytes=141 << 30, compute_capability_major=9)  # fmt: skip
    api, gpu = [], []
    work = (  # offset into the step, duration, then the activity's own columns
        (100_000, 4_000_000, {"kind": 1, "name": "sgemm_fp32_kernel", "kernel_class": 1, "precision": 2}),
        (5_000_000, 1_000_000, {"kind": 1, "name": XSS_IMG + " kernel", "kernel_class": 1}),
        (7_000_000, 500_000, {"kind": 2, "name": "Memcpy HtoD", "copy_kind": 1, "bytes": 1 << 20}),
    )
    for start in starts:
        for offset, dur, columns in work:
            correlation = len(gpu) + 1
            launch = "cudaLaunchKernel" if columns["kind"] == 1 else "cudaMemcpyAsync"
            api.append((start + offset - 20_000, 5_000, launch, tid, correlation))
            gpu.append({"start": start + offset, "dur": dur, "correlation_id": correlation, **columns})
            ext = frame.external_correlations
            ext.correlation_id.append(correlation)
            ext.external_id.append(correlation)
            ext.external_kind.append(5)  # CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2: smprof's own
            ext.name_index.append(st.string_index(frame, "step"))
    for i in range(STEPS):  # each all-reduce's NCCL kernel, launched inside its call
        correlation = len(gpu) + 1
        call = 1_000_000 + i * end + step_ns
        api.append((call + 10_000, 5_000, "cuLaunchKernelEx", tid, correlation))
        gpu.append({"start": call + 100_000, "dur": 1_000_000, "correlation_id": correlation, "kind": 1,
                    "name": NCCL_KERNEL, "kernel_class": 2, "stream": 9})  # fmt: skip
    st.add_api_calls(frame, api)
    st.add_gpu_activities(frame, gpu)
    return frame


NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
NO_CUDA_REASON = "EnableCuda=0 (set EnableCuda=1 to trace the GPU)"


def write_job(directory: Path, *, with_gpu: bool) -> Path:
    """A two-rank job on two hosts; rank 1's steps are slower."""
    m = st.pb()
    for rank, host in ((0, "host-a"), (1, "host-b")):
        collectors = [
            m.CollectorStatus(name="annotations", active=True),
            m.CollectorStatus(name="cpu", active=True),
        ]
        cuda = m.CollectorStatus(name="cuda", active=with_gpu, reason="" if with_gpu else NO_CUDA_REASON)
        h = st.header(
            host=host,
            rank=rank,
            world_size=2,
            job="report-job",
            pid=4000 + rank,
            realtime_ns=WALL_NS,
            argv=["python", "train.py", "--name", XSS_IMG],
            collectors=[*collectors, cuda],
        )
        footer = m.Footer(annotations_written=STEPS * 4, frames_written=1)
        footer.stop.monotonic_ns = 1_000_000 + STEPS * (STEP_NS[rank] + 1_000_000)
        footer.stop.realtime_ns = WALL_NS + footer.stop.monotonic_ns
        if rank == 1:
            footer.annotations_dropped = 3
        st.write_trace(directory / host / f"rank{rank}.smprof", h, [_rank_frame(rank, with_gpu)], footer)
    return directory


def embedded_summary(page: str) -> dict[str, Any]:
    return embedded_payload(page)["summary"]


# ---- without a browser ----------------------------------------------------------------------------


def test_script_safe_json_cannot_close_the_script_element() -> None:
    value = {"name": "</script><!-- <script>x</script> & \u2028\u2029", "nan": float("nan")}
    text = script_safe_json(value)
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == {"name": value["name"], "nan": None}


def test_inlined_script_cannot_close_its_element() -> None:
    source = 'const a = "</ScRiPt><script>"; const b = /<\\/script>/;'
    assert "</script" not in script_safe_source(source).lower()


def test_report_command_prints_the_path_and_embeds_the_summary(tmp_path: Path) -> None:
    job = write_job(tmp_path / "traces", with_gpu=True)
    out = tmp_path / "out" / "report.html"
    proc = smprof_report(str(job), "-o", str(out), "--top-k", "3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    assert proc.stderr == "", "no progress bar when stderr is not a terminal"
    page = out.read_text()
    markup = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)  # the page without its scripts
    assert not re.search(r"src=|href=|url\(|@import|<link", markup), "the page refers to nothing outside"
    summary = embedded_summary(page)
    assert summary["steps"]["stats"]["count"] == 2 * STEPS
    assert embedded_payload(page)["report"]["top_k"] == 3


def test_report_step_pattern_option_reaches_the_summary(tmp_path: Path) -> None:
    job = write_job(tmp_path / "traces", with_gpu=False)
    summary = embedded_summary(build_report(str(job), step_pattern="Forward"))
    assert summary["steps"]["stats"]["count"] == 2 * STEPS
    assert summary["steps"]["pattern"] == "Forward"


def smprof_report(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "smppy.cli", "report", *args], capture_output=True, text=True, timeout=300
    )


def test_report_errors_are_clear(tmp_path: Path) -> None:
    out = str(tmp_path / "r.html")
    missing = smprof_report(str(tmp_path / "missing"), "-o", out)
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    job = str(write_job(tmp_path / "traces", with_gpu=False))
    bad_k = smprof_report(job, "-o", out, "--top-k", "0")
    assert bad_k.returncode == 2 and "--top-k must be at least 1" in bad_k.stderr
    bad_pattern = smprof_report(job, "-o", out, "--step-pattern", "step(")
    assert bad_pattern.returncode == 2 and "step_pattern" in bad_pattern.stderr
    assert not Path(out).exists()


def test_report_without_plotly_says_how_to_install_it(tmp_path: Path) -> None:
    job = write_job(tmp_path / "traces", with_gpu=False)
    proc = run_python(
        f"""
        import sys
        sys.modules["plotly"] = None  # as if it were not installed
        from smppy.cli import main
        sys.exit(main(["report", {str(job)!r}, "-o", {str(tmp_path / "r.html")!r}]))
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == 2, proc.stderr
    assert "pip install plotly" in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_progress_bar_draws_on_a_terminal_and_ends_its_line() -> None:
    stream = io.StringIO()
    progress = TerminalProgress(stream, label="reading", enabled=True)
    progress(0, 2_000_000)
    progress(2_000_000, 2_000_000)
    progress.finish()
    lines = stream.getvalue().split("\r")
    assert lines[-1] == "reading [" + "#" * 30 + "] 100% 2.0 MB/2.0 MB\n"
    quiet = io.StringIO()
    TerminalProgress(quiet, label="reading")(1, 2)  # a StringIO is not a terminal
    assert quiet.getvalue() == ""


# ---- in Chromium ----------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium driven by the system chromedriver, logging console and network events."""
    if not CHROMIUM or not os.path.exists(CHROMEDRIVER):
        pytest.skip(
            "Debian's chromium and chromium-driver are not installed (scripts/install_deps.sh installs them)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    # Belt and braces: anything that tries the network fails (and still shows in the log).
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["http://*", "https://*", "ws://*", "wss://*"]})
    yield driver
    driver.quit()


def open_report(driver: Any, path: Path) -> None:
    """Loads the report; asserts it made no network request and logged no console error."""
    driver.get_log("browser")
    driver.get_log("performance")
    driver.get(path.resolve().as_uri())
    assert driver.execute_script("return document.body.dataset.rendered") == "true"
    requests = [
        message["params"]["request"]["url"]
        for message in (json.loads(entry["message"])["message"] for entry in driver.get_log("performance"))
        if message["method"] == "Network.requestWillBeSent"
    ]
    assert requests and all(url.startswith("file://") for url in requests), requests
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


def panel_states(driver: Any) -> dict[str, str]:
    """Each panel: "plot" when it drew a chart, else its why-empty text."""
    return driver.execute_script(
        """
        const states = {};
        for (const section of document.querySelectorAll("section.panel")) {
          const why = section.querySelector(".why-empty");
          const drawn = section.querySelector(".js-plotly-plot .main-svg g.trace") ||
                        section.querySelector("table") || section.querySelector("ol.findings li");
          states[section.dataset.panel] = why ? why.textContent : drawn ? "plot" : "nothing";
        }
        return states;
        """
    )


@pytest.fixture(scope="module")
def gpu_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("gpu-report")
    return write_report(str(write_job(directory / "traces", with_gpu=True)), directory / "report.html")


def test_the_warning_box_says_each_warning_once(browser: Any, tmp_path: Path) -> None:
    report = write_report(str(write_driverless_job(tmp_path / "traces")), tmp_path / "report.html")
    open_report(browser, report)
    items = browser.execute_script(
        "return [...document.querySelectorAll('#banner li')].map(li => li.textContent)"
    )
    assert [i for i in items if NO_DRIVER in i] == [GROUPED], items


def test_every_panel_draws_offline_without_console_errors(browser: Any, gpu_report: Path) -> None:
    open_report(browser, gpu_report)
    assert panel_states(browser) == {panel: "plot" for panel in ALL_PANELS}
    assert "3 annotations dropped" in browser.find_element("id", "banner").text
    collectives = browser.find_element("css selector", "[data-panel=collectives]").text
    assert f"{2 * STEPS} NCCL kernels linked to their calls, {STEPS} instances matched" in collectives
    assert "GPU wait" in collectives
    buttons = browser.execute_script(
        "return [...document.querySelectorAll('.modebar-btn')].map(b => b.getAttribute('data-title'))"
    )
    assert "Download plot as a PNG" in buttons and not [b for b in buttons if "share" in b.lower()]
    height = browser.execute_script("return document.body.scrollHeight")
    browser.set_window_size(1400, height)
    shot = gpu_report.with_suffix(".png")
    browser.save_screenshot(str(shot))
    artifacts = REPO / "build" / "test-artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, artifacts / "report.png")
    browser.set_window_size(1400, 1000)


def test_findings_panel_comes_first_with_the_diagnosis(browser: Any, gpu_report: Path) -> None:
    open_report(browser, gpu_report)
    first = browser.execute_script("return document.querySelector('section.panel').dataset.panel")
    assert first == "findings"
    items = [li.text for li in browser.find_elements("css selector", "[data-panel=findings] li")]
    # One item per finding, most costly first: the synthetic GPU job is mostly idle GPUs,
    # and rank 1's steps are 10 ms longer, 5 ms of it in Forward (write_job).
    findings = diagnose(analysis.summarize(gpu_report.parent / "traces"))
    assert len(items) == len(findings) >= 2, items
    assert all(f"[{f.severity}] {f.title}" in item for f, item in zip(findings, items, strict=True)), items
    straggler = [item for item in items if "Rank 1 on host-b works 10 ms (+48%)" in item]
    assert len(straggler) == 1 and "'Forward'" in straggler[0], items
    assert all("→ " in item for item in items)


def test_names_from_the_trace_are_inert_text(browser: Any, gpu_report: Path) -> None:
    open_report(browser, gpu_report)
    assert browser.execute_script("return window.__xss") is None
    assert (
        browser.execute_script("return document.querySelectorAll('img, main script, #banner script').length")
        == 0
    )
    options = [o.text for o in browser.find_elements("css selector", "#annotation-picker option")]
    assert any(o.startswith(XSS_SCRIPT) for o in options) and any(o.startswith(XSS_IMG) for o in options)
    kernel_labels = browser.execute_script(
        "return [...document.querySelectorAll('[data-panel=kernel-time-top15] .ytick text')]"
        ".map(t => t.textContent)"
    )
    assert any(XSS_IMG in label for label in kernel_labels), kernel_labels
    command_line = browser.execute_script(
        "return document.querySelector('[data-panel=metadata] tbody').textContent"
    )
    assert XSS_IMG in command_line


def test_annotation_picker_changes_the_histogram(browser: Any, gpu_report: Path) -> None:
    from selenium.webdriver.support.ui import Select

    open_report(browser, gpu_report)
    histogram = "return document.querySelector('[data-panel=annotation-histogram] .js-plotly-plot').data[0]"
    shown = browser.find_element("css selector", "[data-panel=annotation-histogram] .annotation-name")
    picker = Select(browser.find_element("id", "annotation-picker"))
    first = browser.execute_script(histogram)
    assert shown.text == "step"
    picker.select_by_visible_text(next(o.text for o in picker.options if o.text.startswith(XSS_SCRIPT)))
    assert shown.text == XSS_SCRIPT
    picked = browser.execute_script(histogram)
    assert picked["x"] != first["x"]
    assert sum(picked["y"]) == 2 * STEPS
    assert browser.execute_script("return window.__xss") is None


def test_top_k_input_changes_the_kernel_charts(browser: Any, gpu_report: Path) -> None:
    open_report(browser, gpu_report)
    labels = "return document.querySelector('[data-panel={}] .js-plotly-plot').data[0].labels"
    assert len(browser.execute_script(labels.format("kernel-time-topk"))) == 3  # 3 kernels (one NCCL), k = 10
    browser.execute_script(
        "const k = document.getElementById('top-k'); k.value = '1'; k.dispatchEvent(new Event('change'))"
    )
    for panel in ("kernel-time-topk", "kernel-launches-topk"):
        shown = browser.execute_script(labels.format(panel))
        assert len(shown) == 2 and shown[-1] == "other", shown


def test_panels_without_gpu_data_say_why(browser: Any, tmp_path: Path) -> None:
    report = write_report(str(write_job(tmp_path / "traces", with_gpu=False)), tmp_path / "report.html")
    open_report(browser, report)
    states = panel_states(browser)
    for panel in GPU_PANELS:
        assert states[panel] == f"no GPU activity recorded: {NO_CUDA_REASON}", panel
    assert {panel: states[panel] for panel in ALL_PANELS - GPU_PANELS} == {
        panel: "plot" for panel in ALL_PANELS - GPU_PANELS
    }


def test_report_of_the_example_training_run_matches_what_it_did(
    browser: Any, example_job: Path, tmp_path: Path
) -> None:
    steps = EXAMPLE_STEPS
    report = write_report(str(example_job), tmp_path / "report.html")
    summary = embedded_summary(report.read_text())
    assert summary["steps"]["stats"]["count"] == 2 * steps
    assert [r["stats"]["count"] for r in summary["steps"]["per_rank"]] == [steps, steps]
    counts = {a["name"]: a["stats"]["count"] for a in summary["annotations"]}
    assert counts == {name: 2 * steps for name in ("step", "Forward", "Loss", "Backward", "Optimizer")}
    open_report(browser, report)
    states = panel_states(browser)
    for panel in ("metadata", "cpu-active", "cpu-utilization", "step-time", "step-time-per-rank",
                  "annotation-histogram"):  # fmt: skip
        assert states[panel] == "plot", (panel, states[panel])
    assert all(states[panel].startswith("no ") for panel in GPU_PANELS), states


def _write_job_with_a_warm_up_step(directory: Path) -> Path:
    """One rank: a first step of 7.2 s, then 81 steps of 8 ms, one of them 40 ms."""
    frame = st.pb().Frame(sequence=0)
    st.string_index(frame, "")
    durations = [7_200_000_000] + [8_000_000] * 81
    durations[50] = 40_000_000
    rows, t = [], 1_000_000
    for n, dur in enumerate(durations):
        rows.append((t, dur, f"ProfilerStep#{n}", 100, 0))
        t += dur + 100_000
    st.add_annotations(frame, rows)
    m = st.pb()
    h = st.header(host="host-a", rank=0, world_size=1, job="warm-up-job", pid=4000, realtime_ns=WALL_NS)
    footer = m.Footer(annotations_written=len(rows), frames_written=1)
    footer.stop.monotonic_ns = t
    footer.stop.realtime_ns = WALL_NS + t
    st.write_trace(directory / "rank0.smprof", h, [frame], footer)
    return directory


def test_step_charts_stay_readable_with_a_900x_warm_up_step(browser: Any, tmp_path: Path) -> None:
    report = write_report(str(_write_job_with_a_warm_up_step(tmp_path / "traces")), tmp_path / "report.html")
    open_report(browser, report)
    layout = "return document.querySelector('section[data-panel=\"{}\"] .js-plotly-plot')._fullLayout.{}"
    assert browser.execute_script(layout.format("step-time", "xaxis.title.text")) == "duration (log scale)"
    assert browser.execute_script(layout.format("step-time-per-rank", "yaxis.type")) == "log"
    rows = browser.execute_script(
        "return [...document.querySelectorAll('section[data-panel=\"step-time\"] tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.textContent))"
    )
    assert [(r[2], r[4], r[5]) for r in rows] == [("0", "900×", "warm-up"), ("50", "5×", "outlier")]


def test_many_names_are_cut_to_the_listed_ones_and_each_process_says_how_it_ended(
    browser: Any, tmp_path: Path
) -> None:
    """250 distinct names: the picker lists 200 (LISTED_ANNOTATIONS), a line counts the other 50;
    rank 0 stopped, rank 1 died of an uncaught ValueError (issue 32, items 7 and 8)."""
    from smppy.report import LISTED_ANNOTATIONS

    traces = tmp_path / "traces"
    for rank in range(2):
        frame = st.pb().Frame(sequence=0)
        rows = [(1_000, 100_000_000, "step_0", 7, 0)]
        rows += [(2_000 + 1_000 * i, 300 - i, f"layer_{i}.forward", 7, 1) for i in range(250)]
        st.add_annotations(frame, rows)
        footer = st.pb().Footer(annotations_written=len(rows), frames_written=1)
        footer.stop.monotonic_ns = 200_000_000
        if rank == 0:
            footer.end.how = "stop"
        else:
            footer.end.how, footer.end.exit_code_known, footer.end.exit_code = "exception", True, 1
            footer.end.exception_type, footer.end.exception_message = "ValueError", b"bad batch 7"
        st.write_trace(
            traces / f"rank{rank}.smprof", st.header(rank=rank, world_size=2, pid=10 + rank), [frame], footer
        )
    report = write_report(str(traces), tmp_path / "report.html")
    payload = embedded_payload(report.read_text())
    assert len(payload["summary"]["annotations"]) == LISTED_ANNOTATIONS == 200
    assert payload["report"]["annotations_not_listed"]["names"] == 251 - LISTED_ANNOTATIONS
    open_report(browser, report)
    options = browser.execute_script("return document.querySelectorAll('#annotation-picker option').length")
    assert options == LISTED_ANNOTATIONS
    notes = [p.text for p in browser.find_elements("css selector", "p.note")]
    assert any(n.startswith("and 51 more annotation names, 102 calls") for n in notes), notes
    ended = browser.execute_script(
        """const table = [...document.querySelectorAll("table")].find(
             (t) => [...t.querySelectorAll("th")].some((th) => th.textContent === "ended"));
           const column = [...table.querySelectorAll("th")].findIndex((th) => th.textContent === "ended");
           return [...table.querySelectorAll("tbody tr")].map((tr) => tr.children[column].textContent);"""
    )
    assert ended == ["stop", "ValueError"], ended
    banner = browser.find_element("id", "banner").text
    assert "rank 1 pid 11: ended by an uncaught ValueError: bad batch 7 (after 1 step)" in banner, banner
