"""Developer sessions: lint, typecheck, security_scan, dead_code, unit_tests, pytest,
integration_tests, coverage_report, wheel, tests, pruning_real, and the benchmark sessions.

Sessions run in the current interpreter (``./dev`` prepares ``.venv`` with everything
installed), so the suite installs once and starts fast. ``nox -s tests`` runs the everyday
checks; ``nox -s tests -- --full`` adds what needs the embedded model or a service (ADR
0021). Either keeps going past a failure so one run shows everything, and prints the
summary ``N passed, N failed`` as the very last line (after nox's own closing line).

The everyday run needs no model and no service: Behave without ``@postgres``, Robot without
the ``local-model``, ``real-model`` and ``browser`` tags. ``--full`` runs every scenario and
every Robot test, after ``leanloop local setup``; the services it needs (PostgreSQL,
Chromium) are installed beforehand by ``.ci/install-services`` (``./dev test --full`` runs
it), never by a test. ``nox -s tests`` runs two checks at a time, Behave in the foreground
and the others in their own logs (``build/logs/``), printed whole as each ends.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import nox

ROOT = Path(__file__).parent
BUILD = ROOT / "build"
sys.path.insert(0, str(ROOT / "tools"))

from summarize import Tally, count_behave, count_pytest, count_robot  # noqa: E402

nox.options.sessions = ["tests"]
nox.options.default_venv_backend = "none"

COVERAGE_FAIL_UNDER = "90"
COVERAGE_DATA = BUILD / ".coverage"

FULL = "--full"
"""The posarg that adds the real-model, Postgres and browser checks (ADR 0021)."""

BEHAVE_EVERYDAY = ("--tags=not @postgres and not @long",)
"""Behave's everyday selection: the @postgres scenarios need a PostgreSQL server; @long
ones are a longer run of a race the everyday run also has, shorter (the full run has both)."""

PYTEST_EVERYDAY = ("-m", "not full")
"""pytest's everyday selection: ``full`` tests need a service of the full run (the YAML
language server, on Node)."""

ROBOT_EVERYDAY = ("--exclude", "local-model", "--exclude", "real-model", "--exclude", "browser")
"""Robot's everyday selection: scripted and fake servers only. ``local-model`` and
``real-model`` tests start the embedded llama-server (``leanloop local setup``);
``browser`` tests open Chromium."""


def _full(session: nox.Session) -> tuple[bool, tuple[str, ...]]:
    """Whether ``--full`` was given, and the other posargs."""
    args = tuple(session.posargs)
    return FULL in args, tuple(a for a in args if a != FULL)


class _Captured:
    """The console of a check that runs beside Behave: its lines and its commands' output go
    to ``build/logs/<check>.log``, printed whole once the check is done, so the output of
    two checks never interleaves. It stands in for the session (``log`` and ``warn``)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.path = BUILD / "logs" / f"{name}.log"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.file: TextIO = self.path.open("w", encoding="utf-8")

    def log(self, message: str) -> None:
        self.file.write(f"nox > {message}\n")
        self.file.flush()

    def warn(self, message: str) -> None:
        self.log(message)

    def close(self) -> str:
        self.file.close()
        return self.path.read_text("utf-8", errors="replace")


Console = nox.Session | _Captured
"""Where a check writes: the session (streamed) or a :class:`_Captured` log."""


def _call(session: Console, name: str, *cmd: str, env: dict[str, str] | None = None) -> int:
    """Run one check, streaming its output; return its exit status (never raise)."""
    session.log(f"── {name}: {' '.join(cmd)}")
    # LEANLOOP_WARM=0: the suites' `leanloop run`s are cold even when the developer has a
    # warm runner up (tests/cli/test_warm.py starts its own, in a private folder).
    merged = {**os.environ, "LEANLOOP_WARM": "0", **(env or {})}
    if isinstance(session, _Captured):
        return subprocess.call(
            cmd, cwd=ROOT, env=merged, stdout=session.file, stderr=subprocess.STDOUT
        )
    return subprocess.call(cmd, cwd=ROOT, env=merged)


def _run(session: Console, name: str, *cmd: str, env: dict[str, str] | None = None) -> bool:
    """Run one check, streaming its output; return whether it passed (never raise)."""
    code = _call(session, name, *cmd, env=env)
    if code != 0:
        session.warn(f"{name} failed (exit {code})")
    return code == 0


