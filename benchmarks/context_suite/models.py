"""The suite's deterministic models: the reader, the extractor and the summarizer.

- :class:`ReaderModel` follows its task's fixed plan of tool calls and, when the plan is
  done (or it is asked for an answer, or offered no tools), answers with the facts it can
  still *see* in the messages it was sent. Its answer is right only if the context
  strategy kept what mattered.
- :class:`ExtractorModel` is a pruning model for leanloop: it answers in the marker
  format with the numbered lines that mention what the reader is looking for.
- :class:`SummarizerModel` is the summary model for LangChain's ``SummarizationMiddleware``:
  it keeps the user's request and the lines that hold ``key=value`` facts, those naming a
  key the request asks about first, up to a budget.

All three measure every request with the reference counter and refuse one over the window
(see :mod:`benchmarks.context_suite.reference`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware.context_editing import DEFAULT_TOOL_PLACEHOLDER
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from benchmarks.context_suite.reference import Session
from benchmarks.context_suite.tasks import ReadFile, Search, Step, Task
from leanloop.budget import TRIM_NOTE

__all__ = ["READ_PAGE", "ExtractorModel", "ReaderModel", "SummarizerModel", "visible_facts"]

READ_PAGE = 200
"""Lines the reader asks for per read_file call (the tool's own default page)."""
MAX_PAGES_PER_FILE = 40
"""A plan step gives up on a file after this many pages (a reader never loops forever)."""
FOCUS_ARG = "output_prune_context"
"""leanloop's focus meta-argument: sent only when the bound schema offers it."""
VALUE_END = r"(?![\w-]|\.\w)"
"""A value ends where no word character, hyphen or dotted continuation follows."""

_NEXT = re.compile(r"next: read_file\(path=\"[^\"]*\", offset=(\d+)\)")
_NUMBERED = re.compile(r"^\s*(\d+)\| ", re.MULTILINE)
_KEPT = re.compile(r"^\d+/(\d+) lines kept", re.MULTILINE)
_PROMPT_LINE = re.compile(r"^\s*(\d+)\| (.*)$")
_BACKTICKED = re.compile(r"`([A-Za-z0-9_]+)`")
_SNAKE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_KEY_VALUE = re.compile(r"\b[a-z][a-z0-9_]*(?:=|: )[^\s,}]")
_TAG = re.compile(r"</?(?:message|tool_call)[^>]*>")


class _FakeChatModel(BaseChatModel):
    """What the three models share: a session, tool binding as schemas, one reply."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    session: Session
    model_name: str = "context-suite"

    @property
    def _llm_type(self) -> str:
        return "context-suite"

    def bind_tools(
        self,
        tools: Sequence[Mapping[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools the way provider models do: as OpenAI-format schemas."""
        del tool_choice, kwargs  # the plan decides; nothing else changes a reply
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = list(kwargs.get("tools") or [])
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages, tools))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, None, **kwargs)

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        raise NotImplementedError


# --- the reader ---------------------------------------------------------------------------


@dataclass
class _Pending:
    """The reader's call whose result it has not looked at yet."""

    call_id: str
    step: Step
    offset: int


@dataclass
class _PlanState:
    task: Task
    index: int = 0
    offset: int = 1
    pages: int = 0
    calls: int = 0
    pending: _Pending | None = None
    notes: list[str] = field(default_factory=list)


def visible_facts(task: Task, messages: Sequence[BaseMessage]) -> list[str]:
    """The fragments (``key=value``) of ``task``'s needles that ``messages`` show."""
    seen = "\n".join(str(m.content) for m in messages)
    return [
        n.fragment
        for n in task.needles
        if re.search(re.escape(n.fragment) + VALUE_END, seen) is not None
    ]


class ReaderModel(_FakeChatModel):
    """The reader policy (see the module docstring); call :meth:`begin` before each run."""

    _state: _PlanState | None = PrivateAttr(default=None)

    def begin(self, task: Task) -> None:
        """Start ``task``'s plan from its first step."""
        self._state = _PlanState(task)

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        state = self._state
        if state is None:
            msg = "ReaderModel.begin(task) was not called"
            raise RuntimeError(msg)
        with self.session.request("reader", messages, tools) as request:
            if tools and not _asked_to_answer(messages):
                _observe(state, messages)
                call = _next_call(state, _focus_tools(tools))
                if call is not None:
                    reply = AIMessage(content="", tool_calls=[call])
                    return _with_usage(reply, request.tokens)
            return _with_usage(AIMessage(content=_answer(state.task, messages)), request.tokens)


