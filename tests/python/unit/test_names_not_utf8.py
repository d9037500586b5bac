"""Annotation names from the C API are bytes: one that is not UTF-8 keeps its frame (and the
other annotations), and every reading command shows it as U+FFFD instead of failing."""

from __future__ import annotations

import ctypes
import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import smppy
from smppy.analysis.trace import annotation_events, open_trace

LATIN1_NAME = b"caf\xe9 \xff"  # not UTF-8
SHOWN_AS = "caf\ufffd \ufffd"
SHOWN_AS_JSON = json.dumps(SHOWN_AS)[1:-1]  # ensure_ascii: caf\ufffd \ufffd


def shows_the_name(text: str) -> bool:
    return SHOWN_AS in text or SHOWN_AS_JSON in text


def write_trace_from_the_c_api(out: Path) -> Path:
    lib = ctypes.CDLL(str(Path(smppy.__file__).parent / "libsmprof.so"))
    lib.smprof_annotation_begin.restype = ctypes.c_uint64
    lib.smprof_annotation_begin.argtypes = [ctypes.c_char_p]
    lib.smprof_annotation_end.argtypes = [ctypes.c_uint64]
    lib.smprof_last_error.restype = ctypes.c_char_p
    keys = (ctypes.c_char_p * 1)(b"RecordFile")
    values = (ctypes.c_char_p * 1)(str(out / "names.smprof").encode())
    assert lib.smprof_start(keys, values, 1) == 0, lib.smprof_last_error()
    for name in [b"good"] * 100 + [LATIN1_NAME]:
        lib.smprof_annotation_end(lib.smprof_annotation_begin(name))
    assert lib.smprof_stop() == 0, lib.smprof_last_error()
    return out / "names.smprof"


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A fresh process: libsmprof's session state is process-wide.
    out = tmp_path_factory.mktemp("names")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from pathlib import Path;"
        "import test_names_not_utf8 as t; t.write_trace_from_the_c_api(Path(sys.argv[2]))"
    )
    subprocess.run(
        [shutil.which("python3") or "python3", "-c", code, str(Path(__file__).parent), str(out)],
        check=True,
        timeout=120,
    )
    return out / "names.smprof"


def smprof(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("smprof")
    assert exe
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)


def test_the_frame_and_every_other_annotation_survive(trace: Path) -> None:
    events = list(annotation_events(open_trace(trace)))
    assert Counter(e["name"] for e in events) == {"good": 100, SHOWN_AS: 1}


def test_dump_info_and_summary_show_the_name_replaced(trace: Path) -> None:
    dump = smprof("dump", str(trace), "--json")
    assert dump.returncode == 0, dump.stderr
    names = [json.loads(line).get("name") for line in dump.stdout.splitlines()]
    assert names.count(SHOWN_AS) == 1 and names.count("good") == 100

    for args in (("info", str(trace)), ("info", str(trace), "--json"), ("summary", str(trace), "--json")):
        proc = smprof(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert shows_the_name(proc.stdout), args


def test_report_and_exports_write_valid_output(trace: Path, tmp_path: Path) -> None:
    report = smprof("report", str(trace), "-o", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr
    assert shows_the_name((tmp_path / "report.html").read_text(encoding="utf-8"))

    chrome = smprof("export", str(trace), "-o", str(tmp_path / "trace.json"))
    assert chrome.returncode == 0, chrome.stderr
    exported = json.loads((tmp_path / "trace.json").read_bytes())  # strict UTF-8
    events = exported["traceEvents"] if isinstance(exported, dict) else exported
    assert any(e.get("name") == SHOWN_AS for e in events)

    perfetto = smprof("export", str(trace), "--format", "perfetto", "-o", str(tmp_path / "trace.pftrace"))
    assert perfetto.returncode == 0, perfetto.stderr
    assert SHOWN_AS.encode() in (tmp_path / "trace.pftrace").read_bytes()
