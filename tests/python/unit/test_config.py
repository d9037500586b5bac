"""Configuration: the original keys, environment variables, clear errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import smppy
from conftest import run_python, start_session
from machine import cuda_driver_loads
from smppy.analysis.trace import find_trace_files, open_trace

ORIGINAL_KEYS = [
    "EnableCuda",
    "EnablePerf",
    "EnableForkFollow",
    "BucketCount",
    "BucketSizeMB",
    "Compression",
    "RecordFile",
]


def configure(settings: dict) -> None:
    config = smppy.Config()
    config.profiler = settings
    smppy.SMProfiler.instance().configure(config)


def test_every_original_key_is_accepted() -> None:
    assert set(ORIGINAL_KEYS) <= set(smppy.Config.keys())
    configure(
        {
            "EnableCuda": "1",
            "EnablePerf": "0",
            "EnableForkFollow": "0",
            "BucketCount": "32",
            "BucketSizeMB": "64",
            "Compression": "zstd",
            "RecordFile": "smpfile_%p_%t.raw",
        }
    )


def test_unknown_key_names_the_key_and_lists_the_valid_ones() -> None:
    with pytest.raises(
        ValueError, match="unknown profiler config key 'EnableCUDA'; valid keys: EnableCuda, "
    ):
        configure({"EnableCUDA": "1"})


@pytest.mark.parametrize(
    ("key", "value", "valid"),
    [
        ("EnableCuda", "maybe", "auto, 1 or 0"),
        ("EnablePerf", "2", "1 or 0"),
        ("BucketCount", "0", "an integer from 1 to 4096"),
        ("BucketSizeMB", "lots", "an integer from 1 to 4096"),
        ("Compression", "lz4", "zstd, none, or a zstd level"),
        ("RecordFile", "trace_%x.smprof", "%p pid, %t start time"),
        ("FlushIntervalMs", "5", "from 10 to 60000"),
    ],
)
def test_bad_value_names_key_and_valid_values(key: str, value: str, valid: str) -> None:
    with pytest.raises(ValueError) as error:
        configure({key: value})
    message = str(error.value)
    assert f"'{value}'" in message and f"'{key}'" in message and valid in message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("BucketCount", "100\x00junk"),
        ("RecordFile", "/tmp/a\x00/b.smprof"),
        ("FlushIntervalMs", " 100"),
        ("BucketSizeMB", "+4"),
        ("UploadUri", "s3://Bucket"),
        ("RecordFile", "trace_\ud800.smprof"),
        ("EnablePerf", "\udcff"),
        ("BucketCount", 10**5000),
        ("CpuSampleIntervalMs", -(10**5000)),
    ],
    ids=lambda v: f"int of {v.bit_length()} bits" if isinstance(v, int) else None,
)
def test_invalid_values_are_refused_naming_the_key(key: str, value: object) -> None:
    with pytest.raises(ValueError) as error:
        configure({key: value})
    assert f"'{key}'" in str(error.value)
    assert "valid values" in str(error.value)


def test_record_file_with_undecodable_bytes_is_a_file_name(tmp_path: Path) -> None:
    # A str from os.fsdecode: the file is created under its original bytes.
    name = os.fsdecode(b"trace_\xff_%p.smprof")
    result = run_python(
        "import smppy\n"
        "p = smppy.SMProfiler.instance()\n"
        f"p.configure({{'RecordFile': {str(tmp_path)!r} + '/' + {name!r}}})\n"
        "p.start_profiling()\n"
        "with smppy.annotate('step'):\n"
        "    pass\n"
        "p.stop_profiling()\n",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    (written,) = os.listdir(os.fsencode(tmp_path))
    assert written.startswith(b"trace_\xff_")


def test_values_must_be_strings_ints_or_bools() -> None:
    configure({"BucketCount": 8, "EnableCuda": False})
    with pytest.raises(TypeError, match="'BucketSizeMB'.*must be a str"):
        configure({"BucketSizeMB": 1.5})


@pytest.mark.parametrize("config", ["notadict", [("EnableCuda", "1")], 3])
def test_configure_says_what_it_takes(config: object) -> None:
    expected = r"take a dict of config keys to values.*docs/CONFIG.md.*not "
    with pytest.raises(TypeError, match=expected):
        smppy.SMProfiler.instance().configure(config)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=expected):
        configure(config)  # type: ignore[arg-type]  # through Config().profiler = ...


def test_configure_accepts_a_plain_dict(trace_dir: Path) -> None:
    profiler = smppy.SMProfiler.instance()
    plain = {"Compression": "none", "RecordFile": str(trace_dir / "plain.smprof"), "BucketCount": 3}
    profiler.configure(plain)
    profiler.start_profiling()
    profiler.stop_profiling()
    (file,) = find_trace_files(trace_dir)
    config = open_trace(file).header["config"]
    assert (config["Compression"], config["BucketCount"]) == ("none", "3")
    with pytest.raises(ValueError, match="BucketCount"):
        profiler.configure({"BucketCount": "many"})


def test_effective_config_and_explicit_values_are_in_the_header(trace_dir: Path) -> None:
    start_session(trace_dir, BucketCount="2", Compression="none")
    smppy.SMProfiler.instance().stop_profiling()
    (file,) = find_trace_files(trace_dir)
    config = open_trace(file).header["config"]
    assert config["BucketCount"] == "2"
    assert config["Compression"] == "none"
    assert config["EnableForkFollow"] == "0"  # defaults are recorded too
    assert set(config) == set(smppy.Config.keys())


def test_environment_sets_keys_and_config_wins(tmp_path: Path) -> None:
    code = """
        import smppy
        from smppy.analysis.trace import open_trace
        c = smppy.Config(); c.profiler = {"BucketCount": "3"}
        p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling(); p.stop_profiling()
        h = open_trace(p.last_session()["path"]).header
        print(h["config"]["BucketCount"], h["config"]["FlushIntervalMs"], h["config"]["EnableCuda"])
    """
    env = {
        "SMP_RECORD_FILE": f"{tmp_path}/env_%p.smprof",
        "SMP_BUCKET_COUNT": "7",
        "SMP_FLUSH_INTERVAL_MS": "250",
        "SMP_ENABLE_CUDA": "0",
    }
    proc = run_python(code, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["3", "250", "0"]
    assert len(list(tmp_path.glob("env_*.smprof"))) == 1


def test_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    proc = run_python(
        "import smppy; smppy.SMProfiler.instance().configure(smppy.Config())",
        cwd=tmp_path,
        env={"SMP_BUCKET_SIZE_MB": "huge"},
    )
    assert proc.returncode != 0
    assert "environment variable SMP_BUCKET_SIZE_MB" in proc.stderr
    assert "'BucketSizeMB'" in proc.stderr


@pytest.mark.skipif(
    cuda_driver_loads(), reason="libcuda.so.1 loads here (a CUDA driver): the CUDA collector is not lacking"
)
def test_enabling_a_collector_this_version_lacks_warns_once_and_says_why(tmp_path: Path) -> None:
    proc = run_python(
        f"""
        import smppy
        c = smppy.Config(); c.profiler = {{"EnableCuda": "1", "RecordFile": "{tmp_path}/c_%s.smprof"}}
        p = smppy.SMProfiler.instance(); p.configure(c)
        for _ in range(2):
            p.start_profiling(); p.stop_profiling()
        """,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("EnableCuda=1") == 1
    for file in find_trace_files(tmp_path):
        cuda = next(c for c in open_trace(file).header["collectors"] if c["name"] == "cuda")
        assert cuda["active"] is False and "no CUDA driver" in cuda["reason"]


def test_record_file_pattern_expands_rank_host_job(tmp_path: Path) -> None:
    proc = run_python(
        f"""
        import smppy
        c = smppy.Config(); c.profiler = {{"RecordFile": "{tmp_path}/%j/%h/r%r_l%l_s%s_%%.smprof"}}
        p = smppy.SMProfiler.instance(); p.configure(c); p.start_profiling(); p.stop_profiling()
        print(p.last_session()["path"])
        """,
        cwd=tmp_path,
        env={"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4", "SMP_JOB_NAME": "my job/1"},
    )
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.parent.parent == tmp_path / "my_job_1"
    assert path.name == "r3_l1_s0_%.smprof"
    header = open_trace(path).header
    assert (header["rank"], header["local_rank"], header["world_size"], header["rank_source"]) == (
        3,
        1,
        4,
        "torchrun",
    )
