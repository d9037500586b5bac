"""
Private extension of smppy; use the smppy package.
"""
from __future__ import annotations
import collections.abc
from smppy import annotate
import typing
__all__: list[str] = ['DEFAULT_DATA_WAIT_PATTERN', 'DEFAULT_MAX_PROFILED_STEPS', 'DEFAULT_STEP_PATTERN', 'NoStepError', 'ProcessStream', 'TraceFile', 'annotate', 'annotation_begin', 'annotation_end', 'assemble_timeline', 'clock_offset_ns', 'closed_files_overflow', 'config_env_name', 'config_keys', 'export_timeline', 'export_timeline_part', 'footer_in_tail', 'has_trace_magic', 'header_chunk_end', 'is_profiling', 'job_start_wall_ns', 'job_streams', 'job_streams_from_ends', 'last_session_stats', 'merge_partial_summaries', 'next_closed_file', 'partial_summary', 'read_stream_table_batches', 'read_table_batches', 'read_tables', 'record_clock_alignment', 'record_collective', 'resolve_config', 'start', 'stop', 'stop_at_end', 'summarize', 'summary_from_partial', 'table_schema', 'timeline_collective_chains', 'timeline_group_bytes', 'timeline_window', 'validate_config', 'version', 'watch_closed_files']
class TraceFile:
    """
    One rank file, read frame by frame.
    """
    def __init__(self, path: str, follow: bool = False) -> None:
        """
        follow: the file is still being written; next_frame() returns None at its end (or at a chunk not yet whole) with `waiting` True, and a later call goes on from there.
        """
    def next_frame(self) -> typing.Any:
        ...
    def next_live_frame(self) -> typing.Any:
        """
        The next frame as smprof top reads it: annotations (start_ns, dur_ns, name), counters (ts_ns, value, name), and the union of its GPU work's intervals (gpu_start_ns, gpu_end_ns); None at the end.
        """
    @property
    def footer(self) -> typing.Any:
        """
        The footer, once reading reached it; else None.
        """
    @property
    def header(self) -> dict:
        ...
    @property
    def problem(self) -> typing.Any:
        """
        Why reading stopped early, or None.
        """
    @property
    def problem_offset(self) -> int:
        ...
    @property
    def waiting(self) -> bool:
        """
        Following: reading reached what is written so far (call next_frame() again later).
        """
class ProcessStream:
    """
    One process stream of a job (its files, as smprof groups them), for partial_summary; pickles to bytes.
    """
    def __getstate__(self) -> tuple[bytes, list[str]]:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    def with_files(self, files: collections.abc.Sequence[tuple[str, str]]) -> ProcessStream:
        """
        A copy whose files are named and read as `files` says: a (name, local copy) pair for each file, in order; the summary names a file by its name and reads it from its local copy.
        """
    @property
    def bytes(self) -> int:
        ...
    @property
    def files(self) -> list[str]:
        ...
    @property
    def host(self) -> str:
        ...
    @property
    def local_copies(self) -> list[str]:
        ...
    @property
    def origin_ns(self) -> int:
        ...
    @property
    def pid(self) -> int:
        ...
    @property
    def rank(self) -> int:
        ...
    @property
    def session_index(self) -> int:
        ...
    @property
    def worker_of_pid(self) -> int:
        ...
class NoStepError(ValueError):
    pass
def _annotation_end_as(handle, name) -> None:
    """
    Closes the range as annotation_end() does, recorded under ``name``.
    """
def _set_decorator(*args, **kwargs):
    """
    Registers the Python helper that wraps decorated functions.
    """
def _set_enter_check(*args, **kwargs):
    """
    Registers a callable run with the name of each recorded enter.
    """
def annotation_begin(name) -> int:
    """
    Opens a range named ``name`` and returns its handle.
    
    End it with annotation_end(), on any thread. Returns 0 (a handle that
    annotation_end() accepts and ignores) when profiling is off.
    """