def _with_usage(reply: AIMessage, tokens: int) -> AIMessage:
    out = max(1, len(str(reply.content)) // 4 + 10 * len(reply.tool_calls))
    reply.usage_metadata = {"input_tokens": tokens, "output_tokens": out, "total_tokens": tokens}
    return reply


def _asked_to_answer(messages: Sequence[BaseMessage]) -> bool:
    """A user turn after the reader's own turns: leanloop's synthesis or final prompt."""
    last = messages[-1] if messages else None
    if not isinstance(last, HumanMessage) or last.additional_kwargs.get("leanloop_tool_result"):
        return False
    return any(isinstance(m, AIMessage) for m in messages[:-1])


def _focus_tools(tools: list[dict[str, Any]]) -> set[str]:
    names = set()
    for tool in tools:
        function = tool.get("function", tool)
        properties = function.get("parameters", {}).get("properties", {})
        if FOCUS_ARG in properties:
            names.add(function.get("name", ""))
    return names


def _observe(state: _PlanState, messages: Sequence[BaseMessage]) -> None:
    """Read the result of the pending call, if the request still shows it, and move on."""
    pending, state.pending = state.pending, None
    if pending is None:
        return
    shown = next(
        (
            str(m.content)
            for m in reversed(messages)
            if isinstance(m, ToolMessage) and m.tool_call_id == pending.call_id
        ),
        None,
    )
    if isinstance(pending.step, ReadFile):
        following = _next_offset(shown, pending.offset)
        state.pages += 1
        if following is not None and state.pages < MAX_PAGES_PER_FILE:
            state.offset = following
            return
    state.index, state.offset, state.pages = state.index + 1, 1, 0


def _next_offset(shown: str | None, offset: int) -> int | None:
    """Where to read next after a page at ``offset``; ``None`` when the file is done.

    A page the reader cannot see (dropped, cleared or trimmed before it was sent) ends
    the file: without it the reader cannot tell where the page, or the file, ended.
    """
    if shown is None or shown.strip() == DEFAULT_TOOL_PLACEHOLDER or TRIM_NOTE in shown:
        return None
    if "end of file]" in shown or "past the end" in shown:
        return None
    # leanloop's compact info line ("3/150 lines kept; …") counts the page's lines; the
    # pass leaves out the closing line only when it said "end of file". Fewer lines than
    # asked for: the file ended.
    kept = _KEPT.search(shown)
    if kept is not None and "\n[lines " not in shown and int(kept[1]) < READ_PAGE:
        return None
    if (found := _NEXT.search(shown)) is not None:
        return int(found[1])
    if "[PRUNE_OUTPUT_START]" in shown:  # a pruned page covered the whole window
        return offset + READ_PAGE
    numbers = [int(n) for n in _NUMBERED.findall(shown)]
    if numbers and max(numbers) >= offset:  # a page cut short: go on after its last line
        return max(numbers) + 1
    return offset + READ_PAGE


def _next_call(state: _PlanState, focus_tools: set[str]) -> ToolCall | None:
    if state.index >= len(state.task.steps):
        return None
    step = state.task.steps[state.index]
    args: dict[str, Any]
    if isinstance(step, ReadFile):
        name = "read_file"
        args = {"path": step.path, "offset": state.offset, "limit": READ_PAGE}
        focus = f"lines with {', '.join(step.keys)}; keep the [lines …] footer line"
    elif isinstance(step, Search):
        name = "search"
        args = {"pattern": step.pattern, "path": step.path}
        focus = f"lines with {', '.join(step.keys)}"
    else:
        name = "read_file"
        args = {"path": step.path, "offset": step.offset, "limit": step.limit}
        focus = ""
    if focus and name in focus_tools:
        args[FOCUS_ARG] = focus
    state.calls += 1
    call_id = f"call_{state.task.id}_{state.calls}"
    offset = state.offset if isinstance(step, ReadFile) else 0
    state.pending = _Pending(call_id, step, offset)
    return ToolCall(name=name, args=args, id=call_id, type="tool_call")


def _answer(task: Task, messages: Sequence[BaseMessage]) -> str:
    found = visible_facts(task, messages)
    missing = [n.key for n in task.needles if n.fragment not in found]
    text = "Found: " + ("; ".join(found) if found else "nothing")
    return text + (f". Not found: {', '.join(missing)}." if missing else ".")


# --- the extractor --------------------------------------------------------------------------


class ExtractorModel(_FakeChatModel):
    """Keeps the numbered lines that mention what the reader looks for (marker format)."""

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        with self.session.request("extractor", messages, tools):
            return AIMessage(content=extract(str(messages[-1].content)))


def extract(prompt: str) -> str:
    """The extractor's answer to one leanloop extraction prompt."""
    wanted, footer = _wanted(prompt)
    lines = _output_lines(prompt)
    kept = [
        line
        for line in lines
        if (body := _body(line)) is not None
        and (
            any(term in body.lower() for term in wanted)
            or (footer and body.lstrip().startswith("[lines"))
        )
    ]
    total = sum(len(line) for line in lines)
    chars = sum(len(line) for line in kept)
    info = (
        f"kept {len(kept)} of {len(lines)} lines ({chars} of {total} characters) "
        f"mentioning {', '.join(sorted(wanted)) or 'nothing asked'}"
    )
    output = "\n".join(kept)
    return f"[PRUNE_INFO_START]\n{info}\n[PRUNE_INFO_END]\n[PRUNE_OUTPUT_START]\n{output}\n" + (
        "[PRUNE_OUTPUT_END]"
    )


def _wanted(prompt: str) -> tuple[set[str], bool]:
    """The terms to keep lines for, and whether to keep the page footer."""
    focus = re.search(r"^The reader is looking for: (.*)$", prompt, re.MULTILINE)
    if focus is not None:
        text = focus[1]
    else:
        context = re.search(r"Task context:\n(.*?)\n\nTool output", prompt, re.DOTALL)
        text = context[1] if context else ""
    terms = set(_BACKTICKED.findall(text)) or set(_SNAKE.findall(text))
    return {t.lower() for t in terms}, "[lines" in text


def _output_lines(prompt: str) -> list[str]:
    start = prompt.find("\nTool output (")
    if start < 0:
        return []
    body = prompt[prompt.index("\n", start + 1) + 1 :]
    end = body.rfind("\n\nAnswer in the marker format.")
    return (body[:end] if end >= 0 else body).split("\n")


def _body(line: str) -> str | None:
    numbered = _PROMPT_LINE.match(line)
    return numbered[2] if numbered else None


# --- the summarizer -------------------------------------------------------------------------


class SummarizerModel(_FakeChatModel):
    """Summarises by keeping fact lines up to ``budget_chars`` (see the module docstring)."""

    budget_chars: int = 3_000

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        with self.session.request("summarizer", messages, tools):
            return AIMessage(content=summarise(str(messages[-1].content), self.budget_chars))


def summarise(prompt: str, budget_chars: int) -> str:
    """The summary of the conversation in a ``SummarizationMiddleware`` prompt."""
    section = prompt.split("Messages to summarize:", 1)[-1]
    section = section.rsplit("</messages>", 1)[0]
    intent = _intent(section)
    terms = {t.lower() for t in _BACKTICKED.findall(intent)}
    lines = [
        line.strip()
        for line in _TAG.sub("\n", section).split("\n")
        if line.strip() and line.strip() not in intent and not line.startswith("#")
    ]
    lines = list(dict.fromkeys(lines))
    first = [line for line in lines if any(term in line.lower() for term in terms)]
    rest = [line for line in lines if line not in first and _KEY_VALUE.search(line)]
    head = f"## SESSION INTENT\n{intent}\n\n## SUMMARY\n"
    kept: list[str] = []
    size = len(head)
    for line in [*first, *rest]:
        if size + len(line) + 1 > budget_chars:
            break
        kept.append(line)
        size += len(line) + 1
    return head + "\n".join(kept)


def _intent(section: str) -> str:
    human = re.search(r'<message type="human">(.*?)</message>', section, re.DOTALL)
    text = human[1] if human else ""
    if "## SESSION INTENT" in text:  # an earlier summary: carry its intent on
        after = text.split("## SESSION INTENT", 1)[1].strip()
        return after.split("\n", 1)[0].strip()
    if text.startswith("Here is a summary"):  # an earlier summary that kept no intent
        return "(not known: the earlier summary did not keep the request)"
    return text.strip()