def _lint(session: Console) -> bool:
    paths = [
        "src",
        "features",
        "robot",
        "benchmarks",
        "tools",
        "tests",
        "noxfile.py",
        "vulture_whitelist.py",
    ]
    checked = _run(session, "ruff check", "ruff", "check", *paths)
    formatted = _run(session, "ruff format", "ruff", "format", "--check", *paths)
    # The layers contract in pyproject.toml: cli → localmodel → agent → loop → budget →
    # protocol → spec → tools → {pruning, report, events, exceptions}, one way only.
    layered = _run(session, "import layers", "lint-imports")
    return checked and formatted and layered


def _typecheck(session: Console) -> bool:
    return _run(session, "mypy", "mypy", "--strict", "src")


BANDIT_BASELINE = ROOT / ".bandit-baseline.json"
"""The reviewed bandit findings (each one's reason is in ``[tool.bandit]``)."""


def _security_scan(session: Console, *, write_baseline: bool = False) -> bool:
    """bandit over src/; fails on any finding the reviewed baseline does not hold.

    bandit's own ``--baseline`` lets a file gain a second finding of a kind it already
    has (it matches findings without counting them), so the counts are compared here:
    per file, check and message, more findings than the baseline holds is a failure.
    """
    report = BUILD / "bandit.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "bandit", "-c", "pyproject.toml", "-r", "src", "-q"]
    cmd += ["-f", "json", "-o", str(report)]
    # Exit status 1 only means "found something": the report, read below, decides.
    _call(session, "bandit", *cmd)
    try:
        found = json.loads(report.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        session.warn(f"bandit wrote no readable report ({exc})")
        return False
    if found.get("errors"):
        session.warn(f"bandit could not scan: {found['errors']}")
        return False
    results = [_bandit_finding(r) for r in found.get("results", [])]
    if write_baseline:
        data = {"errors": [], "results": results}
        BANDIT_BASELINE.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", "utf-8")
        session.log(f"bandit: wrote {len(results)} finding(s) to {BANDIT_BASELINE.name}")
        return True
    try:
        reviewed = json.loads(BANDIT_BASELINE.read_text("utf-8"))["results"]
    except (OSError, ValueError, KeyError) as exc:
        session.warn(f"bandit: no readable baseline {BANDIT_BASELINE.name} ({exc})")
        return False
    allowed = _bandit_counts(reviewed)
    new = []
    for finding in results:
        key = _bandit_key(finding)
        if allowed.get(key, 0) > 0:
            allowed[key] -= 1
        else:
            new.append(finding)
    for f in new:
        session.warn(
            f"bandit: new finding {f['test_id']} at {f['filename']}:{f['line_number']}: "
            f"{f['issue_text']}\n{f['code']}"
        )
    if gone := sum(allowed.values()):
        session.log(f"bandit: {gone} reviewed finding(s) are gone; refresh the baseline")
    if not new:
        session.log(f"bandit: {len(results)} finding(s), all reviewed in the baseline")
    return not new


_BANDIT_FIELDS = (
    "code",
    "col_offset",
    "end_col_offset",
    "filename",
    "issue_confidence",
    "issue_cwe",
    "issue_severity",
    "issue_text",
    "line_number",
    "line_range",
    "test_id",
    "test_name",
)


def _bandit_finding(result: dict[str, Any]) -> dict[str, Any]:
    """A finding with the fields bandit's ``--baseline`` reads (no links, no metrics)."""
    return {key: result[key] for key in _BANDIT_FIELDS if key in result}


def _bandit_key(finding: dict[str, Any]) -> tuple[str, str, str]:
    return finding["filename"], finding["test_id"], finding["issue_text"]


def _bandit_counts(findings: list[dict[str, Any]]) -> dict[tuple[str, str, str], int]:
    counts: dict[tuple[str, str, str], int] = {}
    for finding in findings:
        counts[_bandit_key(finding)] = counts.get(_bandit_key(finding), 0) + 1
    return counts


def _dead_code(session: Console) -> bool:
    # Paths and confidence come from [tool.vulture]; vulture_whitelist.py says why.
    return _run(session, "vulture", sys.executable, "-m", "vulture")


def _fresh_coverage() -> None:
    """Remove the last run's coverage data: Behave and pytest then add theirs to it."""
    BUILD.mkdir(parents=True, exist_ok=True)
    for old in BUILD.glob(".coverage*"):
        old.unlink()


def _under_coverage(args: list[str], *, coverage: bool, subprocesses: bool = True) -> list[str]:
    """``python ARGS``, or ``python -m coverage run ARGS`` writing to ``COVERAGE_DATA``.

    ``[tool.coverage.run]`` has ``parallel = true``: each run writes a data file of its
    own next to ``COVERAGE_DATA`` and ``coverage report`` combines them all. Without
    ``subprocesses`` only this process is measured (:func:`_inprocess_rcfile`).
    """
    if not coverage:
        return [sys.executable, *args]
    rc = [] if subprocesses else ["--rcfile", str(_inprocess_rcfile())]
    return [sys.executable, "-m", "coverage", "run", *rc, "--data-file", str(COVERAGE_DATA), *args]


def _inprocess_rcfile() -> Path:
    """``[tool.coverage]`` of pyproject.toml without ``patch`` (the one source of it).

    pytest measures its own process only: following its subprocesses (the real servers and
    CLI processes some tests start) cost it 22 s of 107 for 1% of the lines (measured),
    and Behave, which follows its own, covers those paths too.
    """
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["coverage"]
    lines = []
    for table, values in settings.items():
        lines.append(f"[tool.coverage.{table}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in values.items() if k != "patch"]
    path = BUILD / "coverage-inprocess.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _behave(
    session: Console,
    *,
    coverage: bool,
    extra: tuple[str, ...] = (),
    paths: tuple[str, ...] = ("features",),
    fresh: bool = True,
) -> bool:
    """Behave over ``paths``, its JUnit files in build/behave (emptied first with ``fresh``)."""
    junit = BUILD / "behave"
    junit.mkdir(parents=True, exist_ok=True)
    if fresh:
        for old in junit.glob("*.xml"):
            old.unlink()
    args = [
        "-m",
        "behave",
        *paths,
        "--junit",
        f"--junit-directory={junit}",
        "--format=progress",
        *extra,
    ]
    return _run(session, "behave", *_under_coverage(args, coverage=coverage))


BEHAVE_BESIDE = ("features/tools/integrity.feature", "features/spec/properties.feature")
"""Features ``nox -s tests`` runs in a Behave of their own beside the main one: the slowest
that wait on nothing (a 40 s symlink race, hypothesis properties), so the second worker,
idle once Robot, pytest and the gates are done, takes them (measured: ADR 0021 amendment)."""
BEHAVE_REST = ("--exclude", "|".join(re.escape(path) + "$" for path in BEHAVE_BESIDE))
"""What the main Behave of ``nox -s tests`` leaves to the other one."""


PYTEST_XML = BUILD / "pytest.xml"
PYTEST_NO_TESTS = 5
"""pytest's exit status when it collected no test: not a failure here."""


def _pytest(session: Console, *, coverage: bool, extra: tuple[str, ...] = ()) -> bool:
    """pytest over tests/ (``[tool.pytest.ini_options]``), its JUnit file in build/."""
    PYTEST_XML.parent.mkdir(parents=True, exist_ok=True)
    PYTEST_XML.unlink(missing_ok=True)
    args = ["-m", "pytest", f"--junitxml={PYTEST_XML}", *extra]
    code = _call(session, "pytest", *_under_coverage(args, coverage=coverage, subprocesses=False))
    if code == PYTEST_NO_TESTS:
        session.log("pytest: no tests collected")
        return True
    if code != 0:
        session.warn(f"pytest failed (exit {code})")
    return code == 0


def _local_model_setup(session: Console) -> bool:
    """``leanloop local setup``: idempotent, and fast once the cache holds server and model."""
    return _run(session, "local model setup", "leanloop", "local", "setup")


def _robot(session: Console, extra: tuple[str, ...] = ()) -> bool:
    """Robot over robot/; ``extra`` selects (the caller runs ``leanloop local setup`` first
    when the selection includes the real-model suites)."""
    out = BUILD / "robot"
    return _run(
        session,
        "robot",
        sys.executable,
        "-m",
        "robot",
        "--outputdir",
        str(out),
        "--consolecolors",
        "off",
        "--console",
        "verbose",
        *extra,
        "robot",
    )


EVERYDAY_UNMEASURED = "*/leanloop/sessions/postgres.py"
"""Code only the full run exercises (the @postgres scenarios), left out of the everyday
gate; the full run's gate measures it. The threshold is the same for both."""


def _coverage_report(session: Console, *, full: bool) -> bool:
    omit = () if full else (f"--omit={EVERYDAY_UNMEASURED}",)
    return _run(
        session,
        "coverage",
        sys.executable,
        "-m",
        "coverage",
        "report",
        "--data-file",
        str(COVERAGE_DATA),
        f"--fail-under={COVERAGE_FAIL_UNDER}",
        *omit,
    )


def _wheel(session: Console) -> bool:
    """Build the wheel, install it in a fresh venv, and try the installed ``leanloop``."""
    with tempfile.TemporaryDirectory(prefix="leanloop-wheel-") as tmp:
        venv = _install_wheel(session, Path(tmp))
        problems = ["the wheel did not build or install"] if venv is None else _try(session, venv)
    for problem in problems:
        session.warn(f"wheel: {problem}")
    if not problems:
        session.log("wheel: installs and runs in a fresh venv")
    return not problems


def _install_wheel(session: Console, tmp: Path) -> Path | None:
    """Build the wheel and install it in a fresh venv under ``tmp``; the venv, or ``None``."""
    # The build runs on a copy of the package's files, so it leaves no build/ or egg-info in
    # the checkout and cannot ship a stale build/lib. Dependencies come from the package
    # index (pip's cache makes a second run fast).
    source, dist, venv = tmp / "source", tmp / "dist", tmp / "venv"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=junk)
    build = ("pip", "wheel", "--no-deps", "-qq", "-w", str(dist), str(source))
    if not _run(session, "wheel build", sys.executable, "-m", *build):
        return None
    wheels = sorted(dist.glob("leanloop-*.whl"))
    if len(wheels) != 1:
        session.warn(f"wheel build made {[w.name for w in wheels]}, expected one leanloop wheel")
        return None
    # The fresh venv gets no pip of its own: this pip installs into it (``--python``), which
    # saves the venv's own pip install (ensurepip) and the byte-compiling of every dependency
    # (``--no-compile``; leanloop's commands below compile what they import). Measured on 2
    # cores: 17.7 s of CPU with the venv's own pip, 4.2 s this way.
    if not _run(session, "fresh venv", sys.executable, "-m", "venv", "--without-pip", str(venv)):
        return None
    install = ("--python", str(venv / "bin" / "python"), "install", "-qq", "--no-compile")
    wheel = str(wheels[0])
    ok = _run(session, f"install {wheels[0].name}", sys.executable, "-m", "pip", *install, wheel)
    return venv if ok else None