def annotation_end(handle) -> None:
    """
    Closes the range opened by annotation_begin().
    
    Misuse never corrupts the trace; it warns (RuntimeWarning): a handle
    ended twice or unknown is ignored, and a range ended while ranges opened
    after it are still open is recorded, its inner ranges staying open.
    A handle that is not an int is a TypeError.
    """
def assemble_timeline(streams: collections.abc.Sequence[ProcessStream], parts: collections.abc.Sequence[str], path: str, format: str, gzip: bool = False, ranks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = []) -> dict:
    """
    Writes the timeline of `streams` to `path` from `parts` (export_timeline_part's, every rank process in order): the bytes export_timeline writes. Returns the processes, machine counter samples, file size.
    """
def clock_offset_ns() -> int:
    """
    CLOCK_REALTIME - CLOCK_MONOTONIC as the trace's anchors read it.
    """
def closed_files_overflow() -> int:
    """
    Closed files not queued because nobody read the queue (since the last call).
    """
def config_env_name(arg0: str) -> str:
    """
    The environment variable of a config key.
    """
def config_keys() -> list[str]:
    """
    The documented config keys.
    """
def export_timeline(files: collections.abc.Sequence[str], path: str, format: str, gzip: bool = False, ranks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = [], start_wall_ns: typing.SupportsInt | typing.SupportsIndex | None = None, end_wall_ns: typing.SupportsInt | typing.SupportsIndex | None = None, gpu_utilization_max_buckets: typing.SupportsInt | typing.SupportsIndex = 10000, steps: tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex] | None = None, step_pattern: str = '') -> dict:
    """
    Writes the timeline of the rank `files` to `path` as a Chrome JSON or Perfetto trace; returns what went in (counts, warnings, file size). `steps` (first, last) narrows the window to those steps of the selected ranks (`step_pattern`, default the summary's); NoStepError if none ran.
    """
def export_timeline_part(streams: collections.abc.Sequence[ProcessStream], first_group: typing.SupportsInt | typing.SupportsIndex, end_group: typing.SupportsInt | typing.SupportsIndex, part_path: str, format: str, gzip: bool = False, ranks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = [], start_wall_ns: typing.SupportsInt | typing.SupportsIndex | None = None, end_wall_ns: typing.SupportsInt | typing.SupportsIndex | None = None, gpu_utilization_max_buckets: typing.SupportsInt | typing.SupportsIndex = 10000, collective_chains: bytes | None = None) -> dict:
    """
    Writes the rank processes [first_group, end_group) of the timeline of `streams` (every stream of the job) to `part_path` (and `part_path`.machine) for assemble_timeline; returns what went in. `collective_chains`: timeline_collective_chains' bytes, for a Chrome export's collective flows.
    """
def footer_in_tail(start: bytes, tail: bytes) -> bool:
    """
    True if `tail`, the last bytes of the trace file that `start` begins (through its header chunk), ends with the file's footer.
    """
@typing.overload
def has_trace_magic(start: bytes) -> bool:
    """
    True if these bytes (a file's first 16 or more) start like an smprof trace.
    """
@typing.overload
def has_trace_magic(path: str) -> bool:
    """
    True if the file starts like an smprof trace (its magic bytes), whatever its name.
    """
def header_chunk_end(start: bytes) -> int:
    """
    The bytes from a trace file's start through its header chunk, from its first bytes (at least 16); 0 if they do not start like a trace.
    """
def is_profiling() -> bool:
    ...
def job_start_wall_ns(files: collections.abc.Sequence[str]) -> int:
    """
    The earliest session start among the rank `files`, on the job's corrected clock (wall ns).
    """
def job_streams(paths: collections.abc.Sequence[str]) -> tuple:
    """
    (streams, warnings): the trace files under `paths` grouped into process streams (ProcessStream), in reading order, and the files skipped (unreadable headers); only the headers are read.
    """
def job_streams_from_ends(files: collections.abc.Sequence[tuple[str, typing.SupportsInt | typing.SupportsIndex, bytes, bytes]]) -> tuple:
    """
    job_streams for files known by some of their bytes, without reading them: (name, size, start, tail) each, `start` from the first byte through the header chunk (header_chunk_end), `tail` the last bytes (with the footer, for the clock alignment). The streams name their files by these names.
    """
