"""Hostile and damaged trace files through every reading command, from a corpus generated here:
chunks that claim or inflate to gigabytes, frames whose checksum is right but whose columns
contradict each other, frames removed or duplicated against the footer, files that are not
traces. No traceback, bounded memory, a warning naming the file, the other files still read."""

from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import synthetic_trace as st

pytestmark = [pytest.mark.s3]

MAGIC = b"SMPROF\x00\x01"
MIB = 1 << 20
# The address space the reading subprocess may use: far below what the hostile files used to make
# the reader allocate (1 GiB for a claimed size, tens of GiB for the bomb's parsed strings).
MEMORY_LIMIT = 3 << 30


def chunk(tag: bytes, payload: bytes, encoding: int = 0) -> bytes:
    """One chunk as docs/TRACE_FORMAT.md lays it out, with a correct CRC."""
    return tag + struct.pack("<IB3xI", len(payload), encoding, zlib.crc32(payload)) + payload


def header_chunk() -> bytes:
    return chunk(b"SMPH", st.header(host="evil").SerializeToString())


def zstd(data_source: str, size: int) -> bytes:
    """``size`` bytes of the pattern that the Python expression ``data_source`` builds, compressed by
    the zstd command with the size declared in the frame header (as libsmprof's writer does)."""
    writer = f"import sys\nblock = {data_source}\nfor _ in range({size} // len(block)):\n"
    writer += "    sys.stdout.buffer.write(block)"
    source = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE)
    out = subprocess.run(
        ["zstd", "-q", f"--stream-size={size}", "-c"], stdin=source.stdout, capture_output=True, check=True
    ).stdout
    assert source.wait() == 0
    return out


def good_trace(path: Path, frames: int = 3) -> Path:
    out = []
    for sequence in range(frames):
        frame = st.pb().Frame(sequence=sequence)
        st.add_annotations(frame, [(1000 * sequence + i, 10, "step", 7, 0) for i in range(4)])
        out.append(frame)
    footer = st.pb().Footer(annotations_written=4 * frames, frames_written=frames)
    return st.write_trace(path, st.header(), out, footer)


def smprof(*args: str, memory_limit: int | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    code = "import sys; from smppy.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit if memory_limit else None,
    )


def info_json(directory: Path, **kwargs) -> tuple[dict[str, dict], subprocess.CompletedProcess]:
    proc = smprof("info", str(directory), "--json", **kwargs)
    assert "Traceback" not in proc.stderr, proc.stderr
    return {Path(i["path"]).name: i for i in json.loads(proc.stdout)}, proc


# ---- 9: every allocation bounded by what the file can hold -----------------------------------------


