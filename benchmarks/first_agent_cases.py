"""The first-agent benchmark's workspace and questions (issue 37's acceptance).

Thirty-four small files of eight formats, one workspace. Each file holds one asked fact
beside a plausible distractor: a sibling value a careless reader picks (another service's
port, another team's on-call, another room's number, the deprecated value next to the
current one). Two files of issue 25's original ten (``bio.txt``, ``server.log``) have no
distractor; they are kept as they were.

Questions come in three shapes:

- ``a``: the question names its file ("... according to ports.yaml?");
- ``b``: the question names no file: the agent has to find it (``search``, ``list_files``);
- ``c``: the workspace does not hold what is asked (a staging port where only production
  is listed, a file that does not exist): the right answer is "not found".

``held_out`` cases were written with the others, before any run, and are reported apart:
nobody tunes the loop on them. Issue 25's ten cases were tuned on already; they are in
the tuning set. Cases are not changed after seeing answers, except for an expected fact
that is objectively wrong (say so in the commit).

``expect`` and ``distractor`` are regular expressions, searched case-insensitively in the
answer. A run is correct when ``expect`` matches and ``distractor`` does not.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

__all__ = ["CASES", "FILES", "Case", "check_cases", "format_of", "summary"]

Shape = Literal["a", "b", "c"]

FILES: dict[str, str] = {
    # --- issue 25's ten files, as they were -------------------------------------------
    "bio.txt": (
        "Ada Lovelace (1815-1852) was an English mathematician and writer.\n"
        "She is known for her work on Charles Babbage's proposed mechanical general-purpose "
        "computer, the Analytical Engine.\n"
        "In 1843 she published the first algorithm intended to be carried out by such a "
        "machine, and is often regarded as the first computer programmer.\n"
        "She was the only legitimate child of the poet Lord Byron.\n"
    ),
    "service.toml": (
        '# Payments service configuration\n[server]\nhost = "0.0.0.0"\nport = 7431\n'
        'workers = 6\n\n[database]\nurl = "postgres://db.internal:5432/payments"\n'
        'timeout_seconds = 45\n\n[owner]\nteam = "payments-team"\n'
    ),
    "CHANGELOG.md": (
        "# Changelog\n\n## 1.3.0 - 2026-10-02\n- Added CSV export of invoices.\n"
        "- Fixed a crash when the cart was empty.\n\n## 1.2.0 - 2026-08-14\n"
        "- Added dark mode to the dashboard.\n- Dropped support for Python 3.8.\n\n"
        "## 1.1.0 - 2026-05-30\n- First public release.\n"
    ),
    "sales.csv": (
        "region,quarter,revenue_eur\nNorth,Q1,120000\nSouth,Q1,95000\nEast,Q1,143000\n"
        "West,Q1,87000\n"
    ),
    "meeting.md": (
        "# Kick-off meeting, 3 March\n\nPresent: Maria Chen (project lead), Tom Okafor, "
        "Lena Fischer.\n\nDecisions:\n- The project is called Bluebird.\n"
        "- Maria Chen leads the project; Tom Okafor owns the backend.\n"
        "- The first milestone is due on 15 April.\n"
    ),
    "recipe.txt": (
        "Country bread\nMix 500 g flour, 350 g water, 10 g salt and 5 g yeast.\n"
        "Let the dough rise for 3 hours.\nBake at 230 degrees Celsius for 40 minutes.\n"
    ),
    "inventory.json": (
        '{\n  "warehouse": "Lyon-2",\n  "items": [\n    {"name": "laptop", "count": 42},\n'
        '    {"name": "monitor", "count": 17},\n    {"name": "keyboard", "count": 120}\n'
        "  ]\n}\n"
    ),
    "todo.md": (
        "# To do\n1. Renew the TLS certificate before 20 December.\n"
        "2. Move the backups to the new bucket.\n3. Write the onboarding guide.\n"
    ),
    "server.log": (
        "2026-11-30 08:00:01 INFO server started on port 7431\n"
        "2026-11-30 08:05:12 INFO 200 GET /health\n"
        "2026-11-30 08:07:44 ERROR database connection refused: db.internal:5432\n"
        "2026-11-30 08:07:45 INFO retrying in 5 s\n"
    ),
    "oncall.txt": (
        "On-call rota, week 49\nPrimary: Priya Natarajan (phone 555-0142)\n"
        "Secondary: Jonas Berg\nEscalation: the infrastructure team channel #infra-oncall\n"
    ),
    # --- named in their questions (shape a) ---------------------------------------------
    "ports.yaml": (
        "# Service ports (production)\n"
        "services:\n"
        "  billing:\n    host: billing.internal\n    port: 9102\n"
        "  search:\n    host: search.internal\n    port: 9201\n"
        "  notifications:\n    host: notify.internal\n    port: 9304\n"
    ),
    "rooms.ini": (
        "; Meeting rooms, building B\n"
        "[harbour]\nname = Harbour\nnumber = 4.12\nfloor = 4\nseats = 12\n\n"
        "[meadow]\nname = Meadow\nnumber = 2.07\nfloor = 2\nseats = 6\n"
    ),
    "feature_flags.json": (
        "{\n"
        '  "flags": {\n'
        '    "dark_mode": {"enabled": true, "rollout_percent": 100},\n'
        '    "new_checkout": {"enabled": false, "rollout_percent": 25},\n'
        '    "beta_search": {"enabled": true, "rollout_percent": 5}\n'
        "  }\n"
        "}\n"
    ),
    "release_notes.md": (
        "# Release notes\n\n"
        "## 2.0.0\n"
        "- Deprecated: the old default request timeout of 60 seconds.\n"
        "- The default request timeout is now 30 seconds.\n"
        "- Removed the `--legacy-auth` flag.\n\n"
        "## 1.9.0\n"
        "- Retries now back off exponentially.\n"
    ),
    "support_rota.csv": (
        "week,team,engineer,phone\n"
        "49,platform,Ingrid Halvorsen,555-0177\n"
        "49,data,Marco Rossi,555-0190\n"
        "50,platform,Chen Wei,555-0123\n"
        "50,data,Ingrid Halvorsen,555-0177\n"
    ),
    "limits.toml": (
        "# API limits\n"
        "[api]\nrate_limit_per_minute = 600\nburst = 50\n\n"
        "[api.free_tier]\nrate_limit_per_minute = 60\nburst = 10\n"
    ),
    "contacts.md": (
        "# Team contacts\n\n"
        "| team | lead | channel |\n"
        "|---|---|---|\n"
        "| Security | Olga Petrova | #sec |\n"
        "| Networking | Samuel Adeyemi | #net |\n"
        "| Storage | Hana Kobayashi | #storage |\n"
    ),
    "schedule.txt": (
        "Spring events\n\n"
        "The quarterly review takes place on Thursday 12 March in the Atrium, starting at "
        "10:00.\n"
        "The all-hands meeting follows on Friday 13 March in the Main Hall, starting at "
        "15:00.\n"
        "The team dinner is on Friday evening.\n"
    ),
    "backup.ini": (
        "[daily]\nschedule = 02:00\nretention_days = 14\n\n"
        "[weekly]\nschedule = Sunday 03:00\nretention_days = 90\n"
    ),
    "worker.log": (
        "2026-12-02 06:00:00 INFO worker-1 started\n"
        "2026-12-02 06:00:01 INFO worker-2 started\n"
        "2026-12-02 18:00:00 INFO worker-1 finished: processed 1204 jobs, 3 failed\n"
        "2026-12-02 18:00:02 INFO worker-2 finished: processed 987 jobs, 12 failed\n"
    ),
    # --- found by the agent (shape b) ----------------------------------------------------
    "warehouse_stock.json": (
        "{\n"
        '  "site": "Tilburg",\n'
        '  "stock": [\n'
        '    {"sku": "NUT-M6", "on_hand": 920, "reorder_level": 300},\n'
        '    {"sku": "BOLT-M6", "on_hand": 380, "reorder_level": 150},\n'
        '    {"sku": "WASHER-M6", "on_hand": 1500, "reorder_level": 500}\n'
        "  ]\n"
        "}\n"
    ),
    "certificates.yaml": (
        "certificates:\n"
        "  - host: api.example.com\n    issuer: Let's Encrypt\n    expires: 2027-03-14\n"
        "  - host: www.example.com\n    issuer: Let's Encrypt\n    expires: 2026-12-20\n"
    ),
    "wifi.txt": (
        "Wi-Fi at the Harbor office\n\n"
        "Staff network: Harbor-Staff, password granite19 (changes every quarter).\n"
        "Guest network: Harbor-Guest, password sunflower42.\n"
        "The printers are on the staff network only.\n"
    ),
    "alerts.log": (
        "2026-12-03 02:14:07 WARN disk usage 81% on db-2 (/var/lib/postgresql)\n"
        "2026-12-03 02:30:55 INFO backup completed on db-2\n"
        "2026-12-03 03:02:19 CRIT disk usage 97% on db-1 (/var/lib/postgresql)\n"
        "2026-12-03 03:05:00 WARN replication lag 4 s on db-2\n"
    ),
    "budget.csv": (
        "department,year,budget_eur\n"
        "Marketing,2025,410000\n"
        "Marketing,2026,455000\n"
        "Research,2026,780000\n"
        "Operations,2026,320000\n"
    ),
    "style_guide.md": (
        "# Writing style guide\n\n"
        "## Dates\nWrite dates as YYYY-MM-DD.\n\n"
        "## Numbers\n"
        "Until 2024 this guide asked for commas between thousands (12,500); that rule is "
        "withdrawn.\n"
        "Group thousands with a thin space (12 500).\n"
    ),
    "database.toml": (
        "# Database endpoints\n"
        '[primary]\nhost = "pg-main.internal"\nport = 5433\n\n'
        '[replica]\nhost = "pg-ro.internal"\nport = 5434\nread_only = true\n'
    ),
    "office_hours.txt": (
        "Office hours\n"
        "The Lisbon office is open from 8:00 to 16:00, Monday to Friday.\n"
        "The Berlin office is open from 9:00 to 17:30, Monday to Friday.\n"
        "Both offices are closed on public holidays.\n"
    ),
    "ci.yaml": (
        "jobs:\n"
        "  test:\n    image: python:3.12-slim\n    script: pytest -q\n"
        "  lint:\n    image: python:3.11-slim\n    script: ruff check .\n"
    ),
    "parking.csv": (
        "space,holder,plate\nP1,Anna Kowalski,KR-4471\nP2,Diego Ramírez,M-DR-208\n"
        "P3,Fatima Zahra,B-FZ-990\n"
    ),
    "incident.md": (
        "# Incident 2026-11-18: checkout unavailable\n\n"
        "Impact: checkout returned errors for 42 minutes.\n\n"
        "We first suspected a misconfigured DNS record, but DNS was ruled out.\n"
        "Root cause: the TLS certificate on the load balancer had expired.\n"
        "Fix: the certificate was renewed and an expiry alert was added.\n"
    ),
    "auth.log": (
        "2026-12-04 09:12:01 sshd: user bob login ok from 10.0.0.7\n"
        "2026-12-04 09:15:33 sshd: user alice login failed (bad password) from 10.0.0.9\n"
        "2026-12-04 09:15:41 sshd: user alice login failed (bad password) from 10.0.0.9\n"
        "2026-12-04 09:15:50 sshd: user alice locked out after 3 failures\n"
        "2026-12-04 09:20:02 sshd: user carol login ok from 10.0.0.12\n"
    ),
    "printers.ini": (
        "[printer_floor2]\nmodel = Brother HL-L5100\nip = 10.2.0.45\n\n"
        "[printer_floor3]\nmodel = Canon LBP-623\nip = 10.3.0.45\n"
    ),
    "team.yaml": (
        "team:\n"
        "  name: Falcon\n"
        "  manager: Rosa Lindqvist\n"
        "  tech_lead: Kwame Mensah\n"
        "  members: [Ana Souza, Lee Min-jun]\n"
    ),
}
"""The workspace: path → content. One folder; every question is asked of all of it."""


@dataclass(frozen=True)
class Case:
    """One question about the workspace and how to judge its answer."""

    key: str
    shape: Shape
    file: str | None
    """The file that holds the fact (a, b), or the near miss a careless reader takes (c)."""
    question: str
    expect: str | None
    """A regular expression for the fact; ``None`` for shape ``c`` (nothing to find)."""
    distractor: str | None
    """A regular expression for what a careless reader answers instead."""
    held_out: bool = False


CASES: tuple[Case, ...] = (
    # --- a: issue 25's ten, tuned on already ---------------------------------------------
    Case(
        "bio",
        "a",
        "bio.txt",
        "Who is described in bio.txt and what did she do?",
        r"Lovelace",
        None,
    ),
    Case(
        "config",
        "a",
        "service.toml",
        "Which port does service.toml set for the server?",
        r"\b7431\b",
        r"\b5432\b",
    ),
    Case(
        "changelog",
        "a",
        "CHANGELOG.md",
        "What was added in version 1.2.0 according to CHANGELOG.md?",
        r"dark mode",
        r"CSV export",
    ),
    Case(
        "csv",
        "a",
        "sales.csv",
        "Which region had the highest revenue in sales.csv?",
        r"\bEast\b",
        r"\bNorth\b",
    ),
    Case(
        "meeting",
        "a",
        "meeting.md",
        "Who leads the project according to meeting.md?",
        r"Maria Chen",
        r"Okafor",
    ),
    Case(
        "recipe",
        "a",
        "recipe.txt",
        "How long does the bread bake according to recipe.txt?",
        r"\b40\b",
        r"3 hours",
    ),
    Case(
        "json",
        "a",
        "inventory.json",
        "How many laptops are in inventory.json?",
        r"\b42\b",
        r"\b(17|120)\b",
    ),
    Case(
        "todo",
        "a",
        "todo.md",
        "What is the first task in todo.md?",
        r"TLS",
        r"backups?",
    ),
    Case(
        "log",
        "a",
        "server.log",
        "What error does server.log report?",
        r"connection refused",
        None,
    ),
    Case(
        "oncall",
        "a",
        "oncall.txt",
        "Who is the primary on-call engineer in oncall.txt?",
        r"Priya",
        r"Jonas",
    ),
    # --- a: new ---------------------------------------------------------------------------
    Case(
        "ports",
        "a",
        "ports.yaml",
        "Which port does the search service use according to ports.yaml?",
        r"\b9201\b",
        r"\b(9102|9304)\b",
    ),
    Case(
        "rooms",
        "a",
        "rooms.ini",
        "What is the room number of the Meadow room in rooms.ini?",
        r"\b2\.07\b",
        r"\b4\.12\b",
        held_out=True,
    ),
    Case(
        "flags",
        "a",
        "feature_flags.json",
        "What rollout percentage does feature_flags.json give new_checkout?",
        r"\b25\b",
        r"\b(100|5)\b",
    ),
    Case(
        "release",
        "a",
        "release_notes.md",
        "What is the default request timeout according to release_notes.md?",
        r"\b30\b",
        r"\b60\b",
    ),
    Case(
        "rota",
        "a",
        "support_rota.csv",
        "Who is on call for the data team in week 49 according to support_rota.csv?",
        r"Marco Rossi|\bRossi\b",
        r"Ingrid|Halvorsen|Chen Wei",
    ),
    Case(
        "limits",
        "a",
        "limits.toml",
        "What is the free tier's rate limit per minute in limits.toml?",
        r"\b60\b",
        r"\b600\b",
        held_out=True,
    ),
    Case(
        "contacts",
        "a",
        "contacts.md",
        "Who leads the Networking team according to contacts.md?",
        r"Adeyemi",
        r"Petrova|Kobayashi",
    ),
    Case(
        "schedule",
        "a",
        "schedule.txt",
        "On which date is the all-hands meeting according to schedule.txt?",
        r"\b13\b",
        r"\b12\b|Thursday",
        held_out=True,
    ),
    Case(
        "backup",
        "a",
        "backup.ini",
        "How many days are weekly backups kept according to backup.ini?",
        r"\b90\b",
        r"\b14\b",
    ),
    Case(
        "worker",
        "a",
        "worker.log",
        "How many jobs did worker-2 process according to worker.log?",
        r"\b987\b",
        r"\b1,?204\b",
        held_out=True,
    ),
    # --- b: no file named -----------------------------------------------------------------
    Case(
        "stock",
        "b",
        "warehouse_stock.json",
        "How many BOLT-M6 are on hand?",
        r"\b380\b",
        r"\b(920|150)\b",
    ),
    Case(
        "cert",
        "b",
        "certificates.yaml",
        "When does the TLS certificate for www.example.com expire?",
        r"2026-12-20|20(th)? (of )?December|December 20",
        r"2027-03-14|14(th)? (of )?March|March 14",
        held_out=True,
    ),
    Case(
        "wifi",
        "b",
        "wifi.txt",
        "What is the password of the guest Wi-Fi?",
        r"sunflower42",
        r"granite19",
    ),
    Case(
        "alerts",
        "b",
        "alerts.log",
        "Which host raised the critical disk usage alert?",
        r"\bdb-1\b",
        r"\bdb-2\b",
        held_out=True,
    ),
    Case(
        "budget",
        "b",
        "budget.csv",
        "What is the Marketing budget for 2026?",
        r"\b455[,. ]?000\b",
        r"\b(410|780)[,. ]?000\b",
    ),
    Case(
        "style",
        "b",
        "style_guide.md",
        "What should be used to group thousands in numbers?",
        r"thin space",
        r"\bcommas?\b",
    ),
    Case(
        "replica",
        "b",
        "database.toml",
        "On which host does the read-only replica database run?",
        r"pg-ro",
        r"pg-main|db\.internal",
    ),
    Case(
        "hours",
        "b",
        "office_hours.txt",
        "At what time does the Berlin office close?",
        r"17:30|5:30",
        r"16:00|\b4 ?pm\b",
        held_out=True,
    ),
    Case(
        "ci",
        "b",
        "ci.yaml",
        "Which Python image does the lint job use?",
        r"3\.11",
        r"3\.12",
    ),
    Case(
        "parking",
        "b",
        "parking.csv",
        "Which parking space is assigned to Diego Ramírez?",
        r"\bP2\b",
        r"\bP[13]\b",
        held_out=True,
    ),
    Case(
        "incident",
        "b",
        "incident.md",
        "What was the root cause of the checkout incident?",
        r"certificate",
        r"\bDNS\b",
    ),
    Case(
        "lockout",
        "b",
        "auth.log",
        "Which user was locked out?",
        r"\balice\b",
        r"\b(bob|carol)\b",
    ),
    Case(
        "printer",
        "b",
        "printers.ini",
        "What is the IP address of the floor 3 printer?",
        r"10\.3\.0\.45",
        r"10\.2\.0\.45",
        held_out=True,
    ),
    Case(
        "falcon",
        "b",
        "team.yaml",
        "Who is the tech lead of team Falcon?",
        r"Mensah",
        r"Lindqvist|Souza|Min-jun",
        held_out=True,
    ),
    # --- c: not in the workspace -------------------------------------------------------------
    Case(
        "staging",
        "c",
        "ports.yaml",
        "Which port does the search service use in staging according to ports.yaml?",
        None,
        r"\b(9201|9102|9304)\b",
        held_out=True,
    ),
    Case(
        "conference-wifi",
        "c",
        "wifi.txt",
        "What is the password of the conference room Wi-Fi?",
        None,
        r"sunflower42|granite19",
    ),
    Case(
        "week52",
        "c",
        "support_rota.csv",
        "Who is on call for the data team in week 52?",
        None,
        r"Marco|Rossi|Ingrid|Halvorsen|Chen Wei|Priya|Jonas",
    ),
    Case(
        "mail-cert",
        "c",
        "certificates.yaml",
        "When does the TLS certificate for mail.example.com expire?",
        None,
        r"2027-03-14|2026-12-20|20(th)? (of )?December|December 20|14(th)? (of )?March",
        held_out=True,
    ),
    Case(
        "research-2025",
        "c",
        "budget.csv",
        "What is the Research budget for 2025?",
        None,
        r"\b(780|410)[,. ]?000\b",
    ),
    Case(
        "paris",
        "c",
        "inventory.json",
        "How many keyboards are in the Paris warehouse according to inventory.json?",
        None,
        r"\b120\b",
        held_out=True,
    ),
    Case(
        "changelog-1.4",
        "c",
        "CHANGELOG.md",
        "What was added in version 1.4.0 according to CHANGELOG.md?",
        None,
        r"CSV export|dark mode",
    ),
    Case(
        "orchard",
        "c",
        "rooms.ini",
        "What is the room number of the Orchard room?",
        None,
        r"\b(4\.12|2\.07)\b",
        held_out=True,
    ),
    Case(
        "roadmap",
        "c",
        None,
        "What does roadmap.md say about the next release?",
        None,
        r"CSV export|dark mode|2\.0\.0|1\.3\.0",
    ),
    Case(
        "monthly",
        "c",
        "backup.ini",
        "How many days are monthly backups kept according to backup.ini?",
        None,
        r"\b(14|90)\b",
        held_out=True,
    ),
)

_FORMATS = {
    ".md": "Markdown",
    ".toml": "TOML",
    ".yaml": "YAML",
    ".json": "JSON",
    ".ini": "INI",
    ".csv": "CSV",
    ".log": "log",
    ".txt": "prose",
}


def format_of(path: str) -> str:
    """The format of a workspace file, by its suffix."""
    return _FORMATS[path[path.rfind(".") :]]


def _search(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE) is not None


def check_cases() -> list[str]:
    """What is unsound in the cases (empty when all are sound).

    Each file is asked about once (a or b); a fact's file holds it and a distractor's
    text is in the workspace; a question of shape ``a`` names its file, one of shape
    ``b`` names none, one of shape ``c`` has no expected fact; no answer could hold both
    the fact and be taken for the distractor by its own regex on the file's fact line.
    """
    problems: list[str] = []
    keys = Counter(c.key for c in CASES)
    problems += [f"{k}: key used {n} times" for k, n in keys.items() if n > 1]
    asked = Counter(c.file for c in CASES if c.shape != "c")
    problems += [f"{p}: asked about {n} times" for p, n in asked.items() if n > 1]
    problems += [f"{p}: no question asks about it" for p in FILES if p not in asked]
    everything = "\n".join(FILES.values())
    for case in CASES:
        where = f"{case.key} ({case.shape})"
        if case.file is not None and case.file not in FILES:
            problems.append(f"{where}: no file {case.file}")
            continue
        named = [p for p in FILES if p.lower() in case.question.lower()]
        if case.shape == "a" and named != [case.file]:
            problems.append(f"{where}: names {named}, not only {case.file}")
        if case.shape == "b" and named:
            problems.append(f"{where}: names {named}")
        if case.shape == "c":
            if case.expect is not None:
                problems.append(f"{where}: a not-found case expects {case.expect!r}")
            continue
        content = FILES[case.file or ""]
        if case.expect is None or not _search(case.expect, content):
            problems.append(f"{where}: {case.expect!r} is not in {case.file}")
        if case.distractor is not None and not _search(case.distractor, everything):
            problems.append(f"{where}: the distractor {case.distractor!r} is nowhere")
    return problems


def summary() -> str:
    """How many files per format and cases per shape and set, as Markdown lines."""
    formats = Counter(format_of(p) for p in FILES)
    with_distractor = {c.file for c in CASES if c.shape != "c" and c.distractor}
    shapes = Counter((c.shape, c.held_out) for c in CASES)
    lines = [
        f"{len(FILES)} files ({len(with_distractor)} with a distractor): "
        + ", ".join(f"{fmt} {n}" for fmt, n in sorted(formats.items())),
        f"{len(CASES)} cases: "
        + ", ".join(
            f"{shape} {shapes[shape, False] + shapes[shape, True]} ({shapes[shape, True]} held out)"
            for shape in ("a", "b", "c")
        )
        + f"; {sum(c.held_out for c in CASES)} held out in all",
    ]
    return "\n".join(lines)
