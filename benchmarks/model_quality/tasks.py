"""The fixed workspace and the 20 tasks of the model-quality report.

A task names the file that holds its answer by path (10), by bare file name (6), or not
at all (4, which need ``search`` or ``list_files``). Each answer is one fact that appears
in exactly one file and never in the question, so "the fact is in the answer" is a fair
test of correctness for a model that read the right file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TASKS", "WORKSPACE_FILES", "QualityTask", "write_workspace"]

WORKSPACE_FILES: dict[str, str] = {
    "README.md": (
        "# Orbit\n\nOrbit is a small job scheduler for internal batch work.\n\n"
        "It is maintained by the Platform Tools team; write to tools@orbit.example with "
        "questions.\n"
    ),
    "CHANGELOG.md": (
        "# Changelog\n\n## 2.3.0 - 2026-09-14\n- Cron expressions in job files.\n\n"
        "## 2.2.1 - 2026-07-02\n- Fixed a retry storm after restarts.\n"
    ),
    "LICENSE": 'Licensed under the Apache License, Version 2.0 (the "License").\n',
    "Makefile": "test:\n\tpytest -q tests/\n\nlint:\n\truff check src\n",
    ".env.example": "ORBIT_REGION=eu-west-3\nORBIT_QUEUE=jobs\n",
    "config/app.yaml": ("server:\n  host: 0.0.0.0\n  port: 8125\nlog_level: warning\nworkers: 6\n"),
    "config/database.toml": (
        '[database]\nengine = "postgres"\nname = "orbit_jobs"\npool_size = 12\n'
        "timeout_seconds = 45\n"
    ),
    "docs/deploy.md": (
        "# Deploying Orbit\n\nDeployments run every Tuesday at 14:00 UTC.\n\n"
        "If a deployment fails, roll back with `orbit rollback --to previous`.\n"
    ),
    "src/server.py": (
        '"""The HTTP front of Orbit."""\n\nMAX_UPLOAD_MB = 64\n\n\n'
        "def create_server(port: int = 9000) -> None:\n"
        '    """Start the API server."""\n'
        "    raise NotImplementedError\n"
    ),
    "src/scheduler.py": (
        '"""When jobs run again."""\n\nRETRY_LIMIT = 5\nBACKOFF_SECONDS = 30\n\n\n'
        "def next_run(attempt: int) -> int:\n"
        "    return BACKOFF_SECONDS * attempt\n"
    ),
    "notes/todo.txt": "- migrate the queue to Redis 7\n- drop Python 3.10 support\n",
    "data/users.csv": (
        "id,name,email\n1,Ada,ada@orbit.example\n2,Kim,kim.lee@orbit.example\n"
        "3,Noor,noor@orbit.example\n"
    ),
}


@dataclass(frozen=True)
class QualityTask:
    """One question, the file that answers it, and the fact a right answer contains."""

    key: str
    question: str
    path: str
    """The workspace file that holds the answer."""
    fact: str
    """A regular expression (case-insensitive) a correct answer matches."""
    named: str
    """How the question points at the file: ``path``, ``name`` or ``none``."""

    def correct(self, answer: str) -> bool:
        """Whether ``answer`` states the expected fact."""
        return re.search(self.fact, answer, re.IGNORECASE) is not None


TASKS: tuple[QualityTask, ...] = (
    QualityTask("port", "What port does config/app.yaml set for the server?",
                "config/app.yaml", r"\b8125\b", "path"),
    QualityTask("workers", "How many workers are configured in config/app.yaml?",
                "config/app.yaml", r"\b(6|six)\b", "path"),
    QualityTask("engine", "Which database engine does config/database.toml use?",
                "config/database.toml", r"postgres", "path"),
    QualityTask("pool", "What is the pool_size in config/database.toml?",
                "config/database.toml", r"\b12\b", "path"),
    QualityTask("deploy-day", "According to docs/deploy.md, on which day do deployments run?",
                "docs/deploy.md", r"tuesday", "path"),
    QualityTask("rollback", "What rollback command does docs/deploy.md give?",
                "docs/deploy.md", r"rollback --to previous", "path"),
    QualityTask("retry", "What is the value of RETRY_LIMIT in src/scheduler.py?",
                "src/scheduler.py", r"\b5\b", "path"),
    QualityTask("upload", "What is MAX_UPLOAD_MB set to in src/server.py?",
                "src/server.py", r"\b64\b", "path"),
    QualityTask("region", "Which region does .env.example set?",
                ".env.example", r"eu-west-3", "path"),
    QualityTask("team", "According to README.md, which team maintains the project?",
                "README.md", r"platform tools", "path"),
    QualityTask("version", "What is the latest version listed in CHANGELOG.md?",
                "CHANGELOG.md", r"2\.3\.0", "name"),
    QualityTask("log-level", "What log level is set in app.yaml?",
                "config/app.yaml", r"warning", "name"),
    QualityTask("make-test", "What command does the test target in the Makefile run?",
                "Makefile", r"pytest", "name"),
    QualityTask("todo", "What is the first item in todo.txt?",
                "notes/todo.txt", r"redis", "name"),
    QualityTask("backoff", "What is BACKOFF_SECONDS in scheduler.py?",
                "src/scheduler.py", r"\b30\b", "name"),
    QualityTask("email", "What is the email address of the user with id 2 in users.csv?",
                "data/users.csv", r"kim\.lee@orbit\.example", "name"),
    QualityTask("find-def", "Which file in the workspace defines the function create_server?",
                "src/server.py", r"src/server\.py", "none"),
    QualityTask("license", "Under which license is the project released?",
                "LICENSE", r"apache", "none"),
    QualityTask("db-timeout", "How many seconds is the database timeout?",
                "config/database.toml", r"\b45\b", "none"),
    QualityTask("contact", "Which email address should people write to with questions?",
                "README.md", r"tools@orbit\.example", "none"),
)  # fmt: skip


def write_workspace(root: Path) -> Path:
    """Write the task workspace under ``root`` (created) and return ``root``."""
    for relative, text in WORKSPACE_FILES.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root