_DEMO_FILE = "from leanloop.cli.demo import default_agents_file as f; print(f())"


def _try(session: Console, venv: Path) -> list[str]:
    """What is wrong with the ``leanloop`` installed in ``venv`` (nothing, when it works)."""
    venv = venv.resolve()
    leanloop, python = str(venv / "bin" / "leanloop"), str(venv / "bin" / "python")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
    problems = []
    shown = _output(session, venv, leanloop, "--version")
    if shown is None or shown.strip() != f"leanloop {version}":
        problems.append(f"--version printed {shown!r}, expected 'leanloop {version}'")
    if _output(session, venv, leanloop, "demo", "--help") is None:
        problems.append("demo --help failed")
    schema_path = _output(session, venv, leanloop, "schema", "--path") or ""
    if not Path(schema_path.strip()).resolve().is_relative_to(venv):
        problems.append(f"schema --path printed {schema_path!r}, not a file of the fresh venv")
    demo = Path((_output(session, venv, python, "-c", _DEMO_FILE) or "").strip()).resolve()
    if not (demo.is_relative_to(venv) and demo.is_file()):
        return [*problems, f"the demo agents file {demo} is not in the fresh venv"]
    if not (demo.parent / "workspace" / "config" / "service.toml").is_file():
        problems.append(f"the demo workspace is missing next to {demo}")
    if _output(session, venv, leanloop, "validate", str(demo)) is None:
        problems.append(f"leanloop validate {demo} failed")
    schema = _output(session, venv, leanloop, "schema")
    if schema is None:
        return [*problems, "leanloop schema failed"]
    return problems + _schema_problems(schema, demo)


