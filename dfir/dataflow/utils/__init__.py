"""The seeds' `dataflow.utils`: `generate_deploy_template(graph, file_path)`; GE's
`dataflow.utils.name_scope` is the submodule `name_scope` (`name_scope`, `reset_name_scope`)."""
from dfir.core.errors import DfAbortException, DfException
from dfir.frontend.dataflow.deploy_template import generate_deploy_template
from dfir.dataflow.utils import name_scope
from dfir.dataflow.utils import msg_type_register  # the submodule, as GE's `dataflow.utils.msg_type_register`

__all__ = ["generate_deploy_template"]
__all__ += ["DfAbortException", "DfException", "msg_type_register"]
