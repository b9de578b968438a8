# ruff: noqa: E501  (the cases are lines of text, kept whole to be read as they are)
"""The third tuning set of the pruning fidelity benchmark (``--set tuning-3``).

Ten cases in the format of :mod:`benchmarks.fidelity_cases` (:class:`Case`: a file, a
focus, the 0-based indices of its one to four *answering lines*), in shapes the first set
does not have: five logs (a syslog of several daemons, an HAProxy access log, a Jenkins
job log, a MySQL error log, an Ansible run) and five files that are not logs (a
docker-compose file, an ``nginx.conf``, a Django migration, a ``ps aux`` table, a
changelog). Half of the focuses name words of the answering lines (``shared``), half are
asked in a user's own words that share none of them (``own``).

Every case also has *distractors*: lines that look close and do not answer (the same
error on another server, a warning before the real error, a failure that was retried and
passed, the same key in another service's block, a line that shares the user's words), so
that keeping the neighbours or the wrong kind of line shows in the figures.

:func:`check_round3` proves each case sound: 40-75 KB (``read_file``'s numbered output of
the whole file under the registry's 80,000-character cap), every answering line present
exactly once, a ``shared`` focus scoring on every answering line with the pass's own
matcher, an ``own`` focus sharing no word with any (stricter than the pass: plurals and
``-ing``/``-ed``/``-ly`` stems count as shared), and some line that is not an answer
sharing a term of the focus. Every file is made from a seeded ``random.Random``: the same
case is the same text on every machine and every run.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections.abc import Callable

from benchmarks.fidelity_cases import Case, FocusKind
from leanloop.pruning.rank import focus_of, focus_terms, line_scores

__all__ = ["CASES_ROUND3", "build_round3", "check_round3", "numbered_chars", "shared_terms"]

_MIN_CHARS = 40_000
_MAX_CHARS = 75_000
_NUMBERED_CAP = 80_000
"""The registry's cap on one result; ``read_file`` numbers each line ``{n:>5}| ``."""
_MAX_LINE_CHARS = 2_000
"""``read_file`` cuts longer lines."""

# A line (or the same moment's lines) of a log at ``t`` seconds into it.
Noise = Callable[[random.Random, float], list[str]]


def _timeline(
    rnd: random.Random,
    noise: Noise,
    fixed: list[tuple[float, str]],
    *,
    step: float,
    end: float,
) -> list[str]:
    """Noise lines at times rising by about ``step`` seconds up to ``end``, with the
    ``fixed`` lines (distractors and answers, each at its time) merged in time order."""
    events: list[tuple[float, str]] = []
    t = 0.0
    while True:
        t += rnd.uniform(0.2, 1.8) * step
        if t >= end:
            break
        events.extend((t, line) for line in noise(rnd, t))
    # sorted() is stable: at the same time noise comes first, fixed lines keep their order.
    return [line for _, line in sorted(events + fixed, key=lambda event: event[0])]


def _at(lines: list[str], answers: list[str]) -> tuple[int, ...]:
    """The indices of the answering lines, found by their exact text."""
    return tuple(sorted(lines.index(answer) for answer in answers))


def _clock(t: float) -> str:
    s = int(t)
    return f"{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


# --- syslog of a database host: cron, sshd, kernel, a flapping exporter --------------------

_SYSLOG_HOST = "db-01"
_SYSLOG_ANSWERS = [
    "Mar 14 02:30:01 db-01 CRON[48210]: (postgres) CMD (/usr/local/bin/pgdump-offsite.sh --bucket s3://acme-db-archive/db-01)",
    "Mar 14 02:30:01 db-01 CRON[48209]: (CRON) error (grandchild #48210 failed with exit status 127)",
]


def _syslog_line(t: float, text: str) -> str:
    return f"Mar 14 {_clock(t)} {_SYSLOG_HOST} {text}"


def _cron_job(t: float, pid: int, user: str, command: str, *, status: int = 0) -> list[str]:
    """The lines Debian's cron writes for one job: session, command, its failure."""
    lines = [
        f"CRON[{pid}]: pam_unix(cron:session): session opened for user {user}(uid={0 if user == 'root' else 113}) by (uid=0)",
        f"CRON[{pid + 1}]: ({user}) CMD ({command})",
    ]
    if status:
        lines += [
            f"CRON[{pid}]: (CRON) error (grandchild #{pid + 1} failed with exit status {status})",
            f"CRON[{pid}]: (CRON) info (No MTA installed, discarding output)",
        ]
    lines.append(f"CRON[{pid}]: pam_unix(cron:session): session closed for user {user}")
    return [_syslog_line(t, line) for line in lines]


