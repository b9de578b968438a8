"""A second ranker by meaning: a small static embedding model, installed from the package index.

A focus in a user's own words ("how do I get my money back") shares no word with the line
that answers it ("Refunds are issued within 14 days…"), so the word match
(:mod:`leanloop.pruning.rank`) scores every line zero and the kinds-of-line request
(:mod:`leanloop.pruning.shapes`) can only show the rarest kinds. WordLlama's token
embeddings (MIT; 16 MB of weights *inside its wheel*, so nothing is fetched at run time)
place "refund" near "money back" and "liveness probe failed" near "keeps dying": the lines
nearest the focus are shown to the pruning model beside the rare ones, and the model still
decides (ADR 0006 amendment 8).

The embeddings are averaged token vectors, not a sentence model: they rank a 50 KB output
in about 0.1 s on one core, which a pass can afford before every kinds request, and they
are often wrong, which is why they only choose what the model is shown.

WordLlama's own loader looks for its tokenizer under a folder its wheel does not have and
then downloads it from a model hub; this module loads the packaged files by path and never
calls that loader, so a missing file is "no ranker", never a download.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Embedder", "load_embedder", "meaning_scores"]

logger = logging.getLogger(__name__)

_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_TENSOR = "embedding.weight"
# A line is embedded by its first characters: what a line is about comes first, and a
# minified JSON line of 20 KB would cost as much as the rest of the output.
_LINE_CHARS = 400


class Embedder(Protocol):
    """What :func:`meaning_scores` needs: unit vectors for texts (WordLlama's inference)."""

    def embed(self, texts: list[str], norm: bool = ...) -> Any:
        """One vector per text, as rows of a NumPy array."""


@functools.cache
def load_embedder() -> Embedder | None:
    """The packaged WordLlama model, loaded once per process; ``None`` when not installed.

    Read-only and stateless, so one instance serves every agent and thread of a process.
    """
    # Imported here: NumPy, the tokenizer and WordLlama cost a start about 0.7 s
    # (measured), and only a pass that sends a kinds request needs them.
    try:
        import wordllama  # noqa: PLC0415
        from safetensors import safe_open  # noqa: PLC0415
        from tokenizers import Tokenizer  # noqa: PLC0415
        from wordllama.inference import WordLlamaInference  # noqa: PLC0415
    except ImportError:
        logger.debug("wordllama is not installed: pruning ranks lines by their words alone")
        return None
    root = Path(wordllama.__file__).parent
    weights, tokenizer = root / _WEIGHTS, root / _TOKENIZER
    if not weights.is_file() or not tokenizer.is_file():
        logger.warning(
            "wordllama %s lacks its packaged model (%s): pruning ranks lines by their words alone",
            getattr(wordllama, "__version__", "?"),
            _WEIGHTS if not weights.is_file() else _TOKENIZER,
        )
        return None
    with safe_open(str(weights), framework="np", device="cpu") as handle:
        embedding = handle.get_tensor(_TENSOR)
    model: Embedder = WordLlamaInference(embedding, Tokenizer.from_file(str(tokenizer)))
    return model


def meaning_scores(
    focus: str, lines: Sequence[str], embedder: Embedder | None = None
) -> list[float] | None:
    """Each line's cosine similarity to ``focus`` (``None``: no ranker installed).

    Args:
        focus: What the main model looks for, in its own words.
        lines: The output's lines (blank ones score 0).
        embedder: The model to use; the packaged one by default.

    Returns:
        One score in [-1, 1] per line, or ``None`` when there is no model or nothing to rank.
    """
    model = embedder if embedder is not None else load_embedder()
    if model is None or not focus.strip() or not lines:
        return None
    texts = [line[:_LINE_CHARS] if line.strip() else "" for line in lines]
    places = [i for i, text in enumerate(texts) if text]
    if not places:
        return None
    vectors = model.embed([texts[i] for i in places], norm=True)
    query = model.embed([focus], norm=True)[0]
    scores = [0.0] * len(lines)
    for i, value in zip(places, vectors @ query, strict=True):
        scores[i] = float(value)
    return scores