def _output(session: Console, cwd: Path, *cmd: str) -> str | None:
    """Run ``cmd`` in ``cwd`` (no PYTHONPATH); its stdout, or ``None`` when it failed."""
    session.log(f"── {' '.join(cmd)}")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        session.warn(f"exit {done.returncode}: {' '.join(cmd)}\n{done.stdout}{done.stderr}")
        return None
    return done.stdout


def _schema_problems(schema_text: str, agents_file: Path) -> list[str]:
    """What the printed schema says about ``agents_file`` (nothing when it validates)."""
    import yaml  # noqa: PLC0415 - the dev venv's, not the fresh one's
    from jsonschema import Draft202012Validator  # noqa: PLC0415

    try:
        schema = json.loads(schema_text)
        Draft202012Validator.check_schema(schema)
    except ValueError as exc:
        return [f"schema did not print a JSON Schema: {exc}"]
    document = yaml.safe_load(agents_file.read_text("utf-8"))
    errors = Draft202012Validator(schema).iter_errors(document)
    return [f"{agents_file}: {error.message}" for error in errors]


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check and the import-layers contract."""
    if not _lint(session):
        session.error("lint failed")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over src."""
    if not _typecheck(session):
        session.error("typecheck failed")


@nox.session
def security_scan(session: nox.Session) -> None:
    """bandit over src against the reviewed baseline (``-- --write-baseline`` rewrites it)."""
    if not _security_scan(session, write_baseline="--write-baseline" in session.posargs):
        session.error("security scan failed")