def last_session_stats() -> dict:
    ...
def merge_partial_summaries(partials: collections.abc.Sequence[str]) -> bytes:
    """
    One partial summary (bytes) holding every stream of `partials`.
    """
def next_closed_file(timeout_s: typing.SupportsFloat | typing.SupportsIndex) -> str | None:
    """
    The oldest closed file not yet returned, or None after timeout_s seconds.
    """
def partial_summary(streams: collections.abc.Sequence[ProcessStream], step_pattern: str = '', data_wait_pattern: str = '', top_k: typing.SupportsInt | typing.SupportsIndex = 15, max_buckets: typing.SupportsInt | typing.SupportsIndex = 200, reorder_window_ns: typing.SupportsInt | typing.SupportsIndex = 5000000000, max_profiled_steps: typing.SupportsInt | typing.SupportsIndex = 200, progress: typing.Any = None) -> bytes:
    """
    The partial summary (bytes) of some process streams of one job.
    """
def read_stream_table_batches(streams: collections.abc.Sequence[ProcessStream], step_pattern: str = '', tables: collections.abc.Set[str] = set(), batch_rows: typing.SupportsInt | typing.SupportsIndex = 65536, *, on_batch: collections.abc.Callable, on_stream_end: collections.abc.Callable) -> list[str]:
    """
    read_table_batches for some process streams of a job (ProcessStream, from job_streams): what a worker process of a parallel Parquet export reads.
    """
def read_table_batches(paths: collections.abc.Sequence[str], step_pattern: str = '', tables: collections.abc.Set[str] = set(), batch_rows: typing.SupportsInt | typing.SupportsIndex = 65536, *, on_batch: collections.abc.Callable, on_stream_end: collections.abc.Callable) -> list[str]:
    """
    The rows of read_tables streamed in batches: on_batch(table, stream, columns) with at most `batch_rows` rows of one process stream (numbers as NumPy arrays, strings as lists), on_stream_end(stream) after a stream's last batch; returns the damaged files' warnings.
    """
def read_tables(paths: collections.abc.Sequence[str], step_pattern: str = '', tables: collections.abc.Set[str] = set()) -> tuple:
    """
    (tables, warnings): every event under `paths` as column lists by table name (only those in `tables`, when given) (docs/ANALYSIS.md), and the damaged files' warnings.
    """
def record_clock_alignment(arg0: str, arg1: typing.SupportsInt | typing.SupportsIndex, arg2: str, arg3: typing.SupportsInt | typing.SupportsIndex, arg4: collections.abc.Sequence[tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex]], arg5: str) -> typing.Any:
    """
    Adds one clock-alignment round (samples: (t0, t1, t2, t3) monotonic ns) to the running session; returns None, or a message.
    """
def record_collective(op: str, group: str, group_size: typing.SupportsInt | typing.SupportsIndex, group_rank: typing.SupportsInt | typing.SupportsIndex, sequence: typing.SupportsInt | typing.SupportsIndex, bytes: typing.SupportsInt | typing.SupportsIndex, dtype: str, async_op: bool, start_ns: typing.SupportsInt | typing.SupportsIndex, end_ns: typing.SupportsInt | typing.SupportsIndex, wait_start_ns: typing.SupportsInt | typing.SupportsIndex = 0, wait_end_ns: typing.SupportsInt | typing.SupportsIndex = 0, tid: typing.SupportsInt | typing.SupportsIndex = 0) -> bool:
    """
    Records one collective call (start_ns, end_ns: time.monotonic_ns() around the call; wait_start_ns, wait_end_ns: around its Work.wait(), 0 if none; tid: the calling thread's native id, 0 for this thread) into the running session (trace.proto Collectives); False when none is recording.
    """
def resolve_config(arg0: collections.abc.Mapping[str, str]) -> dict:
    """
    Every key's effective value as libsmprof resolves it (config, else environment, else default); raises ValueError naming a bad key or value.
    """
def start(arg0: collections.abc.Mapping[str, str]) -> typing.Any:
    """
    Starts a session; returns None, or a message if one is already running.
    """
