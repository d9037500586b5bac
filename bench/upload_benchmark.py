"""What verified, idempotent uploads cost: ``smprof upload``'s machinery against plain boto3.

Against a moto S3 server on loopback (so the network is not the bottleneck and smprof's own
work shows), the same complete trace files are uploaded three ways, each into a fresh prefix:

  baseline   boto3 ``upload_file`` of each file, nothing else
  smprof     ``smppy.storage.upload.upload_directory``: completeness check (reads each file to its
             footer), SHA-256 (and S3's composite checksum), HEAD before and after
  rerun      ``upload_directory`` again over the same prefix: nothing is sent

and the ratios smprof/baseline and rerun/baseline are printed.

    python3 bench/upload_benchmark.py [--files 8] [--mib 24] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import synthetic_trace as st
from moto.server import ThreadedMotoServer
from smppy.storage.s3 import S3Uri, make_client  # noqa: E402
from smppy.storage.upload import TransferOptions, upload_directory  # noqa: E402

MIB = 1024 * 1024


def make_files(directory: Path, files: int, mib: float) -> list[Path]:
    paths = []
    for i in range(files):
        frame = st.pb().Frame()
        st.add_annotations(frame, [(1000, 10, "step", 7, 0)])
        for _ in range(int(mib * 1024)):
            frame.strings.append(os.urandom(512).hex().encode())  # incompressible, like packed timestamps
        footer = st.pb().Footer(annotations_written=1, frames_written=1)
        paths.append(st.write_trace(directory / f"rank{i}.smprof", st.header(rank=i), [frame], footer, 0))
    return paths


def best_of(repeat: int, run) -> float:
    times = []
    for i in range(repeat):
        start = time.perf_counter()
        run(i)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--mib", type=float, default=24, help="size of each file")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1"
    )
    url = f"http://127.0.0.1:{server.get_host_and_port()[1]}"
    client = make_client(url)
    client.create_bucket(Bucket="bench")
    options = TransferOptions(multipart_threshold=16 * MIB, part_size=8 * MIB)
    from boto3.s3.transfer import TransferConfig

    config = TransferConfig(
        multipart_threshold=options.multipart_threshold, multipart_chunksize=options.part_size
    )
    with tempfile.TemporaryDirectory() as tmp:
        files = make_files(Path(tmp), args.files, args.mib)
        total = sum(f.stat().st_size for f in files) / MIB

        def baseline(i: int) -> None:
            for f in files:
                client.upload_file(str(f), "bench", f"base{i}/{f.name}", Config=config)

        def smprof(i: int) -> None:
            outcomes = upload_directory(Path(tmp), S3Uri("bench", f"smprof{i}"), client, options, jobs=1)
            assert all(o.action == "uploaded" for o in outcomes), outcomes

        def rerun(i: int) -> None:
            outcomes = upload_directory(Path(tmp), S3Uri("bench", "smprof0"), client, options, jobs=1)
            assert all(o.action == "unchanged" for o in outcomes), outcomes

        t_base = best_of(args.repeat, baseline)
        t_smprof = best_of(args.repeat, smprof)
        t_rerun = best_of(args.repeat, rerun)
    server.stop()
    print(f"{args.files} files, {total:.1f} MiB, moto on loopback, one file at a time, best of {args.repeat}")
    print(f"  baseline boto3 upload_file  {t_base:7.3f} s  {total / t_base:7.1f} MiB/s")
    for name, t in (("smprof upload", t_smprof), ("smprof upload, rerun", t_rerun)):
        print(f"  {name:<27} {t:7.3f} s  {total / t:7.1f} MiB/s  {t / t_base:5.2f}x")


if __name__ == "__main__":
    main()
