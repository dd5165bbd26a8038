"""GE's `dataflow.utils.name_scope`: `name_scope(name, default_name=None, namespace=None,
auto_name=True)` puts the names made in its `with` block under `name/` (`dfir.frontend.dataflow.names`);
`reset_name_scope()` forgets every name and scope, as `finalize` does."""
from dfir.frontend.dataflow.names import name_scope
from dfir.frontend.dataflow.names import reset as reset_name_scope

__all__ = ["name_scope", "reset_name_scope"]
