"""Batch runs: an agent on every task of a JSONL file (``leanloop batch``).

- :mod:`~leanloop.batch.tasks` reads and checks the tasks file;
- :mod:`~leanloop.batch.results` appends one durable line per finished task and knows
  which ids are done (a batch run again resumes);
- :mod:`~leanloop.batch.runner` runs tasks here, a bounded number at a time;
- :mod:`~leanloop.batch.ray_runner` runs them as Ray tasks (``leanloop[ray]``);
- :mod:`~leanloop.batch.summary` adds up the results (accuracy, tokens, time);
- :mod:`~leanloop.batch.progress` draws the progress line on a terminal.

Importing this package imports neither LangChain nor Ray.
"""

from __future__ import annotations

from leanloop.batch.results import ResultsFile
from leanloop.batch.summary import BatchSummary, summarize
from leanloop.batch.tasks import BatchTask, read_tasks

__all__ = ["BatchSummary", "BatchTask", "ResultsFile", "read_tasks", "summarize"]
