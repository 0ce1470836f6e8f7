"""Structured errors of the readers, streaming, TREC runs, Parquet, Dask/Spark and comparisons.

Each error names its class, the option it is about, the offending value, where the problem is
and the fix (per front end where the command line needs other words), and survives pickling
(Dask sends a worker's error to the client pickled).
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastndcg
from fastndcg._errors import (
    COMMAND,
    NOT_GIVEN,
    PYTHON,
    BackendUnavailableError,
    ColumnNotFoundError,
    FastNDCGError,
    InputError,
    InputTypeError,
    OptionError,
    OptionTypeError,
)
from fastndcg.stream import StreamScorer

TABLE = pa.table({"qid": [1, 1, 2], "grade": [2, 0, 1], "score": [0.9, 0.1, 0.5]})


def raised(call, *args, **kwargs) -> FastNDCGError:
    """The error ``call`` raises (it must raise one of fastndcg's)."""
    with pytest.raises(FastNDCGError) as info:
        call(*args, **kwargs)
    return info.value


def same_data(a: FastNDCGError, b: FastNDCGError) -> None:
    assert type(a) is type(b) and str(a) == str(b) and a.args == b.args
    assert (a.message, a.option, a.where, a.fix, a.joiner) == (
        b.message,
        b.option,
        b.where,
        b.fix,
        b.joiner,
    )
    if a.value is NOT_GIVEN:  # a copy of the marker after pickling: same repr
        assert repr(b.value) == "NOT_GIVEN"
    else:
        assert a.value == b.value


# -- Arrow tables (fastndcg._io.arrow, fastndcg._tables) ---------------------------------------


def test_a_missing_column_is_a_key_error_with_the_option_and_its_fix():
    exc = raised(fastndcg.ndcg_table, TABLE, grade="label")
    assert isinstance(exc, ColumnNotFoundError) and isinstance(exc, KeyError)
    assert type(exc) is ColumnNotFoundError
    assert (exc.option, exc.value) == ("grade", "label")
    assert exc.fix == "Pass `grade='<column name>'`" and exc.joiner == ". "
    text = (
        "column 'label' (the grade column) not found; the table has columns: qid, grade, score. "
        "Pass grade='<column name>'"
    )
    # as the KeyError before: str() quotes the text, and code reporting one reads args[0]
    assert exc.args == (text,) and str(exc) == repr(text)
    assert exc.render() == text


def test_column_values_name_their_row_and_column():
    nulls = pa.table({"qid": [1, 1], "grade": [1, None], "score": [0.5, 0.4]})
    exc = raised(fastndcg.ndcg_table, nulls)
    assert type(exc) is InputError and exc.option is None
    assert exc.where == "row 1" and exc.value is None
    assert exc.fix == "fill or drop the nulls first (e.g. table.drop_null())"
    text = pa.table({"qid": [1], "grade": ["a"], "score": [0.5]})
    exc = raised(fastndcg.ndcg_table, text)
    assert type(exc) is InputTypeError and isinstance(exc, TypeError)
    assert exc.where == "column 'grade'" and exc.value == pa.string()
    exc = raised(fastndcg.ndcg_table, TABLE, grade=5)
    assert type(exc) is OptionTypeError and (exc.option, exc.value) == ("grade", 5)
    assert exc.message == "`grade=` must be a column name (str)" and exc.fix == "got 5"
    exc = raised(fastndcg.ndcg_table, np.zeros(3))
    assert type(exc) is InputTypeError and exc.joiner == ": "
    assert exc.fix == "pass a table of named columns, or the arrays themselves to fastndcg.ndcg"


# -- TREC files (fastndcg._io.trec_text, fastndcg._io.trec_join, fastndcg.trec) ----------------


@pytest.fixture
def trec(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 0.9 s\nq1 Q0 d2 2 0.8 s\n")
    return tmp_path


def test_trec_file_errors_name_the_file_and_line(trec):
    (trec / "short.qrels").write_text("# judgments\n\nq1 0 d1\n")
    exc = raised(fastndcg.ndcg_run, trec / "short.qrels", trec / "run")
    assert type(exc) is InputError and exc.option is None
    assert exc.where == f"line 3 of {trec / 'short.qrels'}" and exc.value == "q1 0 d1"
    assert exc.fix == "found 3: 'q1 0 d1'"
    (trec / "word.qrels").write_text("q1 0 d1 2\nq1 0 d2 high\n")
    exc = raised(fastndcg.ndcg_run, trec / "word.qrels", trec / "run")
    assert exc.where == f"line 2 of {trec / 'word.qrels'}" and exc.value == "high"
    (trec / "gz").write_bytes(b"\x1f\x8b...")
    exc = raised(fastndcg.ndcg_run, trec / "gz", trec / "run")
    assert exc.where == str(trec / "gz") and exc.fix == "decompress it first (gunzip)"


def test_a_repeated_pair_is_an_input_error_where_it_repeats(trec):
    (trec / "twice.run").write_text("q1 Q0 d1 1 0.9 s\nq1 Q0 d2 2 0.8 s\nq1 Q0 d1 3 0.7 s\n")
    exc = raised(fastndcg.ndcg_run, trec / "qrels", trec / "twice.run")
    assert type(exc) is InputError and exc.value == ("q1", "d1")
    assert exc.where == f"line 3 of {trec / 'twice.run'}"
    assert exc.fix == "each (query, document) pair must appear once"
    table = pa.table({"qid": ["a", "a"], "docid": ["x", "x"], "grade": [1.0, 0.0]})
    exc = raised(fastndcg.ndcg_run, table, trec / "run")
    assert exc.where == "qrels row 1"


def test_run_options_go_through_the_option_table(trec):
    qrels, run = trec / "qrels", trec / "run"
    exc = raised(fastndcg.ndcg_run, qrels, run, max_docs=2.0)
    assert type(exc) is OptionTypeError and (exc.option, exc.value) == ("max_docs", 2.0)
    exc = raised(fastndcg.ndcg_run, qrels, run, max_docs=0)
    assert type(exc) is OptionError and (exc.option, exc.value) == ("max_docs", 0)
    assert exc.message == "`max_docs=0` keeps no document of a ranking"
    exc = raised(fastndcg.ndcg_run, qrels, run, max_docs=5, ties="average")
    assert (exc.option, exc.joiner) == ("max_docs", ": ")
    assert exc.fix == "`ties='docid_desc'` or `ties='stable'`, not `ties='average'`"
    exc = raised(fastndcg.ndcg_run, qrels, run, missing="nope")
    assert type(exc) is OptionError and (exc.option, exc.value) == ("missing", "nope")
    exc = raised(fastndcg.ndcg_run, qrels, run, judged_only="yes")
    assert type(exc) is OptionTypeError and exc.option == "judged_only"
    exc = raised(fastndcg.ndcg_run, qrels, run, missing="error")
    assert type(exc) is InputError and (exc.value, exc.where) == ("q2", "query 'q2'")
    assert exc.fix == (
        "pass `missing='zero'` to score them 0 (trec_eval -c) or `missing='skip'` to leave them "
        "out (trec_eval without -c)"
    )


# -- Parquet (fastndcg._io.parquet, fastndcg._parquet) and streaming (fastndcg.stream) ---------

HIVE_PYTHON = (
    "'qid' names directories of the files (hive partitioning): pass "
    "pyarrow.dataset.dataset(path, partitioning='hive') as the source, with `group='memory'`"
)
HIVE_COMMAND = (
    "'qid' names directories of the files (hive partitioning), which the command does not "
    "read: write 'qid' into the files as a column, or score them from Python with "
    "fastndcg.ndcg_parquet(pyarrow.dataset.dataset(path, partitioning='hive'), group='memory')"
)


def test_hive_partitioning_gets_a_fix_per_front_end(tmp_path):
    pq.write_to_dataset(TABLE, tmp_path / "hive", partition_cols=["qid"])
    exc = raised(fastndcg.ndcg_parquet, tmp_path / "hive")
    assert isinstance(exc, ColumnNotFoundError) and exc.value == "qid"
    assert exc.where == str(tmp_path / "hive") and exc.joiner == ". "
    assert exc.fix == {PYTHON: HIVE_PYTHON, COMMAND: HIVE_COMMAND}
    problem = f"column 'qid' not found in {tmp_path / 'hive'}; it has columns: grade, score"
    assert exc.render() == exc.args[0] == f"{problem}. {HIVE_PYTHON.replace('`', '')}"
    assert exc.render(front=COMMAND) == f"{problem}. {HIVE_COMMAND}"


def test_input_not_grouped_by_query_gets_a_fix_per_front_end(tmp_path):
    scattered = pa.table({"qid": [1, 2, 1], "grade": [1, 0, 2], "score": [0.1, 0.2, 0.3]})
    pq.write_table(scattered, tmp_path / "scattered.parquet")
    exc = raised(fastndcg.ndcg_parquet, tmp_path / "scattered.parquet")
    assert type(exc) is InputError and (exc.value, exc.where) == (1, "rows 0..2")
    assert exc.fix == {
        PYTHON: "Sort it by 'qid', or group it in memory (ndcg_table, or "
        "ndcg_parquet(..., group='memory'))",
        COMMAND: "Sort it by 'qid', or group it in memory (--group memory)",
    }
    assert exc.render(front=COMMAND).endswith("or group it in memory (--group memory)")
    scorer = StreamScorer()
    scorer.feed(pa.table({"qid": [1, 2], "grade": [1, 0], "score": [0.5, 0.4]}))
    scorer.feed(pa.table({"qid": [1], "grade": [1], "score": [0.3]}))
    exc = raised(scorer.finish)
    assert (exc.value, exc.where) == (1, "query 1")
    assert (
        exc.fix_for(COMMAND) == "Sort the input by query id, or group it in memory (--group memory)"
    )


def test_parquet_options_get_one_type_on_every_path(tmp_path):
    pq.write_table(TABLE, tmp_path / "a.parquet")
    exc = raised(fastndcg.ndcg_parquet, tmp_path / "a.parquet", batch_rows="x")
    assert type(exc) is OptionTypeError and isinstance(exc, (TypeError, ValueError))
    assert (exc.option, exc.value, exc.fix) == ("batch_rows", "x", "got 'x'")
    exc = raised(fastndcg.ndcg_parquet, tmp_path / "a.parquet", batch_rows=None)
    assert (
        type(exc) is OptionTypeError and str(exc) == "batch_rows must be a positive int; got None"
    )
    exc = raised(fastndcg.ndcg_parquet, tmp_path / "a.parquet", batch_rows=0)
    assert type(exc) is OptionError and exc.value == 0
    exc = raised(fastndcg.ndcg_parquet, tmp_path / "a.parquet", group="rows")
    assert type(exc) is OptionError and (exc.option, exc.value) == ("group", "rows")
    exc = raised(fastndcg.ndcg_parquet, [tmp_path / "a.parquet", tmp_path / "a.parquet"])
    assert type(exc) is InputError and exc.fix == "list it once"
    exc = raised(fastndcg.ndcg_parquet, tmp_path / "a.parquet", weights=[1.0, 1.0])
    assert type(exc) is OptionTypeError and exc.option == "weights"


def test_streaming_errors():
    exc = raised(StreamScorer, ideal="global", ideal_grades=[1.0])
    assert type(exc) is OptionError and exc.option == "ideal_qid"
    assert exc.fix == "pass `ideal_grades=` with `ideal_qid=`"
    scorer = StreamScorer()
    scorer.feed(pa.table({"qid": [1], "grade": [1], "score": [0.5]}))
    exc = raised(scorer.feed, pa.table({"qid": ["a"], "grade": [1], "score": [0.5]}))
    assert type(exc) is InputTypeError and (exc.where, exc.value) == ("row 1", pa.string())


# -- what Dask and Spark share (fastndcg._scaleout) ---------------------------------------------


def job(**overrides):
    from fastndcg._scaleout import Job

    arguments = dict(
        qid="qid",
        grade="grade",
        score="score",
        n_threads=None,
        options={},
        keeps_order=False,
        order_hint="HINT",
    )
    return Job.create(**{**arguments, **overrides})


def test_a_job_checks_its_options_with_the_table():
    exc = raised(job, n_threads="2")
    assert type(exc) is OptionTypeError and (exc.option, exc.value) == ("n_threads", "2")
    assert type(raised(fastndcg.ndcg, [1, 0], [0.5, 0.4], n_threads="2")) is type(exc)
    exc = raised(job, qid=None)
    assert type(exc) is OptionTypeError and str(exc) == "qid= must be a column name (str); got None"
    exc = raised(job, grade=3)
    assert (exc.option, exc.value) == ("grade", 3)
    exc = raised(job, options={"ties": "stable"})
    assert type(exc) is OptionError and (exc.option, exc.value) == ("ties", "stable")
    assert exc.fix == "use one of `'average'`, `'pessimistic'`, `'optimistic'`, or HINT"
    exc = raised(job, score=None)
    assert (exc.option, exc.value, exc.fix) == ("score", None, "pass the score column, or HINT")


def test_partition_errors_keep_class_and_data():
    from fastndcg._scaleout import PARTITION_ROWS, _rows_of_a_partition, check_disjoint

    fix = {PYTHON: "do this", COMMAND: "do that"}
    original = InputTypeError("bad value at row 3", value=7, where="row 3", fix=fix)
    with pytest.raises(InputTypeError) as info, _rows_of_a_partition():
        raise original
    exc = info.value
    assert exc is not original and exc.__cause__ is original
    assert (exc.option, exc.value, exc.where, exc.message) == (None, 7, "row 3", original.message)
    assert str(exc) == str(original) + PARTITION_ROWS  # the text ends as it did
    assert exc.fix_for(COMMAND) == "do that" + PARTITION_ROWS
    with pytest.raises(OptionError) as info, _rows_of_a_partition():
        raise OptionError("no fix, at rows 2..5", option="k", value=0, where="rows 2..5")
    assert info.value.message == "no fix, at rows 2..5" + PARTITION_ROWS
    assert (info.value.option, info.value.value) == ("k", 0)
    # the place is the error's data, not its words: a query named "row 3" is no row
    for unnoted in (
        InputError("query 'row 3' has no relevant item", where="query 'row 3'"),
        OptionError("at row 3, says the text", option="k"),
        ValueError("not ours, at row 3"),
    ):
        with pytest.raises(type(unnoted)) as info, _rows_of_a_partition():
            raise unnoted
        assert info.value is unnoted
    exc = raised(check_disjoint, [(10, 30, 0), (0, 10, 1)])
    assert type(exc) is InputError and exc.where == "partitions 1 and 0"
    assert exc.value == (10, 30) and exc.fix.startswith("`colocated=True` promised")


def test_a_missing_engine_is_an_import_error():
    from fastndcg._training import require

    exc = raised(require, "fastndcg_no_such_module", "dask")
    assert type(exc) is BackendUnavailableError and isinstance(exc, ImportError)
    assert exc.value == "fastndcg_no_such_module"
    assert exc.fix == "install it with pip install 'fastndcg[dask]'"


# -- Dask and Spark -----------------------------------------------------------------------------


def test_dask_checks_in_the_client():
    dd = pytest.importorskip("dask.dataframe")
    import fastndcg.dask as fdask

    ddf = dd.from_pandas(TABLE.to_pandas(), npartitions=1)
    exc = raised(fdask.per_query, ddf, colocated=True, validate="nope")
    assert type(exc) is OptionError and (exc.option, exc.value) == ("validate", "nope")
    exc = raised(fdask.per_query, ddf, grade="label")
    assert isinstance(exc, ColumnNotFoundError) and exc.value == "label"
    exc = raised(fdask.per_query, ddf, colocated=True, npartitions=2)
    assert type(exc) is OptionError and (exc.option, exc.value) == ("npartitions", 2)
    exc = raised(fdask.per_query, TABLE.to_pandas())
    assert type(exc) is InputTypeError and exc.fix.startswith("Wrap a pandas DataFrame")
    exc = raised(fdask.per_query, ddf, ties="stable")
    assert exc.fix.endswith(
        "or pass `colocated=True` with partitions that each hold whole queries in their input order"
    )


def test_a_spark_worker_error_comes_back_as_its_class():
    pytest.importorskip("pyspark")
    import fastndcg.spark as fspark

    error = InputError("column 'grade' (grade) has a null at row 4", where="row 4", fix="fill")
    worker = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "stream.py", line 1, in feed',
            f"fastndcg._errors.InputError: {error}",
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "Traceback (most recent call last):",
            f"fastndcg._errors.InputError: {error} (row numbers count within one partition)",
            "",
        ]
    )
    exc = fspark._worker_error(RuntimeError(worker))
    assert type(exc) is InputError
    assert str(exc) == f"{error} (row numbers count within one partition)"
    for kind in (OptionTypeError, ColumnNotFoundError, ColumnNotFoundError, ValueError, KeyError):
        name = (
            kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        )
        back = fspark._worker_error(RuntimeError(f"Traceback:\n{name}: some words\n"))
        assert type(back) is kind
    other = RuntimeError("pyarrow.lib.ArrowInvalid: no")
    assert fspark._worker_error(other) is other
    exc = raised(fspark.per_query, TABLE)
    assert type(exc) is InputTypeError and exc.fix.startswith("Make one with")


