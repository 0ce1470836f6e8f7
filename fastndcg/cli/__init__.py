"""The ``fastndcg`` command: score predictions or TREC runs, show runtime facts, warm up.

Exit status: 0 on success, 2 for bad input or options (one line on stderr), 130 when
interrupted, 1 for a fault of fastndcg itself (``--debug`` shows its traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from fastndcg._errors import FastNDCGError
from fastndcg._result import format_rows
from fastndcg.cli.messages import render
from fastndcg.cli.output import summary_rows, write_per_query
from fastndcg.cli.parser import build_parser
from fastndcg.cli.sources import check_inputs, compare_sources, score_sources

__all__ = ["main"]


# errors that are the user's to fix: exit status 2, one line (a missing file or optional
# package is one too)
_USER_ERRORS = (FastNDCGError, OSError, ImportError)
ENV_DEBUG = "FASTNDCG_DEBUG"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 on success; 2 for bad input or options (one line on stderr); 130 when interrupted; 1
    for anything else, which is a fault of fastndcg: it says so, and ``--debug`` (or
    ``FASTNDCG_DEBUG=1``) shows the traceback.
    """
    args = build_parser().parse_args(argv)
    debug = args.debug or os.environ.get(ENV_DEBUG, "") not in ("", "0")
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line
            return _run(args, argv)
    except KeyboardInterrupt:
        if debug:
            raise
        print("fastndcg: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader stopped early (| head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except _USER_ERRORS as exc:
        if debug:
            raise
        print(f"fastndcg: error: {render(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:
        if debug:
            raise
        print(
            f"fastndcg: internal error: {type(exc).__name__}: {exc}. This is a fault of "
            f"fastndcg, not of your input: rerun with --debug (or {ENV_DEBUG}=1) for the "
            "traceback, and please report it",
            file=sys.stderr,
        )
        return 1


def _one_line(message: Warning | str, *args: object, **kwargs: object) -> None:
    """A warning as the command shows it: one line on stderr."""
    text = str(message).removeprefix("fastndcg: ")
    print(f"fastndcg: warning: {text}", file=sys.stderr)


def _run(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """The command ``args`` asks for."""
    if args.command == "info":
        from fastndcg._runtime import info

        for key, value in info().items():
            print(f"{key + ':':34s} {value}")
        return 0
    if args.command == "warmup":
        from fastndcg._runtime import cache_dir, warmup

        seconds = warmup()
        print(f"kernels ready in {seconds:.2f} s (cache: {cache_dir()})")
        return 0
    given = set(vars(build_parser(keep_defaults=False).parse_args(argv))) - {"debug"}
    check_inputs(args, given)
    if args.compare_presets is not None:
        print(format_rows(compare_sources(args, given), args.format, args.digits), flush=True)
        return 0
    results = score_sources(args, given)
    if args.per_query:
        write_per_query(args.per_query, results)
    rows = summary_rows(results, trec=bool(args.qrels))
    print(format_rows(rows, args.format, args.digits), flush=True)  # a closed pipe: here
    return 0
