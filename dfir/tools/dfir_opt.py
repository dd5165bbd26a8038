"""`dfir-opt`: xDSL's opt driver with dfir's dialects and passes (through the `xdsl.universe`
entry point), plus `--compile-to=PHASE` and `--print-ir-after-all`."""
from __future__ import annotations

import argparse
import dataclasses
import sys

from xdsl.printer import Printer
from xdsl.xdsl_opt_main import xDSLOptMain
from dfir.driver.pipeline import PHASE_NAMES
from dfir.driver.pipeline import pipeline_spec


class DfirOptMain(xDSLOptMain):
    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--compile-to", choices=PHASE_NAMES, default=None,
            help="run the compiler's phases up to and including PHASE (instead of -p)")
        arg_parser.add_argument(
            "--print-ir-after-all", action="store_true",
            help="print the IR after every pass, each dump headed by '// -----// IR Dump After <pass>'")

    def setup_pipeline(self):
        if self.args.compile_to is not None:
            self.args.passes = pipeline_spec(self.args.compile_to)
        super().setup_pipeline()
        if self.args.print_ir_after_all:
            self._print_after_each_pass()

    def _print_after_each_pass(self) -> None:
        inner = self.pipeline.callback

        def callback(previous, module, following):
            if inner is not None:
                inner(previous, module, following)
            if previous is not None:
                self._dump(previous, module)

        self.pipeline = dataclasses.replace(self.pipeline, callback=callback)

    @staticmethod
    def _dump(compiler_pass, module) -> None:
        print(f"// -----// IR Dump After {compiler_pass.name} //----- //", file=sys.stderr)
        Printer(stream=sys.stderr).print_op(module)
        print(file=sys.stderr)


def main() -> None:
    DfirOptMain(description="dfir modular optimizer driver").run()


if __name__ == "__main__":
    main()