# -- compare_definitions (fastndcg._compare) ----------------------------------------------------


def test_compare_definitions_option_errors():
    compare = fastndcg.compare_definitions
    exc = raised(compare, [1, 0], [0.5, 0.4], definitions=["sklearn"], tolerance="0")
    assert type(exc) is OptionTypeError and (exc.option, exc.value) == ("tolerance", "0")
    exc = raised(compare, [1, 0], [0.5, 0.4], definitions=["sklearn"], tolerance=-1.0)
    assert type(exc) is OptionError and exc.value == -1.0
    exc = raised(compare, [1, 0], [0.5, 0.4], definitions=[])
    assert (type(exc), exc.option) == (OptionError, "definitions")
    exc = raised(compare, [1, 0], [0.5, 0.4], definitions=[3])
    assert (type(exc), exc.option, exc.value) == (OptionTypeError, "definitions", 3)
    exc = raised(compare, [1, 0], [0.5, 0.4], definitions=["sklearn"], using="csv")
    assert (type(exc), exc.option, exc.value) == (OptionError, "using", "csv")
    # an option of the wrong type is a mistake in the call, not a definition that cannot score
    exc = raised(compare, [1, 0], [0.5, 0.4], definitions=["sklearn", {"k": "x"}])
    assert type(exc) is OptionTypeError and exc.option == "k"
    exc = raised(compare, [1, 0], [0.5, 0.4], definitions=["trec_eval"])
    assert type(exc) is InputError and list(exc.value) == ["trec_eval"]