@nox.session
def dead_code(session: nox.Session) -> None:
    """vulture over src with vulture_whitelist.py."""
    if not _dead_code(session):
        session.error("dead code found")


@nox.session
def unit_tests(session: nox.Session) -> None:
    """Behave over features/, @postgres only with -- --full.

    Other arguments after -- go to behave.
    """
    full, extra = _full(session)
    ok = _behave(session, coverage=False, extra=(*(() if full else BEHAVE_EVERYDAY), *extra))
    _announce(Tally.from_parts(behave=count_behave(BUILD / "behave")))
    if not ok:
        session.error("unit tests failed")


@nox.session
def pytest(session: nox.Session) -> None:
    """pytest over tests/ (pass extra pytest arguments after --)."""
    ok = _pytest(session, coverage=False, extra=tuple(session.posargs))
    _announce(Tally.from_parts(pytest=count_pytest(PYTEST_XML)))
    if not ok:
        session.error("pytest failed")


@nox.session
def integration_tests(session: nox.Session) -> None:
    """Robot over robot/ against scripted servers; -- --full adds real-model and browser.

    ``--full`` runs ``leanloop local setup`` first. Other arguments after -- go to robot.
    """
    full, extra = _full(session)
    setup_ok = _local_model_setup(session) if full else True
    ok = _robot(session, (*(() if full else ROBOT_EVERYDAY), *extra)) and setup_ok
    _announce(Tally.from_parts(robot=count_robot(BUILD / "robot" / "output.xml")))
    if not ok:
        session.error("integration tests failed")


@nox.session
def pruning_real(session: nox.Session) -> None:
    """Pruning a 50 KB log with the real embedded model at --ctx-size 4096 (issue 13)."""
    ok = _local_model_setup(session) and _robot(session, ("--include", "real-pruning"))
    _announce(Tally.from_parts(robot=count_robot(BUILD / "robot" / "output.xml")))
    if not ok:
        session.error("the real-model pruning check failed")


@nox.session
def coverage_report(session: nox.Session) -> None:
    """Behave (everyday selection) and pytest under coverage; fails under the threshold."""
    _fresh_coverage()
    behave_ok = _behave(session, coverage=True, extra=BEHAVE_EVERYDAY)
    pytest_ok = _pytest(session, coverage=True, extra=PYTEST_EVERYDAY)
    if not (behave_ok and pytest_ok and _coverage_report(session, full=False)):
        session.error("coverage failed")


