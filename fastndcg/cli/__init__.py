"""The ``fastndcg`` command: score predictions or TREC runs, show runtime facts, warm up.

Exit status: 0 on success, 2 for bad input or options (one line on stderr), 1 otherwise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from fastndcg._result import format_rows
from fastndcg.cli.output import summary_rows, write_per_query
from fastndcg.cli.parser import build_parser
from fastndcg.cli.sources import UsageError, check_inputs, compare_sources, score_sources
from fastndcg.cli.wording import command_wording

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
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
        given = set(vars(build_parser(keep_defaults=False).parse_args(argv)))
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
    except BrokenPipeError:  # the reader stopped early (| head): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (UsageError, ValueError, TypeError, KeyError, OSError, ImportError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"fastndcg: error: {command_wording(message)}", file=sys.stderr)
        return 2
