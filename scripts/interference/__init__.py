"""Host-side steps of the interference pipeline: config, runtimes, runs, parsing, statistics."""

from pathlib import Path

# The repository root: scripts/interference/ -> two levels up.
REPO_ROOT = Path(__file__).resolve().parents[2]
