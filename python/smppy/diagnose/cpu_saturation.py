"""CPU saturation and thread oversubscription (docs/DIAGNOSE.md).

Rule: on a host, during the steady-state steps, the machine's CPU is at least
``BUSY_PERCENT`` busy (``cpu.utilization`` sampled during the steps) and the
job itself is the cause: its processes (ranks and their workers,
``process.cpu_percent``) use at least ``JOB_SHARE`` of the cores, or its ranks
context-switch at least ``SWITCHES_PER_CORE_S`` times per second per core
during the steps (``perf.context-switches``): more runnable threads than
cores, handing the cores back and forth. A machine filled by other work, with
a quiet job, is not reported (``cpu_saturated``). Oversubscribed threads need
not fill the CPU: they wait for each other at every barrier, and the cores
idle in between. So a job whose threads are at least ``HIGH_THREADS_PER_CORE``
times the cores while its ranks switch that often is reported as such,
whatever the CPU's busy share (``threads_oversubscribed``, in place of
``cpu_saturated``). Severity: high when the job's threads are at least twice
the cores, else medium. Cost: the median cycle of the steps that ran on a
saturated CPU minus that of the steps that did not, when at least three did
not; otherwise (and for oversubscription, which every step suffers) it cannot
be measured from the run and is 0 (the basis says so).
"""

from __future__ import annotations

from typing import Any

from smppy.diagnose.finding import Finding
from smppy.diagnose.steps import cycle_ns, median_ns, ms, steady_steps, training_ranks

BUSY_PERCENT = 80.0
JOB_SHARE = 0.75
HIGH_THREADS_PER_CORE = 2.0
SWITCHES_PER_CORE_S = 8_000
MIN_UNSATURATED_STEPS = 3


def _host_finding(summary: dict[str, Any], host: dict[str, Any]) -> Finding | None:
    cores = len(host["cores"])
    processes = [r for r in summary["step_profile"]["per_rank"] if r["host"] == host["host"]]
    ranks = [r for r in training_ranks(summary) if r["host"] == host["host"]]
    steps = [s for r in ranks for s in steady_steps(r)]
    busy_samples = [s["cpu_utilization_percent"] for s in steps if s["cpu_utilization_percent"] is not None]
    if not cores or not ranks or not busy_samples:
        return None
    busy = sum(busy_samples) / len(busy_samples)
    job_cores = sum((p["process_cpu_percent"] or 0.0) / 100 for p in processes)
    threads = sum(p["max_threads"] for p in processes)
    counted = [s for s in steps if s["context_switches"] is not None]
    switch_rate = (
        sum(s["context_switches"] for s in counted) / max(sum(cycle_ns(s) for s in counted), 1) * 1e9
    )
    # The ranks run at once: their rates add up on the host's cores.
    switches_per_core_s = switch_rate * len(ranks) / cores
    switching = switches_per_core_s >= SWITCHES_PER_CORE_S
    oversubscribed = switching and threads >= HIGH_THREADS_PER_CORE * cores
    saturated_by_job = busy >= BUSY_PERCENT and (job_cores >= JOB_SHARE * cores or switching)
    if not oversubscribed and not saturated_by_job:
        return None
    saturated = [cycle_ns(s) for s in steps if (s["cpu_utilization_percent"] or 0) >= BUSY_PERCENT]
    calm = [cycle_ns(s) for s in steps if (s["cpu_utilization_percent"] or 100) < BUSY_PERCENT]
    if oversubscribed:
        per_step = 0
        basis = "not measurable from this run: every step ran on the oversubscribed threads"
    elif len(calm) >= MIN_UNSATURATED_STEPS and saturated:
        per_step = max(0, median_ns(saturated) - median_ns(calm))
        basis = "median cycle of the steps on a saturated CPU minus that of the other steps"
    else:
        per_step = 0
        basis = "not measurable from this run: (nearly) every step ran on a saturated CPU"
    per_rank_threads = max(1, cores // len(ranks))
    usage = (
        f"this job runs {threads} threads on {cores} cores, using {job_cores:.1f} of them and switching "
        f"{switches_per_core_s:,.0f} times/s per core"
    )
    return Finding(
        id="threads_oversubscribed" if oversubscribed else "cpu_saturated",
        title=(
            f"Threads oversubscribed on {host['host']}: {usage}; CPU {busy:.0f}% busy during steps"
            if oversubscribed
            else f"CPU saturated on {host['host']}: {busy:.0f}% busy during steps; {usage}"
        ),
        severity="high" if threads >= HIGH_THREADS_PER_CORE * cores else "medium",
        cost_per_step_ns=per_step,
        cost_total_ns=per_step * sum(r["steps_seen"] for r in ranks),
        cost_basis=basis,
        evidence={
            "host": host["host"],
            "cores": cores,
            "busy_percent": round(busy, 1),
            "job_cores_used": round(job_cores, 2),
            "threads": threads,
            "ranks_on_host": len(ranks),
            "processes_on_host": len(processes),
            "saturated_step_cycle_ns": median_ns(saturated),
            "other_step_cycle_ns": median_ns(calm),
            "context_switches_per_core_s": round(switches_per_core_s),
        },
        recommendation=(
            "Cap the compute threads so that all ranks and DataLoader workers on the host fit its "
            f"{cores} cores: "
            f"torch.set_num_threads({per_rank_threads}) (or OMP_NUM_THREADS={per_rank_threads}) per rank, "
            "fewer if workers run beside it"
            + (f"; the saturated steps take {ms(per_step)} longer" if per_step else "")
        ),
    )


def detect(summary: dict[str, Any]) -> list[Finding]:
    return [f for f in (_host_finding(summary, h) for h in summary["cpu"]["hosts"]) if f is not None]
