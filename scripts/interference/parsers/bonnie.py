"""Bonnie++ 2.00a output with -q: one CSV result line on stdout (the table goes to stderr).

The line has two fields more than the header line bonnie++ prints before its CSV lines when
run with -x 2 or more: after the size and the (always empty) chunk-size field come the number
of seeks and of seek processes, which the header does not name. So the fields are taken by
position as 2.00a writes them (CSV format 1.98; checked against captured output):

  0 format_version  1 bonnie_version  2 name  3 concurrency  4 seed  5 file_size  6 (empty)
  7 seeks  8 seek_procs  9 putc  10 putc_cpu  11 put_block  12 put_block_cpu  13 rewrite
  14 rewrite_cpu  15 getc  16 getc_cpu  17 get_block  18 get_block_cpu  19 seeks/s  20 seeks_cpu

Block rates are KiB/s, seeks per second. A test shorter than 0.5 s is printed as +++++
(too fast to measure): that is no number, so that metric's row gets a status saying so."""

import math

from interference.parsers import ParseError

CSV_FORMAT = "1.98"
FIELDS = {"block_output": 11, "block_input": 17, "block_rewrite": 13, "random_seeks": 19}
N_FIELDS = 50  # 48 header names + 2


def parse(stdout: str, stderr: str) -> dict[str, float | ParseError]:
    if not stdout.strip():
        raise ParseError("empty output")
    lines = [line for line in stdout.splitlines(keepends=True) if line.count(",") >= 2]
    if not lines:
        raise ParseError("garbled output")
    fields = lines[-1].rstrip("\n").split(",")
    if fields[0] != CSV_FORMAT:
        raise ParseError(f"unexpected bonnie++ CSV format {fields[0]!r} (expected {CSV_FORMAT})")
    # bonnie++ ends the line with a newline only after its last field.
    if len(fields) < N_FIELDS or not lines[-1].endswith("\n"):
        raise ParseError("truncated output")
    if len(fields) > N_FIELDS:
        raise ParseError("garbled output")
    too_fast = [metric for metric, i in FIELDS.items() if fields[i].startswith("+")]
    if len(too_fast) == len(FIELDS):
        raise ParseError(f"bonnie++ reported +++++ for {', '.join(too_fast)}")
    # A test that was too fast voids its own metric only.
    values: dict[str, float | ParseError] = {
        metric: ParseError(f"bonnie++ reported +++++ for {metric}") for metric in too_fast
    }
    for metric, i in FIELDS.items():
        if metric in values:
            continue
        text = fields[i]
        if not text:
            raise ParseError(f"bonnie++ reported no value for {metric}")
        try:
            values[metric] = float(text)
        except ValueError:
            raise ParseError("garbled output") from None
        if not math.isfinite(values[metric]) or values[metric] < 0:
            raise ParseError("garbled output")
    return values
