"""One parser per microservice: parsers/<name>.py defines parse(stdout, stderr) that returns
{metric: value} or raises ParseError whose text becomes the status of every metric's row.
A failure of one metric only (bonnie++'s +++++ for one test) maps that metric to a
ParseError instead of a number: its row gets the status, the other metrics keep their values."""

import importlib


class ParseError(ValueError):
    """The output is unusable; str(error) is the status, e.g. 'validation failed'."""


def get(name: str):
    return importlib.import_module(f"interference.parsers.{name}").parse
