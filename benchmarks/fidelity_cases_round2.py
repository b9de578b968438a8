# ruff: noqa: E501  (the cases are lines of text, kept whole to be read as they are)
"""The second held-out set of the pruning fidelity benchmark (:mod:`benchmarks.pruning_fidelity`).

These eight cases were written on 2026-12-07, before any change measured with them, after
the first held-out set of :mod:`benchmarks.fidelity_cases` had been looked at while tuning
and so no longer measured generalisation. **Nobody may tune the pruning pass on them**:
do not read their results to pick a prompt, a threshold or a ranking rule, and do not
change a case after its figures have been seen. When they too have been looked at while
tuning, write a third set rather than editing this one.

The rules are those of the first module (its :class:`~benchmarks.fidelity_cases.Case`,
:func:`~benchmarks.fidelity_cases._fill` and
:func:`~benchmarks.fidelity_cases.check_case` are reused): each file is 40-75 KB, so that
``read_file``'s numbered output stays under 80,000 characters, has one to four answering
lines, and is made from a seeded ``random.Random`` (the same text on every machine and
every run). Half of the focuses share words with their answering lines, half are asked in
a user's own words that share none, judged by the pass's own matcher
(:func:`leanloop.pruning.rank.focus_of` / :func:`~leanloop.pruning.rank.line_scores`);
:func:`check_round2` holds these cases to stricter rules besides (no plural or singular
of a focus word in an own-words answer either; answers away from the file's first and
last twentieth; the numbered read under the cap).

The shapes are new to the benchmark: five logs or command outputs (a systemd journal, an
Apache httpd error log, a GitHub Actions job log, a PostgreSQL server log, a Terraform
plan) and three files that are not logs (Kubernetes manifests, SQL migrations, a Telegraf
TOML config). They are hard the way real outputs are: the noise repeats a few templates,
lines of the answer's own template with other values sit next to it, and lines that share
a word of the focus but do not answer it are spread through the file (``Finished …`` and
``restic-backup`` lines in the journal asked why "the nightly backup never finished",
``deadlock_timeout`` in the PostgreSQL log asked for "the deadlock errors").
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from benchmarks.fidelity_cases import Case, FocusKind, _fill, check_case
from leanloop.pruning.rank import focus_of, line_scores

__all__ = ["CASES_ROUND2", "check_round2", "numbered_chars"]

_TARGET_CHARS = 56_000
# read_file's numbered output (``{number:>5}| {line}`` and a footer) must fit the
# registry's cap on one result.
_READ_CAP = 80_000
# An answering line sits in neither the first nor the last twentieth of its file.
_EDGE_SHARE = 0.05

Block = Sequence[tuple[str, bool]]
"""Lines woven into a file as one piece; ``True`` marks an answering line."""


def _weave(
    rnd: random.Random,
    event: Callable[[random.Random, int], list[str]],
    blocks: Sequence[tuple[float, Block]],
    *,
    target: int = _TARGET_CHARS,
    header: Sequence[str] = (),
    footer: Sequence[str] = (),
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Events of several lines up to ``target`` characters, ``blocks`` inserted between
    events at their fractions of the events (for files whose records span lines, which
    :func:`_fill`'s one-line overwrite would cut in half)."""
    events: list[list[str]] = []
    size = sum(len(line) + 1 for line in [*header, *footer])
    size += sum(len(line) + 1 for _, block in blocks for line, _ in block)
    while size < target:
        lines = event(rnd, len(events))
        events.append(lines)
        size += sum(len(line) + 1 for line in lines)
    at = {min(int(fraction * len(events)), len(events)): block for fraction, block in blocks}
    out: list[str] = list(header)
    answers: list[int] = []
    for n in range(len(events) + 1):
        for line, answering in at.get(n, ()):
            if answering:
                answers.append(len(out))
            out.append(line)
        if n < len(events):
            out.extend(events[n])
    out.extend(footer)
    return tuple(out), tuple(answers)


