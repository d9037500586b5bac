"""S3 for smprof traces: URIs, the object layout, checksums, and errors that say what to do.

Layout (docs/S3.md): a rank file is stored at ``<prefix>/<job>/<host>/<file name>``, job and
host from the file's header. Each object carries the SHA-256 of the whole file in its metadata
(``smprof-sha256``) and the part size it was uploaded with (``smprof-part-size``, 0 for a single
PUT); it is also uploaded with S3's own SHA-256 checksum, which the server computes from the bytes
it received (one digest, or for a multipart upload the digest of the parts' digests). An object
matches a local file when the size, the metadata digest and the server's checksum all agree.

boto3 is imported lazily: ``import smppy`` never needs it.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHA256_METADATA = "smprof-sha256"
PART_SIZE_METADATA = "smprof-part-size"
DEFAULT_MULTIPART_THRESHOLD = 64 * 1024 * 1024
DEFAULT_PART_SIZE = 16 * 1024 * 1024
_READ_BLOCK = 1024 * 1024


class S3Error(ValueError):
    """An S3 problem, explained for the user (never carries credentials)."""


@dataclass(frozen=True)
class S3Uri:
    """``s3://bucket/prefix``: a bucket and a key prefix without leading or trailing slashes."""

    bucket: str
    prefix: str = ""

    # S3's bucket naming rules: 3-63 lowercase letters, digits, dots and hyphens.
    _BUCKET = re.compile(r"^[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]$")

    @classmethod
    def parse(cls, uri: str) -> S3Uri:
        if not uri.startswith("s3://"):
            raise S3Error(f"bad S3 URI {uri!r}: expected s3://bucket or s3://bucket/prefix")
        bucket, _, prefix = uri[len("s3://") :].partition("/")
        if not cls._BUCKET.match(bucket):
            raise S3Error(
                f"bad S3 URI {uri!r}: {bucket!r} is not a bucket name "
                "(3-63 lowercase letters, digits, dots and hyphens)"
            )
        return cls(bucket, prefix.strip("/"))

    def key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"


def path_component(text: str) -> str:
    """``text`` as one safe key component, the way RecordFile's %h and %j are made safe."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    return safe if safe not in ("", ".", "..") else f"_{safe}"


def object_key(uri: S3Uri, job: str, host: str, file_name: str) -> str:
    """Where a rank file goes: ``<prefix>/<job>/<host>/<file name>``."""
    return uri.key(path_component(job), path_component(host), file_name)


@dataclass(frozen=True)
class FileDigest:
    size: int
    sha256: str  # hex, of the whole file
    part_size: int  # 0: uploaded in one PUT
    s3_checksum: str  # base64, what S3 reports as ChecksumSHA256 (without a "-N" part count)


def digest_file(path: Path, part_size: int) -> FileDigest:
    """One pass over the file: its SHA-256 and, for ``part_size`` > 0, the composite checksum
    S3 computes for a multipart upload with parts of that size."""
    whole = hashlib.sha256()
    part_digests: list[bytes] = []
    part = hashlib.sha256()
    in_part = 0
    size = 0
    with open(path, "rb") as f:
        while block := f.read(_READ_BLOCK if part_size == 0 else min(_READ_BLOCK, part_size - in_part)):
            whole.update(block)
            size += len(block)
            if part_size:
                part.update(block)
                in_part += len(block)
                if in_part == part_size:
                    part_digests.append(part.digest())
                    part, in_part = hashlib.sha256(), 0
    if part_size and in_part:
        part_digests.append(part.digest())
    if part_size:
        checksum = hashlib.sha256(b"".join(part_digests)).digest()
    else:
        checksum = whole.digest()
    return FileDigest(size, whole.hexdigest(), part_size, base64.b64encode(checksum).decode())


def upload_part_size(size: int, threshold: int, part_size: int) -> int:
    """The part size boto3 will use for a file of ``size`` bytes, 0 when it uses one PUT."""
    if size < threshold:
        return 0
    from s3transfer.utils import ChunksizeAdjuster

    return ChunksizeAdjuster().adjust_chunksize(part_size, size)


def compare(head: dict[str, Any] | None, digest: FileDigest, path: Path) -> str:
    """How the object described by ``head`` (HeadObject with ChecksumMode=ENABLED) relates to the
    local file ``path`` (whose digest is ``digest``): ``missing``; ``different`` (size or SHA-256
    differ: the file changed); ``corrupt`` (the object claims the file's SHA-256 but its bytes, as
    S3 checksummed them, do not match); or ``same``. A store that keeps no SHA-256 checksum is
    trusted on size and metadata alone."""
    if head is None:
        return "missing"
    metadata = head.get("Metadata", {})
    if head.get("ContentLength") != digest.size or metadata.get(SHA256_METADATA) != digest.sha256:
        return "different"
    server = head.get("ChecksumSHA256")
    if server is None:
        return "same"
    try:
        part_size = int(metadata.get(PART_SIZE_METADATA, "0"))
    except ValueError:
        return "corrupt"
    if part_size != digest.part_size:
        digest = digest_file(path, part_size)
    # AWS appends "-<parts>" to a multipart object's checksum; some stores do not.
    return "same" if server.split("-")[0] == digest.s3_checksum else "corrupt"


def make_client(endpoint_url: str | None = None, max_attempts: int = 5) -> Any:
    """An S3 client from the standard AWS chain (environment, config files, instance role),
    with botocore's standard retries (exponential backoff with jitter)."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise S3Error("s3:// needs boto3, which is not installed: pip install smprof[s3]") from None

    session = boto3.session.Session()
    config = Config(
        retries={"max_attempts": max_attempts, "mode": "standard"},
        connect_timeout=10,
        read_timeout=60,
        # Checksums only where we ask for them: some S3-compatible stores refuse the trailers.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    try:
        return session.client(
            "s3", endpoint_url=endpoint_url, region_name=session.region_name or "us-east-1", config=config
        )
    except Exception as e:  # a malformed endpoint URL, from the argument or the AWS environment
        where = redact_credentials(endpoint_url) if endpoint_url else "AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL"
        raise S3Error(f"bad S3 endpoint ({where}): {redact_credentials(str(e))}") from None


def head(client: Any, bucket: str, key: str) -> dict[str, Any] | None:
    """The object's HeadObject response with its checksum, or None if there is no such object."""
    from botocore.exceptions import ClientError

    try:
        return client.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    except ClientError as e:
        if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise


def check_bucket(client: Any, uri: S3Uri) -> None:
    """Raises S3Error if the bucket does not exist or cannot be reached."""
    try:
        client.head_bucket(Bucket=uri.bucket)
    except Exception as e:
        raise explain(e, uri) from None


# The user-information part of a URL (``http://KEY:SECRET@host``): credentials, never printed.
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^/\s\"'`]*@")


