"""Units of the pass's reading plan: focus terms, line scores, windows and their packing."""

from __future__ import annotations

from leanloop.pruning.rank import (
    LITERAL_WEIGHT,
    Focus,
    Window,
    focus_of,
    line_scores,
    pack_windows,
    plan_windows,
)


def test_focus_keeps_words_and_exact_literals() -> None:
    focus = focus_of('the ERROR lines for ticket RB-43925 in "db.pool" at 590ms')
    assert "error" in focus.words and "ticket" in focus.words
    assert "lines" not in focus.words  # a stopword
    assert {"ERROR", "RB-43925", "db.pool", "590ms"} <= set(focus.literals)


def test_apostrophes_quote_nothing() -> None:
    focus = focus_of("Why isn't order RB-43925 in the customer's export?")
    assert focus.literals == ("RB-43925",)
    assert focus_of("the 'db.pool' lines").literals == ("db.pool",)


def test_task_context_frame_words_are_not_looked_for() -> None:
    focus = focus_of("The user asked: why did it stop?\nThe assistant's latest reasoning: hmm")
    assert focus.words == ("stop", "hmm")


def test_rare_terms_score_and_common_ones_do_not() -> None:
    lines = [f"INFO job {i} ok queue=nightly" for i in range(20)]
    lines[7] = "ERROR job 7 deadlock detected queue=nightly"
    scores = line_scores(lines, focus_of("the nightly deadlock"))
    assert scores[7] > 0
    assert all(score == 0 for i, score in enumerate(scores) if i != 7)  # nightly: everywhere


def test_a_plural_finds_its_singular() -> None:
    scores = line_scores(["ERROR one", "INFO two", "INFO three"], focus_of("the errors"))
    assert scores[0] > 0 and scores[1:] == [0.0, 0.0]


def test_a_literal_counts_more_than_a_word() -> None:
    lines = ["code E42 seen", "a word seen", "nothing", "nothing", "nothing"]
    scores = line_scores(lines, Focus(words=("word",), literals=("E42",)))
    assert scores[0] == LITERAL_WEIGHT * scores[1]


def test_no_focus_scores_nothing() -> None:
    assert line_scores(["a", "b"], focus_of("")) == [0.0, 0.0]


def test_windows_grow_around_hits_best_first_and_the_rest_follows_in_order() -> None:
    sizes = [10] * 20
    scores = [0.0] * 20
    scores[4], scores[15] = 1.0, 3.0
    windows = plan_windows(sizes, scores, max_chars=30)
    assert windows[0] == Window(14, 16, 3.0)  # the best hit first, one neighbour each side
    assert windows[1] == Window(3, 5, 1.0)
    rest = windows[2:]
    assert all(w.score == 0 for w in rest)
    assert [w.first for w in rest] == sorted(w.first for w in rest)
    covered = sorted(i for w in windows for i in range(w.first, w.last + 1))
    assert covered == list(range(20))  # every entry in exactly one window


def test_windows_never_overlap_and_a_near_hit_joins_the_window() -> None:
    scores = [0.0, 2.0, 1.0, 0.0, 0.0, 0.0]
    windows = plan_windows([10] * 6, scores, max_chars=40)
    assert windows[0] == Window(0, 3, 3.0)


def test_scoring_and_empty_windows_never_share_a_request() -> None:
    windows = [Window(10, 11, 2.0), Window(0, 1, 1.0), Window(2, 9, 0.0)]
    sizes = [10] * 12
    batches = pack_windows(windows, sizes, budget=1_000)
    assert batches == [[Window(0, 1, 1.0), Window(10, 11, 2.0)], [Window(2, 9, 0.0)]]


def test_packing_respects_the_budget() -> None:
    windows = [Window(i * 2, i * 2 + 1, 1.0) for i in range(4)]
    batches = pack_windows(windows, [10] * 8, budget=45)
    assert [len(batch) for batch in batches] == [2, 2]


def test_the_path_being_read_is_not_looked_for_inside_it() -> None:
    focus = focus_of("in logs/api-04.log, the build_tag of service=report-lynx").without(
        "./logs/api-04.log"
    )
    assert "logs/api-04.log" not in focus.literals
    assert "api-04.log" not in focus.words and "logs" not in focus.words
    assert {"build_tag", "report-lynx"} <= set(focus.literals)
    header = "# logs/api-04.log: request log, one event per line"
    wanted = "service=report-lynx env=prod build_tag=b4443a77"
    assert line_scores([header, wanted, "filler"], focus)[0] == 0.0


def test_no_subject_leaves_the_focus_as_it_is() -> None:
    focus = focus_of("the ERROR lines in app.log")
    assert focus.without(None) == focus
    assert focus.without("  ") == focus