def _syslog_cron(end: float) -> list[tuple[float, str]]:
    """Every minute's cron jobs from midnight to ``end``: sysstat, DDNS, run-parts, the
    nightly dump (at 02:30, the answer) and the archive rotation (at 04:00, a distractor)."""
    fixed: list[tuple[float, str]] = []
    for minute in range(int(end // 60)):
        t = minute * 60 + 1.0
        pid = 47000 + minute * 8
        jobs: list[tuple[str, str, int]] = []
        if minute % 10 == 0:
            jobs.append(("root", "command -v debian-sa1 > /dev/null && debian-sa1 1 1", 0))
        if minute % 15 == 0:
            # The DDNS update fails once at 01:15: the same error as the answer, another job.
            jobs.append(("root", "/usr/local/bin/ddns-update --quiet", 1 if minute == 75 else 0))
        if minute % 60 == 17:
            jobs.append(("root", "cd / && run-parts --report /etc/cron.hourly", 0))
        if minute == 240:
            jobs.append(("root", "/usr/local/sbin/backup-rotate --keep-days 14 /srv/archive", 0))
        if minute == 180:  # 03:00: the file backup of /etc and /home runs, and succeeds
            fixed += [
                (
                    t,
                    _syslog_line(
                        t,
                        "systemd[1]: Starting restic-backup.service - Back up /etc and /home to the NAS...",
                    ),
                ),
                (
                    t + 1,
                    _syslog_line(t + 1, "restic-backup[51877]: using parent snapshot 7c2e19a4"),
                ),
                (
                    t + 41,
                    _syslog_line(
                        t + 41,
                        "restic-backup[51877]: Files:          14 new,    93 changed, 24410 unmodified",
                    ),
                ),
                (
                    t + 41,
                    _syslog_line(
                        t + 41,
                        "restic-backup[51877]: Added to the repository: 18.224 MiB (6.102 MiB stored)",
                    ),
                ),
                (t + 41, _syslog_line(t + 41, "restic-backup[51877]: snapshot 4f1a2b3c saved")),
                (
                    t + 42,
                    _syslog_line(
                        t + 42, "systemd[1]: restic-backup.service: Deactivated successfully."
                    ),
                ),
                (
                    t + 42,
                    _syslog_line(
                        t + 42,
                        "systemd[1]: Finished restic-backup.service - Back up /etc and /home to the NAS.",
                    ),
                ),
            ]
        for n, (user, command, status) in enumerate(jobs):
            fixed += [(t, line) for line in _cron_job(t, pid + 2 * n, user, command, status=status)]
        if minute == 150:  # 02:30: the dump job, whose pids the answers name
            fixed += [
                (
                    t,
                    _syslog_line(
                        t,
                        "CRON[48209]: pam_unix(cron:session): session opened for user postgres(uid=113) by (uid=0)",
                    ),
                ),
                (t, _SYSLOG_ANSWERS[0]),
                (t, _SYSLOG_ANSWERS[1]),
                (
                    t,
                    _syslog_line(
                        t, "CRON[48209]: (CRON) info (No MTA installed, discarding output)"
                    ),
                ),
                (
                    t,
                    _syslog_line(
                        t, "CRON[48209]: pam_unix(cron:session): session closed for user postgres"
                    ),
                ),
            ]
    return fixed


def _syslog_noise(rnd: random.Random, t: float) -> list[str]:
    pick = rnd.random()
    pid = rnd.randint(30000, 99999)
    outside = f"{rnd.choice((45, 61, 92, 103, 141, 185, 193))}.{rnd.randint(0, 255)}.{rnd.randint(0, 255)}.{rnd.randint(1, 254)}"
    port = rnd.randint(30000, 65000)
    if pick < 0.14:
        user = rnd.choice(("admin", "ubuntu", "oracle", "test", "postgres", "git", "user1"))
        return [
            _syslog_line(t, f"sshd[{pid}]: Invalid user {user} from {outside} port {port}"),
            _syslog_line(
                t,
                f"sshd[{pid}]: Connection closed by invalid user {user} {outside} port {port} [preauth]",
            ),
        ]
    if pick < 0.24:
        user = rnd.choice(("deploy", "ci-runner", "monitor"))
        session = rnd.randint(3000, 9999)
        return [
            _syslog_line(
                t,
                f"sshd[{pid}]: Accepted publickey for {user} from 10.0.4.{rnd.randint(2, 250)} port {port} ssh2: ED25519 SHA256:{rnd.getrandbits(160):040x}"[
                    :170
                ],
            ),
            _syslog_line(
                t,
                f"sshd[{pid}]: pam_unix(sshd:session): session opened for user {user}(uid={rnd.randint(1001, 1004)}) by (uid=0)",
            ),
            _syslog_line(t, f"systemd-logind[611]: New session {session} of user {user}."),
            _syslog_line(
                t,
                f"systemd[1]: Started session-{session}.scope - Session {session} of User {user}.",
            ),
        ]
    if pick < 0.30:
        user = rnd.choice(("deploy", "ci-runner", "monitor"))
        return [
            _syslog_line(
                t,
                f"sshd[{pid}]: Received disconnect from 10.0.4.{rnd.randint(2, 250)} port {port}:11: disconnected by user",
            ),
            _syslog_line(t, f"sshd[{pid}]: pam_unix(sshd:session): session closed for user {user}"),
            _syslog_line(
                t,
                f"systemd[1]: run-user-{rnd.randint(1001, 1004)}.mount: Deactivated successfully.",
            ),
        ]
    if pick < 0.62:
        dpt = rnd.choice((22, 23, 445, 3389, 5900, 6379, 8080, 9200, 27017))
        return [
            _syslog_line(
                t,
                f"kernel: [UFW BLOCK] IN=eth0 OUT= MAC=52:54:00:{rnd.getrandbits(8):02x}:{rnd.getrandbits(8):02x}:{rnd.getrandbits(8):02x}:fe:ff:ff:ff:ff:ff:08:00 "
                f"SRC={outside} DST=10.0.4.5 LEN={rnd.choice((40, 44, 60))} TOS=0x00 PREC=0x00 TTL={rnd.randint(40, 250)} ID={rnd.randint(1, 65535)} "
                f"PROTO=TCP SPT={port} DPT={dpt} WINDOW={rnd.choice((1024, 65535, 29200))} RES=0x00 SYN URGP=0",
            )
        ]
    if pick < 0.76:
        # The metrics exporter restarts all night: a service failing, not the answer.
        counter = int(t // 400) + 3
        return [
            _syslog_line(
                t,
                f'pg-metrics-exporter[{pid}]: ts={int(1741910400 + t)} level=error msg="listen tcp :9187: bind: address already in use"',
            ),
            _syslog_line(
                t,
                "systemd[1]: pg-metrics-exporter.service: Main process exited, code=exited, status=1/FAILURE",
            ),
            _syslog_line(
                t, "systemd[1]: pg-metrics-exporter.service: Failed with result 'exit-code'."
            ),
            _syslog_line(
                t,
                f"systemd[1]: pg-metrics-exporter.service: Scheduled restart job, restart counter is at {counter}.",
            ),
            _syslog_line(
                t,
                "systemd[1]: Stopped pg-metrics-exporter.service - Prometheus PostgreSQL Exporter.",
            ),
            _syslog_line(
                t,
                "systemd[1]: Started pg-metrics-exporter.service - Prometheus PostgreSQL Exporter.",
            ),
        ]
    if pick < 0.80:
        user, app = rnd.choice(
            (
                ("app", "gunicorn"),
                ("app", "celery"),
                ("report", "metabase"),
                ("postgres_exporter", "pg-metrics"),
            )
        )
        return [
            _syslog_line(
                t,
                f"postgres[{pid}]: [{rnd.randint(1, 9)}-1] LOG:  connection authorized: user={user} database=shop application_name={app} SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)",
            )
        ]
    if pick < 0.86:
        return [
            _syslog_line(
                t,
                f"postgres[{pid}]: [{rnd.randint(1, 9)}-1] LOG:  checkpoint complete: wrote {rnd.randint(200, 9000)} buffers ({rnd.randint(1, 30)}.{rnd.randint(0, 9)}%); 0 WAL file(s) added, 0 removed, {rnd.randint(1, 9)} recycled; write={rnd.randint(20, 270)}.{rnd.randint(100, 999)} s, sync=0.{rnd.randint(10, 99)}1 s, total={rnd.randint(20, 270)}.{rnd.randint(100, 999)} s",
            )
        ]
    if pick < 0.92:
        return [
            _syslog_line(
                t,
                f"systemd-timesyncd[587]: Contacted time server 185.125.190.{rnd.choice((56, 57, 58))}:123 (ntp.ubuntu.com).",
            ),
        ]
    unit = rnd.choice(
        (
            "apt-daily.service - Daily apt download activities",
            "man-db.service - Daily man-db regeneration",
            "sysstat-summary.service - Generate a daily summary of process accounting",
            "fstrim.service - Discard unused blocks on filesystems from /etc/fstab",
        )
    )
    name = unit.split(" - ", maxsplit=1)[0]
    return [
        _syslog_line(t, f"systemd[1]: Starting {unit}..."),
        _syslog_line(t, f"systemd[1]: {name}: Deactivated successfully."),
        _syslog_line(t, f"systemd[1]: Finished {unit}."),
    ]


def _syslog_case() -> Case:
    rnd = random.Random(3101)
    end = 5 * 3600 + 50 * 60
    lines = _timeline(rnd, _syslog_noise, _syslog_cron(end), step=150.0, end=end)
    return Case(
        "syslog-backup",
        "syslog (cron, sshd, kernel, systemd)",
        "logs/syslog",
        "why is there no database backup from last night",
        "own",
        False,
        tuple(lines),
        _at(lines, _SYSLOG_ANSWERS),
    )


# --- HAProxy access log ---------------------------------------------------------------------

_HAPROXY_ANSWERS = [
    'Mar 14 10:12:09 lb-01 haproxy[2841]: 198.51.100.23:50412 [14/Mar/2026:10:11:39.102] fe_https~ be_api/api-03 0/0/1/-1/30001 504 194 - - sH-- 388/371/52/14/0 0/0 "POST /api/v2/orders HTTP/1.1"',
    'Mar 14 10:17:40 lb-01 haproxy[2841]: 203.0.113.87:61022 [14/Mar/2026:10:17:10.455] fe_https~ be_api/api-03 0/0/0/-1/30002 504 194 - - sH-- 402/380/61/17/0 0/0 "GET /api/v2/orders/88213/invoice HTTP/1.1"',
    'Mar 14 10:31:55 lb-01 haproxy[2841]: 192.0.2.140:44871 [14/Mar/2026:10:31:25.019] fe_https~ be_api/api-03 0/0/1/-1/30001 504 194 - - sH-- 371/355/48/12/0 0/0 "POST /api/v2/cart/checkout HTTP/1.1"',
]
_HAPROXY_DISTRACTORS = [
    (
        9 * 60 + 51.0,
        'Mar 14 10:09:51 lb-01 haproxy[2841]: 198.51.100.61:52290 [14/Mar/2026:10:09:50.904] fe_https~ be_api/api-03 0/0/1/211/212 502 209 - - SH-- 360/347/45/11/0 0/0 "GET /api/v2/products?page=4 HTTP/1.1"',
    ),
    (
        17 * 60 + 42.0,
        "Mar 14 10:17:42 lb-01 haproxy[2841]: Server be_api/api-03 is DOWN, reason: Layer7 timeout, check duration: 2001ms. 3 active and 0 backup servers left. 17 sessions active, 0 requeued, 0 remaining in queue.",
    ),
    (
        18 * 60 + 30.0,
        "Mar 14 10:18:30 lb-01 haproxy[2841]: Server be_api/api-03 is UP, reason: Layer7 check passed, code: 200, check duration: 4ms. 4 active and 0 backup servers online.",
    ),
    (
        24 * 60 + 13.0,
        'Mar 14 10:24:13 lb-01 haproxy[2841]: 203.0.113.9:40128 [14/Mar/2026:10:23:43.220] fe_https~ be_api/api-01 0/0/0/-1/30001 504 194 - - sH-- 395/377/55/15/0 0/0 "POST /api/v2/orders HTTP/1.1"',
    ),
]


def _haproxy_noise(rnd: random.Random, t: float) -> list[str]:
    pick = rnd.random()
    if pick < 0.6:
        server = f"be_api/api-0{rnd.randint(1, 4)}"
        request = rnd.choice((
            f"GET /api/v2/products?page={rnd.randint(1, 40)}", f"GET /api/v2/products/{rnd.randint(100, 9999)}",
            "GET /api/v2/cart", "POST /api/v2/cart/items", f"GET /api/v2/orders/{rnd.randint(80000, 89999)}",
            "GET /api/v2/categories", f"GET /api/v2/search?q={rnd.choice(('mug', 'lamp', 'chair', 'desk', 'kettle'))}",
        ))  # fmt: skip
        status = rnd.choice((200, 200, 200, 200, 200, 201, 304, 404, 401))
        tr = rnd.randint(4, 480)
    elif pick < 0.85:
        server = f"be_static/static-0{rnd.randint(1, 2)}"
        request = f"GET /static/{rnd.choice(('app', 'vendor', 'checkout', 'search'))}.{rnd.getrandbits(32):08x}.{rnd.choice(('js', 'css'))}"
        status = rnd.choice((200, 200, 304, 304))
        tr = rnd.randint(0, 12)
    else:
        server = f"be_auth/auth-0{rnd.randint(1, 2)}"
        request = rnd.choice(
            (
                "POST /oauth/token",
                "GET /oauth/userinfo",
                "POST /login",
                "GET /.well-known/openid-configuration",
            )
        )
        status = rnd.choice((200, 200, 200, 302, 401))
        tr = rnd.randint(8, 160)
    tc = rnd.randint(0, 2)
    ta = tc + tr + rnd.randint(0, 3)
    accepted = 36000 + t - ta / 1000
    client = f"{rnd.choice((81, 93, 145, 178, 212))}.{rnd.randint(0, 255)}.{rnd.randint(0, 255)}.{rnd.randint(1, 254)}"
    conns = f"{rnd.randint(340, 420)}/{rnd.randint(320, 400)}/{rnd.randint(10, 70)}/{rnd.randint(1, 20)}/0"
    return [
        f"Mar 14 {_clock(36000 + t)} lb-01 haproxy[2841]: {client}:{rnd.randint(30000, 65000)} "
        f"[14/Mar/2026:{_clock(accepted)}.{int(accepted * 1000) % 1000:03d}] fe_https~ {server} "
        f"0/0/{tc}/{tr}/{ta} {status} {rnd.randint(180, 48000)} - - ---- {conns} 0/0 "
        f'"{request} HTTP/1.1"'
    ]


def _haproxy_case() -> Case:
    rnd = random.Random(3102)
    fixed = list(_HAPROXY_DISTRACTORS)
    fixed += [
        (12 * 60 + 9.0, _HAPROXY_ANSWERS[0]),
        (17 * 60 + 40.0, _HAPROXY_ANSWERS[1]),
        (31 * 60 + 55.0, _HAPROXY_ANSWERS[2]),
    ]
    lines = _timeline(rnd, _haproxy_noise, fixed, step=8.2, end=40 * 60)
    return Case(
        "haproxy-504",
        "access log (HAProxy)",
        "logs/haproxy.log",
        "the 504 responses from server api-03",
        "shared",
        False,
        tuple(lines),
        _at(lines, _HAPROXY_ANSWERS),
    )


# --- Jenkins job log of a Maven build ---------------------------------------------------------

_JENKINS_WS = "/var/jenkins/workspace/billing_master"
_JENKINS_MODULES = ("billing-api", "billing-tax", "billing-core", "billing-ledger", "billing-export", "billing-gateway", "billing-app")  # fmt: skip
_JENKINS_CLASSES = (
    "Amount", "Currency", "VatRate", "TaxZone", "Ledger", "Posting", "Invoice", "CreditNote",
    "Reminder", "DunningLevel", "Subscription", "Plan", "Coupon", "Refund", "Payout", "Export",
    "CsvWriter", "SepaFile", "Statement", "Receipt",
)  # fmt: skip
_JENKINS_ANSWERS = [
    "[ERROR] Tests run: 48, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.873 s <<< FAILURE! -- in com.acme.billing.core.InvoiceTotalsTest",
    "[ERROR] com.acme.billing.core.InvoiceTotalsTest.vatRoundingForMixedBasket -- Time elapsed: 0.031 s <<< FAILURE!",
    "org.opentest4j.AssertionFailedError: expected: <119.00> but was: <119.01>",
    "[ERROR]   InvoiceTotalsTest.vatRoundingForMixedBasket:112 expected: <119.00> but was: <119.01>",
]


def _maven_downloads(rnd: random.Random, n: int) -> list[str]:
    lines = []
    for _ in range(n):
        group, artifact = rnd.choice((
            ("org/apache/maven/plugins", "maven-surefire-plugin"), ("org/apache/maven/plugins", "maven-jar-plugin"),
            ("org/junit/jupiter", "junit-jupiter-api"), ("org/junit/jupiter", "junit-jupiter-params"),
            ("com/fasterxml/jackson/core", "jackson-databind"), ("org/slf4j", "slf4j-api"), ("io/micrometer", "micrometer-core"),
            ("org/postgresql", "postgresql"), ("org/apache/commons", "commons-lang3"), ("org/apache/commons", "commons-csv"),
        ))  # fmt: skip
        version = f"{rnd.randint(1, 5)}.{rnd.randint(0, 17)}.{rnd.randint(0, 9)}"
        kind = rnd.choice(("pom", "jar"))
        url = f"https://nexus.acme.internal/repository/maven-public/{group}/{artifact}/{version}/{artifact}-{version}.{kind}"
        lines.append(f"Downloading from nexus: {url}")
        lines.append(
            f"Downloaded from nexus: {url} ({rnd.randint(1, 900)} kB at {rnd.randint(1, 30)}.{rnd.randint(0, 9)} MB/s)"
        )
    return lines


def _jenkins_class(rnd: random.Random, module: str, name: str) -> list[str]:
    package = f"com.acme.billing.{module.split('-')[1]}"
    tests = rnd.randint(3, 40)
    skipped = rnd.choice((0, 0, 0, 0, 1, 2))
    level = "WARNING" if skipped else "INFO"
    lines = [f"[INFO] Running {package}.{name}"]
    if rnd.random() < 0.18:
        lines.append(
            f"[main] INFO  {package}.{name.removesuffix('Test')} - fixture loaded: {rnd.randint(2, 400)} rows"
        )
    lines.append(
        f"[{level}] Tests run: {tests}, Failures: 0, Errors: 0, Skipped: {skipped}, Time elapsed: {rnd.randint(0, 4)}.{rnd.randint(0, 999):03d} s -- in {package}.{name}"
    )
    return lines


def _jenkins_module(rnd: random.Random, index: int, module: str, classes: int) -> list[str]:
    lines = [
        "[INFO] ",
        f"[INFO] {'-' * 22}< com.acme.billing:{module} >{'-' * 22}",
        f"[INFO] Building {module} 2.4.0-SNAPSHOT{' ' * 30}[{index + 1}/{len(_JENKINS_MODULES)}]",
        f"[INFO]   from {module}/pom.xml",
        f"[INFO] {'-' * 32}[ jar ]{'-' * 33}",
        *_maven_downloads(rnd, rnd.randint(2, 9)),
        "[INFO] ",
        f"[INFO] --- resources:3.3.1:resources (default-resources) @ {module} ---",
        f"[INFO] Copying {rnd.randint(1, 12)} resources from src/main/resources to target/classes",
        "[INFO] ",
        f"[INFO] --- compiler:3.11.0:compile (default-compile) @ {module} ---",
        "[INFO] Changes detected - recompiling the module! :source",
        f"[INFO] Compiling {rnd.randint(20, 240)} source files with javac [debug release 17] to target/classes",
    ]
    for _ in range(rnd.randint(0, 4)):
        name = rnd.choice(_JENKINS_CLASSES)
        lines.append(
            f"[WARNING] {_JENKINS_WS}/{module}/src/main/java/com/acme/billing/{module.split('-')[1]}/{name}.java:[{rnd.randint(10, 400)},{rnd.randint(5, 40)}] "
            f"{rnd.choice(('[deprecation] BigDecimal.ROUND_HALF_UP in java.math.BigDecimal has been deprecated', '[unchecked] unchecked conversion', '[removal] finalize() in java.lang.Object has been deprecated and marked for removal'))}"
        )
    lines += [
        "[INFO] ",
        f"[INFO] --- surefire:3.2.2:test (default-test) @ {module} ---",
        "[INFO] Using auto detected provider org.apache.maven.surefire.junitplatform.JUnitPlatformProvider",
        "[INFO] ",
        "[INFO] -------------------------------------------------------",
        "[INFO]  T E S T S",
        "[INFO] -------------------------------------------------------",
    ]
    for n in range(classes):
        name = f"{_JENKINS_CLASSES[(n * 7 + index) % len(_JENKINS_CLASSES)]}{rnd.choice(('', 'Service', 'Mapper', 'Repository', 'Validator'))}Test"
        lines += _jenkins_class(rnd, module, name)
    return lines


def _jenkins_failure() -> list[str]:
    """billing-core's failing test, its stack, and a test that logs an ERROR and passes."""
    return [
        "[INFO] Running com.acme.billing.core.PaymentRetryTest",
        "[main] WARN  com.acme.billing.core.PaymentRetry - gateway answered 503, retrying (1/3)",
        "[main] ERROR com.acme.billing.core.PaymentRetry - gateway answered 503, giving up after 3 attempts",
        "[INFO] Tests run: 14, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.611 s -- in com.acme.billing.core.PaymentRetryTest",
        "[INFO] Running com.acme.billing.core.InvoiceTotalsTest",
        _JENKINS_ANSWERS[0],
        _JENKINS_ANSWERS[1],
        _JENKINS_ANSWERS[2],
        "\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)",
        "\tat org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)",
        "\tat org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)",
        "\tat org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:182)",
        "\tat org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1156)",
        "\tat com.acme.billing.core.InvoiceTotalsTest.vatRoundingForMixedBasket(InvoiceTotalsTest.java:112)",
        "\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)",
        "\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1596)",
        "",
    ]


def _jenkins_case() -> Case:
    rnd = random.Random(3103)
    lines = [
        "Started by GitHub push by j.moreau",
        "Obtained Jenkinsfile from git https://github.com/acme/billing.git",
        "[Pipeline] Start of Pipeline",
        "[Pipeline] node",
        f"Running on agent-linux-07 in {_JENKINS_WS}",
        "[Pipeline] {",
        "[Pipeline] stage",
        "[Pipeline] { (Declarative: Checkout SCM)",
        "[Pipeline] checkout",
        "The recommended git tool is: git",
        "using credential github-app-acme",
        f" > git rev-parse --resolve-git-dir {_JENKINS_WS}/.git # timeout=10",
        "Fetching changes from the remote Git repository",
        " > git config remote.origin.url https://github.com/acme/billing.git # timeout=10",
        "Fetching upstream changes from https://github.com/acme/billing.git",
        " > git --version # timeout=10",
        " > git --version # 'git version 2.39.2'",
        "using GIT_ASKPASS to set credentials GitHub app",
        " > git fetch --tags --force --progress -- https://github.com/acme/billing.git +refs/heads/master:refs/remotes/origin/master # timeout=10",
        "Checking out Revision 4f9c2e1a7b3d0e55c1a2f8d9e6b4c3a2d1e0f9a8 (master)",
        " > git config core.sparsecheckout # timeout=10",
        " > git checkout -f 4f9c2e1a7b3d0e55c1a2f8d9e6b4c3a2d1e0f9a8 # timeout=10",
        'Commit message: "Merge pull request #2214 from acme/vat-rounding"',
        " > git rev-list --no-walk 9b1e0c7d5a3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d # timeout=10",
        "[Pipeline] }",
        "[Pipeline] // stage",
        "[Pipeline] withEnv",
        "[Pipeline] {",
        "[Pipeline] stage",
        "[Pipeline] { (Build and test)",
        "[Pipeline] sh",
        "+ ./mvnw -B verify -Dspring.profiles.active=ci",
        "[INFO] Scanning for projects...",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Reactor Build Order:",
        "[INFO] ",
        *(f"[INFO] {module}{' ' * (48 - len(module))}[jar]" for module in _JENKINS_MODULES),
        "[INFO] ",
    ]
    core = _JENKINS_MODULES.index("billing-core")
    for index, module in enumerate(_JENKINS_MODULES[: core + 1]):
        lines += _jenkins_module(rnd, index, module, 42 if index < core else 26)
    lines += _jenkins_failure()
    lines += [
        "[INFO] ",
        "[INFO] Results:",
        "[INFO] ",
        "[ERROR] Failures: ",
        _JENKINS_ANSWERS[3],
        "[INFO] ",
        "[ERROR] Tests run: 391, Failures: 1, Errors: 0, Skipped: 4",
        "[INFO] ",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Reactor Summary for billing 2.4.0-SNAPSHOT:",
        "[INFO] ",
    ]
    for index, module in enumerate(_JENKINS_MODULES):
        state = "SUCCESS" if index < core else ("FAILURE" if index == core else "SKIPPED")
        took = f" [{rnd.randint(4, 59)}.{rnd.randint(0, 999):03d} s]" if index <= core else ""
        lines.append(f"[INFO] {module} {'.' * (52 - len(module))} {state}{took}")
    lines += [
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] BUILD FAILURE",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Total time:  03:12 min",
        "[INFO] Finished at: 2026-03-14T06:22:31Z",
        "[INFO] ------------------------------------------------------------------------",
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.2:test (default-test) on project billing-core: There are test failures.",
        "[ERROR] ",
        f"[ERROR] Please refer to {_JENKINS_WS}/billing-core/target/surefire-reports for the individual test results.",
        "[ERROR] Please refer to dump files (if any exist) [date].dump, [date]-jvmRun[N].dump and [date].dumpstream.",
        "[ERROR] -> [Help 1]",
        "[ERROR] ",
        "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.",
        "[ERROR] Re-run Maven using the -X switch to enable full debug logging.",
        "[Pipeline] }",
        "[Pipeline] // stage",
        "[Pipeline] stage",
        "[Pipeline] { (Declarative: Post Actions)",
        "[Pipeline] junit",
        "Recording test results",
        "[Checks API] No suitable checks publisher found.",
        "[Pipeline] slackSend",
        "Slack Send Pipeline step running, values are - baseUrl: <empty>, teamDomain: acme, channel: #billing-ci, color: danger, botUser: true, tokenCredentialId: slack-bot, notifyCommitters: false, iconEmoji: <empty>, username: <empty>, timestamp: <empty>",
        "[Pipeline] }",
        "[Pipeline] // stage",
        "[Pipeline] }",
        "[Pipeline] // withEnv",
        "[Pipeline] }",
        "[Pipeline] // node",
        "[Pipeline] End of Pipeline",
        "ERROR: script returned exit code 1",
        "Finished: FAILURE",
    ]
    # The timestamper's prefix on every line, the clock rising from 06:19:19.
    clock = 6 * 3600 + 19 * 60 + 19.0
    stamped = []
    for line in lines:
        clock += rnd.expovariate(1 / 0.35)
        stamped.append(f"[2026-03-14T{_clock(clock)}.{int(clock * 1000) % 1000:03d}Z] {line}")
    texts = [stamped[lines.index(answer)] for answer in _JENKINS_ANSWERS]
    return Case(
        "jenkins-red",
        "CI output (Jenkins, Maven)",
        "ci/billing-master-1187.log",
        "why is the master branch broken since this morning's merge",
        "own",
        False,
        tuple(stamped),
        _at(stamped, texts),
    )


# --- MySQL 8 error log of a replica ----------------------------------------------------------

_MYSQL_ANSWERS = [
    "2026-03-14T03:12:44.501823Z 14 [ERROR] [MY-010584] [Repl] Replica SQL for channel '': Worker 1 failed executing transaction 'ANONYMOUS' at source log binlog.000412, end_log_pos 88231; Could not execute Write_rows event on table shop.order_items; Duplicate entry '88412-3' for key 'order_items.PRIMARY', Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY; the event's source log binlog.000412, end_log_pos 88231, Error_code: MY-001062",
    "2026-03-14T03:12:44.502114Z 13 [ERROR] [MY-010586] [Repl] Error running query, replica SQL thread aborted. Fix the problem, and restart the replica SQL thread with \"START REPLICA\". We stopped at log 'binlog.000412' position 87940",
]
_MYSQL_DISTRACTORS = [
    (
        1 * 3600 + 46 * 60 + 12.2,
        "2026-03-14T01:46:12.204417Z 0 [Warning] [MY-010897] [Repl] Storing MySQL user name or password information in the connection metadata repository is not secure and is therefore not recommended. Please consider using the USER and PASSWORD connection options for START REPLICA; see the 'START REPLICA Syntax' in the MySQL Manual for more information.",
    ),
    (
        1 * 3600 + 47 * 60 + 3.1,
        "2026-03-14T01:47:03.118240Z 12 [ERROR] [MY-010584] [Repl] Replica I/O for channel '': Error reconnecting to source 'repl@10.0.2.11:3306'. This was attempt 1/86400, with a delay of 60 seconds between attempts. Message: Can't connect to MySQL server on '10.0.2.11:3306' (111), Error_code: MY-002003",
    ),
    (
        1 * 3600 + 48 * 60 + 3.2,
        "2026-03-14T01:48:03.201991Z 12 [System] [MY-010562] [Repl] Replica I/O thread for channel '': connected to source 'repl@10.0.2.11:3306',replication started in log 'binlog.000411' at position 8812",
    ),
    (
        3 * 3600 + 12 * 60 + 44.3,
        "2026-03-14T03:12:44.300871Z 13 [Warning] [MY-010956] [Server] Invalid replication timestamps: original commit timestamp is more recent than the immediate commit timestamp. This may be an issue if delayed replication is active. Make sure that servers have their clocks set to the correct time. No further message will be emitted until after timestamps become valid again.",
    ),
]


def _mysql_stamp(rnd: random.Random, t: float) -> str:
    return f"2026-03-14T{_clock(t)}.{rnd.randint(0, 999999):06d}Z"


def _mysql_noise(rnd: random.Random, t: float) -> list[str]:
    stamp = _mysql_stamp(rnd, t)
    conn = rnd.randint(80000, 99999)
    pick = rnd.random()
    if pick < 0.36:
        user, db = rnd.choice(
            (("app", "shop"), ("app", "shop"), ("report", "shop"), ("metrics", "sys"))
        )
        why = rnd.choice(
            (
                "Got an error reading communication packets",
                "Got timeout reading communication packets",
            )
        )
        return [
            f"{stamp} {conn} [Note] [MY-010914] [Server] Aborted connection {conn} to db: '{db}' user: '{user}' host: '10.0.3.{rnd.randint(2, 90)}' ({why})."
        ]
    if pick < 0.56:
        return [
            f"{stamp} {conn} [Warning] [MY-013360] [Server] Plugin mysql_native_password reported: ''mysql_native_password' is deprecated and will be removed in a future release. Please use caching_sha2_password instead'"
        ]
    if pick < 0.68:
        return [
            f"{stamp} {conn} [Warning] [MY-010055] [Server] IP address '10.0.{rnd.randint(5, 9)}.{rnd.randint(2, 250)}' could not be resolved: Name or service not known"
        ]
    if pick < 0.80:
        return [
            f"{stamp} 0 [Note] [MY-011953] [InnoDB] Page cleaner took {rnd.randint(4001, 9800)}ms to flush {rnd.randint(100, 4000)} and evict 0 pages"
        ]
    if pick < 0.88:
        who = rnd.choice(("report", "backup_ro", "grafana", "root"))
        return [
            f"{stamp} {conn} [Note] [MY-010926] [Server] Access denied for user '{who}'@'10.0.{rnd.randint(3, 9)}.{rnd.randint(2, 250)}' (using password: {rnd.choice(('YES', 'NO'))})"
        ]
    if pick < 0.94:
        return [
            f"{stamp} {conn} [Note] [MY-010404] [Server] Event Scheduler: [root@localhost][shop.purge_sessions] Deleted {rnd.randint(0, 900)} rows from shop.sessions"
        ]
    return [
        f"{stamp} 0 [Note] [MY-013711] [Server] Manifest file '/usr/sbin/mysqld.my' is not read-only. For better security, please make sure the file is read-only."
    ]


def _mysql_case() -> Case:
    rnd = random.Random(3104)
    fixed = list(_MYSQL_DISTRACTORS)
    fixed += [
        (3 * 3600 + 12 * 60 + 44.5, _MYSQL_ANSWERS[0]),
        (3 * 3600 + 12 * 60 + 44.6, _MYSQL_ANSWERS[1]),
    ]
    lines = _timeline(rnd, _mysql_noise, fixed, step=52.0, end=5 * 3600)
    return Case(
        "mysql-replica",
        "server log (MySQL)",
        "logs/mysql/error.log",
        "the errors that stopped the replica SQL thread",
        "shared",
        False,
        tuple(lines),
        _at(lines, _MYSQL_ANSWERS),
    )


# --- Ansible playbook run (-v) ----------------------------------------------------------------

_ANSIBLE_HOSTS = tuple(f"app-{n:02d}" for n in range(1, 21))
_ANSIBLE_ANSWERS = [
    'fatal: [app-07]: UNREACHABLE! => {"changed": false, "msg": "Failed to connect to the host via ssh: ssh: connect to host 10.4.2.17 port 22: Connection timed out", "unreachable": true}',
    "app-07                     : ok=4    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0",
]


def _ansible_result(rnd: random.Random, task: str, host: str) -> list[str]:
    """One host's result line(s) for ``task``."""
    sha = f"{rnd.getrandbits(160):040x}"
    if task == "Gathering Facts":
        return [f"ok: [{host}]"]
    if task == "common : Ensure base packages are present":
        return [
            f'ok: [{host}] => {{"cache_update_time": {1741910400 - rnd.randint(100, 9000)}, "cache_updated": false, "changed": false}}'
        ]
    if task == "common : Configure chrony":
        return [
            f'ok: [{host}] => {{"changed": false, "checksum": "{sha}", "dest": "/etc/chrony/chrony.conf", "gid": 0, "group": "root", "mode": "0644", "owner": "root", "path": "/etc/chrony/chrony.conf", "size": 812, "state": "file", "uid": 0}}'
        ]
    if task == "common : Ensure node_exporter is running":
        return [
            f'ok: [{host}] => {{"changed": false, "enabled": true, "name": "node_exporter", "state": "started", "status": {{"ActiveState": "active", "MainPID": "{rnd.randint(600, 2000)}", "SubState": "running"}}}}'
        ]
    if task == "shop-api : Download release artifact":
        return [
            f'changed: [{host}] => {{"changed": true, "checksum_dest": null, "checksum_src": "{sha}", "dest": "/opt/shop-api/releases/shop-api-4.2.0.tar.gz", "elapsed": {rnd.randint(1, 6)}, "gid": 0, "group": "root", "md5sum": "{sha[:32]}", "mode": "0644", "msg": "OK (48213377 bytes)", "owner": "root", "size": 48213377, "state": "file", "status_code": 200, "uid": 0, "url": "https://artifacts.acme.internal/shop-api/4.2.0/shop-api-4.2.0.tar.gz"}}'
        ]
    if task == "shop-api : Unpack release":
        return [
            f'changed: [{host}] => {{"changed": true, "dest": "/opt/shop-api/releases/4.2.0", "extract_results": {{"cmd": ["/usr/bin/tar", "--extract", "-C", "/opt/shop-api/releases/4.2.0", "-z", "-f", "/opt/shop-api/releases/shop-api-4.2.0.tar.gz"], "err": "", "out": "", "rc": 0}}, "gid": 998, "group": "shop", "handler": "TgzArchive", "mode": "0755", "owner": "shop", "size": 4096, "src": "/opt/shop-api/releases/shop-api-4.2.0.tar.gz", "state": "directory", "uid": 998}}'
        ]
    if task == "shop-api : Render config":
        return [
            f'changed: [{host}] => {{"changed": true, "checksum": "{sha}", "dest": "/opt/shop-api/releases/4.2.0/config.yml", "gid": 998, "group": "shop", "md5sum": "{sha[:32]}", "mode": "0640", "owner": "shop", "size": {rnd.randint(1800, 2400)}, "src": "/home/deploy/.ansible/tmp/ansible-tmp-{1741910400 + rnd.randint(0, 900)}.{rnd.randint(10, 99)}-{rnd.randint(1000, 9999)}-{rnd.getrandbits(48)}/source", "state": "file", "uid": 998}}'
        ]
    if task == "shop-api : Switch current symlink":
        return [
            f'changed: [{host}] => {{"changed": true, "dest": "/opt/shop-api/current", "gid": 998, "group": "shop", "mode": "0777", "owner": "shop", "size": 28, "src": "/opt/shop-api/releases/4.2.0", "state": "link", "uid": 998}}'
        ]
    if task == "shop-api : Restart shop-api":
        return [
            f'changed: [{host}] => {{"changed": true, "name": "shop-api", "state": "started", "status": {{"ActiveState": "active", "MainPID": "{rnd.randint(20000, 90000)}", "SubState": "running"}}}}'
        ]
    if task == "shop-api : Restart shop-api-worker (optional)":
        if host == "app-14":
            return [
                'fatal: [app-14]: FAILED! => {"changed": false, "msg": "Unable to restart service shop-api-worker: Job for shop-api-worker.service failed because the control process exited with error code.\\nSee \\"systemctl status shop-api-worker.service\\" and \\"journalctl -xeu shop-api-worker.service\\" for details.\\n"}',
                "...ignoring",
            ]
        return [
            f'changed: [{host}] => {{"changed": true, "name": "shop-api-worker", "state": "started"}}'
        ]
    if task == "shop-api : Wait for health endpoint":
        lines = []
        if host == "app-05":
            lines += [
                f"FAILED - RETRYING: [app-05]: shop-api : Wait for health endpoint ({n} retries left)."
                for n in (10, 9, 8)
            ]
        return [
            *lines,
            f'ok: [{host}] => {{"attempts": {len(lines) + 1}, "changed": false, "connection": "close", "content_length": "15", "content_type": "application/json", "cookies": {{}}, "cookies_string": "", "elapsed": 0, "msg": "OK (15 bytes)", "redirected": false, "status": 200, "url": "http://127.0.0.1:8080/healthz"}}',
        ]
    if task == "shop-api : Show deployed version":
        return [
            f'ok: [{host}] => {{\n    "msg": "shop-api 4.2.0 (was 4.1.3), build {sha[:10]}"\n}}'
        ]
    if task == "common : Remove releases older than three deploys":
        return [
            f'changed: [{host}] => (item=/opt/shop-api/releases/4.0.{rnd.randint(0, 3)}) => {{"ansible_loop_var": "item", "changed": true, "item": "/opt/shop-api/releases/4.0.{rnd.randint(0, 3)}", "path": "/opt/shop-api/releases/4.0.{rnd.randint(0, 3)}", "state": "absent"}}'
        ]
    raise ValueError(task)


_ANSIBLE_TASKS = (
    "Gathering Facts",
    "common : Ensure base packages are present",
    "common : Configure chrony",
    "common : Ensure node_exporter is running",
    "shop-api : Download release artifact",
    "shop-api : Unpack release",
    "shop-api : Render config",
    "shop-api : Switch current symlink",
    "shop-api : Restart shop-api",
    "shop-api : Restart shop-api-worker (optional)",
    "shop-api : Wait for health endpoint",
    "shop-api : Show deployed version",
    "common : Remove releases older than three deploys",
)


def _ansible_case() -> Case:
    rnd = random.Random(3105)
    lines = [
        "Using /home/deploy/infra/ansible.cfg as config file",
        "",
    ]
    tallies = {host: {"ok": 0, "changed": 0, "ignored": 0} for host in _ANSIBLE_HOSTS}
    for batch, hosts in enumerate((_ANSIBLE_HOSTS[:10], _ANSIBLE_HOSTS[10:])):
        lines += [f"PLAY [Roll out shop-api 4.2.0 (batch {batch + 1} of 2)] {'*' * 40}", ""]
        for task in _ANSIBLE_TASKS:
            lines.append(f"TASK [{task}] {'*' * max(3, 72 - len(task))}")
            order = list(hosts)
            rnd.shuffle(order)
            for host in order:
                if host == "app-07" and task == "shop-api : Download release artifact":
                    lines.append(_ANSIBLE_ANSWERS[0])
                    tallies[host]["unreachable"] = 1
                    continue
                if tallies[host].get("unreachable"):
                    continue
                result = _ansible_result(rnd, task, host)
                lines += result
                if result[-1] == "...ignoring":
                    tallies[host]["ignored"] += 1
                elif result[-1].startswith("changed"):
                    tallies[host]["changed"] += 1
                else:
                    tallies[host]["ok"] += 1
            lines.append("")
    lines += [f"PLAY RECAP {'*' * 70}"]
    for host in _ANSIBLE_HOSTS:
        tally = tallies[host]
        counts = {
            "ok": tally["ok"] + tally["changed"] + tally["ignored"],
            "changed": tally["changed"],
            "unreachable": tally.get("unreachable", 0),
            "failed": 0,
            "skipped": 0,
            "rescued": 0,
            "ignored": tally["ignored"],
        }
        lines.append(f"{host:<26} : " + " ".join(f"{k}={v:<4}" for k, v in counts.items()).rstrip())
    lines.append("")
    lines = [piece for line in lines for piece in line.split("\n")]
    return Case(
        "ansible-behind",
        "Ansible playbook output (-v)",
        "deploy/rollout-4.2.0.txt",
        "which machine was left behind on the old version",
        "own",
        False,
        tuple(lines),
        _at(lines, _ANSIBLE_ANSWERS),
    )


# --- docker-compose file ----------------------------------------------------------------------

_COMPOSE_SERVICES = (
    "traefik", "postgres", "pgbouncer", "redis", "rabbitmq", "minio", "api", "api-worker",
    "scheduler", "billing", "billing-worker", "ledger", "ledger-sync", "search", "search-indexer",
    "imgproxy", "pdf-renderer", "reports", "reports-worker", "mailer-legacy", "notifier-digest",
    "webhooks", "keycloak", "feature-flags", "audit", "clamav", "ocr", "ftp-ingest", "notifier",
    "alert-bridge", "prometheus", "alertmanager", "grafana", "loki", "promtail", "otel-collector",
    "jaeger", "vault-agent", "sftp", "thumbnailer", "geoip-updater", "invoice-archiver",
    "price-importer", "recommendations", "sitemap-builder", "returns",
)  # fmt: skip
# The services that send mail, and their relay (host, port); the notifier's is the answer.
_COMPOSE_SMTP = {
    "billing": ("smtp.sendgrid.net", "587"),
    "reports": ("smtp.sendgrid.net", "587"),
    "mailer-legacy": ("smtp.old-relay.internal", "25"),
    "notifier-digest": ("bulk-relay.prod.internal", "587"),
    "keycloak": ("smtp.sendgrid.net", "465"),
    "notifier": ("mail-relay.prod.internal", "2525"),
    "alert-bridge": ("mail-relay.ops.internal", "25"),
}
_COMPOSE_ANSWERS = ["      SMTP_HOST: mail-relay.prod.internal", '      SMTP_PORT: "2525"']


# Infrastructure services: their upstream image and settings (the rest are the shop's own).
_COMPOSE_INFRA = {
    "traefik": ("traefik:v3.0.4", ["TRAEFIK_LOG_LEVEL: INFO", "TRAEFIK_PROVIDERS_DOCKER: \"true\""]),
    "postgres": ("postgres:16.3-alpine", ["POSTGRES_USER: shop", "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}", "PGDATA: /var/lib/postgresql/data/pgdata"]),
    "pgbouncer": ("bitnami/pgbouncer:1.22.1", ["POSTGRESQL_HOST: postgres", "PGBOUNCER_POOL_MODE: transaction", "PGBOUNCER_MAX_CLIENT_CONN: \"800\""]),
    "redis": ("redis:7.2.5-alpine", ["REDIS_ARGS: --maxmemory 1gb --maxmemory-policy allkeys-lru"]),
    "rabbitmq": ("rabbitmq:3.13-management-alpine", ["RABBITMQ_DEFAULT_USER: shop", "RABBITMQ_DEFAULT_PASS: ${RABBITMQ_PASSWORD}"]),
    "minio": ("minio/minio:RELEASE.2024-06-13T22-53-53Z", ["MINIO_ROOT_USER: shop", "MINIO_ROOT_PASSWORD: ${MINIO_PASSWORD}"]),
    "keycloak": ("quay.io/keycloak/keycloak:24.0.5", ["KC_DB: postgres", "KC_DB_URL: jdbc:postgresql://pgbouncer:6432/keycloak", "KC_HOSTNAME: sso.acme.example"]),
    "clamav": ("clamav/clamav:1.3.1", ["CLAMAV_NO_FRESHCLAMD: \"false\""]),
    "prometheus": ("prom/prometheus:v2.53.0", []),
    "alertmanager": ("prom/alertmanager:v0.27.0", []),
    "grafana": ("grafana/grafana:11.1.0", ["GF_SERVER_ROOT_URL: https://grafana.acme.example", "GF_SECURITY_ADMIN_PASSWORD: ${GRAFANA_PASSWORD}"]),
    "loki": ("grafana/loki:3.0.0", []),
    "promtail": ("grafana/promtail:3.0.0", []),
    "otel-collector": ("otel/opentelemetry-collector-contrib:0.103.1", []),
    "jaeger": ("jaegertracing/all-in-one:1.58", ["COLLECTOR_OTLP_ENABLED: \"true\""]),
    "vault-agent": ("hashicorp/vault:1.17", ["VAULT_ADDR: https://vault.acme.internal:8200"]),
}  # fmt: skip


def _compose_service(rnd: random.Random, n: int, name: str) -> list[str]:
    version = f"{rnd.randint(1, 6)}.{rnd.randint(0, 30)}.{rnd.randint(0, 9)}"
    db = name.split("-", maxsplit=1)[0]
    image, settings = _COMPOSE_INFRA.get(
        name, (f"registry.acme.internal/shop/{name}:{version}", None)
    )
    lines = [
        f"  {name}:",
        f"    image: {image}",
        "    restart: unless-stopped",
    ]
    depends = rnd.sample(
        ("postgres", "pgbouncer", "redis", "rabbitmq", "minio", "otel-collector"), rnd.randint(1, 3)
    )
    if settings is None:  # the shop's services wait for the infrastructure they use
        lines += ["    depends_on:", *(f"      - {d}" for d in depends)]
    env = [
        f"LOG_LEVEL: {rnd.choice(('info', 'info', 'warn', 'debug'))}",
        "TZ: Europe/Berlin",
        f"DATABASE_URL: postgres://{db}:${{{db.upper()}_DB_PASSWORD}}@pgbouncer:6432/{db}",
        f"REDIS_URL: redis://redis:6379/{n % 16}",
        "AMQP_URL: amqp://shop:${RABBITMQ_PASSWORD}@rabbitmq:5672/shop",
        "OTEL_EXPORTER_OTLP_ENDPOINT: http://otel-collector:4317",
        f"OTEL_SERVICE_NAME: {name}",
        f'WORKERS: "{rnd.choice((2, 4, 8))}"',
        f"S3_BUCKET: shop-{db}",
        f'REQUEST_TIMEOUT_S: "{rnd.choice((10, 30, 60))}"',
        f"FEATURE_FLAGS_URL: http://feature-flags:4242/api/{rnd.choice(('v1', 'v2'))}",
        f"SENTRY_DSN: https://{rnd.getrandbits(64):016x}@sentry.acme.internal/{rnd.randint(2, 60)}",
    ]
    chosen = (
        [e for e in env if rnd.random() < 0.7]
        if settings is None
        else ["TZ: Europe/Berlin", *settings]
    )
    lines.append("    environment:")
    lines += [f"      {e}" for e in chosen]
    if name in _COMPOSE_SMTP:
        host, port = _COMPOSE_SMTP[name]
        if name == "notifier":
            lines.append(
                "      # SMTP_HOST: smtp.mailgun.org    # before the move to our relay (OPS-2291)"
            )
        lines += [
            f"      SMTP_HOST: {host}",
            f'      SMTP_PORT: "{port}"',
            f"      SMTP_USER: {db}@acme.example",
            f"      SMTP_PASSWORD: ${{{db.upper()}_SMTP_PASSWORD}}",
            f"      SMTP_FROM: {rnd.choice(('no-reply', 'billing', 'alerts', 'reports'))}@acme.example",
        ]
    lines += [
        "    ports:",
        f'      - "127.0.0.1:{8000 + n}:{rnd.choice((8080, 3000, 9000))}"',
        "    volumes:",
        f"      - {name}-data:/var/lib/{name}",
        "      - ./certs:/etc/ssl/acme:ro",
        "    healthcheck:",
        f'      test: ["CMD", "wget", "-qO-", "http://localhost:{rnd.choice((8080, 3000, 9000))}/healthz"]',
        f"      interval: {rnd.choice((10, 15, 30))}s",
        "      timeout: 5s",
        f"      retries: {rnd.randint(3, 6)}",
        "    deploy:",
        "      resources:",
        "        limits:",
        f'          cpus: "{rnd.choice(("0.5", "1.0", "2.0"))}"',
        f"          memory: {rnd.choice(('256M', '512M', '1G', '2G'))}",
        "    logging:",
        "      driver: json-file",
        "      options:",
        "        max-size: 10m",
        '        max-file: "5"',
        "    networks:",
        f"      - {rnd.choice(('backend', 'backend', 'edge'))}",
        "",
    ]
    return lines


def _compose_case() -> Case:
    rnd = random.Random(3106)
    lines = [
        "# docker-compose.yml for the shop stack on prod-eu-1, rendered by infra/compose 3.8",
        "name: shop",
        "",
        "services:",
    ]
    for n, name in enumerate(_COMPOSE_SERVICES):
        lines += _compose_service(rnd, n, name)
    lines += [
        "volumes:",
        *(f"  {name}-data: {{}}" for name in _COMPOSE_SERVICES),
        "",
        "networks:",
        "  backend: {}",
        "  edge:",
        "    external: true",
    ]
    return Case(
        "compose-smtp",
        "config (docker-compose YAML)",
        "deploy/docker-compose.yml",
        "the SMTP_HOST and SMTP_PORT of the notifier service",
        "shared",
        False,
        tuple(lines),
        _at(lines, _COMPOSE_ANSWERS),
    )


# --- nginx.conf -------------------------------------------------------------------------------

_NGINX_SITES = (
    "shop", "www", "api", "admin", "status", "grafana", "docs-staging", "wiki", "files", "cdn",
    "auth", "billing", "partners", "webhooks", "search", "media", "feeds", "careers", "blog",
    "docs", "help", "labs", "legacy", "maps", "pay", "support", "uploads-eu", "sso", "tracking",
)  # fmt: skip
_NGINX_BODY = ("2m", "8m", "10m", "16m", "20m", "32m", "50m", "100m", "250m", "1g")
_NGINX_ANSWERS = ["        client_max_body_size 512k;"]


def _nginx_server(rnd: random.Random, n: int, site: str) -> list[str]:
    host = f"{site}.acme.example"
    lines = [
        "    server {",
        "        listen 443 ssl;",
        "        listen [::]:443 ssl;",
        "        http2 on;",
        f"        server_name {host};",
        "",
        f"        ssl_certificate /etc/letsencrypt/live/{host}/fullchain.pem;",
        f"        ssl_certificate_key /etc/letsencrypt/live/{host}/privkey.pem;",
        f"        access_log /var/log/nginx/{site}.access.log main buffer=32k flush=5s;",
        f"        error_log /var/log/nginx/{site}.error.log warn;",
        "",
    ]
    if site == "docs":
        lines += [
            _NGINX_ANSWERS[0],
            "        # client_max_body_size 200m;  # TODO raise for the docs uploads, see OPS-1432",
            "        client_body_timeout 30s;",
        ]
    else:
        lines.append(f"        client_max_body_size {rnd.choice(_NGINX_BODY)};")
    if rnd.random() < 0.5:
        lines.append(f"        limit_req zone=perip burst={rnd.choice((20, 50, 100))} nodelay;")
    lines += [
        '        add_header Strict-Transport-Security "max-age=63072000; includeSubDomains" always;',
        "        add_header X-Content-Type-Options nosniff always;",
        "",
        "        location / {",
        f"            proxy_pass http://{site.replace('-', '_')}_backend;",
        "            proxy_set_header Host $host;",
        "            proxy_set_header X-Real-IP $remote_addr;",
        "            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;",
        "            proxy_set_header X-Forwarded-Proto $scheme;",
        f"            proxy_read_timeout {rnd.choice((30, 60, 120, 300))}s;",
        "        }",
        "",
    ]
    if rnd.random() < 0.45 or site.startswith("docs"):
        lines += [
            "        location /api/upload {",
            f"            proxy_pass http://{site.replace('-', '_')}_backend;",
            "            proxy_request_buffering off;",
            f"            proxy_read_timeout {rnd.choice((300, 600))}s;",
            "        }",
            "",
        ]
    lines += [
        "        location /static/ {",
        f"            alias /srv/{site}/static/;",
        f"            expires {rnd.choice(('7d', '30d', '1y'))};",
        "            access_log off;",
        "        }",
        "",
        "        location = /healthz {",
        "            access_log off;",
        '            return 200 "ok\\n";',
        "        }",
        "    }",
        "",
    ]
    return lines


def _nginx_case() -> Case:
    rnd = random.Random(3107)
    lines = [
        "# /etc/nginx/nginx.conf -- managed by ansible (role: edge-nginx), do not edit by hand",
        "user www-data;",
        "worker_processes auto;",
        "worker_rlimit_nofile 65535;",
        "pid /run/nginx.pid;",
        "error_log /var/log/nginx/error.log warn;",
        "include /etc/nginx/modules-enabled/*.conf;",
        "",
        "events {",
        "    worker_connections 8192;",
        "    multi_accept on;",
        "}",
        "",
        "http {",
        "    sendfile on;",
        "    tcp_nopush on;",
        "    types_hash_max_size 2048;",
        "    server_tokens off;",
        "    include /etc/nginx/mime.types;",
        "    default_type application/octet-stream;",
        "",
        "    client_max_body_size 64m;",
        "    client_body_buffer_size 128k;",
        "    keepalive_timeout 65;",
        "",
        "    ssl_protocols TLSv1.2 TLSv1.3;",
        "    ssl_prefer_server_ciphers off;",
        "    ssl_session_cache shared:SSL:50m;",
        "    ssl_session_timeout 1d;",
        "",
        "    log_format main '$remote_addr - $remote_user [$time_local] \"$request\" '",
        "                    '$status $body_bytes_sent \"$http_referer\" '",
        "                    '\"$http_user_agent\" rt=$request_time urt=$upstream_response_time';",
        "",
        "    limit_req_zone $binary_remote_addr zone=perip:20m rate=20r/s;",
        "    gzip on;",
        "    gzip_types text/plain text/css application/json application/javascript text/xml;",
        "",
    ]
    for n, site in enumerate(_NGINX_SITES):
        lines += [f"    upstream {site.replace('-', '_')}_backend {{"]
        for k in range(rnd.randint(1, 3)):
            lines.append(
                f"        server 10.0.{n // 8 + 10}.{(n * 3 + k) % 250 + 2}:{rnd.choice((8080, 8000, 3000, 9000))} max_fails=3 fail_timeout=10s;"
            )
        lines += ["        keepalive 32;", "    }", ""]
    lines += [
        "    server {",
        "        listen 80 default_server;",
        "        listen [::]:80 default_server;",
        "        server_name _;",
        "        return 301 https://$host$request_uri;",
        "    }",
        "",
    ]
    for n, site in enumerate(_NGINX_SITES):
        lines += _nginx_server(rnd, n, site)
    lines += [
        "    include /etc/nginx/conf.d/*.conf;",
        "    include /etc/nginx/sites-enabled/*;",
        "}",
    ]
    return Case(
        "nginx-upload",
        "config (nginx.conf)",
        "etc/nginx/nginx.conf",
        "why are big file uploads to the docs site rejected",
        "own",
        False,
        tuple(lines),
        _at(lines, _NGINX_ANSWERS),
    )


# --- Django migration --------------------------------------------------------------------------

_DJANGO_MODELS = (
    "Customer", "CustomerProfile", "Plan", "PriceTier", "TaxRate", "Invoice", "InvoiceLine",
    "CreditNote", "Subscription", "SubscriptionItem", "PaymentMethod", "Payment", "Refund",
    "Payout", "Coupon", "Discount", "Reminder", "DunningRun", "LedgerAccount", "LedgerEntry",
    "Statement", "ExportJob", "WebhookEndpoint", "WebhookDelivery", "UsageRecord", "Meter",
    "TaxProfile", "Currency", "ExchangeRate", "AuditEvent", "Dispute", "Chargeback",
)  # fmt: skip
_DJANGO_ANSWERS = [
    '                ("customer", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="invoices", to="billing.customer")),',
    '                ("customer", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="subscriptions", to="billing.customer")),',
    '                ("customer", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="payment_methods", to="billing.customer")),',
]
# Fields that are not answers though they name a customer: another app's customer, a
# many-to-many, a foreign key to the customer's profile.
_DJANGO_SPECIAL = {
    "Invoice": [_DJANGO_ANSWERS[0]],
    "Subscription": [_DJANGO_ANSWERS[1]],
    "PaymentMethod": [_DJANGO_ANSWERS[2]],
    "CreditNote": [
        '                ("customer", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="credit_notes", to="crm.customer")),'
    ],
    "Coupon": [
        '                ("customers", models.ManyToManyField(blank=True, related_name="coupons", to="billing.customer")),'
    ],
    "TaxProfile": [
        '                ("profile", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name="tax_profile", to="billing.customerprofile")),'
    ],
    "CustomerProfile": [
        '                ("owner", models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),'
    ],
}


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def _django_field(rnd: random.Random, model: str, k: int) -> str:
    pad = "                "
    pick = rnd.random()
    name = rnd.choice(
        (
            "code",
            "label",
            "reference",
            "note",
            "status",
            "kind",
            "source",
            "external_id",
            "description",
            "country",
            "region",
            "channel",
        )
    )
    name = f"{name}_{k}" if k > 5 else name
    if pick < 0.25:
        return f'{pad}("{name}", models.CharField(blank=True, max_length={rnd.choice((16, 32, 64, 128, 255))}{", db_index=True" if rnd.random() < 0.3 else ""})),'
    if pick < 0.4:
        amount = rnd.choice(("amount", "total", "net", "gross", "tax", "balance"))
        return f'{pad}("{amount}_{k}", models.DecimalField(decimal_places=2, default=Decimal("0.00"), max_digits={rnd.choice((12, 14, 18))})),'
    if pick < 0.52:
        flag = rnd.choice(("is_active", "is_test", "archived", "paid", "locked", "exported"))
        return f'{pad}("{flag}", models.BooleanField(default={rnd.choice(("True", "False"))})),'
    if pick < 0.64:
        when = rnd.choice(
            ("due_at", "sent_at", "closed_at", "valid_from", "valid_until", "exported_at")
        )
        return f'{pad}("{when}", models.DateTimeField(blank=True, null=True)),'
    if pick < 0.72:
        return f'{pad}("metadata", models.JSONField(blank=True, default=dict)),'
    if pick < 0.8:
        return f'{pad}("{rnd.choice(("position", "attempts", "quantity", "days", "level"))}", models.PositiveIntegerField(default={rnd.randint(0, 3)})),'
    targets = [m for m in _DJANGO_MODELS if m not in ("Customer", "CustomerProfile", model)]
    target = rnd.choice(targets)
    on_delete = rnd.choice(("CASCADE", "PROTECT", "SET_NULL"))
    null = "null=True, " if on_delete == "SET_NULL" else ""
    return f'{pad}("{_snake(target)}", models.ForeignKey({null}on_delete=django.db.models.deletion.{on_delete}, related_name="{_snake(model)}s", to="billing.{target.lower()}")),'


def _django_case() -> Case:
    rnd = random.Random(3108)
    lines = [
        "# Generated by Django 5.0.6 on 2026-02-11 09:14",
        "",
        "import uuid",
        "from decimal import Decimal",
        "",
        "import django.core.validators",
        "import django.db.models.deletion",
        "import django.utils.timezone",
        "from django.conf import settings",
        "from django.db import migrations, models",
        "",
        "",
        "class Migration(migrations.Migration):",
        "",
        "    initial = True",
        "",
        "    dependencies = [",
        '        ("crm", "0007_contact_consent"),',
        "        migrations.swappable_dependency(settings.AUTH_USER_MODEL),",
        "    ]",
        "",
        "    operations = [",
    ]
    for model in _DJANGO_MODELS:
        table = _snake(model)
        lines += [
            "        migrations.CreateModel(",
            f'            name="{model}",',
            "            fields=[",
            '                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),',
            '                ("uid", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),',
            '                ("created_at", models.DateTimeField(default=django.utils.timezone.now, editable=False)),',
            '                ("updated_at", models.DateTimeField(auto_now=True)),',
        ]
        if model == "Customer":
            lines += [
                '                ("email", models.EmailField(max_length=254, unique=True)),',
                '                ("name", models.CharField(max_length=200)),',
                '                ("vat_id", models.CharField(blank=True, max_length=32, validators=[django.core.validators.RegexValidator("^[A-Z]{2}[0-9A-Z]{2,12}$")])),',
            ]
        fields = [_django_field(rnd, model, k) for k in range(rnd.randint(5, 11))]
        for special in _DJANGO_SPECIAL.get(model, []):
            fields.insert(rnd.randint(1, len(fields)), special)
        lines += list(dict.fromkeys(fields))
        lines += [
            "            ],",
            "            options={",
            f'                "db_table": "billing_{table}",',
            '                "ordering": ["-created_at"],',
            f'                "indexes": [models.Index(fields=["created_at"], name="billing_{table[:7]}_created_{rnd.getrandbits(24):06x}_idx")],',
            "            },",
            "        ),",
        ]
    lines += [
        "        migrations.AddConstraint(",
        '            model_name="invoice",',
        '            constraint=models.UniqueConstraint(fields=("customer", "reference"), name="uniq_invoice_reference_per_customer"),',
        "        ),",
        "        migrations.AddConstraint(",
        '            model_name="payment",',
        '            constraint=models.CheckConstraint(check=models.Q(("amount_1__gte", 0)), name="payment_amount_not_negative"),',
        "        ),",
        "    ]",
    ]
    return Case(
        "django-fk",
        "source (Django migration)",
        "billing/migrations/0001_initial.py",
        "the ForeignKey fields that point to billing.customer",
        "shared",
        False,
        tuple(lines),
        _at(lines, _DJANGO_ANSWERS),
    )


# --- ps aux --------------------------------------------------------------------------------

_PS_ANSWERS = [
    "elastic+    2231 38.1 61.4 28311052 20183344 ?   Ssl  Mar12 8123:40 /usr/share/elasticsearch/jdk/bin/java -Des.networkaddress.cache.ttl=60 -Des.networkaddress.cache.negative.ttl=10 -Djava.security.manager=allow -XX:+AlwaysPreTouch -Xss1m -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djna.nosys=true -XX:-OmitStackTraceInFastThrow -Dio.netty.noUnsafe=true -Dlog4j.shutdownHookEnabled=false -Xms20g -Xmx20g -XX:+UseG1GC -Djava.io.tmpdir=/tmp/elasticsearch-5512893307730816114 -XX:ErrorFile=/var/log/elasticsearch/hs_err_pid%p.log -Xlog:gc*,gc+age=trace,safepoint:file=/var/log/elasticsearch/gc.log:utctime,level,pid,tags:filecount=32,filesize=64m -XX:G1ReservePercent=25 -XX:InitiatingHeapOccupancyPercent=30 -Des.distribution.type=deb --module-path /usr/share/elasticsearch/lib -m org.elasticsearch.server/org.elasticsearch.bootstrap.Elasticsearch",
]


def _ps_row(
    user: str,
    pid: int,
    cpu: float,
    mem: float,
    vsz: int,
    rss: int,
    tty: str,
    stat: str,
    start: str,
    time: str,
    command: str,
) -> str:
    user = user if len(user) <= 8 else user[:7] + "+"  # as ps cuts a long user name
    return f"{user:<8} {pid:>7} {cpu:>4.1f} {mem:>4.1f} {vsz:>6} {rss:>5} {tty:<4} {stat:<4} {start:>5} {time:>6} {command}"


def _ps_case() -> Case:
    rnd = random.Random(3109)
    rows: list[tuple[int, str]] = []

    def add(
        user: str,
        pid: int,
        cpu: float,
        rss: int,
        stat: str,
        command: str,
        *,
        start: str = "Mar12",
        tty: str = "?",
    ) -> None:
        vsz = rss + rnd.randint(2_000, 900_000) if rss else 0
        minutes = int(cpu * rnd.randint(20, 40))
        rows.append(
            (
                pid,
                _ps_row(
                    user,
                    pid,
                    cpu,
                    rss / 32_870_000 * 100,
                    vsz,
                    rss,
                    tty,
                    stat,
                    start,
                    f"{minutes // 60}:{minutes % 60:02d}",
                    command,
                ),
            )
        )

    add("root", 1, 0.0, 13_412, "Ss", "/sbin/init")
    add("root", 2, 0.0, 0, "S", "[kthreadd]")
    pid = 3
    for name in (
        "rcu_gp",
        "rcu_par_gp",
        "slub_flushwq",
        "netns",
        "mm_percpu_wq",
        "rcu_tasks_kthread",
        "rcu_tasks_rude_kthread",
        "rcu_tasks_trace_kthread",
        "rcu_preempt",
    ):
        add("root", pid, 0.0, 0, "I<" if "wq" in name or name == "netns" else "I", f"[{name}]")
        pid += 1
    for cpu in range(16):
        for name in (
            f"cpuhp/{cpu}",
            f"idle_inject/{cpu}",
            f"migration/{cpu}",
            f"ksoftirqd/{cpu}",
            f"kworker/{cpu}:0H-events_highpri",
        ):
            add(
                "root",
                pid,
                round(rnd.random() * 0.3, 1) if "ksoftirqd" in name else 0.0,
                0,
                "S" if "kworker" not in name else "I<",
                f"[{name}]",
            )
            pid += 1
    for name in (
        "kdevtmpfs",
        "inet_frag_wq",
        "kauditd",
        "khungtaskd",
        "oom_reaper",
        "writeback",
        "kcompactd0",
        "ksmd",
        "khugepaged",
        "kintegrityd",
        "kblockd",
        "blkcg_punt_bio",
        "kswapd0",
        "ecryptfs-kthread",
        "kthrotld",
        "nvme-wq",
        "nvme-reset-wq",
        "nvme-delete-wq",
        "jbd2/nvme0n1p2-8",
        "ext4-rsv-conver",
        "ipv6_addrconf",
    ):
        add(
            "root",
            pid,
            0.6 if name == "kswapd0" else 0.0,
            0,
            "S" if name in ("kswapd0", "khungtaskd", "kauditd") else "I<",
            f"[{name}]",
        )
        pid += rnd.randint(1, 4)
    for irq in range(24):
        add("root", pid, 0.0, 0, "S", f"[irq/{120 + irq}-nvme0q{irq % 16 + 1}]")
        pid += 1
    daemons = [
        ("root", 0.0, 88_114, "S<s", "/lib/systemd/systemd-journald"),
        ("root", 0.0, 7_012, "Ss", "/lib/systemd/systemd-udevd"),
        ("systemd+", 0.0, 6_880, "Ss", "/lib/systemd/systemd-networkd"),
        ("systemd+", 0.0, 12_304, "Ss", "/lib/systemd/systemd-resolved"),
        ("systemd+", 0.0, 6_244, "Ssl", "/lib/systemd/systemd-timesyncd"),
        ("root", 0.0, 3_120, "Ss", "/usr/sbin/cron -f -P"),
        (
            "message+",
            0.0,
            5_104,
            "Ss",
            "@dbus-daemon --system --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only",
        ),
        ("root", 0.0, 18_220, "Ssl", "/usr/libexec/polkitd --no-debug"),
        ("syslog", 0.0, 6_004, "Ssl", "/usr/sbin/rsyslogd -n -iNONE"),
        ("root", 0.0, 7_760, "Ss", "/lib/systemd/systemd-logind"),
        ("root", 0.0, 2_018, "Ss+", "/sbin/agetty -o -p -- \\u --noclear - linux"),
        ("root", 0.0, 9_104, "Ss", "sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups"),
        ("root", 0.4, 61_880, "Ssl", "/usr/bin/containerd"),
        (
            "root",
            0.9,
            118_442,
            "Ssl",
            "/usr/bin/dockerd -H fd:// --containerd=/run/containerd/containerd.sock",
        ),
        (
            "nobody",
            0.3,
            24_118,
            "Ssl",
            "/usr/local/bin/node_exporter --collector.systemd --collector.processes",
        ),
        (
            "root",
            0.0,
            1_904,
            "Ss",
            "/usr/sbin/earlyoom -r 3600 -m 5 -s 10 --avoid '(^|/)(init|sshd|systemd)$'",
        ),
    ]
    pid = 580
    for user, cpu, rss, stat, command in daemons:
        add(user, pid, cpu, rss, stat, command)
        pid += rnd.randint(3, 60)
    rows.append((2231, _PS_ANSWERS[0]))
    add(
        "logstash",
        2390,
        6.2,
        3_311_908,
        "SNsl",
        "/usr/share/logstash/jdk/bin/java -Xms2g -Xmx2g -XX:+UseG1GC -Djava.awt.headless=true -Dfile.encoding=UTF-8 -Djruby.compile.invokedynamic=true -XX:+HeapDumpOnOutOfMemoryError -Djava.security.egd=file:/dev/urandom -cp /usr/share/logstash/logstash-core/lib/jars/* org.logstash.Logstash --path.settings /etc/logstash",
    )
    add("redis", 2402, 0.8, 912_404, "Ssl", "/usr/bin/redis-server 127.0.0.1:6379")
    add(
        "memcache",
        2417,
        0.2,
        1_108_220,
        "Ssl",
        "/usr/bin/memcached -m 2048 -p 11211 -u memcache -l 127.0.0.1 -P /var/run/memcached/memcached.pid",
    )
    pid = 2460
    add(
        "postgres",
        pid,
        0.0,
        231_904,
        "Ss",
        "/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main -c config_file=/etc/postgresql/15/main/postgresql.conf",
    )
    for role in (
        "checkpointer",
        "background writer",
        "walwriter",
        "autovacuum launcher",
        "logical replication launcher",
    ):
        pid += rnd.randint(1, 3)
        add("postgres", pid, 0.0, rnd.randint(8_000, 240_000), "Ss", f"postgres: 15/main: {role}")
    pid = 2610
    add(
        "root",
        pid,
        0.0,
        11_240,
        "Ss",
        "nginx: master process /usr/sbin/nginx -g daemon on; master_process on;",
    )
    for _ in range(16):
        pid += 1
        add(
            "www-data",
            pid,
            round(rnd.random() * 1.5, 1),
            rnd.randint(14_000, 40_000),
            "S",
            "nginx: worker process",
        )
    pid = 2700
    add("root", pid, 0.0, 38_012, "Ss", "php-fpm: master process (/etc/php/8.2/fpm/php-fpm.conf)")
    for _ in range(24):
        pid += rnd.randint(1, 3)
        add(
            "www-data",
            pid,
            round(rnd.random() * 3, 1),
            rnd.randint(60_000, 140_000),
            "S",
            "php-fpm: pool www",
        )
    pid = 3100
    for _ in range(12):
        add(
            "root",
            pid,
            0.1,
            rnd.randint(9_000, 14_000),
            "Sl",
            f"/usr/bin/containerd-shim-runc-v2 -namespace moby -id {rnd.getrandbits(256):064x} -address /run/containerd/containerd.sock",
        )
        pid += rnd.randint(20, 90)
    pid = 4100
    add(
        "shop",
        pid,
        0.2,
        61_208,
        "Ss",
        "/srv/shop/venv/bin/python3 /srv/shop/venv/bin/gunicorn shop.wsgi:application --workers 9 --bind 127.0.0.1:8000 --max-requests 2000",
    )
    for _ in range(9):
        pid += rnd.randint(1, 4)
        add(
            "shop",
            pid,
            round(rnd.random() * 6 + 0.5, 1),
            rnd.randint(180_000, 320_000),
            "Sl",
            "/srv/shop/venv/bin/python3 /srv/shop/venv/bin/gunicorn shop.wsgi:application --workers 9 --bind 127.0.0.1:8000 --max-requests 2000",
        )
    add(
        "shop",
        4388,
        0.4,
        141_004,
        "Ssl",
        "node /srv/ops-dashboard/bin/memory-report.js --interval 60 --out /var/lib/ops-dashboard",
    )
    add(
        "etl",
        4410,
        98.7,
        402_118,
        "Rl",
        "/opt/etl/venv/bin/python3 /opt/etl/reindex_catalog.py --full --batch-size 5000",
        start="09:02",
    )
    add(
        "root",
        4452,
        0.0,
        5_880,
        "Ss",
        "/usr/bin/python3 /usr/local/bin/mailbox-sync --daemon --interval 300",
    )
    pid = 5000
    while sum(len(row) + 1 for _, row in rows) < 50_000:
        pid += rnd.randint(5, 400)
        pick = rnd.random()
        if pick < 0.55:
            ip = f"172.18.0.{rnd.randint(2, 40)}"
            add(
                "postgres",
                pid,
                round(rnd.random() * 2, 1),
                rnd.randint(20_000, 190_000),
                "Ss",
                f"postgres: 15/main: {rnd.choice(('app', 'app', 'report', 'metrics'))} {rnd.choice(('shop', 'shop', 'analytics'))} {ip}({rnd.randint(30000, 65000)}) {rnd.choice(('idle', 'idle', 'idle', 'idle in transaction', 'SELECT', 'UPDATE'))}",
                start=f"{rnd.randint(8, 10):02d}:{rnd.randint(0, 59):02d}",
            )
        elif pick < 0.85:
            add(
                "root",
                pid,
                0.0,
                0,
                "I",
                f"[kworker/{rnd.randint(0, 15)}:{rnd.randint(0, 3)}-{rnd.choice(('events', 'mm_percpu_wq', 'events_power_efficient', 'cgroup_destroy', 'kblockd'))}]",
                start=f"{rnd.randint(8, 10):02d}:{rnd.randint(0, 59):02d}",
            )
        else:
            user = rnd.choice(("deploy", "ci-runner"))
            started = f"{rnd.randint(8, 10):02d}:{rnd.randint(0, 59):02d}"
            tty = f"pts/{rnd.randint(0, 5)}"
            add(
                "root",
                pid,
                0.0,
                11_002,
                "Ss",
                f"sshd: {user} [priv]",
                start=started,
            )
            add(
                user,
                pid + 2,
                0.0,
                7_410,
                "S",
                f"sshd: {user}@{tty}",
                start=started,
            )
            add(
                user,
                pid + 3,
                0.0,
                5_212,
                "Ss+",
                "-bash",
                start=started,
                tty=tty,
            )
            pid += 3
    add("deploy", pid + 7, 0.0, 4_112, "R+", "ps aux", start="10:41", tty="pts/2")
    rows.sort(key=lambda row: row[0])
    lines = [
        "USER         PID %CPU %MEM    VSZ   RSS TTY  STAT START   TIME COMMAND",
        *(row for _, row in rows),
    ]
    return Case(
        "ps-memory",
        "process table (ps aux)",
        "diag/ps-aux.txt",
        "what is eating all the memory on this box",
        "own",
        False,
        tuple(lines),
        _at(lines, _PS_ANSWERS),
    )


# --- CHANGELOG.md ------------------------------------------------------------------------------

_CHANGELOG_ANSWERS = [
    "- New `--legacy-tls` flag for `relayctl connect`, to reach servers that only speak TLS 1.0 (#911).",
    '- The `--legacy-tls` flag is deprecated and will be removed in 4.0; set `tls.min_version = "1.0"` in the config instead (#1602).',
    "- `--legacy-tls`, deprecated since 3.2.0; use `tls.min_version` in the config (#1841).",
]
# (version, section, entry): the answers and their look-alikes, each in its release.
_CHANGELOG_FIXED = [
    ("2.6.0", "Added", _CHANGELOG_ANSWERS[0]),
    ("3.2.0", "Deprecated", _CHANGELOG_ANSWERS[1]),
    (
        "3.5.0",
        "Deprecated",
        "- The `--legacy-tls-ciphers` flag is deprecated; the cipher list now follows `tls.min_version` (#1720).",
    ),
    ("4.0.0", "Removed", _CHANGELOG_ANSWERS[2]),
    (
        "4.0.0",
        "Removed",
        "- The legacy `relay.ini` config format, deprecated since 3.0.0; run `relayctl config migrate` once to convert (#1838).",
    ),
    (
        "4.0.1",
        "Fixed",
        '- `tls.min_version = "1.0"` was ignored when the server offered TLS 1.3 first (#1866).',
    ),
    ("4.1.0", "Removed", "- `--legacy-tls-ciphers`, deprecated since 3.5.0 (#1902)."),
]
_CHANGELOG_VERBS = {
    "Added": (
        "New `--{flag}` flag for `relayctl {cmd}`, to {purpose}",
        "`relayctl {cmd}` can now {purpose}",
        "Shell completion for `relayctl {cmd}`",
    ),
    "Changed": (
        "`relayctl {cmd}` now defaults to `--{flag}`",
        "`relayctl {cmd}` prints {thing} in a table",
        "The {thing} is now kept for {n} days instead of {m}",
    ),
    "Fixed": (
        "`relayctl {cmd}` no longer hangs when the {thing} is empty",
        "`--{flag}` was ignored by `relayctl {cmd}`",
        "A crash in `relayctl {cmd}` when the {thing} had more than {n} entries",
        "Wrong exit code of `relayctl {cmd}` after a timeout",
    ),
    "Deprecated": ("`relayctl {cmd} --{flag}`: use `relayctl {cmd} --{flag}-file` instead",),
    "Removed": ("The `--{flag}` alias of `relayctl {cmd}`, deprecated since {old}",),
    "Security": (
        "Bumped `golang.org/x/net` to 0.{n}.0 for CVE-2025-{m}{n}",
        "`relayctl {cmd}` no longer writes the {thing} to the debug log",
    ),
}
_CHANGELOG_WORDS = {
    "flag": (
        "retry",
        "timeout",
        "quiet",
        "json",
        "proxy",
        "bind",
        "watch",
        "since",
        "limit",
        "region",
        "profile",
        "dry-run",
    ),
    "cmd": (
        "connect",
        "push",
        "pull",
        "status",
        "logs",
        "config migrate",
        "tunnel",
        "routes list",
        "auth login",
        "doctor",
    ),
    "purpose": (
        "resume an upload",
        "pick the closest region",
        "read the token from a file",
        "wait for a route to be ready",
        "print timings",
        "limit the bandwidth",
    ),
    "thing": (
        "route list",
        "session cache",
        "access token",
        "proxy setting",
        "region list",
        "audit log",
    ),
}


# Pull request numbers grow with the version: (version, about the newest number in it).
_CHANGELOG_PRS = (
    (0, 1, 0, 24),
    (1, 0, 0, 240),
    (2, 0, 0, 560),
    (2, 6, 0, 915),
    (3, 2, 0, 1606),
    (3, 5, 0, 1724),
    (4, 0, 0, 1845),
    (4, 1, 0, 1905),
    (4, 7, 0, 2405),
)


def _changelog_pr(version: str) -> int:
    """About the newest pull request number of ``version``, between the anchors above."""
    major, minor, patch = (int(part) for part in version.split("."))
    key = major * 20 + minor + patch / 10
    points = [(a * 20 + b + c / 10, pr) for a, b, c, pr in _CHANGELOG_PRS]
    for (k0, p0), (k1, p1) in itertools.pairwise(points):
        if k0 <= key <= k1:
            return int(p0 + (p1 - p0) * (key - k0) / (k1 - k0))
    return points[-1][1]


def _changelog_entry(rnd: random.Random, section: str, version: str) -> str:
    template = rnd.choice(_CHANGELOG_VERBS[section])
    words = {key: rnd.choice(values) for key, values in _CHANGELOG_WORDS.items()}
    words |= {
        "n": str(rnd.randint(2, 90)),
        "m": str(rnd.randint(2, 90)),
        "old": f"{rnd.randint(1, 3)}.{rnd.randint(0, 9)}.0",
    }
    return f"- {template.format(**words)} (#{_changelog_pr(version) - rnd.randint(0, min(30, _changelog_pr(version) // 2))})."


def _changelog_case() -> Case:
    rnd = random.Random(3110)
    versions = []
    for major, minors in ((4, 7), (3, 9), (2, 9), (1, 6), (0, 12)):
        for minor in range(minors - 1, -1 if major else 0, -1):
            for patch in range(rnd.randint(0, 2), -1, -1):
                versions.append(f"{major}.{minor}.{patch}")
    lines = [
        "# Changelog",
        "",
        "All notable changes to relayctl are documented in this file.",
        "",
        "The format is based on [Keep a Changelog](https://keepachangelog.com/en/1.1.0/),",
        "and this project adheres to [Semantic Versioning](https://semver.org/spec/v2.0.0.html).",
        "",
        "## [Unreleased]",
        "",
        "### Fixed",
        "",
        "- `relayctl doctor` reports a clock skew of more than 30 s (#2411).",
        "",
    ]
    day = dt.date(2026, 2, 11)
    for version in versions:
        lines += [f"## [{version}] - {day.isoformat()}", ""]
        day -= dt.timedelta(days=rnd.randint(9, 40))
        fixed = [(section, entry) for v, section, entry in _CHANGELOG_FIXED if v == version]
        patch = not version.endswith(".0")
        sections = (
            ["Fixed", "Security"]
            if patch
            else ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"]
        )
        for section in sections:
            entries = [entry for s, entry in fixed if s == section]
            if section in ("Deprecated", "Removed", "Security"):
                count = 1 if rnd.random() < 0.2 else 0
            else:
                count = rnd.randint(1, 3) if patch else rnd.randint(2, 7)
            entries += [_changelog_entry(rnd, section, version) for _ in range(count)]
            if entries:
                lines += [f"### {section}", "", *dict.fromkeys(entries), ""]
    return Case(
        "changelog-legacy-tls",
        "Markdown (changelog)",
        "CHANGELOG.md",
        "the changelog entries about the --legacy-tls flag",
        "shared",
        False,
        tuple(lines),
        _at(lines, _CHANGELOG_ANSWERS),
    )


# --- the set and its check ---------------------------------------------------------------------


def build_round3() -> tuple[Case, ...]:
    """Every case of the third tuning set, built afresh (the same text on every call)."""
    return (
        _syslog_case(),
        _haproxy_case(),
        _jenkins_case(),
        _mysql_case(),
        _ansible_case(),
        _compose_case(),
        _nginx_case(),
        _django_case(),
        _ps_case(),
        _changelog_case(),
    )


CASES_ROUND3: tuple[Case, ...] = build_round3()
"""The third tuning set: five logs, then five files that are not logs."""


def _forms(word: str) -> tuple[str, ...]:
    """``word``, its singular and its stem without ``-ing``/``-ed``/``-er``/``-ly``
    (kept when four letters or more are left): "uploads" → "upload", "rejected" → "reject"."""
    forms = [word]
    if word.endswith("ies") and len(word) > 4:
        forms.append(word[:-3] + "y")
    for suffix in ("es", "s", "ing", "ed", "er", "ly"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 4:
            forms.append(word[: -len(suffix)])
    return tuple(dict.fromkeys(forms))


def shared_terms(focus: str, line: str) -> list[str]:
    """The terms of ``focus`` that ``line`` holds: a word of three letters or more that is
    no stopword (:func:`leanloop.pruning.rank.focus_terms`), as the pass matches it (inside
    longer words, in any case) or in one of its :func:`_forms`; or a literal of the focus."""
    lowered = line.lower()
    shared = [w for w in focus_terms(focus) if any(form in lowered for form in _forms(w))]
    shared += [lit for lit in focus_of(focus).literals if lit.lower() in lowered]
    return list(dict.fromkeys(shared))


def numbered_chars(case: Case) -> int:
    """The length of ``read_file``'s numbered output of the whole file (its closing line
    left out): ``{n:>5}| `` before each line."""
    return sum(len(f"{n:>5}| ") + len(line) + 1 for n, line in enumerate(case.lines, 1))


def check_round3(case: Case) -> list[str]:
    """What is wrong with ``case`` (empty when it is sound); see the module's docstring."""
    problems = []
    size = len(case.text)
    if not _MIN_CHARS <= size <= _MAX_CHARS:
        problems.append(f"{case.name}: {size} characters")
    if numbered_chars(case) > _NUMBERED_CAP - 200:
        problems.append(f"{case.name}: {numbered_chars(case)} characters numbered")
    if not 1 <= len(case.answers) <= 4:
        problems.append(f"{case.name}: {len(case.answers)} answering lines")
    if len(set(case.answers)) != len(case.answers):
        problems.append(f"{case.name}: an answering line named twice")
    long = [n for n, line in enumerate(case.lines, 1) if len(line) > _MAX_LINE_CHARS]
    if long:
        problems.append(f"{case.name}: lines {long} are longer than read_file shows")
    scores = line_scores(list(case.lines), focus_of(case.focus))
    for index in case.answers:
        if not 0 <= index < len(case.lines):
            problems.append(f"{case.name}: answering line {index + 1} is past the end")
            continue
        line = case.lines[index]
        if case.lines.count(line) != 1:
            problems.append(
                f"{case.name}: line {index + 1} is in the file {case.lines.count(line)} times"
            )
        shared = shared_terms(case.focus, line)
        if case.focus_kind == "own" and (shared or scores[index] > 0):
            problems.append(f"{case.name}: line {index + 1} shares {shared} with the focus")
        if case.focus_kind == "shared" and scores[index] == 0:
            problems.append(f"{case.name}: line {index + 1} shares no word with the focus")
    others = [i for i in range(len(case.lines)) if i not in case.answers and scores[i] > 0]
    if not others:
        problems.append(f"{case.name}: no line but the answers shares the focus (no distractor)")
    return problems


def _split(cases: tuple[Case, ...]) -> dict[FocusKind, int]:
    counts: dict[FocusKind, int] = {"shared": 0, "own": 0}
    for case in cases:
        counts[case.focus_kind] += 1
    return counts


def check_set(cases: tuple[Case, ...] = CASES_ROUND3) -> list[str]:
    """What is wrong with the set as a whole: ten cases, unique names, half and half."""
    problems = [p for case in cases for p in check_round3(case)]
    if len(cases) != 10:
        problems.append(f"{len(cases)} cases, not 10")
    if len({case.name for case in cases}) != len(cases):
        problems.append("two cases share a name")
    if _split(cases) != {"shared": 5, "own": 5}:
        problems.append(f"focus kinds {_split(cases)}, not 5 shared and 5 own")
    return problems
