"""A real S3-compatible server on loopback for the S3 tests: moto's server mode.

``s3_server`` (a fixture: import it into the test module) runs one moto server per test
module in this process (so a test can stop it and start it again on the same port with its
objects intact), empties it before each test, and points the standard AWS environment at it
with fake credentials whose values the tests look for in every output. ``iam_s3_server``
starts a moto server in a subprocess that enforces IAM, for access-denied tests.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

ACCESS_KEY_ID = "AKIASMPROFTESTKEY123"
SECRET_ACCESS_KEY = "smprof-test-secret-never-print-me"


def wait_for_port(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


@dataclass
class S3Server:
    port: int = 0
    _server: Any = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self._server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.port = self._server.get_host_and_port()[1]
        wait_for_port(self.port)

    def stop(self) -> None:
        """Stops listening; the objects stay (moto keeps them in this process)."""
        self._server.stop()

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/moto-api/reset", method="POST")).read()

    def client(self) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY_ID,
            aws_secret_access_key=SECRET_ACCESS_KEY,
        )

    def env(self) -> dict[str, str]:
        """The standard AWS variables that send boto3 (and smprof) here."""
        return {
            "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_S3": self.url,
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        }


@pytest.fixture(scope="module")
def _module_s3_server() -> Iterator[S3Server]:
    server = S3Server()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def s3_server(_module_s3_server: S3Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> S3Server:
    server = _module_s3_server
    try:
        server.reset()
    except OSError:  # a test stopped it
        server.start()
        server.reset()
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("SMPROF_CACHE_DIR", str(tmp_path / "cache"))
    return server


@dataclass
class IamS3Server:
    """A moto server that checks every request against IAM: ``reader`` may list and read
    bucket ``locked`` but not write to it; ``nobody`` may do nothing."""

    url: str
    reader_env: dict[str, str]
    nobody_env: dict[str, str]


@pytest.fixture(scope="module")
def iam_s3_server() -> Iterator[IamS3Server]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # The first six requests (the setup below) are not checked; every later one is.
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "6"}
    moto = Path(sys.executable).with_name("moto_server")
    command = [str(moto)] if moto.exists() else [sys.executable, "-m", "moto.server"]
    proc = subprocess.Popen(
        [*command, "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        url = f"http://127.0.0.1:{port}"
        admin = {"endpoint_url": url, "region_name": "us-east-1", "aws_access_key_id": "admin"}
        admin["aws_secret_access_key"] = "admin"
        iam = boto3.client("iam", **admin)
        iam.create_user(UserName="reader")
        key = iam.create_access_key(UserName="reader")["AccessKey"]
        # moto checks a bucket HEAD as s3:HeadBucket (AWS: s3:ListBucket).
        actions = ["s3:ListBucket", "s3:HeadBucket", "s3:GetObject"]
        policy = {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}],
        }
        iam.put_user_policy(UserName="reader", PolicyName="read-only", PolicyDocument=json.dumps(policy))
        boto3.client("s3", **admin).create_bucket(Bucket="locked")
        iam.create_user(UserName="nobody")
        nobody = iam.create_access_key(UserName="nobody")["AccessKey"]

        def env_of(access_key: dict[str, str]) -> dict[str, str]:
            return {
                "AWS_ACCESS_KEY_ID": access_key["AccessKeyId"],
                "AWS_SECRET_ACCESS_KEY": access_key["SecretAccessKey"],
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ENDPOINT_URL_S3": url,
                "AWS_CONFIG_FILE": os.devnull,
                "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            }

        yield IamS3Server(url, env_of(key), env_of(nobody))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
