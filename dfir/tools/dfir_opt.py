"""`dfir-opt`: xDSL's opt driver with dfir's dialects and passes (through the `xdsl.universe`
entry point), plus `--compile-to=PHASE`, `--print-ir-after-all`, and `--deploy-info=FILE`
(`--resource-config=FILE`): the files `place-nodes` places by, parsed here since passes read
no files.

`--compile-to=codegen` prints the upstream MLIR that IREE compiles instead of dfir's module: one
`builtin.module @<graph>` per GE graph an IREE backend runs, holding its `func.func @main`, in
generic form (which `iree-opt` and `mlir-opt` parse)."""
from __future__ import annotations

import argparse
import dataclasses
import sys

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.printer import Printer
from xdsl.xdsl_opt_main import xDSLOptMain

from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.driver.pipeline import PHASE_NAMES, pipeline_spec
from dfir.frontend.deploy import load_checked_deploy_info
from dfir.lowering.codegen import main_func
from dfir.passes.place_nodes import PlaceNodes


class DfirOptMain(xDSLOptMain):
    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--compile-to", choices=PHASE_NAMES, default=None,
            help="run the compiler's phases up to and including PHASE (instead of -p)")
        arg_parser.add_argument(
            "--print-ir-after-all", action="store_true",
            help="print the IR after every pass, each dump headed by '// -----// IR Dump After <pass>'")
        arg_parser.add_argument(
            "--deploy-info", default=None, metavar="FILE",
            help="the deploy info file place-nodes places the nodes by")
        arg_parser.add_argument(
            "--resource-config", default=None, metavar="FILE",
            help="the resource config declaring the devices of --deploy-info")

    def setup_pipeline(self):
        if self.args.compile_to is not None:
            self.args.passes = pipeline_spec(self.args.compile_to)
        super().setup_pipeline()
        if self.args.deploy_info is not None or self.args.resource_config is not None:
            self._give_deploy_info()
        if self.args.print_ir_after_all:
            self._print_after_each_pass()

    def output_resulting_program(self, prog: ModuleOp) -> str:
        if self.args.compile_to == "codegen":
            self.args.print_op_generic = True
            prog = codegen_module(prog)
        return super().output_resulting_program(prog)

    def _give_deploy_info(self) -> None:
        """Parse --deploy-info (checked against --resource-config) into every place-nodes."""
        if self.args.deploy_info is None:
            sys.exit("dfir-opt: --resource-config needs --deploy-info")
        if not any(isinstance(p, PlaceNodes) for p in self.pipeline.passes):
            sys.exit("dfir-opt: --deploy-info needs place-nodes in the pass pipeline")
        try:
            info = load_checked_deploy_info(self.args.deploy_info, self.args.resource_config)
        except GeError as error:
            sys.exit(f"dfir-opt: {error}")
        passes = tuple(dataclasses.replace(p, deploy_info=info) if isinstance(p, PlaceNodes) else p
                       for p in self.pipeline.passes)
        self.pipeline = dataclasses.replace(self.pipeline, passes=passes)

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


def codegen_module(module: ModuleOp) -> ModuleOp:
    """The lowered GE graphs of `module`: a `builtin.module @<graph>` each, holding a copy of its
    `codegen` func."""
    graphs = [(graph, main_func(graph)) for graph in module.ops if isinstance(graph, ge.GraphOp)]
    return ModuleOp([ModuleOp([main.clone()], sym_name=StringAttr(graph.sym_name.data))
                     for graph, main in graphs if main is not None])


def main() -> None:
    DfirOptMain(description="dfir modular optimizer driver").run()


if __name__ == "__main__":
    main()
