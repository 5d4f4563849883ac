"""STREAM output: a table of best rates per function and a validation line."""

from interference.parsers import ParseError

FUNCTIONS = ("copy", "scale", "add", "triad")


def parse(stdout: str, stderr: str) -> dict[str, float]:
    if not stdout.strip():
        raise ParseError("empty output")
    rates, validation = {}, None
    for line in stdout.splitlines():
        fields = line.split("\t")
        if fields[0] in FUNCTIONS and len(fields) == 5:
            try:
                rates[fields[0]] = float(fields[1])
            except ValueError:
                raise ParseError("garbled output") from None
        elif line.startswith("validation="):
            validation = line.split("=", 1)[1]
    if validation == "FAILED":
        raise ParseError("validation failed")
    if validation != "PASSED" or set(rates) != set(FUNCTIONS):
        raise ParseError("truncated output")
    return rates
