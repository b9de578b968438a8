# ruff: noqa: E501  (the cases are lines of text, kept whole to be read as they are)
"""The cases of the pruning fidelity benchmark (:mod:`benchmarks.pruning_fidelity`).

Each case is a file of 40-75 KB (so that ``read_file``'s numbered output stays under the
registry's 80,000-character cap on one result) with one to four *answering lines*, and a
focus: half of them name words of the answering lines ("the ERROR lines with code E777"),
half are asked in a user's own words that share none of them ("why the checkout service
crashed" where the log says ``java.lang.OutOfMemoryError``). :func:`check_case` proves
which half a case is in, with the pass's own word matcher.

The cases marked ``held_out`` were written before the pass was changed for issue 36 and
were never looked at while tuning it; the benchmark reports them apart.

Every file is made from a seeded ``random.Random``: the same case is the same text on every
machine and every run.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from leanloop.pruning.rank import focus_of, line_scores

__all__ = ["CASES", "Case", "check_case"]

FocusKind = Literal["shared", "own"]

# Sizes in characters of the raw file: at least MIN, about TARGET.
_MIN_CHARS = 40_000
_TARGET_CHARS = 56_000


@dataclass(frozen=True)
class Case:
    """One file, its focus and the lines that answer it."""

    name: str
    kind: str
    """What the file is (``app log``, ``access log``, ``config``, …)."""
    path: str
    focus: str
    focus_kind: FocusKind
    held_out: bool
    lines: tuple[str, ...]
    answers: tuple[int, ...]
    """0-based indices of the answering lines (the file's line numbers less one)."""

    @property
    def text(self) -> str:
        """The file's text (a newline after every line)."""
        return "\n".join(self.lines) + "\n"

    @property
    def answer_numbers(self) -> tuple[int, ...]:
        """The answering lines' 1-based numbers, as ``read_file`` shows them."""
        return tuple(i + 1 for i in self.answers)


def _fill(
    rnd: random.Random,
    noise: Callable[[random.Random, int], str],
    answers: list[tuple[float, str]],
    *,
    target: int = _TARGET_CHARS,
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Noise lines up to ``target`` characters with ``answers`` placed at their fractions."""
    lines: list[str] = []
    size = 0
    while size < target:
        line = noise(rnd, len(lines))
        lines.append(line)
        size += len(line) + 1
    at = []
    for fraction, line in answers:
        index = min(int(fraction * len(lines)), len(lines) - 1)
        while index in at:
            index += 1
        lines[index] = line
        at.append(index)
    return tuple(lines), tuple(at)


def _case(
    name: str,
    kind: str,
    path: str,
    focus: str,
    focus_kind: FocusKind,
    *,
    held_out: bool,
    seed: int,
    noise: Callable[[random.Random, int], str],
    answers: list[tuple[float, str]],
    header: tuple[str, ...] = (),
) -> Case:
    rnd = random.Random(seed)
    lines, at = _fill(rnd, noise, answers)
    if header:
        lines = header + lines
        at = tuple(i + len(header) for i in at)
    return Case(name, kind, path, focus, focus_kind, held_out, lines, at)


# --- held out: written before the pass changed -------------------------------------------


def _go_service(rnd: random.Random, i: int) -> str:
    stamp = f"2026-12-04T09:{i // 40 % 60:02d}:{i % 60:02d}.{rnd.randint(0, 999):03d}Z"
    pick = rnd.random()
    if pick < 0.55:
        return (
            f"{stamp} INFO  http: handled GET /v1/catalog/{rnd.randint(100, 999)} "
            f"status=200 bytes={rnd.randint(200, 9000)} dur={rnd.randint(1, 90)}ms "
            f"trace={rnd.getrandbits(40):010x}"
        )
    if pick < 0.75:
        return (
            f"{stamp} DEBUG cache: hit key=sku:{rnd.randint(10000, 99999)} "
            f"ttl={rnd.randint(10, 600)}s shard={rnd.randint(0, 7)}"
        )
    if pick < 0.88:
        return (
            f"{stamp} INFO  grpc: Inventory.Reserve ok items={rnd.randint(1, 9)} "
            f"latency={rnd.randint(2, 40)}ms"
        )
    if pick < 0.96:
        return (
            f"{stamp} WARN  pool: connection {rnd.randint(1, 32)} idle for "
            f"{rnd.randint(30, 300)}s, recycling"
        )
    return (
        f"{stamp} ERROR http: client closed request GET /v1/catalog/{rnd.randint(100, 999)} "
        f"after {rnd.randint(1000, 5000)}ms"
    )


def _k8s_events(rnd: random.Random, i: int) -> str:
    age = f"{rnd.randint(1, 59)}m"
    apps = ("storefront", "orders", "payments", "search", "mailer")
    app = rnd.choice(apps)
    pod = f"pod/{app}-{rnd.getrandbits(20):05x}-{rnd.getrandbits(16):04x}"
    pick = rnd.random()
    if pick < 0.3:
        return f"{age:<6} Normal  Scheduled  {pod}  Successfully assigned shop/{pod[4:]} to node-{rnd.randint(1, 6)}"
    if pick < 0.55:
        return f'{age:<6} Normal  Pulled     {pod}  Container image "registry.local/{app}:1.{rnd.randint(0, 40)}.{rnd.randint(0, 9)}" already present on machine'
    if pick < 0.78:
        return f"{age:<6} Normal  Created    {pod}  Created container {app}"
    if pick < 0.97:
        return f"{age:<6} Normal  Started    {pod}  Started container {app}"
    return f"{age:<6} Normal  SuccessfulCreate  replicaset/{app}-{rnd.getrandbits(20):05x}  Created pod: {pod[4:]}"


def _ts_build(rnd: random.Random, i: int) -> str:
    pick = rnd.random()
    modules = ("cart", "checkout", "catalog", "profile", "search", "auth", "ui/button", "ui/modal")
    mod = rnd.choice(modules)
    if pick < 0.45:
        return f"[{i // 30 % 60:02d}:{i % 60:02d}] webpack: compiled src/{mod}.ts -> dist/{mod}.js ({rnd.randint(2, 90)} KiB) in {rnd.randint(20, 900)} ms"
    if pick < 0.7:
        return f"[{i // 30 % 60:02d}:{i % 60:02d}] eslint: src/{mod}.ts: 0 problems ({rnd.randint(50, 900)} lines checked)"
    if pick < 0.9:
        return f"[{i // 30 % 60:02d}:{i % 60:02d}] jest: PASS src/{mod}.test.ts ({rnd.randint(1, 40)} tests, {rnd.randint(100, 4000)} ms)"
    return f"[{i // 30 % 60:02d}:{i % 60:02d}] cache: restored node_modules/.cache/{mod} ({rnd.randint(1, 200)} MiB)"


def _auth_log(rnd: random.Random, i: int) -> str:
    stamp = f"Dec  5 0{i // 500 % 10}:{i // 9 % 60:02d}:{i % 60:02d}"
    users = ("deploy", "backup", "alice", "bob", "ci-runner", "monitor")
    user = rnd.choice(users)
    pick = rnd.random()
    if pick < 0.35:
        return f"{stamp} web-03 sshd[{rnd.randint(1000, 9999)}]: Accepted publickey for {user} from 10.20.{rnd.randint(0, 9)}.{rnd.randint(2, 250)} port {rnd.randint(30000, 65000)} ssh2: ED25519 SHA256:{rnd.getrandbits(60):015x}"
    if pick < 0.6:
        return f"{stamp} web-03 sshd[{rnd.randint(1000, 9999)}]: pam_unix(sshd:session): session opened for user {user}(uid={rnd.randint(1000, 1010)}) by (uid=0)"
    if pick < 0.8:
        return f"{stamp} web-03 CRON[{rnd.randint(1000, 9999)}]: pam_unix(cron:session): session closed for user {user}"
    if pick < 0.95:
        return f"{stamp} web-03 systemd-logind[612]: New session {rnd.randint(100, 9999)} of user {user}."
    return f"{stamp} web-03 sshd[{rnd.randint(1000, 9999)}]: Received disconnect from 10.20.{rnd.randint(0, 9)}.{rnd.randint(2, 250)} port {rnd.randint(30000, 65000)}:11: disconnected by user"


def _orders_csv(rnd: random.Random, i: int) -> str:
    statuses = ("delivered", "delivered", "delivered", "shipped", "processing", "cancelled")
    return (
        f"ORD-{50000 + i},2026-11-{rnd.randint(1, 30):02d},CUST-{rnd.randint(1000, 9999)},"
        f"{rnd.choice(('blue mug', 'desk lamp', 'notebook', 'usb hub', 'chair mat', 'kettle'))},"
        f"{rnd.randint(1, 5)},{rnd.randint(5, 300)}.{rnd.randint(0, 99):02d},"
        f"{rnd.choice(statuses)},{rnd.choice(('DE', 'FR', 'NL', 'PL', 'IT'))}"
    )


_GATEWAY_SERVICES = (
    "catalog", "orders", "payments", "profile", "reviews", "shipping", "inventory",
    "pricing", "search", "wishlist", "coupons", "ratings", "media", "billing", "audit",
)  # fmt: skip


def _gateway_yaml(seed: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """A gateway config: one block per route, each with its own rate limit."""
    rnd = random.Random(seed)
    lines = ["# api-gateway routes, generated by platform-config 4.2", "routes:"]
    answers: list[int] = []
    n = 0
    while sum(len(line) + 1 for line in lines) < _TARGET_CHARS:
        service = _GATEWAY_SERVICES[n % len(_GATEWAY_SERVICES)]
        version = n // len(_GATEWAY_SERVICES) + 1
        name = f"{service}-v{version}"
        lines += [
            f"  - name: {name}",
            f"    upstream: http://{service}.internal:{8000 + n}",
            f"    path_prefix: /api/v{version}/{service}",
            f"    timeout_ms: {rnd.choice((500, 1000, 1500, 3000))}",
            f"    retries: {rnd.randint(0, 3)}",
            f"    rate_limit_per_minute: {rnd.choice((60, 120, 300, 600, 1200))}",
            f"    auth: {rnd.choice(('jwt', 'mtls', 'none'))}",
            "    headers:",
            f"      x-route: {name}",
            f"      x-owner: team-{rnd.choice(('atlas', 'wren', 'kite', 'moss'))}",
        ]
        if name == "search-v2":
            lines[-5] = "    rate_limit_per_minute: 45"
            answers.append(len(lines) - 5)
        n += 1
    return tuple(lines), tuple(answers)


def _held_out() -> list[Case]:
    gateway, gateway_answers = _gateway_yaml(606)
    return [
        _case(
            "go-panic",
            "app log (Go)",
            "logs/catalog.log",
            "the panic lines",
            "shared",
            held_out=True,
            seed=601,
            noise=_go_service,
            answers=[
                (
                    0.41,
                    "2026-12-04T09:22:41.006Z PANIC http: panic serving 10.1.4.7:51644: "
                    "runtime error: invalid memory address or nil pointer dereference",
                ),
                (
                    0.83,
                    "2026-12-04T09:51:03.442Z PANIC http: panic serving 10.1.4.9:40022: "
                    "runtime error: index out of range [3] with length 3",
                ),
            ],
        ),
        _case(
            "k8s-dying",
            "Kubernetes events",
            "events/shop.txt",
            "why does the web frontend keep dying",
            "own",
            held_out=True,
            seed=602,
            noise=_k8s_events,
            answers=[
                (
                    0.3,
                    "12m    Warning Unhealthy  pod/storefront-8c1f2-77aa  Liveness probe "
                    "failed: HTTP probe failed with statuscode: 500",
                ),
                (
                    0.62,
                    "9m     Normal  Killing    pod/storefront-8c1f2-77aa  Container "
                    "storefront failed liveness probe, will be restarted",
                ),
                (
                    0.9,
                    "3m     Warning BackOff    pod/storefront-8c1f2-77aa  Back-off "
                    "restarting failed container storefront in pod storefront-8c1f2-77aa",
                ),
            ],
        ),
        _case(
            "ts-errors",
            "CI output (TypeScript)",
            "ci/build-8812.log",
            "the lines with error TS2345",
            "shared",
            held_out=True,
            seed=603,
            noise=_ts_build,
            answers=[
                (
                    0.55,
                    "[14:07] tsc: src/cart.ts(41,7): error TS2345: Argument of type "
                    "'string' is not assignable to parameter of type 'number'.",
                ),
                (
                    0.71,
                    "[14:09] tsc: src/checkout.ts(118,22): error TS2345: Argument of type "
                    "'undefined' is not assignable to parameter of type 'Address'.",
                ),
            ],
        ),
        _case(
            "auth-escalation",
            "auth log (syslog)",
            "logs/auth.log",
            "did anybody gain administrator rights",
            "own",
            held_out=True,
            seed=604,
            noise=_auth_log,
            answers=[
                (
                    0.47,
                    "Dec  5 03:14:07 web-03 sudo:  mallory : TTY=pts/3 ; PWD=/tmp ; "
                    "USER=root ; COMMAND=/bin/bash",
                ),
                (0.48, "Dec  5 03:14:52 web-03 usermod[4121]: add 'mallory' to group 'wheel'"),
            ],
        ),
        _case(
            "orders-returned",
            "CSV",
            "data/orders.csv",
            "which orders were sent back",
            "own",
            held_out=True,
            seed=605,
            noise=_orders_csv,
            header=("order_id,date,customer,item,qty,total_eur,status,country",),
            answers=[
                (0.33, "ORD-58211,2026-11-12,CUST-4410,desk lamp,1,49.90,returned,NL"),
                (0.76, "ORD-58877,2026-11-25,CUST-7302,kettle,2,71.80,returned,DE"),
            ],
        ),
        Case(
            "gateway-rate",
            "config (YAML)",
            "config/gateway.yaml",
            "the rate limit of the search-v2 route",
            "shared",
            True,
            gateway,
            gateway_answers,
        ),
    ]


# --- the tuning set ----------------------------------------------------------------------


def _java_app(rnd: random.Random, i: int) -> str:
    stamp = f"2026-12-02 11:{i // 50 % 60:02d}:{i % 60:02d}.{rnd.randint(0, 999):03d}"
    pick = rnd.random()
    threads = ("http-nio-8080-exec-", "scheduling-", "kafka-consumer-", "HikariPool-1-housekeeper-")
    thread = f"{rnd.choice(threads)}{rnd.randint(1, 12)}"
    if pick < 0.5:
        return f"{stamp}  INFO 1 --- [{thread}] c.s.o.OrderController : order {rnd.randint(100000, 999999)} placed total={rnd.randint(5, 500)}.{rnd.randint(0, 99):02d} items={rnd.randint(1, 8)}"
    if pick < 0.7:
        return f"{stamp} DEBUG 1 --- [{thread}] o.h.SQL : select o1_0.id,o1_0.total from orders o1_0 where o1_0.id=?"
    if pick < 0.85:
        return f"{stamp}  INFO 1 --- [{thread}] c.s.o.KafkaListener : consumed offset={rnd.randint(10000, 99999)} partition={rnd.randint(0, 5)}"
    if pick < 0.95:
        return f"{stamp}  WARN 1 --- [{thread}] c.s.o.PriceClient : slow response from pricing in {rnd.randint(500, 3000)}ms"
    return f"{stamp} ERROR 1 --- [{thread}] c.s.o.PaymentClient : ERROR code=E{rnd.choice((101, 204, 318, 412, 550))} upstream refused, retry {rnd.randint(1, 3)}/3"


def _nginx(rnd: random.Random, i: int) -> str:
    ip = f"{rnd.choice((81, 93, 145, 178, 212))}.{rnd.randint(0, 255)}.{rnd.randint(0, 255)}.{rnd.randint(1, 254)}"
    paths = (
        "/",
        "/products",
        "/products/42",
        "/cart",
        "/static/app.js",
        "/static/app.css",
        "/api/search?q=mug",
        "/favicon.ico",
    )
    status = rnd.choice((200, 200, 200, 200, 304, 301, 404))
    return (
        f'{ip} - - [05/Dec/2026:10:{i // 60 % 60:02d}:{i % 60:02d} +0100] "GET {rnd.choice(paths)} HTTP/1.1" '
        f'{status} {rnd.randint(200, 40000)} "-" "Mozilla/5.0 (X11; Linux x86_64) Firefox/{rnd.randint(120, 140)}.0"'
    )


def _json_events(rnd: random.Random, i: int) -> str:
    event = {
        "ts": f"2026-12-03T08:{i // 60 % 60:02d}:{i % 60:02d}.{rnd.randint(0, 999):03d}Z",
        "level": rnd.choice(("info", "info", "info", "debug", "warn")),
        "svc": rnd.choice(("cart", "payments", "identity", "catalog")),
        "msg": rnd.choice((
            "request completed", "cache refreshed", "token refreshed", "order created",
            "inventory synced", "price list loaded",
        )),
        "req": f"{rnd.getrandbits(48):012x}",
        "ms": rnd.randint(2, 700),
    }  # fmt: skip
    return json.dumps(event)


def _k8s_sched(rnd: random.Random, i: int) -> str:
    return _k8s_events(rnd, i)


def _pytest_ci(rnd: random.Random, i: int) -> str:
    mods = ("orders", "refunds", "catalog", "users", "cart", "invoices", "tax", "shipping")
    pick = rnd.random()
    mod = rnd.choice(mods)
    if pick < 0.75:
        return f"tests/test_{mod}.py::test_{mod}_{rnd.choice(('create', 'update', 'list', 'delete', 'totals', 'paging'))}_{rnd.randint(1, 60)} PASSED [{rnd.randint(1, 99):3d}%]"
    if pick < 0.85:
        return f"tests/test_{mod}.py::test_{mod}_legacy_{rnd.randint(1, 20)} SKIPPED (legacy api) [{rnd.randint(1, 99):3d}%]"
    if pick < 0.95:
        return f"  /usr/lib/python3.12/site-packages/sqlalchemy/orm/query.py:{rnd.randint(100, 999)}: DeprecationWarning: Query.get() is legacy"
    return f"[gw{rnd.randint(0, 3)}] node down: restarting worker in {rnd.randint(1, 5)}s? no, worker {rnd.randint(0, 3)} ready"


def _ini_config(seed: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    rnd = random.Random(seed)
    sections = ("cache", "mailer", "queue", "search", "metrics", "storage", "tracing", "billing")
    lines = ["; shop.ini, rendered by confd", ""]
    answers: list[int] = []
    n = 0
    while sum(len(line) + 1 for line in lines) < _TARGET_CHARS:
        section = f"{sections[n % len(sections)]}.{n // len(sections)}"
        lines.append(f"[{section}]")
        for key in (
            "host",
            "port",
            "timeout_s",
            "max_connections",
            "log_level",
            "enabled",
            "region",
            "owner",
        ):
            value = {
                "host": f"{section.split('.', maxsplit=1)[0]}-{n}.internal",
                "port": str(6000 + n),
                "timeout_s": str(rnd.randint(1, 60)),
                "max_connections": str(rnd.randint(4, 200)),
                "log_level": rnd.choice(("info", "warn", "debug")),
                "enabled": rnd.choice(("true", "false")),
                "region": rnd.choice(("eu-west-1", "eu-central-1")),
                "owner": rnd.choice(("team-atlas", "team-wren", "team-kite")),
            }[key]
            lines.append(f"{key} = {value}")
        lines.append("")
        if n == 61:
            lines[-5:-5] = [
                "[database.primary]",
                "host = pg-primary.internal",
                "port = 5432",
                "pool_size = 48",
                "pool_timeout_s = 12",
                "",
            ]
            answers.append(len(lines) - 8)
        n += 1
    return tuple(lines), tuple(answers)


def _markdown_handbook(seed: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    rnd = random.Random(seed)
    topics = (
        "Shipping",
        "Accounts",
        "Gift cards",
        "Newsletters",
        "Privacy",
        "Store hours",
        "Warranty",
        "Sizes",
    )
    filler = (
        "Our team answers every message within one working day.",
        "You can change this in the settings page of your account at any time.",
        "Orders placed before 2 pm leave the warehouse the same day.",
        "We ship to all countries of the European Union and to Switzerland.",
        "The details are listed on the product page under Specifications.",
        "Contact the support desk if anything is unclear.",
        "Prices include VAT for deliveries inside the European Union.",
        "Every parcel is tracked; the tracking link arrives by e-mail.",
    )
    lines = ["# Customer handbook", ""]
    answers: list[int] = []
    n = 0
    while sum(len(line) + 1 for line in lines) < _TARGET_CHARS:
        lines += [f"## {topics[n % len(topics)]} ({n // len(topics) + 1})", ""]
        for _ in range(rnd.randint(4, 8)):
            lines.append(" ".join(rnd.sample(filler, 2)))
        lines.append("")
        if n == 33:
            lines += [
                "## Refunds",
                "",
                "Refunds are issued within 14 days of receiving the parcel, to the original card.",
                "Items must be unused and in their original packaging.",
                "",
            ]
            answers.append(len(lines) - 3)
        n += 1
    return tuple(lines), tuple(answers)


def _invoices_csv(rnd: random.Random, i: int) -> str:
    return (
        f"INV-{20000 + i * 3},2026-10-{rnd.randint(1, 31):02d},ACME-{rnd.randint(100, 999)},"
        f"{rnd.randint(50, 9000)}.{rnd.randint(0, 99):02d},EUR,{rnd.choice(('paid', 'paid', 'open', 'overdue'))}"
    )


def _python_source(seed: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    rnd = random.Random(seed)
    lines = [
        '"""Account services."""',
        "",
        "from __future__ import annotations",
        "",
        "import hashlib",
        "import os",
        "",
    ]
    answers: list[int] = []
    n = 0
    verbs = ("load", "render", "update", "list", "count", "export", "merge", "archive")
    nouns = ("profile", "address", "order", "invoice", "coupon", "review", "wishlist", "avatar")
    while sum(len(line) + 1 for line in lines) < _TARGET_CHARS:
        name = f"{verbs[n % len(verbs)]}_{nouns[(n // len(verbs)) % len(nouns)]}_{n}"
        lines += [
            "",
            f"def {name}(db, account_id: int, limit: int = {rnd.randint(10, 100)}) -> list[dict]:",
            f'    """{name.replace("_", " ").capitalize()} for one account."""',
            f'    rows = db.query("select * from {nouns[n % len(nouns)]}s where account_id = %s limit %s", (account_id, limit))',
            "    result = []",
            "    for row in rows:",
            f'        row["label"] = row.get("name", "").strip()[:{rnd.randint(20, 80)}]',
            "        result.append(row)",
            "    return result",
        ]
        if n == 57:
            lines += [
                "",
                "def seal(raw: str, salt: bytes | None = None) -> tuple[bytes, bytes]:",
                '    """Turn a secret into something that cannot be read back."""',
                "    salt = salt or os.urandom(16)",
                '    digest = hashlib.pbkdf2_hmac("sha256", raw.encode(), salt, 600_000)',
                "    return salt, digest",
            ]
            answers.append(len(lines) - 2)
        n += 1
    return tuple(lines), tuple(answers)


def _tuning() -> list[Case]:
    ini, ini_answers = _ini_config(709)
    handbook, handbook_answers = _markdown_handbook(710)
    source, source_answers = _python_source(712)
    return [
        _case(
            "java-e777",
            "app log (Java)",
            "logs/orders.log",
            "the ERROR lines with code E777",
            "shared",
            held_out=False,
            seed=701,
            noise=_java_app,
            answers=[
                (
                    0.16,
                    "2026-12-02 11:03:12.118 ERROR 1 --- [http-nio-8080-exec-4] c.s.o.PaymentClient : ERROR code=E777 ledger write rejected: duplicate key",
                ),
                (
                    0.58,
                    "2026-12-02 11:28:40.902 ERROR 1 --- [http-nio-8080-exec-9] c.s.o.PaymentClient : ERROR code=E777 ledger write rejected: duplicate key",
                ),
                (
                    0.93,
                    "2026-12-02 11:49:55.377 ERROR 1 --- [scheduling-2] c.s.o.LedgerSync : ERROR code=E777 reconciliation aborted",
                ),
            ],
        ),
        _case(
            "java-oom",
            "app log (Java)",
            "logs/checkout.log",
            "why the checkout service crashed",
            "own",
            held_out=False,
            seed=702,
            noise=_java_app,
            answers=[
                (
                    0.71,
                    "2026-12-02 11:37:02.551 ERROR 1 --- [http-nio-8080-exec-3] o.a.c.c.C.[dispatcherServlet] : java.lang.OutOfMemoryError: Java heap space",
                ),
                (
                    0.72,
                    "2026-12-02 11:37:04.009 WARN 1 --- [main] kubelet : container killed: OOMKilled exit_code=137 restarts=4",
                ),
            ],
        ),
        _case(
            "nginx-503",
            "access log (nginx)",
            "logs/access.log",
            "the requests that returned status 503",
            "shared",
            held_out=False,
            seed=703,
            noise=_nginx,
            answers=[
                (
                    0.37,
                    '93.184.12.7 - - [05/Dec/2026:10:21:07 +0100] "POST /checkout HTTP/1.1" 503 512 "-" "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"',
                ),
                (
                    0.81,
                    '81.2.69.160 - - [05/Dec/2026:10:47:33 +0100] "POST /checkout HTTP/1.1" 503 512 "-" "Mozilla/5.0 (X11; Linux x86_64) Firefox/131.0"',
                ),
            ],
        ),
        _case(
            "nginx-scan",
            "access log (nginx)",
            "logs/access-2.log",
            "which client was scanning us for vulnerabilities",
            "own",
            held_out=False,
            seed=704,
            noise=_nginx,
            answers=[
                (
                    0.44,
                    '203.0.113.66 - - [05/Dec/2026:10:26:10 +0100] "GET /.env HTTP/1.1" 404 162 "-" "zgrab/0.x"',
                ),
                (
                    0.45,
                    '203.0.113.66 - - [05/Dec/2026:10:26:11 +0100] "GET /.git/config HTTP/1.1" 404 162 "-" "zgrab/0.x"',
                ),
                (
                    0.46,
                    '203.0.113.66 - - [05/Dec/2026:10:26:12 +0100] "GET /wp-admin/setup-config.php HTTP/1.1" 404 162 "-" "zgrab/0.x"',
                ),
            ],
        ),
        _case(
            "json-declined",
            "JSON lines",
            "logs/payments.jsonl",
            "the events where a payment was declined",
            "shared",
            held_out=False,
            seed=705,
            noise=_json_events,
            answers=[
                (
                    0.29,
                    '{"ts": "2026-12-03T08:17:44.201Z", "level": "error", "svc": "payments", "msg": "payment declined: insufficient funds", "req": "9f2c4e1a7b00", "ms": 88}',
                ),
                (
                    0.66,
                    '{"ts": "2026-12-03T08:39:02.877Z", "level": "error", "svc": "payments", "msg": "payment declined: card expired", "req": "1d0e77b2c4f1", "ms": 61}',
                ),
            ],
        ),
        _case(
            "json-ldap",
            "JSON lines",
            "logs/identity.jsonl",
            "why people could not log on this morning",
            "own",
            held_out=False,
            seed=706,
            noise=_json_events,
            answers=[
                (
                    0.52,
                    '{"ts": "2026-12-03T08:31:15.004Z", "level": "error", "svc": "identity", "msg": "LDAP bind failed: invalid credentials for cn=svc-identity", "req": "77ab01c3d9e2", "ms": 3004}',
                ),
                (
                    0.53,
                    '{"ts": "2026-12-03T08:31:15.120Z", "level": "error", "svc": "identity", "msg": "directory unavailable, rejecting all authentications", "req": "77ab01c3d9e3", "ms": 1}',
                ),
            ],
        ),
        _case(
            "k8s-failedscheduling",
            "Kubernetes events",
            "events/cluster.txt",
            "the FailedScheduling events",
            "shared",
            held_out=False,
            seed=707,
            noise=_k8s_sched,
            answers=[
                (
                    0.24,
                    "31m    Warning FailedScheduling  pod/orders-5d8f9-x2k4l  0/3 nodes are available: 3 Insufficient memory.",
                ),
                (
                    0.74,
                    "8m     Warning FailedScheduling  pod/orders-5d8f9-p8z1q  0/3 nodes are available: 3 Insufficient memory.",
                ),
            ],
        ),
        _case(
            "pytest-red",
            "CI output (pytest)",
            "ci/pytest-4471.log",
            "why is the pipeline red",
            "own",
            held_out=False,
            seed=708,
            noise=_pytest_ci,
            answers=[
                (0.62, "tests/test_refunds.py::test_refund_rounding_3 FAILED [ 61%]"),
                (
                    0.97,
                    "FAILED tests/test_refunds.py::test_refund_rounding_3 - AssertionError: assert Decimal('10.01') == Decimal('10.00')",
                ),
            ],
        ),
        Case(
            "ini-pool",
            "config (INI)",
            "config/shop.ini",
            "the database pool_size",
            "shared",
            False,
            ini,
            ini_answers,
        ),
        Case(
            "handbook-refunds",
            "Markdown",
            "docs/handbook.md",
            "how do I get my money back",
            "own",
            False,
            handbook,
            handbook_answers,
        ),
        _case(
            "csv-invoice",
            "CSV",
            "data/invoices.csv",
            "the row of invoice INV-20933",
            "shared",
            held_out=False,
            seed=711,
            noise=_invoices_csv,
            header=("invoice,date,customer,amount,currency,status",),
            answers=[],
        ),
        Case(
            "source-seal",
            "source (Python)",
            "src/accounts.py",
            "where secrets are made unreadable before they are stored",
            "own",
            False,
            source,
            source_answers,
        ),
    ]


def _with_invoice(cases: list[Case]) -> list[Case]:
    """The invoice case's answering line is the noise row whose id the focus names."""
    out = []
    for case in cases:
        if case.name != "csv-invoice":
            out.append(case)
            continue
        index = next(i for i, line in enumerate(case.lines) if line.startswith("INV-20933,"))
        out.append(dataclasses.replace(case, answers=(index,)))
    return out


CASES: tuple[Case, ...] = tuple(_held_out() + _with_invoice(_tuning()))
"""Every case: the held-out ones first."""


def check_case(case: Case) -> list[str]:
    """What is wrong with ``case`` (empty when it is sound).

    A case's file is 40-75 KB; each answering line is where the case says; a ``shared``
    focus shares a word or literal with every answering line, an ``own`` focus with none
    (judged by the pass's own matcher, :func:`leanloop.pruning.rank.focus_of`).
    """
    focus = focus_of(case.focus)
    problems = []
    size = len(case.text)
    if not _MIN_CHARS <= size <= 75_000:
        problems.append(f"{case.name}: {size} characters")
    if not 1 <= len(case.answers) <= 4:
        problems.append(f"{case.name}: {len(case.answers)} answering lines")
    scores = line_scores(list(case.lines), focus)
    for index in case.answers:
        line = case.lines[index]
        shared = [w for w in focus.words if w in line.lower()]
        shared += [literal for literal in focus.literals if literal in line]
        if case.focus_kind == "own" and shared:
            problems.append(f"{case.name}: line {index + 1} shares {shared} with the focus")
        if case.focus_kind == "shared" and scores[index] == 0:
            problems.append(f"{case.name}: line {index + 1} shares no word with the focus")
    return problems