@nox.session
def wheel(session: nox.Session) -> None:
    """Build the wheel, install it in a fresh venv; --version, demo --help, schema work."""
    if not _wheel(session):
        session.error("the wheel check failed")


@nox.session
def tests(session: nox.Session) -> None:
    """Every everyday check (no model, no services); -- --full adds those (ADR 0021).

    Lint, typecheck, security scan, dead code, Behave and pytest under coverage, the
    coverage gate, the wheel, Robot against scripted servers. ``-- --full`` adds the
    @postgres scenarios and the real-model and browser suites, after ``leanloop local
    setup`` (``.ci/install-services`` installs PostgreSQL and Chromium beforehand).

    Two checks run at a time (2 cores; ADR 0021's amendment has the figures). Behave, the
    longest, streams in the foreground, all but :data:`BEHAVE_BESIDE`; a second worker
    takes the other checks one after another, longest first, that Behave of the rest among
    them, each into ``build/logs/<check>.log``, printed whole once it is done (outputs
    never interleave); when Behave ends, the foreground takes what is left. The coverage
    gate runs once both Behaves and pytest are done. With ``--full``, ``leanloop
    local setup`` and Robot run alone after the rest: the model build and the real-model
    suites take both cores, and no timed check should share them.
    """
    full, unknown = _full(session)
    if unknown:
        session.error(f"unknown arguments {list(unknown)}: the only one is {FULL}")
    session.log(f"the {'full' if full else 'everyday'} run (ADR 0021)")
    _fresh_coverage()
    (BUILD / "robot" / "output.xml").unlink(missing_ok=True)
    PYTEST_XML.unlink(missing_ok=True)
    for old in (BUILD / "behave").glob("*.xml"):
        old.unlink()
    checks = _Checks(_side_checks(full))
    worker = threading.Thread(target=checks.work, name="second-worker", daemon=True)
    worker.start()
    started = time.monotonic()
    selection = () if full else BEHAVE_EVERYDAY
    behave_ok = _behave(session, coverage=True, extra=(*selection, *BEHAVE_REST), fresh=False)
    session.log(f"── behave: {'passed' if behave_ok else 'FAILED'} in {_since(started)}")
    gates: dict[str, bool] = {}
    shown: set[str] = set()
    while not checks.all_done():
        checks.work(one=True)
        for name, ok, took, output in checks.finished():
            sys.stdout.write(output)
            session.log(f"── {name}: {'passed' if ok else 'FAILED'} in {took:.0f} s (logged)")
            shown.add(name)
            # Coverage adds up the data of both Behaves and pytest: once all three are done.
            if "coverage" not in gates and {"pytest", "behave_beside"} <= shown:
                gates["coverage"] = _coverage_report(session, full=full)
        checks.wait()
    worker.join()
    outcomes = checks.outcomes
    for name in ("lint", "typecheck", "security_scan", "dead_code", "wheel"):
        gates[name] = outcomes.get(name, False)
    gates.setdefault("coverage", False)
    robot_ok = outcomes.get("robot", False)
    if full:
        gates["local_model_setup"] = _local_model_setup(session)
        robot_ok = _robot(session)
    tally = Tally.from_parts(
        behave=count_behave(BUILD / "behave"),
        pytest=count_pytest(PYTEST_XML),
        robot=count_robot(BUILD / "robot" / "output.xml"),
        gates=gates,
    )
    behave_ok = behave_ok and outcomes.get("behave_beside", False)
    if not behave_ok and tally.behave.failed == 0:
        tally = tally.with_crash("behave")
    if not outcomes.get("pytest", False) and tally.pytest.failed == 0:
        tally = tally.with_crash("pytest")
    if not robot_ok and tally.robot.failed == 0:
        tally = tally.with_crash("robot")
    session.log(f"── the {'full' if full else 'everyday'} run took {_since(started)}")
    _announce(tally)
    if tally.failed:
        session.error(f"{tally.failed} failed")


def _since(started: float) -> str:
    seconds = round(time.monotonic() - started)
    return f"{seconds // 60} min {seconds % 60} s" if seconds >= 60 else f"{seconds} s"


