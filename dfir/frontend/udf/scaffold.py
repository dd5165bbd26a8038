"""`dfir udf new NAME --lang python|cpp`: a UDF project workspace, rendered from jinja2 templates.

The templates live in `dfir/frontend/flow_func/templates/`: `common/` for every project, then `python/`
or `cpp/`. File and folder names are templates too (`{{ module }}.py.j2`); the `.j2` suffix is
dropped. A project named `scale_add` gets module `scale_add`, class `ScaleAdd`, proc `Process`,
compile config `scale_add.json` and (C++) library `libscale_add.so`.
"""
from __future__ import annotations

import re
from pathlib import Path

import jinja2

from dfir.core.errors import GeError

LANGUAGES = ("python", "cpp")
PROC_NAME = "Process"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_TEMPLATES = Path(__file__).resolve().parents[1] / "flow_func" / "templates"


def project_names(name: str) -> dict[str, str]:
    """The names a project's templates use: `name`, `module` (snake), `class_name` (Camel), `func`."""
    if not _NAME.fullmatch(name):
        raise GeError(f"UDF project name {name!r} must start with a letter and hold only letters, "
                      f"digits and '_'")
    module = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    class_name = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)
    return {"name": name, "module": module, "class_name": class_name, "func": PROC_NAME}


def new_project(name: str, language: str = "python", parent: str | Path = ".") -> list[Path]:
    """Create `<parent>/<name>/` from the templates of `language`; the files written, sorted.

    GeError for an unknown language, a bad name, or a folder that exists and is not empty.
    """
    if language not in LANGUAGES:
        raise GeError(f"UDF project language must be one of {list(LANGUAGES)}, got {language!r}")
    names = project_names(name)
    target = Path(parent) / name
    if target.exists() and any(target.iterdir()):
        raise GeError(f"{target} already exists and is not empty; choose another name or folder")
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_TEMPLATES)),
                                     keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    written = []
    for folder in ("common", language):
        for template in sorted((_TEMPLATES / folder).rglob("*.j2")):
            relative = template.relative_to(_TEMPLATES / folder).as_posix()
            path = target / environment.from_string(relative[:-len(".j2")]).render(names)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(environment.get_template(f"{folder}/{relative}").render(names))
            written.append(path)
    return sorted(written)
