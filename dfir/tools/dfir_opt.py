"""`dfir-opt`: xDSL's opt driver with dfir's dialects, passes and `--compile-to=PHASE`."""
from __future__ import annotations

import argparse

from xdsl.xdsl_opt_main import xDSLOptMain


class DfirOptMain(xDSLOptMain):
    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        from dfir.pipeline import PHASE_NAMES
        arg_parser.add_argument(
            "--compile-to", choices=PHASE_NAMES, default=None,
            help="run the compiler's phases up to and including PHASE (instead of -p)")

    def setup_pipeline(self):
        if self.args.compile_to is not None:
            from dfir.pipeline import pipeline_spec
            self.args.passes = pipeline_spec(self.args.compile_to)
        super().setup_pipeline()


def main() -> None:
    DfirOptMain(description="dfir modular optimizer driver").run()


if __name__ == "__main__":
    main()
