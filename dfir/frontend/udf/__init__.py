"""UDF projects: compile configs, typed init params, Python sources, C++ builds, scaffolding.

A UDF *project* is a `FuncProcessPoint(compile_config_path=...)`: the compile config JSON names a
workspace holding either a Python class written against `dfir.frontend.flow_func` (`py_module` /
`py_class`, under `<workspace>/src_python/`) or a C++ library built with CMake. docs/udf.md
describes the whole flow; `dfir.frontend.udf.project.load_project` is where the importer starts.
"""
