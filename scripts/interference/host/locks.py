"""One host-wide lock so that measurements (and image builds) never overlap, whatever
--cores says and even across separate snakemake invocations."""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time

LOCK_PATH = os.environ.get("INTERFERENCE_LOCK", "/tmp/interference-measurement.lock")


@contextlib.contextmanager
def measurement_lock(path: str = LOCK_PATH):
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for the measurement lock {path}", file=sys.stderr, flush=True)
            t0 = time.time()
            fcntl.flock(f, fcntl.LOCK_EX)
            print(f"got the lock after {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
