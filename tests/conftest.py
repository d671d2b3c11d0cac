# SPDX-License-Identifier: MIT
"""Shared pytest fixtures: the built binaries, and toolfs_read, which runs the CLI and checks
every result it prints against docs/toolresult.schema.json."""
import collections
import json
import os
import pathlib
import subprocess

import jsonschema
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "docs" / "toolresult.schema.json").read_text())
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TOOLFS_BUILD_DIR", REPO / "build")).resolve()


def validate_result(doc: dict) -> None:
    """Raises jsonschema.ValidationError when doc is not a valid ToolResult."""
    _VALIDATOR.validate(doc)


class ReadResult:
    """One run of toolfs-read: exit code, raw stdout, stderr text and the parsed result."""

    def __init__(self, proc: subprocess.CompletedProcess, fmt: str = "tool"):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr.decode("utf-8", "replace")
        self.json = None
        self.text = None
        if self.rc in (0, 1) and fmt == "txt":
            self.text = proc.stdout.decode("utf-8")
        elif self.rc in (0, 1):
            assert self.out.endswith(b"\n") and self.out.count(b"\n") == 1, \
                "a ToolResult is one compact line ending in a single newline"
            self.json = json.loads(self.out)
            if fmt == "tool":
                validate_result(self.json)
                assert self.json["success"] == (self.rc == 0), "exit code must match success"


@pytest.fixture(scope="session")
def build_dir() -> pathlib.Path:
    path = _build_dir()
    if not (path / "cli" / "toolfs-read").exists():
        pytest.fail(f"toolfs-read is not built in {path}; run meson setup + ninja first")
    return path


@pytest.fixture(scope="session")
def toolfs_read(build_dir):
    """toolfs_read(path, *args, cwd=None) -> ReadResult."""
    binary = str(build_dir / "cli" / "toolfs-read")

    def run(path, *args, cwd=None, timeout=300):
        args = [str(a) for a in args]
        fmt = "tool"
        for i, arg in enumerate(args):
            if arg == "--format" and i + 1 < len(args):
                fmt = args[i + 1]
            elif arg.startswith("--format="):
                fmt = arg.split("=", 1)[1]
        proc = subprocess.run([binary, *args, "--", str(path)], cwd=cwd,
                              capture_output=True, timeout=timeout)
        return ReadResult(proc, fmt)

    return run


CACHE_MODES = ("relaxed", "watch", "strict")


@pytest.fixture(params=CACHE_MODES)
def cache_mode(request) -> str:
    """The daemon's -o cache= mode: plain entries, attributes and listings cached and invalidated
    by inotify (relaxed, the default), only directory entries cached (watch), or nothing cached
    (strict); mount tests that use it run in all three."""
    return request.param


def pytest_collection_modifyitems(config, items):
    """Tests of the mount suite (tests/mount/) mount FUSE file systems: mark them `mount`; tests
    marked `slow` are skipped when TOOLFS_SKIP_SLOW=1 (the sanitizer run)."""
    skip_slow = os.environ.get("TOOLFS_SKIP_SLOW") == "1"
    for item in items:
        if item.path.parent.name == "mount":
            item.add_marker(pytest.mark.mount)
        if skip_slow and item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.skip(reason="TOOLFS_SKIP_SLOW=1"))


_OUTCOMES = collections.Counter()


def pytest_runtest_logreport(report):
    if report.when == "call" or report.skipped:
        _OUTCOMES[report.outcome] += 1


def pytest_sessionfinish(session, exitstatus):
    """Under `meson test` (tests/meson.build sets TOOLFS_MESON_TEST=1), a file of which no test
    ran (none collected or selected, or every one skipped) exits 77, meson's code for a skip."""
    if os.environ.get("TOOLFS_MESON_TEST") != "1":
        return
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED or \
            (exitstatus == pytest.ExitCode.OK and not _OUTCOMES["passed"]):
        session.exitstatus = 77