def _side_checks(full: bool) -> list[tuple[str, Callable[[_Captured], bool]]]:
    """The checks besides the main Behave, longest first (so the two workers end close
    together): everyday Robot (scripted servers only; with ``--full`` Robot runs alone after
    the rest, see :func:`tests`), pytest, the Behave of :data:`BEHAVE_BESIDE`, the gates.
    """
    checks: list[tuple[str, Callable[[_Captured], bool]]] = []
    if not full:
        checks.append(("robot", lambda out: _robot(out, ROBOT_EVERYDAY)))
    selection = () if full else BEHAVE_EVERYDAY
    # pytest before the second Behave: whichever worker frees first (the foreground, once
    # the main Behave ends) takes pytest, the longer, and the other the short Behave after
    # Robot, so the two end close together (see ADR 0021).
    checks += [
        ("pytest", lambda out: _pytest(out, coverage=True, extra=() if full else PYTEST_EVERYDAY)),
        (
            "behave_beside",
            lambda out: _behave(
                out, coverage=True, extra=selection, paths=BEHAVE_BESIDE, fresh=False
            ),
        ),
        ("typecheck", _typecheck),
        ("wheel", _wheel),
        ("lint", _lint),
        ("security_scan", _security_scan),
        ("dead_code", _dead_code),
    ]
    return checks


class _Checks:
    """Checks two workers take in order, each run into its own log (:class:`_Captured`)."""

    def __init__(self, checks: list[tuple[str, Callable[[_Captured], bool]]]) -> None:
        self._todo = list(checks)
        self._total = len(checks)
        self._done: list[tuple[str, bool, float, str]] = []
        self._lock = threading.Condition()
        self.outcomes: dict[str, bool] = {}

    def work(self, *, one: bool = False) -> None:
        """Run checks until none is left (or one, with ``one``)."""
        while True:
            with self._lock:
                if not self._todo:
                    return
                name, check = self._todo.pop(0)
            out = _Captured(name)
            started = time.monotonic()
            try:
                ok = check(out)
            except Exception as exc:  # reported as this check's failure
                out.warn(f"{name} crashed: {exc!r}")
                ok = False
            with self._lock:
                self.outcomes[name] = ok
                self._done.append((name, ok, time.monotonic() - started, out.close()))
                self._lock.notify_all()
            if one:
                return

    def finished(self) -> list[tuple[str, bool, float, str]]:
        """The checks done since the last call: ``(name, passed, seconds, output)``."""
        with self._lock:
            done, self._done = self._done, []
        return done

    def wait(self) -> None:
        """Wait until another check is done, unless every check is done or reported."""
        with self._lock:
            if not self._done and len(self.outcomes) < self._total:
                self._lock.wait()

    def all_done(self) -> bool:
        with self._lock:
            return len(self.outcomes) == self._total and not self._done


def _announce(tally: Tally) -> None:
    """Print the breakdown now and the plain summary after nox's own closing line."""
    print(tally.breakdown(), flush=True)
    atexit.register(print, tally.summary(), flush=True)


def _bench_extra(session: nox.Session) -> None:
    """Install the ``bench`` extra (LangChain's agents, matplotlib) into this interpreter."""
    session.run(sys.executable, "-m", "pip", "install", "-qq", "-e", ".[bench]", external=True)


@nox.session
def context_suite(session: nox.Session) -> None:
    """leanloop vs LangChain's context strategies: table and plot in benchmarks/results/."""
    _bench_extra(session)
    session.run(sys.executable, "-m", "benchmarks.context_suite", *session.posargs, external=True)


@nox.session
def benchmark_model_quality(session: nox.Session) -> None:
    """The embedded model on 20 tool-use tasks (needs ``leanloop local setup``; ~20 min)."""
    _bench_extra(session)
    session.run("leanloop", "local", "setup", external=True)
    args = session.posargs or ["--write"]
    session.run(sys.executable, "-m", "benchmarks.model_quality", *args, external=True)


@nox.session
def benchmark(session: nox.Session) -> None:
    """ASV benchmarks against the working tree (quick mode; not part of tests)."""
    session.run("asv", "machine", "--yes", external=True)
    session.run("asv", "run", "--python=same", "--quick", "--show-stderr", external=True)
