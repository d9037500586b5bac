"""An ``s3://`` job summarized on a 2-worker Dask cluster (docs/S3.md, "On a Dask cluster"):
the workers read the objects themselves, against the baseline of the same run, the objects
mirrored through the client first and the workers given the mirror's paths. Prints the bytes the
client read from S3 and the wall times, and checks that both summaries are the same bytes.
S3 is moto's server on loopback (the ``s3`` and ``dask`` extras and moto must be installed).

    python3 bench/s3_dask_benchmark.py [--ranks 8] [--events 20000000] [--quick]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from report_benchmark import write_job  # its directory is on sys.path


class CountingClient:
    """An S3 client that counts the body bytes its GETs return."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.bytes_read = 0

    def get_object(self, **request: Any) -> dict[str, Any]:
        response = self._client.get_object(**request)
        body = response["Body"].read()
        self.bytes_read += len(body)
        response["Body"] = type("Body", (), {"read": lambda _self: body})()
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--events", type=int, default=20_000_000)
    parser.add_argument("--quick", action="store_true", help="2 ranks, 200,000 events (the smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.ranks, args.events = 2, 200_000

    import boto3
    from distributed import LocalCluster
    from moto.server import ThreadedMotoServer
    from smppy import cli
    from smppy.analysis import _parallel_summary
    from smppy.storage import _s3_streams
    from smppy.storage.s3 import S3Uri

    work = Path(tempfile.mkdtemp(prefix="smprof-s3-dask-"))
    write_job(work / "job", events=args.events, ranks=args.ranks)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{server.get_host_and_port()[1]}",
        SMPROF_CACHE_DIR=str(work / "cache"),
    )
    boto3.client("s3").create_bucket(Bucket="bench")
    location = "s3://bench/runs"
    assert cli.main(["upload", str(work / "job"), location, "--no-progress"]) == 0
    total = sum(f.stat().st_size for f in (work / "job").rglob("*.smprof"))
    options = {"step_pattern": "", "top_k": 15, "max_buckets": 200, "reorder_window_ns": 5_000_000_000}

    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cluster:
        started = time.perf_counter()
        streams, warnings = _s3_streams.mirrored_streams(S3Uri.parse(location))
        mirrored = _parallel_summary.streams_summary_text(
            streams, warnings, options, jobs=None, scheduler=cluster.scheduler_address, progress=None
        )
        mirror_s = time.perf_counter() - started

        counting = CountingClient(_s3_streams.make_client())
        _s3_streams.make_client = lambda: counting
        started = time.perf_counter()
        on_workers = _parallel_summary.s3_summary_text(
            location, options, jobs=None, scheduler=cluster.scheduler_address, progress=None
        )
        workers_s = time.perf_counter() - started
    server.stop()
    shutil.rmtree(work)

    assert on_workers == mirrored, "the two summaries differ"
    mib = 2**20
    print(
        f"{args.ranks} ranks, {total / mib:.1f} MiB of traces, 2 Dask workers; load {os.getloadavg()[0]:.2f}"
    )
    print(f"mirror through the client: {total / mib:9.2f} MiB read by client, {mirror_s:6.2f} s")
    print(
        f"workers read s3://:        {counting.bytes_read / mib:9.2f} MiB read by client, {workers_s:6.2f} s"
    )
    print(f"client bytes ratio {counting.bytes_read / total:.4f}, wall ratio {workers_s / mirror_s:.2f}")


if __name__ == "__main__":
    main()