def _placed(
    seed: int,
    noise: Callable[[random.Random, int], str],
    answers: list[tuple[float, str]],
    context: list[tuple[float, str]],
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """:func:`_fill` with non-answering ``context`` lines placed too (after the answers,
    so that an answer keeps its place)."""
    lines, at = _fill(random.Random(seed), noise, [*answers, *context])
    return lines, at[: len(answers)]


def _make(
    name: str,
    kind: str,
    path: str,
    focus: str,
    focus_kind: FocusKind,
    built: tuple[tuple[str, ...], tuple[int, ...]],
) -> Case:
    lines, answers = built
    return Case(name, kind, path, focus, focus_kind, True, lines, tuple(sorted(answers)))


# --- 1. systemd journal (own words) --------------------------------------------------------

_JOURNAL_UNITS = (
    ("logrotate.service", "Rotate log files"),
    ("man-db.service", "Daily man-db regeneration"),
    ("sysstat-collect.service", "system activity accounting tool"),
    ("apt-daily.service", "Daily apt download activities"),
    ("nightly-report.service", "Nightly usage report for the shop database"),
    ("certbot.service", "Certbot"),
    ("fstrim.service", "Discard unused blocks on filesystems from /etc/fstab"),
)


def _journal_stamp(i: int, rnd: random.Random) -> str:
    seconds = i * 37 + rnd.randint(0, 36)
    return f"Dec 06 {seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d} db-02"


def _journal(rnd: random.Random, i: int) -> str:
    stamp = _journal_stamp(i, rnd)
    pick = rnd.random()
    unit, description = rnd.choice(_JOURNAL_UNITS)
    pid = rnd.randint(20000, 59999)
    if pick < 0.14:
        return f"{stamp} systemd[1]: Starting {unit} - {description}..."
    if pick < 0.28:
        return f"{stamp} systemd[1]: Finished {unit} - {description}."
    if pick < 0.38:
        return f"{stamp} systemd[1]: {unit}: Deactivated successfully."
    if pick < 0.5:
        return (
            f"{stamp} postgres[1022]: [{rnd.randint(1, 40)}-1] LOG:  checkpoint complete: wrote "
            f"{rnd.randint(200, 9000)} buffers ({rnd.randint(1, 30)}.{rnd.randint(0, 9)}%); "
            f"0 WAL file(s) added, 0 removed, {rnd.randint(1, 6)} recycled; "
            f"write={rnd.randint(20, 270)}.{rnd.randint(0, 999):03d} s"
        )
    if pick < 0.6:
        return f"{stamp} CRON[{pid}]: (postgres) CMD (/usr/local/bin/check-replication --quiet --max-lag=30s)"
    if pick < 0.68:
        return f"{stamp} systemd[1]: Started session-{rnd.randint(4000, 9999)}.scope - Session {rnd.randint(4000, 9999)} of User postgres."
    if pick < 0.76:
        return (
            f"{stamp} kernel: [UFW BLOCK] IN=eth0 OUT= MAC=52:54:00:{rnd.getrandbits(24):06x} "
            f"SRC=198.51.100.{rnd.randint(2, 250)} DST=10.0.2.15 LEN=60 TTL=52 PROTO=TCP "
            f"SPT={rnd.randint(30000, 65000)} DPT={rnd.choice((22, 5432, 3389, 23))} SYN"
        )
    if pick < 0.84:
        return (
            f"{stamp} restic-backup[{pid}]: Files: {rnd.randint(0, 90)} new, {rnd.randint(0, 300)} "
            f"changed, {rnd.randint(20000, 40000)} unmodified"
        )
    if pick < 0.9:
        return f"{stamp} restic-backup[{pid}]: snapshot {rnd.getrandbits(32):08x} saved"
    if pick < 0.95:
        return f"{stamp} sshd[{pid}]: Accepted publickey for ops from 10.0.8.{rnd.randint(2, 60)} port {rnd.randint(30000, 65000)} ssh2: ED25519 SHA256:{rnd.getrandbits(64):016x}"
    return f"{stamp} systemd-journald[402]: Data hash table of /var/log/journal/{rnd.getrandbits(64):016x}/system.journal has a fill level at 75.{rnd.randint(0, 9)} ({rnd.randint(8000, 9000)} of {rnd.randint(11000, 12000)} items), suggesting rotation."


def _journal_case() -> Case:
    return _make(
        "journal-dump",
        "systemd journal",
        "logs/journal-db-02.txt",
        "why the nightly backup never finished",
        "own",
        _placed(
            811,
            _journal,
            answers=[
                (
                    0.57,
                    "Dec 06 02:59:40 db-02 unattended-upgrade[47990]: Packages that will be upgraded: libpq5 postgresql-16 postgresql-client-16",
                ),
                (
                    0.576,
                    "Dec 06 03:02:10 db-02 systemd[1]: Stopping postgresql@16-main.service - PostgreSQL Cluster 16-main...",
                ),
                (
                    0.578,
                    'Dec 06 03:02:10 db-02 pgdump-all[41377]: pg_dump: error: Dumping the contents of table "order_events" failed: PQgetResult() failed. Error message from server: FATAL:  terminating connection due to administrator command',
                ),
                (
                    0.5795,
                    "Dec 06 03:02:11 db-02 systemd[1]: pgdump-all.service: Main process exited, code=exited, status=1/FAILURE",
                ),
            ],
            context=[
                (
                    0.52,
                    "Dec 06 02:44:00 db-02 systemd[1]: Starting pgdump-all.service - Nightly dump of all shop databases to /srv/backup...",
                ),
                (
                    0.56,
                    "Dec 06 02:56:30 db-02 systemd[1]: Starting unattended-upgrades.service - Unattended Upgrades...",
                ),
                (
                    0.585,
                    "Dec 06 03:04:30 db-02 systemd[1]: Started postgresql@16-main.service - PostgreSQL Cluster 16-main.",
                ),
                (
                    0.63,
                    "Dec 06 03:18:50 db-02 restic-backup[41702]: snapshot 5be0a7d1 saved",
                ),
            ],
        ),
    )


# --- 2. Apache httpd error log (shared words) ---------------------------------------------


def _httpd_stamp(i: int, rnd: random.Random) -> str:
    seconds = 8 * 3600 + i * 43 + rnd.randint(0, 42)
    return (
        f"[Sun Dec 06 {seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}."
        f"{rnd.randint(0, 999999):06d} 2026]"
    )


def _httpd_pid(rnd: random.Random) -> str:
    return f"[pid {rnd.randint(21000, 21999)}:tid {140061283000000 + rnd.randint(0, 999999)}]"


def _httpd_client(rnd: random.Random) -> str:
    return f"[client {rnd.choice(('10.4.2', '10.4.3', '172.16.9'))}.{rnd.randint(2, 250)}:{rnd.randint(30000, 65000)}]"


def _httpd(rnd: random.Random, i: int) -> str:
    head = f"{_httpd_stamp(i, rnd)} "
    pid = _httpd_pid(rnd)
    client = _httpd_client(rnd)
    pick = rnd.random()
    if pick < 0.3:
        return f"{head}[ssl:info] {pid} {client} AH01964: Connection to child {rnd.randint(0, 63)} established (server shop.example.com:443)"
    if pick < 0.45:
        return f"{head}[ssl:info] {pid} {client} AH02008: SSL library error 1 in handshake (server shop.example.com:443)"
    if pick < 0.58:
        page = rnd.choice(("cart", "checkout", "product", "search", "account"))
        return f'{head}[php:warn] {pid} {client} PHP Warning:  Undefined array key "{rnd.choice(("sku", "qty", "voucher", "locale"))}" in /var/www/shop/{page}.php on line {rnd.randint(20, 400)}, referer: https://shop.example.com/{page}'
    if pick < 0.7:
        return f"{head}[reqtimeout:info] {pid} {client} AH01382: Request header read timeout"
    if pick < 0.8:
        path = rnd.choice((".git/config", ".env", "wp-login.php", "server-status", "phpmyadmin/"))
        return f"{head}[authz_core:error] {pid} {client} AH01630: client denied by server configuration: /var/www/shop/{path}"
    if pick < 0.88:
        return f"{head}[core:info] {pid} {client} AH00128: File does not exist: /var/www/shop/static/img/{rnd.getrandbits(32):08x}.webp"
    if pick < 0.94:
        return f"{head}[ssl:info] {pid} (70014)End of file found: {client} AH01991: SSL input filter read failed."
    if pick < 0.98:
        return f"{head}[proxy:warn] {pid} {client} AH01144: No protocol handler was valid for the URL /ws/notifications (scheme 'ws'). If you are using a DSO version of mod_proxy, make sure the proxy submodules are included in the configuration using LoadModule."
    return f"{head}[proxy_http:error] {pid} (70007)The timeout specified has expired: {client} AH01102: error reading status line from remote server 127.0.0.1:8082, referer: https://shop.example.com/search"


def _httpd_case() -> Case:
    pid = "[pid 21877:tid 140061283964480]"
    return _make(
        "httpd-refused",
        "error log (Apache httpd)",
        "logs/httpd/error_log",
        "the proxy errors where the backend refused the connection",
        "shared",
        _placed(
            812,
            _httpd,
            answers=[
                (
                    0.46,
                    f"[Sun Dec 06 09:39:11.318204 2026] [proxy:error] {pid} (111)Connection refused: AH00957: http: attempt to connect to 127.0.0.1:8081 (127.0.0.1:8081) failed",
                ),
                (
                    0.461,
                    f"[Sun Dec 06 09:39:11.318240 2026] [proxy_http:error] {pid} [client 10.4.2.19:52214] AH01114: HTTP: failed to make connection to backend: 127.0.0.1, referer: https://shop.example.com/cart",
                ),
                (
                    0.78,
                    "[Sun Dec 06 10:47:51.902113 2026] [proxy:error] [pid 21431:tid 140061283512000] (111)Connection refused: AH00957: http: attempt to connect to 127.0.0.1:8081 (127.0.0.1:8081) failed",
                ),
            ],
            context=[
                (
                    0.455,
                    f"[Sun Dec 06 09:37:50.977501 2026] [proxy_http:error] {pid} (104)Connection reset by peer: [client 10.4.3.77:40118] AH01102: error reading status line from remote server 127.0.0.1:8081, referer: https://shop.example.com/checkout",
                ),
                (
                    0.465,
                    "[Sun Dec 06 09:39:12.004417 2026] [ssl:info] [pid 21877:tid 140061283964480] [client 10.4.2.19:52214] AH01964: Connection to child 41 established (server shop.example.com:443)",
                ),
                (
                    0.775,
                    "[Sun Dec 06 10:46:10.511042 2026] [proxy:warn] [pid 21431:tid 140061283512000] [client 10.4.3.12:61002] AH01144: No protocol handler was valid for the URL /ws/notifications (scheme 'ws'). If you are using a DSO version of mod_proxy, make sure the proxy submodules are included in the configuration using LoadModule.",
                ),
            ],
        ),
    )


# --- 3. GitHub Actions job log (own words) ------------------------------------------------


class _Clock:
    """A GitHub Actions timestamp that moves forward a little with every line."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.micros = (10 * 3600 + 41 * 60) * 10_000_000

    def __call__(self) -> str:
        self.micros += self.rnd.randint(1_000, 4_000_000)
        seconds, fraction = divmod(self.micros, 10_000_000)
        return f"2026-12-06T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{fraction:07d}Z"


_GHA_PACKAGES = (
    "pytest", "pytest-cov", "coverage", "httpx", "pydantic", "pydantic-core", "anyio",
    "idna", "sniffio", "certifi", "h11", "httpcore", "typing-extensions", "packaging",
    "pluggy", "iniconfig", "build", "twine", "readme-renderer", "requests-toolbelt",
)  # fmt: skip
_GHA_MODULES = ("cli", "config", "sync", "export", "ledger", "money", "release", "retry")


def _gha_log(seed: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """One job of a release workflow: set up, install, test, build, publish (fails),
    then the steps that run anyway."""
    rnd = random.Random(seed)
    clock = _Clock(rnd)
    out: list[str] = []
    answers: list[int] = []

    def add(text: str, answering: bool = False) -> None:
        if answering:
            answers.append(len(out))
        out.append(f"{clock()} {text}")

    add("##[group]Runner Image Provisioner")
    add("Hosted Compute Agent")
    add("Version: 20241211.1")
    add("##[endgroup]")
    add("##[group]Operating System")
    add("Ubuntu")
    add("24.04.1")
    add("LTS")
    add("##[endgroup]")
    add("Current runner version: '2.321.0'")
    add("##[group]GITHUB_TOKEN Permissions")
    add("Contents: read")
    add("IdToken: write")
    add("Metadata: read")
    add("##[endgroup]")
    add("Secret source: Actions")
    add("Prepare workflow directory")
    add("Prepare all required actions")
    add("Getting action download info")
    add(
        "Download action repository 'actions/checkout@v4' (SHA:11bd71901bbe5b1630ceea73d27597364c9af683)"
    )
    add(
        "Download action repository 'actions/setup-python@v5' (SHA:0b93645e9fea7318ecaed2b359559ac225c90a2b)"
    )
    add(
        "Download action repository 'pypa/gh-action-pypi-publish@release/v1' (SHA:67339c736fd9354cd4f8cb0b744f2b82a74b5c70)"
    )
    add(
        "Download action repository 'codecov/codecov-action@v5' (SHA:1e68e06f1dbfde0e4cefc87efeba9e4643565303)"
    )
    add("Complete job name: release (shop-tools 4.2.0)")
    add("##[group]Run actions/checkout@v4")
    add("with:")
    add("  repository: shop/shop-tools")
    add("  ref: refs/tags/v4.2.0")
    add("  fetch-depth: 1")
    add("##[endgroup]")
    add("Syncing repository: shop/shop-tools")
    add(
        "[command]/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules --depth=1 origin +refs/tags/v4.2.0:refs/tags/v4.2.0"
    )
    add("HEAD is now at 9c41e7a Bump version to 4.2.0")
    add("##[group]Run actions/setup-python@v5")
    add("  python-version: 3.12")
    add("##[endgroup]")
    add("Successfully set up CPython (3.12.8)")
    add("##[group]Run python -m pip install -e '.[test]' build twine")
    for _ in range(70):
        package = rnd.choice(_GHA_PACKAGES)
        version = f"{rnd.randint(0, 9)}.{rnd.randint(0, 30)}.{rnd.randint(0, 9)}"
        pick = rnd.random()
        if pick < 0.4:
            add(f"Collecting {package}>={version.rsplit('.', 1)[0]} (from shop-tools==4.2.0)")
        elif pick < 0.8:
            add(
                f"  Downloading {package.replace('-', '_')}-{version}-py3-none-any.whl.metadata ({rnd.randint(2, 40)}.{rnd.randint(0, 9)} kB)"
            )
        else:
            add(
                f"Requirement already satisfied: {package} in /opt/hostedtoolcache/Python/3.12.8/x64/lib/python3.12/site-packages ({version})"
            )
    add(
        "Successfully installed anyio-4.7.0 build-1.2.2 certifi-2024.12.14 coverage-7.6.9 h11-0.14.0 httpcore-1.0.7 httpx-0.28.1 pydantic-2.10.3 pytest-8.3.4 shop-tools-4.2.0 twine-6.0.1"
    )
    add("##[endgroup]")
    add("##[group]Run python -m pytest -ra --cov=shop_tools --cov-report=xml")
    add("============================= test session starts ==============================")
    add("platform linux -- Python 3.12.8, pytest-8.3.4, pluggy-1.5.0")
    add("rootdir: /home/runner/work/shop-tools/shop-tools")
    add("collected 412 items")
    for n in range(250):
        module = rnd.choice(_GHA_MODULES)
        verb = rnd.choice(("parses", "rounds", "retries", "exports", "rejects", "merges", "totals"))
        if rnd.random() < 0.93:
            add(
                f"tests/test_{module}.py::test_{module}_{verb}_{rnd.randint(1, 40)} PASSED [{100 * (n + 1) // 412:3d}%]"
            )
        else:
            add(
                f"tests/test_{module}.py::test_{module}_legacy_{rnd.randint(1, 9)} SKIPPED (needs a ledger server) [{100 * (n + 1) // 412:3d}%]"
            )
    add("---------- coverage: platform linux, python 3.12.8-final-0 -----------")
    add("Coverage XML written to file coverage.xml")
    add("================ 398 passed, 14 skipped in 41.07s ================")
    add("##[endgroup]")
    add("##[group]Run python -m build")
    add("* Creating isolated environment: venv+pip...")
    add("* Building sdist...")
    for module in _GHA_MODULES * 3:
        add(
            f"adding 'shop_tools/{module}/{rnd.choice(('__init__', 'core', 'io', 'models', 'cli'))}.py'"
        )
    add("Successfully built shop_tools-4.2.0.tar.gz and shop_tools-4.2.0-py3-none-any.whl")
    add("##[endgroup]")
    add("##[group]Run pypa/gh-action-pypi-publish@release/v1")
    add("with:")
    add("  repository-url: https://upload.pypi.org/legacy/")
    add("  skip-existing: false")
    add("  verbose: false")
    add("##[endgroup]")
    add("Checking dist/shop_tools-4.2.0-py3-none-any.whl: PASSED")
    add("Checking dist/shop_tools-4.2.0.tar.gz: PASSED")
    add("Uploading distributions to https://upload.pypi.org/legacy/")
    add("Uploading shop_tools-4.2.0-py3-none-any.whl")
    add("100% ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 61.2/61.2 kB • 00:00 • 1.4 MB/s")
    add("WARNING  Error during upload. Retry with the --verbose option for more details.", True)
    add("ERROR    HTTPError: 400 Bad Request from https://upload.pypi.org/legacy/", True)
    add(
        "         File already exists ('shop_tools-4.2.0-py3-none-any.whl', with blake2_256 hash 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'). See https://pypi.org/help/#file-name-reuse for more information.",
        True,
    )
    add("##[error]Process completed with exit code 1.")
    add("##[group]Run codecov/codecov-action@v5")
    add("with:")
    add("  files: coverage.xml")
    add("  fail_ci_if_error: false")
    add("##[endgroup]")
    while sum(len(line) + 1 for line in out) < _TARGET_CHARS - 2_000:
        module = rnd.choice(_GHA_MODULES)
        pick = rnd.random()
        if pick < 0.5:
            add(
                f"debug - {clock()[:19]} -- Found file src/shop_tools/{module}/{rnd.choice(('core', 'io', 'models'))}.py with {rnd.randint(20, 600)} lines, {rnd.randint(40, 100)}.{rnd.randint(0, 99):02d}% covered"
            )
        elif pick < 0.8:
            add(
                f"info - {clock()[:19]} -- Processing coverage report: {rnd.choice(('lines', 'branches', 'functions'))} for shop_tools/{module}"
            )
        else:
            add(
                f"debug - {clock()[:19]} -- Skipping file tests/test_{module}.py (matched ignore pattern 'tests/**')"
            )
    add("info - Upload queued for processing complete")
    add("Post job cleanup.")
    add("[command]/usr/bin/git version")
    add("git version 2.47.1")
    add("[command]/usr/bin/git config --local --name-only --get-regexp core\\.sshCommand")
    add("[command]/usr/bin/git config --local --unset-all http.https://github.com/.extraheader")
    add("Cleaning up orphan processes")
    return tuple(out), tuple(answers)


def _gha_case() -> Case:
    return _make(
        "gha-upload",
        "CI log (GitHub Actions)",
        "ci/release-9120.log",
        "why did the release job not publish anything",
        "own",
        _gha_log(813),
    )


# --- 4. PostgreSQL server log (shared words) ----------------------------------------------


def _pg_head(stamp: str, pid: int, who: str = "shop@orders") -> str:
    """``log_line_prefix = '%m [%p] %q%u@%d '``: no user or database for a background
    process."""
    return f"2026-12-06 {stamp} UTC [{pid}]" + (f" {who}" if who else "")


_PG_STATEMENTS = (
    "SELECT o.id, o.total FROM orders o WHERE o.customer_id = $1 ORDER BY o.created_at DESC LIMIT 20",
    "UPDATE carts SET updated_at = now() WHERE session_id = $1",
    "INSERT INTO order_items (order_id, sku, qty, price) VALUES ($1, $2, $3, $4)",
    "SELECT sku, reserved, on_hand FROM stock_levels WHERE sku = ANY($1)",
    "DELETE FROM cart_items WHERE cart_id = $1 AND sku = $2",
)


def _pg_event(rnd: random.Random, i: int) -> list[str]:
    seconds = 13 * 3600 + i * 29 + rnd.randint(0, 28)
    stamp = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{rnd.randint(0, 999):03d}"
    pid = rnd.randint(40000, 49999)
    session = _pg_head(stamp, pid)
    pick = rnd.random()
    if pick < 0.22:
        port = rnd.randint(30000, 65000)
        host = f"10.0.3.{rnd.randint(2, 60)}"
        return [
            f"{_pg_head(stamp, pid, '[unknown]@[unknown]')} LOG:  connection received: host={host} port={port}",
            f"{session} LOG:  connection authorized: user=shop database=orders application_name=orders-api SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)",
        ]
    if pick < 0.38:
        return [
            f"{session} LOG:  disconnection: session time: 0:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}.{rnd.randint(0, 999):03d} user=shop database=orders host=10.0.3.{rnd.randint(2, 60)} port={rnd.randint(30000, 65000)}"
        ]
    if pick < 0.6:
        return [
            f"{session} LOG:  duration: {rnd.randint(500, 4000)}.{rnd.randint(0, 999):03d} ms  execute <unnamed>: {rnd.choice(_PG_STATEMENTS)}",
            f"{session} DETAIL:  Parameters: $1 = '{rnd.randint(10000, 99999)}'",
        ]
    if pick < 0.72:
        return [
            f"{_pg_head(stamp, 1024, '')} LOG:  checkpoint starting: time",
            f"{_pg_head(stamp, 1024, '')} LOG:  checkpoint complete: wrote {rnd.randint(200, 9000)} buffers ({rnd.randint(1, 30)}.{rnd.randint(0, 9)}%); 0 WAL file(s) added, 0 removed, {rnd.randint(1, 6)} recycled; write={rnd.randint(20, 270)}.{rnd.randint(0, 999):03d} s, sync=0.0{rnd.randint(10, 99)} s, total={rnd.randint(20, 270)}.{rnd.randint(0, 999):03d} s",
        ]
    if pick < 0.82:
        key = rnd.getrandbits(64)
        return [
            f'{session} ERROR:  duplicate key value violates unique constraint "carts_session_id_key"',
            f"{session} DETAIL:  Key (session_id)=({key:016x}) already exists.",
            f"{session} STATEMENT:  INSERT INTO carts (session_id, customer_id) VALUES ($1, $2)",
        ]
    if pick < 0.9:
        return [
            f"{session} ERROR:  canceling statement due to statement timeout",
            f"{session} STATEMENT:  {rnd.choice(_PG_STATEMENTS)}",
        ]
    if pick < 0.95:
        return [
            f"{session} ERROR:  could not serialize access due to concurrent update",
            f"{session} STATEMENT:  UPDATE stock_levels SET on_hand = on_hand - $2 WHERE sku = $1",
        ]
    return [
        f'{_pg_head(stamp, rnd.randint(50000, 59999), "")} LOG:  automatic vacuum of table "orders.public.{rnd.choice(("carts", "cart_items", "order_events", "stock_levels"))}": index scans: 1',
    ]


def _pg_deadlock(
    stamp: str, pid: int, other: int, relation: str, statement: str, xids: tuple[int, int]
) -> Block:
    head = f"2026-12-06 {stamp} UTC [{pid}] shop@orders"
    return [
        (
            f"{head} LOG:  process {pid} detected deadlock while waiting for ShareLock on transaction {xids[0]} after 1000.061 ms",
            False,
        ),
        (f"{head} DETAIL:  Process holding the lock: {other}. Wait queue: {pid}.", False),
        (f'{head} CONTEXT:  while updating tuple (1832,7) in relation "{relation}"', False),
        (f"{head} STATEMENT:  {statement}", False),
        (f"{head} ERROR:  deadlock detected", True),
        (
            f"{head} DETAIL:  Process {pid} waits for ShareLock on transaction {xids[0]}; blocked by process {other}. Process {other} waits for ShareLock on transaction {xids[1]}; blocked by process {pid}.",
            False,
        ),
        (f"{head} HINT:  See server log for query details.", False),
        (f'{head} CONTEXT:  while updating tuple (1832,7) in relation "{relation}"', False),
        (f"{head} STATEMENT:  {statement}", False),
    ]


def _pg_case() -> Case:
    reload_block: Block = [
        (
            "2026-12-06 13:31:30.551 UTC [1019] LOG:  received SIGHUP, reloading configuration files",
            False,
        ),
        (
            '2026-12-06 13:31:30.552 UTC [1019] LOG:  parameter "deadlock_timeout" changed to "1s"',
            False,
        ),
        (
            '2026-12-06 13:31:30.552 UTC [1019] LOG:  parameter "log_lock_waits" changed to "on"',
            False,
        ),
    ]
    return _make(
        "postgres-deadlock",
        "server log (PostgreSQL)",
        "logs/postgresql-16-main.log",
        "the deadlock errors",
        "shared",
        _weave(
            random.Random(814),
            _pg_event,
            [
                (0.3, reload_block),
                (
                    0.52,
                    _pg_deadlock(
                        "13:54:12.118",
                        48211,
                        48177,
                        "stock_levels",
                        "UPDATE stock_levels SET reserved = reserved + $2 WHERE sku = $1",
                        (9912345, 9912338),
                    ),
                ),
                (
                    0.79,
                    _pg_deadlock(
                        "14:22:41.870",
                        46003,
                        45988,
                        "order_items",
                        "UPDATE order_items SET qty = $2 WHERE order_id = $1 AND sku = $3",
                        (9931207, 9931199),
                    ),
                ),
            ],
        ),
    )


# --- 5. Terraform plan (own words) --------------------------------------------------------

_TF_HEADER = (
    "Terraform used the selected providers to generate the following execution",
    "plan. Resource actions are indicated with the following symbols:",
    "  + create",
    "  ~ update in-place",
    "  - destroy",
    "-/+ destroy and then create replacement",
    " <= read (data resources)",
    "",
    "Terraform will perform the following actions:",
    "",
)


_TF_MODULES = (
    "storefront", "catalog", "orders_api", "payments_api", "search", "mailer", "inventory",
    "pricing", "reviews", "shipping", "wishlist", "media", "thumbnails", "exports",
)  # fmt: skip


def _tf_event(rnd: random.Random, i: int) -> list[str]:
    """One resource's change, inside a module of its own (every address is unique)."""
    module = f"module.{_TF_MODULES[i % len(_TF_MODULES)]}_{i // len(_TF_MODULES) + 1}"
    pick = rnd.random()
    release = f'"2026.12.0{rnd.randint(1, 5)}" -> "2026.12.06"'
    if pick < 0.4:
        kind, ident = rnd.choice((
            ("aws_instance", f"i-0{rnd.getrandbits(64):016x}"),
            ("aws_lambda_function", f"{module[7:]}-handler"),
            ("aws_ecs_service", f"arn:aws:ecs:eu-west-1:123456789012:service/prod/{module[7:]}"),
        ))  # fmt: skip
        return [
            f"  # {module}.{kind}.this will be updated in-place",
            f'  ~ resource "{kind}" "this" {{',
            f'        id                                   = "{ident}"',
            "      ~ tags                                 = {",
            f'          ~ "release" = {release}',
            "            # (3 unchanged elements hidden)",
            "        }",
            "      ~ tags_all                             = {",
            f'          ~ "release" = {release}',
            "            # (3 unchanged elements hidden)",
            "        }",
            f"        # ({rnd.randint(12, 40)} unchanged attributes hidden)",
            "",
            f"        # ({rnd.randint(1, 9)} unchanged blocks hidden)",
            "    }",
            "",
        ]
    if pick < 0.6:
        policy = rnd.choice(("assume_ecs", "read_queue", "write_logs", "pull_images"))
        return [
            f"  # {module}.data.aws_iam_policy_document.{policy} will be read during apply",
            "  # (depends on a resource or a module with changes pending)",
            f' <= data "aws_iam_policy_document" "{policy}" {{',
            "      + id   = (known after apply)",
            "      + json = (known after apply)",
            "",
            "      + statement {",
            f'          + actions   = ["{rnd.choice(("sqs:ReceiveMessage", "logs:PutLogEvents", "ecr:GetAuthorizationToken", "sts:AssumeRole"))}"]',
            '          + effect    = "Allow"',
            "        }",
            "    }",
            "",
        ]
    if pick < 0.8:
        port = rnd.choice((443, 5432, 6379, 8080, 9090))
        return [
            f"  # {module}.aws_security_group_rule.ingress_{port} must be replaced",
            f'-/+ resource "aws_security_group_rule" "ingress_{port}" {{',
            "      ~ cidr_blocks              = [ # forces replacement",
            f'          - "10.{rnd.randint(0, 9)}.0.0/16",',
            f'          + "10.{rnd.randint(10, 19)}.0.0/16",',
            "        ]",
            "      ~ id                       = (known after apply)",
            "      ~ security_group_rule_id   = (known after apply)",
            f"        # ({rnd.randint(6, 9)} unchanged attributes hidden)",
            "    }",
            "",
        ]
    alarm = rnd.choice(("cpu_high", "errors_5xx", "queue_depth", "latency_p99"))
    return [
        f"  # {module}.aws_cloudwatch_metric_alarm.{alarm} will be updated in-place",
        f'  ~ resource "aws_cloudwatch_metric_alarm" "{alarm}" {{',
        f'        id                                    = "{module[7:]}-{alarm}"',
        f"      ~ threshold                             = {rnd.randint(50, 69)} -> {rnd.randint(70, 90)}",
        f"        # ({rnd.randint(15, 22)} unchanged attributes hidden)",
        "    }",
        "",
    ]


def _tf_summary(lines: Sequence[str]) -> str:
    """The plan's ``Plan:`` line, counted from its resources."""
    replace = sum(line.endswith(" must be replaced") for line in lines)
    add = sum(line.endswith(" will be created") for line in lines) + replace
    change = sum(line.endswith(" will be updated in-place") for line in lines)
    destroy = sum(line.endswith(" will be destroyed") for line in lines) + replace
    return f"Plan: {add} to add, {change} to change, {destroy} to destroy."


def _tf_case() -> Case:
    database: Block = [
        ("  # aws_db_instance.orders must be replaced", True),
        ('-/+ resource "aws_db_instance" "orders" {', False),
        (
            '      ~ address                               = "orders.c1x2y3z4.eu-west-1.rds.amazonaws.com" -> (known after apply)',
            False,
        ),
        (
            '      ~ arn                                   = "arn:aws:rds:eu-west-1:123456789012:db:orders" -> (known after apply)',
            False,
        ),
        (
            '      ~ endpoint                              = "orders.c1x2y3z4.eu-west-1.rds.amazonaws.com:5432" -> (known after apply)',
            False,
        ),
        (
            '      ~ id                                    = "db-7QH3XK2VUZ4NNB5TS6ZPL3X4OQ" -> (known after apply)',
            False,
        ),
        (
            "      ~ storage_encrypted                     = false -> true # forces replacement",
            True,
        ),
        ("        # (38 unchanged attributes hidden)", False),
        ("    }", False),
        ("", False),
    ]
    parameters: Block = [
        ("  # aws_db_parameter_group.orders will be updated in-place", False),
        ('  ~ resource "aws_db_parameter_group" "orders" {', False),
        ('        id          = "orders-pg16"', False),
        ("      ~ parameter {", False),
        ('          ~ value        = "500" -> "250"', False),
        ('            name         = "log_min_duration_statement"', False),
        ("        }", False),
        ("    }", False),
        ("", False),
    ]
    bastion: Block = [
        ("  # aws_instance.bastion must be replaced", False),
        ('-/+ resource "aws_instance" "bastion" {', False),
        (
            '      ~ ami                                  = "ami-0c1f3a8e2b4d5f607" -> "ami-0e9d8c7b6a5f40312" # forces replacement',
            False,
        ),
        (
            '      ~ id                                   = "i-0f3e2d1c0b9a87654" -> (known after apply)',
            False,
        ),
        ("        # (29 unchanged attributes hidden)", False),
        ("    }", False),
        ("", False),
    ]
    archive: Block = [
        ("  # aws_s3_bucket.invoice_archive will be destroyed", True),
        ("  # (because aws_s3_bucket.invoice_archive is not in configuration)", False),
        ('  - resource "aws_s3_bucket" "invoice_archive" {', False),
        ('      - bucket                      = "shop-invoice-archive-prod" -> null', False),
        ("      - force_destroy               = true -> null", False),
        ('      - id                          = "shop-invoice-archive-prod" -> null', False),
        ("      - object_lock_enabled         = false -> null", False),
        ("      - tags                        = {", False),
        ('          - "team" = "customer-care"', False),
        ("        } -> null", False),
        ("    }", False),
        ("", False),
    ]
    footer = (
        "",
        "Changes to Outputs:",
        '  ~ orders_db_endpoint = "orders.c1x2y3z4.eu-west-1.rds.amazonaws.com:5432" -> (known after apply)',
        "",
        "─────────────────────────────────────────────────────────────────────────────",
        "",
        "Saved the plan to: plan.tfplan",
        "",
        "To perform exactly these actions, run the following command to apply:",
        '    terraform apply "plan.tfplan"',
    )
    lines, answers = _weave(
        random.Random(815),
        _tf_event,
        [(0.37, bastion), (0.38, database), (0.39, parameters), (0.71, archive)],
        header=_TF_HEADER,
        footer=footer,
    )
    lines = (*lines[: -len(footer)], _tf_summary(lines), *lines[-len(footer) :])
    return _make(
        "terraform-replace",
        "plan output (Terraform)",
        "ci/plan-prod.txt",
        "will this change wipe any of our stored customer data",
        "own",
        (lines, answers),
    )


# --- 6. Kubernetes manifests (shared words) ------------------------------------------------

_K8S_SERVICES = (
    "storefront", "catalog", "orders", "payments-gateway", "search", "mailer", "inventory",
    "pricing", "reviews", "shipping", "wishlist", "media",
)  # fmt: skip


def _k8s_deployment(
    rnd: random.Random,
    name: str,
    *,
    limit: str | None = None,
    sidecar: bool = False,
) -> tuple[list[str], int]:
    """A Deployment; the index of its main container's ``memory`` limit line."""
    version = f"{rnd.randint(1, 4)}.{rnd.randint(0, 30)}.{rnd.randint(0, 9)}"
    request = rnd.choice(("128Mi", "256Mi", "384Mi", "512Mi"))
    lines = [
        "---",
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata:",
        f"  name: {name}",
        "  namespace: shop",
        "  labels:",
        f"    app.kubernetes.io/name: {name}",
        "    app.kubernetes.io/part-of: shop",
        "spec:",
        f"  replicas: {rnd.randint(2, 6)}",
        "  revisionHistoryLimit: 5",
        "  selector:",
        "    matchLabels:",
        f"      app.kubernetes.io/name: {name}",
        "  template:",
        "    metadata:",
        "      labels:",
        f"        app.kubernetes.io/name: {name}",
        "    spec:",
        f"      serviceAccountName: {name}",
        "      containers:",
        f"        - name: {name}",
        f"          image: registry.local/shop/{name}:{version}",
        "          ports:",
        f"            - containerPort: {rnd.choice((8080, 8000, 9000))}",
        "              name: http",
        "          env:",
        "            - name: LOG_LEVEL",
        f"              value: {rnd.choice(('info', 'warn'))}",
        "            - name: OTEL_EXPORTER_OTLP_ENDPOINT",
        "              value: http://otel-collector.observability:4317",
        "          resources:",
        "            requests:",
        f"              cpu: {rnd.choice(('100m', '250m', '500m'))}",
        f"              memory: {request}",
        "            limits:",
        f'              cpu: "{rnd.choice(("1", "2"))}"',
        f"              memory: {limit or rnd.choice(('512Mi', '1Gi', '1536Mi', '2Gi'))}",
        "          readinessProbe:",
        "            httpGet:",
        "              path: /healthz",
        "              port: http",
        f"            periodSeconds: {rnd.choice((5, 10))}",
    ]
    at = len(lines) - 6
    if sidecar:
        lines += [
            "        - name: log-shipper",
            "          image: registry.local/platform/fluent-bit:3.2.2",
            "          resources:",
            "            requests:",
            "              cpu: 20m",
            "              memory: 32Mi",
            "            limits:",
            "              cpu: 100m",
            "              memory: 128Mi",
        ]
    return lines, at


def _k8s_service(rnd: random.Random, name: str) -> list[str]:
    return [
        "---",
        "apiVersion: v1",
        "kind: Service",
        "metadata:",
        f"  name: {name}",
        "  namespace: shop",
        "spec:",
        "  selector:",
        f"    app.kubernetes.io/name: {name}",
        "  ports:",
        "    - name: http",
        "      port: 80",
        "      targetPort: http",
    ]


def _k8s_hpa(rnd: random.Random, name: str) -> list[str]:
    return [
        "---",
        "apiVersion: autoscaling/v2",
        "kind: HorizontalPodAutoscaler",
        "metadata:",
        f"  name: {name}",
        "  namespace: shop",
        "spec:",
        "  scaleTargetRef:",
        "    apiVersion: apps/v1",
        "    kind: Deployment",
        f"    name: {name}",
        f"  minReplicas: {rnd.randint(2, 3)}",
        f"  maxReplicas: {rnd.randint(6, 20)}",
        "  metrics:",
        "    - type: Resource",
        "      resource:",
        f"        name: {rnd.choice(('cpu', 'memory'))}",
        "        target:",
        "          type: Utilization",
        f"          averageUtilization: {rnd.choice((60, 70, 80))}",
    ]


def _k8s_manifests(seed: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    rnd = random.Random(seed)
    lines = [
        "# Rendered by kustomize 5.5.0 from overlays/prod; do not edit.",
        "apiVersion: v1",
        "kind: ResourceQuota",
        "metadata:",
        "  name: shop-quota",
        "  namespace: shop",
        "spec:",
        "  hard:",
        '    requests.cpu: "40"',
        "    requests.memory: 64Gi",
        '    limits.cpu: "80"',
        "    limits.memory: 128Gi",
    ]
    answers: list[int] = []
    n = 0
    while sum(len(line) + 1 for line in lines) < 49_000:
        name = f"{_K8S_SERVICES[n % len(_K8S_SERVICES)]}"
        if n >= len(_K8S_SERVICES):
            name += f"-{rnd.choice(('eu', 'us', 'ap'))}{n // len(_K8S_SERVICES)}"
        if n == 17:
            for extra in ("payments-api", "payments-worker"):
                deployment, at = _k8s_deployment(
                    rnd,
                    extra,
                    limit="768Mi" if extra == "payments-worker" else "1Gi",
                    sidecar=True,
                )
                if extra == "payments-worker":
                    answers.append(len(lines) + at)
                lines += deployment
                lines += _k8s_hpa(rnd, extra)
        deployment, _ = _k8s_deployment(rnd, name, sidecar=rnd.random() < 0.3)
        lines += deployment
        lines += _k8s_service(rnd, name)
        if rnd.random() < 0.5:
            lines += _k8s_hpa(rnd, name)
        n += 1
    return tuple(lines), tuple(answers)


def _k8s_case() -> Case:
    return _make(
        "k8s-memory-limit",
        "manifests (Kubernetes YAML)",
        "deploy/shop-prod.yaml",
        "the memory limit of the payments-worker container",
        "shared",
        _k8s_manifests(816),
    )


# --- 7. SQL migrations (own words) --------------------------------------------------------

_SQL_TABLES = (
    "coupons", "gift_cards", "newsletters", "shipments", "returns_requests", "price_lists",
    "stock_levels", "suppliers", "tax_rates", "warehouses", "carriers", "banners",
    "order_events", "invoices", "payouts", "audit_entries",
)  # fmt: skip


def _sql_migration(rnd: random.Random, i: int) -> list[str]:
    table = f"{_SQL_TABLES[i % len(_SQL_TABLES)]}"
    if i >= len(_SQL_TABLES):
        table += f"_v{i // len(_SQL_TABLES) + 1}"
    stamp = f"2026{(i // 9) % 12 + 1:02d}{i % 28 + 1:02d}{rnd.randint(8, 18):02d}{rnd.randint(0, 59):02d}00"
    columns = [
        "    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,",
        f"    code            text NOT NULL UNIQUE CHECK (length(code) <= {rnd.choice((32, 64, 128))}),",
        f"    amount_cents    integer NOT NULL DEFAULT 0 CHECK (amount_cents >= {rnd.choice((0, -100000))}),",
        f"    currency        char(3) NOT NULL DEFAULT '{rnd.choice(('EUR', 'CHF', 'PLN'))}',",
        f"    warehouse_id    bigint REFERENCES warehouses (id) ON DELETE {rnd.choice(('RESTRICT', 'SET NULL'))},",
        "    created_at      timestamptz NOT NULL DEFAULT now(),",
        "    updated_at      timestamptz NOT NULL DEFAULT now()",
    ]
    middle = columns[1:5]
    rnd.shuffle(middle)
    columns[1:5] = middle
    return [
        f"-- migrate:up {stamp}_create_{table}.sql",
        f"CREATE TABLE {table} (",
        *columns,
        ");",
        f"CREATE INDEX {table}_created_at_idx ON {table} (created_at);",
        f"CREATE TRIGGER {table}_touch BEFORE UPDATE ON {table} FOR EACH ROW EXECUTE FUNCTION touch_updated_at();",
        "",
        f"-- migrate:down {stamp}_create_{table}.sql",
        f"DROP TABLE {table};",
        "",
    ]


def _sql_case() -> Case:
    erasure: Block = [
        ("-- migrate:up 20260312101500_profile_closure.sql", False),
        ("-- Closing a profile runs the erasure job, which deletes the customers row.", False),
        ("ALTER TABLE customers ADD COLUMN profile_closed_at timestamptz;", False),
        (
            "CREATE INDEX customers_profile_closed_at_idx ON customers (profile_closed_at) WHERE profile_closed_at IS NOT NULL;",
            False,
        ),
        ("", False),
        ("-- migrate:down 20260312101500_profile_closure.sql", False),
        ("ALTER TABLE customers DROP COLUMN profile_closed_at;", False),
        ("", False),
    ]
    people: Block = [
        ("-- migrate:up 20260402143000_customer_data.sql", False),
        ("CREATE TABLE orders_archive (", False),
        ("    id              bigint PRIMARY KEY,", False),
        (
            "    customer_id     bigint NOT NULL REFERENCES customers (id) ON DELETE RESTRICT,",
            False,
        ),
        ("    total_cents     integer NOT NULL,", False),
        ("    closed_at       timestamptz NOT NULL", False),
        (");", False),
        ("CREATE TABLE wishlists (", False),
        ("    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,", False),
        ("    customer_id     bigint NOT NULL REFERENCES customers (id) ON DELETE CASCADE,", False),
        ("    name            text NOT NULL DEFAULT 'Favourites'", False),
        (");", False),
        ("CREATE TABLE customer_addresses (", False),
        ("    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,", False),
        ("    customer_id     bigint NOT NULL REFERENCES customers (id) ON DELETE CASCADE,", True),
        ("    kind            text NOT NULL CHECK (kind IN ('delivery', 'billing')),", False),
        ("    line1           text NOT NULL,", False),
        ("    postcode        text NOT NULL,", False),
        ("    country         char(2) NOT NULL", False),
        (");", False),
        ("COMMENT ON TABLE customer_addresses IS 'addresses saved at checkout';", False),
        ("CREATE TABLE product_reviews (", False),
        ("    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,", False),
        ("    customer_id     bigint REFERENCES customers (id) ON DELETE SET NULL,", False),
        ("    rating          smallint NOT NULL CHECK (rating BETWEEN 1 AND 5)", False),
        (");", False),
        ("", False),
        ("-- migrate:down 20260402143000_customer_data.sql", False),
        ("DROP TABLE product_reviews, customer_addresses, wishlists, orders_archive;", False),
        ("", False),
    ]
    return _make(
        "sql-cascade",
        "SQL migrations",
        "db/schema-migrations.sql",
        "what happens to a shopper's saved addresses when they close their profile",
        "own",
        _weave(
            random.Random(817),
            _sql_migration,
            [(0.33, erasure), (0.64, people)],
            header=("-- dbmate migrations, concatenated by `make schema-dump`", ""),
        ),
    )


# --- 8. Telegraf TOML config (shared words) -----------------------------------------------

_TELEGRAF_TARGETS = (
    "storefront", "catalog", "orders", "payments", "search", "mailer", "inventory", "pricing",
)  # fmt: skip


def _telegraf_input(rnd: random.Random, i: int) -> list[str]:
    target = f"{_TELEGRAF_TARGETS[i % len(_TELEGRAF_TARGETS)]}-{i // len(_TELEGRAF_TARGETS)}"
    pick = rnd.random()
    if pick < 0.4:
        return [
            "[[inputs.http_response]]",
            "  ## List of urls to query.",
            f'  urls = ["http://{target}.shop.svc:8080/healthz"]',
            "  ## HTTP Request Method",
            '  method = "GET"',
            "  ## Set response_timeout (default 5 seconds)",
            f'  response_timeout = "{rnd.choice((2, 5, 10))}s"',
            "  ## Whether to follow redirects from the server (defaults to false)",
            "  follow_redirects = false",
            f'  interval = "{rnd.choice((10, 30, 60))}s"',
            "  [inputs.http_response.tags]",
            f'    service = "{target}"',
            "",
        ]
    if pick < 0.75:
        return [
            "[[inputs.prometheus]]",
            "  ## An array of urls to scrape metrics from.",
            f'  urls = ["http://{target}.shop.svc:9090/metrics"]',
            "  ## Metric version controls the mapping from Prometheus metrics into Telegraf metrics.",
            "  metric_version = 2",
            "  ## Specify timeout duration for slower prometheus clients (default is 5s)",
            f'  timeout = "{rnd.choice((3, 5, 10))}s"',
            f'  namepass = ["http_requests_*", "process_*", "{target.split("-", maxsplit=1)[0]}_*"]',
            "",
        ]
    return [
        "[[inputs.procstat]]",
        "  ## pattern as argument for pgrep (ie, pgrep -f <pattern>)",
        f'  pattern = "{target.split("-", maxsplit=1)[0]}-server"',
        "  ## Field name prefix",
        f'  prefix = "{target.replace("-", "_")}"',
        f"  pid_tag = {rnd.choice(('true', 'false'))}",
        "",
    ]


def _kafka_output(alias: str, brokers: str, flush: str) -> Block:
    return [
        ("[[outputs.kafka]]", False),
        (f'  alias = "{alias}"', False),
        ("  ## URLs of kafka brokers", False),
        (f"  brokers = [{brokers}]", False),
        ("  ## Kafka topic for producer messages", False),
        ('  topic = "telegraf-metrics"', False),
        ("  ## Compression codec: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd", False),
        ("  compression_codec = 4", False),
        ("  ## RequiredAcks: -1 waits for all in-sync replicas", False),
        ("  required_acks = -1", False),
        ("  max_retry = 5", False),
        (
            "  ## Maximum time between flushes of this output; overrides agent.flush_interval.",
            False,
        ),
        (f'  flush_interval = "{flush}"', True),
        ('  data_format = "influx"', False),
        ("", False),
    ]


def _telegraf_case() -> Case:
    header = (
        "# Telegraf configuration, rendered by ansible role metrics-agent 3.4",
        "",
        "[global_tags]",
        '  dc = "fra1"',
        '  env = "prod"',
        "",
        "[agent]",
        '  interval = "10s"',
        "  round_interval = true",
        "  metric_batch_size = 1000",
        "  metric_buffer_limit = 10000",
        '  collection_jitter = "0s"',
        '  flush_interval = "10s"',
        '  flush_jitter = "0s"',
        '  precision = ""',
        "  omit_hostname = false",
        "",
    )
    influx: Block = [
        ("[[outputs.influxdb_v2]]", False),
        ('  urls = ["https://influx.metrics.internal:8086"]', False),
        ('  token = "$INFLUX_TOKEN"', False),
        ('  organization = "shop"', False),
        ('  bucket = "telegraf"', False),
        ('  flush_interval = "15s"', False),
        ("", False),
    ]
    consumer: Block = [
        ("[[inputs.kafka_consumer]]", False),
        ('  brokers = ["kafka-1.eu.internal:9092", "kafka-2.eu.internal:9092"]', False),
        ('  topics = ["shop-metrics"]', False),
        ('  consumer_group = "telegraf_metrics_consumers"', False),
        ('  offset = "oldest"', False),
        ('  data_format = "influx"', False),
        ("", False),
    ]
    return _make(
        "telegraf-flush",
        "config (TOML)",
        "config/telegraf.conf",
        "the flush_interval of the kafka outputs",
        "shared",
        _weave(
            random.Random(818),
            _telegraf_input,
            [
                (0.2, consumer),
                (0.41, influx),
                (
                    0.42,
                    _kafka_output(
                        "kafka-eu", '"kafka-1.eu.internal:9092", "kafka-2.eu.internal:9092"', "5s"
                    ),
                ),
                (
                    0.72,
                    _kafka_output(
                        "kafka-us", '"kafka-1.us.internal:9092", "kafka-2.us.internal:9092"', "20s"
                    ),
                ),
            ],
            header=header,
        ),
    )


def _round2() -> list[Case]:
    return [
        _journal_case(),
        _httpd_case(),
        _gha_case(),
        _pg_case(),
        _tf_case(),
        _k8s_case(),
        _sql_case(),
        _telegraf_case(),
    ]


CASES_ROUND2: tuple[Case, ...] = tuple(_round2())
"""The second held-out set: five logs or command outputs, then three files that are not."""


def numbered_chars(case: Case) -> int:
    """The length of ``read_file``'s numbered output of the whole file."""
    total = len(case.lines)
    body = sum(len(f"{n:>5}| {line}") + 1 for n, line in enumerate(case.lines, 1))
    return body + len(f"[lines 1-{total:,} of {total:,}; end of file]")


def check_round2(case: Case) -> list[str]:
    """:func:`~benchmarks.fidelity_cases.check_case`, and the stricter rules of this set.

    An own-words answer holds no focus word in any form the pass's ranking matches
    (a plural finds its singular), scored as if each word were rare; an answer sits
    away from the first and last twentieth of the file; the numbered read fits the cap.
    """
    problems = check_case(case)
    focus = focus_of(case.focus)
    for index in case.answers:
        if not _EDGE_SHARE * len(case.lines) <= index < (1 - _EDGE_SHARE) * len(case.lines):
            problems.append(f"{case.name}: line {index + 1} is at the edge of the file")
        if case.focus_kind == "own" and line_scores([case.lines[index], "", "", ""], focus)[0]:
            problems.append(f"{case.name}: line {index + 1} matches the focus")
    if numbered_chars(case) >= _READ_CAP:
        problems.append(f"{case.name}: numbered read of {numbered_chars(case)} characters")
    return problems