def redact_credentials(text: str) -> str:
    """``text`` with the user and password of every URL in it replaced by ``***``."""
    return _URL_USERINFO.sub(r"\g<scheme>***@", text)


def explain(error: BaseException, target: S3Uri | str) -> S3Error:
    """An S3Error naming the target and what to do. Never includes credentials: neither the
    environment's keys nor a user and password written into the endpoint URL."""
    if isinstance(error, S3Error):
        return error
    return S3Error(redact_credentials(_describe(error, target)))


def _describe(error: BaseException, target: S3Uri | str) -> str:
    from boto3.exceptions import S3UploadFailedError
    from botocore.exceptions import (
        ClientError,
        EndpointConnectionError,
        HTTPClientError,
        NoCredentialsError,
        PartialCredentialsError,
    )

    if isinstance(error, S3UploadFailedError) and isinstance(error.__context__, ClientError):
        error = error.__context__  # boto3 wraps the service's answer
    if isinstance(error, (NoCredentialsError, PartialCredentialsError)):
        return (
            f"{target}: no usable AWS credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "AWS_PROFILE, or run where an instance or task role is available)"
        )
    if isinstance(error, (EndpointConnectionError, HTTPClientError, ConnectionError)):
        url = getattr(error, "kwargs", {}).get("endpoint_url", "")
        return f"{target}: cannot reach the S3 endpoint{f' ({url})' if url else ''}"
    if isinstance(error, ClientError):
        code = str(error.response.get("Error", {}).get("Code", ""))
        bucket = target.bucket if isinstance(target, S3Uri) else str(target)
        if code in ("NoSuchBucket",) or (code == "404" and error.operation_name == "HeadBucket"):
            return f"{target}: bucket '{bucket}' does not exist"
        if code in ("AccessDenied", "403", "AllAccessDisabled"):
            return f"{target}: access denied (check the credentials' permissions for this bucket)"
        if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken"):
            return f"{target}: the AWS credentials were rejected ({code})"
        return f"{target}: {code or 'error'} in {error.operation_name}"
    return f"{target}: {type(error).__name__}: {error}"