def stop(no_gpu_wait: str = '') -> typing.Any:
    """
    Stops the session; returns None, or a message if none is running. With no_gpu_wait (why), it does not wait for the GPU work still queued.
    """
def stop_at_end(how: str, exit_code: typing.SupportsInt | typing.SupportsIndex | None = None, exception_type: bytes = b'', exception_message: bytes = b'') -> typing.Any:
    """
    Stops the session as the process ends (how: exit, exception, os_exit), without waiting for the GPU; the footer says how (trace.proto SessionEnd). Returns None, or a message if none is running.
    """
def summarize(paths: collections.abc.Sequence[str], step_pattern: str = '', data_wait_pattern: str = '', top_k: typing.SupportsInt | typing.SupportsIndex = 15, max_buckets: typing.SupportsInt | typing.SupportsIndex = 200, reorder_window_ns: typing.SupportsInt | typing.SupportsIndex = 5000000000, max_profiled_steps: typing.SupportsInt | typing.SupportsIndex = 200, progress: typing.Any = None) -> bytes:
    """
    The job summary of the trace files under `paths` as JSON text (docs/ANALYSIS.md); progress(done_bytes, total_bytes) is called after each frame and each file.
    """
def summary_from_partial(partial: str, warnings: collections.abc.Sequence[str]) -> bytes:
    """
    The job summary of a partial as JSON text; `warnings`: job_streams' warnings.
    """
def table_schema() -> dict:
    """
    {table: [(column, 'int64' | 'float64' | 'string')]}: the columns of read_tables, in order.
    """
def timeline_collective_chains(streams: collections.abc.Sequence[ProcessStream], ranks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = [], start_wall_ns: typing.SupportsInt | typing.SupportsIndex | None = None, end_wall_ns: typing.SupportsInt | typing.SupportsIndex | None = None) -> bytes:
    """
    Each collective instance's first and last arriving rank process in the timeline of `streams` (job_streams) inside the window, as bytes for export_timeline_part: what a one-process Chrome export finds itself.
    """
def timeline_group_bytes(streams: collections.abc.Sequence[ProcessStream], ranks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = []) -> list[int]:
    """
    The trace bytes of each rank process the timeline of `streams` (job_streams) shows, in export order.
    """
def timeline_window(streams: collections.abc.Sequence[ProcessStream], ranks: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex] = [], start_wall_ns: typing.SupportsInt | typing.SupportsIndex | None = None, end_wall_ns: typing.SupportsInt | typing.SupportsIndex | None = None, steps: tuple[typing.SupportsInt | typing.SupportsIndex, typing.SupportsInt | typing.SupportsIndex] | None = None, step_pattern: str = '') -> tuple[int | None, int | None]:
    """
    The (start_wall_ns, end_wall_ns) window of the timeline of `streams` (job_streams): the bounds given, narrowed to `steps` (first, last) of the selected ranks; None where unbounded. NoStepError if no selected rank ran such a step.
    """
def validate_config(arg0: collections.abc.Mapping[str, str]) -> None:
    """
    Raises ValueError naming the key and its valid values.
    """
def version() -> str:
    ...
def watch_closed_files(on: bool) -> None:
    """
    Start (or stop) queueing the paths of trace files as they are closed (rotated or stopped).
    """
DEFAULT_DATA_WAIT_PATTERN: str = 'input(?:[ _.-]?(?:wait|pipeline|load(?:ing)?|fetch))?|data(?:[ _.-]?(?:load(?:ing|er)?(?:[ _.-]?(?:next|fetch|iter))?|wait|fetch|input))?|(?:load|fetch|get|next|read|wait[ _.-]?for)[ _.-]?(?:data|batch(?:es)?|input)|fetch|batch[ _.-]?(?:load(?:ing)?|fetch)'
DEFAULT_MAX_PROFILED_STEPS: int = 200
DEFAULT_STEP_PATTERN: str = '(?:ProfilerStep#|[Ss]tep[_# ]?|iteration[_ ]?)(\\d*)'