def test_zstd_frame_claiming_a_huge_size_is_refused_and_the_other_files_read(tmp_path: Path):
    # A 4 KB file whose frame's zstd header claims 900 MiB (then 4 KB of a raw block).
    claimed = 900 * MIB
    zstd_frame = struct.pack("<IB", 0xFD2FB528, 0xE0) + struct.pack("<Q", claimed)
    zstd_frame += struct.pack("<I", 1 | (4000 << 3))[:3] + bytes(4000)
    (tmp_path / "claims.smprof").write_bytes(MAGIC + header_chunk() + chunk(b"SMPF", zstd_frame, 1))
    good_trace(tmp_path / "good.smprof")

    infos, proc = info_json(tmp_path, memory_limit=MEMORY_LIMIT)
    assert proc.returncode == 0, proc.stderr
    assert infos["good.smprof"]["status"] == "complete" and infos["good.smprof"]["annotations"] == 12
    problem = infos["claims.smprof"]["problem"]
    assert f"claims {claimed} bytes, over the reader's limit of {16 * MIB}" in problem, problem
    assert f"{tmp_path / 'claims.smprof'}: corrupt: a 4016-byte zstd frame claims" in proc.stderr


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    """~75 KB that decompress, as declared, to 768 MiB of empty strings (Frame field 2)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.smprof"
    path.write_bytes(MAGIC + header_chunk() + chunk(b"SMPF", zstd("b'\\x12\\x00' * 65536", 768 * MIB), 1))
    return path


def test_decompression_bomb_is_refused_in_bounded_memory(bomb: Path, tmp_path: Path):
    assert bomb.stat().st_size < 100_000
    (tmp_path / "bomb.smprof").write_bytes(bomb.read_bytes())
    good_trace(tmp_path / "good.smprof")
    infos, proc = info_json(tmp_path, memory_limit=MEMORY_LIMIT)
    assert proc.returncode == 0, proc.stderr
    assert infos["good.smprof"]["status"] == "complete"
    assert "over the reader's limit" in infos["bomb.smprof"]["problem"]

    for command in (["dump", str(tmp_path)], ["summary", str(tmp_path)]):
        proc = smprof(*command, memory_limit=MEMORY_LIMIT)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert f"{tmp_path / 'bomb.smprof'}: corrupt: a " in proc.stderr + proc.stdout


def test_message_of_millions_of_empty_strings_within_the_size_limit_is_refused(tmp_path: Path):
    # 15 MiB of empty strings: under the 16 MiB any chunk may inflate to, but 7.8 million fields.
    path = tmp_path / "fields.smprof"
    path.write_bytes(MAGIC + header_chunk() + chunk(b"SMPF", zstd("b'\\x12\\x00' * 65536", 15 * MIB), 1))
    infos, proc = info_json(tmp_path)
    assert "message has over 2097152 fields, the reader's limit" in infos["fields.smprof"]["problem"]


def test_chunk_length_beyond_the_end_of_the_file_is_truncated(tmp_path: Path):
    data = good_trace(tmp_path / "t.smprof").read_bytes()
    first_frame = 8 + 16 + struct.unpack_from("<I", data, 12)[0]
    cut = bytearray(data[: first_frame + 20])
    struct.pack_into("<I", cut, first_frame + 4, 200 * MIB)  # a length the file cannot hold
    (tmp_path / "t.smprof").write_bytes(bytes(cut))
    infos, _ = info_json(tmp_path)
    assert infos["t.smprof"]["problem"] == f"truncated: incomplete chunk at byte {first_frame}"


# ---- 10: damaged frames and files, the same in every command ---------------------------------------


def inconsistent_trace(path: Path) -> Path:
    """Frame 1 of 3 has three start times but two durations: its checksum is right."""
    frames = []
    for sequence in range(3):
        frame = st.pb().Frame(sequence=sequence)
        st.add_annotations(frame, [(1000 * sequence + i, 10, "step", 7, 0) for i in range(3)])
        if sequence == 1:
            del frame.annotations.dur_ns[-1]
        frames.append(frame)
    return st.write_trace(path, st.header(), frames, st.pb().Footer(annotations_written=9, frames_written=3))


def test_frame_with_inconsistent_columns_is_skipped_with_a_warning_in_info_and_dump(tmp_path: Path):
    inconsistent_trace(tmp_path / "bad.smprof")
    good_trace(tmp_path / "good.smprof")
    infos, proc = info_json(tmp_path)
    assert proc.returncode == 0
    assert infos["good.smprof"]["status"] == "complete"
    bad = infos["bad.smprof"]
    assert bad["annotations"] == 6 and bad["problem"].startswith("corrupt: frame 1 does not decode (")
    assert bad["status"].startswith("damaged: corrupt: frame 1 does not decode")

    proc = smprof("info", str(tmp_path))  # text: every file, then the totals
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.count("status: ") == 2 and "2 file(s)" in proc.stdout

    proc = smprof("dump", str(tmp_path))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert sum(e["type"] == "annotation" for e in events) == 6 + 12
    assert f"smprof: warning: {tmp_path / 'bad.smprof'}: corrupt: frame 1 does not decode" in proc.stderr


def test_dump_warns_about_truncated_and_unreadable_files_like_info(tmp_path: Path):
    data = good_trace(tmp_path / "cut.smprof").read_bytes()
    (tmp_path / "cut.smprof").write_bytes(data[:-7])
    for command in ("dump", "info"):
        proc = smprof(command, str(tmp_path / "cut.smprof"))
        assert proc.returncode == 0, proc.stderr
        assert f"smprof: warning: {tmp_path / 'cut.smprof'}: truncated" in proc.stderr

    (tmp_path / "cut.smprof").write_bytes(MAGIC + b"\x00" * 5)  # header cut short: nothing readable
    for command in ("dump", "info"):
        proc = smprof(command, str(tmp_path))
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert f"smprof: warning: skipping {tmp_path / 'cut.smprof'}: " in proc.stderr


def chunks_of(data: bytes) -> list[bytes]:
    out, offset = [], 8
    while offset < len(data):
        end = offset + 16 + struct.unpack_from("<I", data, offset + 4)[0]
        out.append(data[offset:end])
        offset = end
    return out


@pytest.mark.parametrize(
    "edit, problem",
    [
        (lambda c: c[:2] + c[3:], "corrupt: frame 2 follows frame 0 (1 frame(s) missing)"),
        (lambda c: c[:3] + c[2:], "corrupt: frame 1 again after frame 1 (a duplicated frame)"),
        (lambda c: c[:3] + c[4:], "corrupt: the footer counts 3 frames, the file holds 2"),  # the last frame
    ],
    ids=["frame removed", "frame duplicated", "last frame removed"],
)
def test_frame_removed_or_duplicated_is_flagged_against_the_footer(tmp_path: Path, edit, problem):
    chunks = chunks_of(good_trace(tmp_path / "t.smprof").read_bytes())  # header, 3 frames, footer
    (tmp_path / "t.smprof").write_bytes(MAGIC + b"".join(edit(chunks)))
    infos, proc = info_json(tmp_path)
    assert infos["t.smprof"]["problem"].startswith(problem), infos["t.smprof"]["problem"]
    assert infos["t.smprof"]["status"].startswith("damaged: ")
    assert problem in proc.stderr
    summary = json.loads(smprof("summary", str(tmp_path), "--json").stdout)
    assert any(problem in w for w in summary["warnings"]), summary["warnings"]


def test_frame_that_does_not_parse_is_one_warning_line(tmp_path: Path):
    chunks = chunks_of(good_trace(tmp_path / "t.smprof").read_bytes())
    cut_short = chunk(b"SMPF", b"\x12\x05a")  # Frame.strings: 5 bytes announced, 1 there
    (tmp_path / "t.smprof").write_bytes(MAGIC + chunks[0] + chunks[1] + cut_short + chunks[2])
    proc = smprof("info", str(tmp_path / "t.smprof"))
    at = 8 + len(chunks[0]) + len(chunks[1])
    assert proc.returncode == 0
    assert (
        proc.stderr
        == f"smprof: warning: {tmp_path / 't.smprof'}: corrupt: frame does not parse at byte {at}\n"
    )


def test_report_on_unreadable_input_is_an_error_not_an_empty_dashboard(tmp_path: Path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in/rank0.smprof").write_bytes(b"SMPROF\x00\x07 a future version")
    out = tmp_path / "report.html"
    proc = smprof("report", str(tmp_path / "in"), "-o", str(out))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(
        f"smprof: error: no readable smprof trace under {tmp_path / 'in'}"
    )
    assert "format version 7" in proc.stderr and not out.exists()
    proc = smprof("summary", str(tmp_path / "in"))
    assert proc.returncode == 2 and "no readable smprof trace" in proc.stderr


# ---- 12: traces are found by their magic bytes, whatever their names -------------------------------


def test_sagemaker_profiler_file_names_are_found_by_every_command(tmp_path: Path):
    good_trace(tmp_path / "smpfile_1234_1700000000.raw")
    good_trace(tmp_path / "node1/rank1.smpraw")
    (tmp_path / "notes.raw").write_text("not a trace")
    proc = smprof("info", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(Path(i["path"]).name for i in json.loads(proc.stdout)) == [
        "rank1.smpraw",
        "smpfile_1234_1700000000.raw",
    ]
    proc = smprof("dump", str(tmp_path))
    assert sum(json.loads(line)["type"] == "file" for line in proc.stdout.splitlines()) == 2
    summary = json.loads(smprof("summary", str(tmp_path), "--json").stdout)
    assert len(summary["job"]["files"]) == 2 and summary["warnings"] == []
    proc = smprof("export", str(tmp_path), "-o", str(tmp_path / "t.json"))
    assert proc.returncode == 0 and "from 2 file(s)" in proc.stdout, proc.stderr


# ---- 14: CLI errors are one line ----------------------------------------------------------------------


@pytest.mark.parametrize("command", ["info", "dump", "summary", "export", "report"])
def test_a_named_file_that_is_not_a_trace_is_one_clear_line(tmp_path: Path, command: str):
    (tmp_path / "notes.txt").write_text("hello")
    proc = smprof(
        command,
        str(tmp_path / "notes.txt"),
        *(["-o", str(tmp_path / "o")] if command in ("export", "report") else []),
    )
    assert proc.returncode == 2
    not_a_trace = "is not an smprof trace (it does not start with the trace magic bytes)"
    assert proc.stderr == f"smprof: error: {tmp_path / 'notes.txt'} {not_a_trace}\n"


def test_export_into_a_missing_folder_creates_it(tmp_path: Path):
    good_trace(tmp_path / "t.smprof")
    out = tmp_path / "new/deeper/trace.json.gz"
    proc = smprof("export", str(tmp_path / "t.smprof"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0


def test_s3_without_boto3_says_what_to_install(tmp_path: Path):
    code = (
        "import sys; sys.modules['boto3'] = None; sys.modules['botocore'] = None\n"
        "from smppy.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    for args in (["info", "s3://bucket/p"], ["upload", str(tmp_path), "s3://bucket/p"]):
        proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2
        assert (
            proc.stderr
            == "smprof: error: s3:// needs boto3, which is not installed: pip install smprof[s3]\n"
        )
