"""One parser per microservice: parsers/<name>.py defines parse(stdout, stderr) that returns
{metric: value} or raises ParseError whose text becomes the sample's status."""

import importlib


class ParseError(ValueError):
    """The output is unusable; str(error) is the status, e.g. 'validation failed'."""


def get(name: str):
    return importlib.import_module(f"interference.parsers.{name}").parse
