"""The seeds' `dataflow.utils`: `generate_deploy_template(graph, file_path)`."""
from dfir.frontend.dataflow.deploy_template import generate_deploy_template

__all__ = ["generate_deploy_template"]