# -- every class survives pickling with its data ------------------------------------------------


def test_errors_round_trip_through_pickle(tmp_path):
    from fastndcg._scaleout import split_query_error
    from fastndcg._training import require

    pq.write_to_dataset(TABLE, tmp_path / "hive", partition_cols=["qid"])
    errors = [
        raised(fastndcg.ndcg_run, tmp_path, tmp_path),  # a directory: InputError
        raised(fastndcg.ndcg_table, TABLE, grade=5.0),  # OptionTypeError
        raised(fastndcg.ndcg_parquet, tmp_path / "hive", group="rows"),  # OptionError
        raised(fastndcg.ndcg_parquet, tmp_path / "hive"),  # ColumnNotFoundError, mapping fix
        raised(fastndcg.ndcg_table, pa.table({"qid": [[1]], "grade": [1], "score": [0.5]})),
        raised(require, "fastndcg_no_such_module", "spark"),  # BackendUnavailableError
        split_query_error(np.int64(4)),  # built, not raised: InputError
    ]
    kinds = {type(exc) for exc in errors}
    assert kinds == {
        InputError,
        InputTypeError,
        OptionError,
        OptionTypeError,
        ColumnNotFoundError,  # a ColumnNotFoundError
        BackendUnavailableError,
    }
    for exc in errors:
        same_data(exc, pickle.loads(pickle.dumps(exc)))
    assert re.fullmatch(r"column 'qid' not found in .*group='memory'", errors[3].args[0])
