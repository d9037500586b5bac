"""Upload during the run (``UploadUri``): each trace file libsmprof closes (at every rotation and
at stop) goes to S3 from one daemon thread, while training goes on.

libsmprof queues the paths of closed files (bounded); this thread takes them one at a time and
uploads them with ``smppy.storage.upload.upload_file`` (parts one after another on this thread: no worker
pool that could hold the interpreter at exit). A failed upload is retried with backoff; a file
that still fails stays on disk, and one warning per process says how to upload it later. At exit
the thread gets ``UploadExitTimeoutS`` seconds to finish; what is left stays on disk too.
docs/S3.md describes it.
"""

from __future__ import annotations

import threading
import time
import warnings
from pathlib import Path

from smppy import _smppy

# Waits between tries of one file: 1 + 2 + 4 + 8 s, then the file is left on disk.
RETRY_DELAYS_S = (1.0, 2.0, 4.0, 8.0)


def _import_upload_modules() -> None:
    """Imports, on the thread that starts the uploader, every module the upload thread uses.

    Importing ``concurrent.futures`` (smppy.storage.upload, boto3's transfer layer) registers a
    threading exit hook, which Python refuses once interpreter shutdown has begun ("can't
    register atexit after shutdown"). A run that stops and exits before its first upload
    would otherwise make the upload thread import them at exit and lose the file.
    """
    import concurrent.futures.thread  # noqa: F401

    import smppy.storage.upload  # noqa: F401

    try:
        import boto3.s3.transfer  # noqa: F401
    except ImportError:  # the upload thread reports it, with what to install
        pass


class BackgroundUploader:
    def __init__(self, uri: str) -> None:
        from smppy.storage.s3 import S3Uri

        _import_upload_modules()

        self.uri = S3Uri.parse(uri)
        self.uploaded: list[Path] = []
        self.left_on_disk: list[tuple[Path, str]] = []
        self._closing = threading.Event()
        self._warned = False
        self._thread = threading.Thread(target=self._run, name="smppy-s3-upload", daemon=True)
        _smppy.watch_closed_files(True)
        self._thread.start()

    def finish(self, timeout_s: float) -> None:
        """Uploads what is queued, waiting at most ``timeout_s``; warns about what is left."""
        self._closing.set()
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            pending = []
            while (path := _smppy.next_closed_file(0)) is not None:
                pending.append((Path(path), f"not uploaded within UploadExitTimeoutS={timeout_s:g}"))
            self._warn(pending or [(Path("."), f"an upload was still running after {timeout_s:g} s")])
        _smppy.watch_closed_files(False)

    def _run(self) -> None:
        client = None
        while True:
            path = _smppy.next_closed_file(0.2)
            if path is None:
                if self._closing.is_set():
                    return
                continue
            try:
                if client is None:
                    from smppy.storage.s3 import make_client

                    client = make_client()
                self._upload(client, Path(path))
            except Exception as e:  # never let the thread die: the next file may work
                self._warn([(Path(path), str(e))])

    def _upload(self, client: object, path: Path) -> None:
        from smppy.storage.s3 import S3Error
        from smppy.storage.upload import TransferOptions, upload_file

        options = TransferOptions(use_threads=False)
        for delay in (*RETRY_DELAYS_S, None):
            try:
                # Queued only after its footer was written: no need to decode it here.
                upload_file(client, path, self.uri, options, known_complete=True)
                self.uploaded.append(path)
                return
            except S3Error as e:
                if delay is None:
                    self._warn([(path, str(e))])
                    return
                time.sleep(delay)

    def _warn(self, failures: list[tuple[Path, str]]) -> None:
        self.left_on_disk.extend(failures)
        if self._warned:
            return
        self._warned = True
        path, reason = failures[0]
        warnings.warn(
            f"smppy: background upload to {self.uri} failed for {path} ({reason}); "
            f"the file stays on disk: upload it with `smprof upload {path.parent} {self.uri}` "
            "(further upload failures in this process are not reported)",
            RuntimeWarning,
            stacklevel=1,
        )


_uploader: BackgroundUploader | None = None
_lock = threading.Lock()


def ensure(uri: str) -> None:
    """Starts the uploader (once per process; a new URI applies to files closed from now on)."""
    global _uploader
    from smppy.storage.s3 import S3Uri

    with _lock:
        if _uploader is None or not _uploader._thread.is_alive():
            _uploader = BackgroundUploader(uri)
        else:
            _uploader.uri = S3Uri.parse(uri)


def finish(timeout_s: float) -> None:
    """At exit: lets the uploader finish, for at most ``timeout_s``."""
    with _lock:
        uploader = _uploader
    if uploader is not None:
        uploader.finish(timeout_s)
