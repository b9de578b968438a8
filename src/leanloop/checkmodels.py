"""``leanloop validate --check-models``: build every agent's models, one verdict per agent."""

from __future__ import annotations

import sys

from leanloop.exceptions import SpecError, SpecIssue
from leanloop.spec.types import ModelSpec

__all__ = ["check_models"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def check_models(file: str) -> int:
    """Load each agent on its own and build its models; one line per agent, every problem once.

    An agent whose file entry or model is broken does not stop the others from being
    checked (each is loaded with ``only=``, as ``run --agent`` loads it); a problem shared
    by several agents (a named model they all use) is printed once.
    """
    from leanloop.spec import load_specs  # noqa: PLC0415 - keep `leanloop --help` fast

    names = _agent_names(file)
    built: dict[int, tuple[str, list[SpecIssue]]] = {}  # id(ModelSpec) → (class, problems)
    printed: set[str] = set()
    verdicts: list[str] = []
    for name in names:
        classes: list[str] = []
        issues: list[SpecIssue] = []
        try:
            spec = load_specs(file, only=name)[name]
        except SpecError as exc:
            issues = list(exc.issues)
        else:
            for label, model in (("model", spec.model), ("pruning model", spec.pruning_model)):
                if model is None:
                    continue
                if id(model) not in built:
                    built[id(model)] = _build_model(model)
                kind, found = built[id(model)]
                issues += found
                classes.append(f"{label}: {kind}")
        for issue in issues:
            if str(issue) not in printed:
                printed.add(str(issue))
                print(f"error: {issue} (agent {name})", file=sys.stderr)
        if issues:
            plural = "s" if len(issues) > 1 else ""
            verdicts.append(f"failed: {name} ({len(issues)} problem{plural})")
        else:
            verdicts.append(f"ok: {name} ({', '.join(classes)})")
    for line in verdicts:
        print(line)
    return EXIT_BAD_INPUT if any(v.startswith("failed") for v in verdicts) else EXIT_OK


def _agent_names(file: str) -> list[str]:
    """The agents a file declares; the whole file's problems when it has no readable list."""
    from leanloop.spec import load_specs  # noqa: PLC0415 - keep `leanloop --help` fast

    try:
        return list(load_specs(file))
    except SpecError as whole:
        try:
            import yaml  # noqa: PLC0415 - only when the file has problems

            with open(file, encoding="utf-8-sig") as stream:
                agents = yaml.safe_load(stream).get("agents")
        except Exception:  # unreadable as YAML: the load's own error says why
            raise whole from None
        if not isinstance(agents, dict) or not agents:
            raise
        return [str(name) for name in agents]


def _build_model(model: ModelSpec) -> tuple[str, list[SpecIssue]]:
    """Build ``model`` (no request is sent): its class name, or its problems, located."""
    from leanloop.models import build_chat_model  # noqa: PLC0415 - imports LangChain

    try:
        chat_model = build_chat_model(model)
    except SpecError as exc:
        return "", list(exc.issues)
    except Exception as exc:  # a provider's own error that escaped: still one located line
        text = f"cannot build the model: {type(exc).__name__}: {exc}"
        if model.api_key:
            text = text.replace(model.api_key, "***")
        loc = model.location
        if loc is None:
            return "", [SpecIssue("<model>", None, None, model.name or "model", text)]
        return "", [SpecIssue(loc.source, loc.line, loc.column, loc.path, text)]
    return type(chat_model).__name__, []
