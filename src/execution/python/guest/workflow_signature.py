"""What a Python workflow offers, read with `ast` (the code is never run): whether it defines a
top-level `run`, the docstring (run's, else the module's) and run's parameters (type hints as
written, defaults as JSON values when they are literals, else as expressions).

One definition for both callers, so a workflow gets the same params however it was saved:
- the Python guest runtime (runtime.py) imports `signature` for `workflows.create` in a Python session;
- the host runs this file as `python3 -I -X utf8 workflow_signature.py` with the source on stdin
  (a TypeScript session, the CLI, MCP, and hand-edited `.py` files) and reads one JSON line back.
  As a program it caps what it reads and its own address space, so a hostile source costs bounded
  work; the host adds a timeout and kills the process group.
"""

import ast
import json
import sys

# The host's own cap is 1 MiB (MAX_WORKFLOW_SOURCE_BYTES); a little more for a BOM and line endings.
MAX_SOURCE_BYTES = 2 * 1024 * 1024
MAX_MEMORY_BYTES = 512 * 1024 * 1024
MAX_PARAMS = 200

RUN_EXAMPLE = "def run(n: int) -> int:\n    \"\"\"Triple a number.\"\"\"\n    return n * 3"


def _annotation(node):
    return ast.unparse(node) if node is not None else "Any"


def signature(source):
    """{"hasRun", "description", "params", "syntaxError"} of a workflow's source (a str)."""
    try:
        tree = ast.parse(source, "<workflow>", "exec")
    except SyntaxError as e:
        return {"hasRun": False, "description": None, "params": [],
                "syntaxError": {"message": str(e.msg), "line": int(e.lineno or 0), "column": int(e.offset or 0)}}
    except (MemoryError, RecursionError, ValueError) as e:
        # Nesting past the parser's limits, or NUL bytes: not a module Python can load.
        return {"hasRun": False, "description": None, "params": [],
                "syntaxError": {"message": "%s: %s" % (type(e).__name__, e), "line": 0, "column": 0}}
    run = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "run"), None)
    doc_node = run if run is not None and ast.get_docstring(run) else tree
    doc = ast.get_docstring(doc_node)
    if run is None:
        return {"hasRun": False, "description": doc.strip() if doc else None, "params": [], "syntaxError": None}
    a = run.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = []
    for arg, default in list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults)):
        p = {"name": arg.arg, "type": _annotation(arg.annotation), "required": default is None}
        if default is not None:
            try:
                value = ast.literal_eval(default)
                json.dumps(value, allow_nan=False)
                p["default"] = value
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                p["defaultExpression"] = ast.unparse(default)
        params.append(p)
    return {"hasRun": True, "description": doc.strip() if doc else None, "params": params[:MAX_PARAMS], "syntaxError": None}


def _main():
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MAX_MEMORY_BYTES, MAX_MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass  # not POSIX, or a lower limit is already set: the host's timeout still bounds the work
    data = sys.stdin.buffer.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        out = {"error": "the source is larger than %d bytes" % MAX_SOURCE_BYTES}
    else:
        try:
            out = signature(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            out = {"error": "the source is not UTF-8: %s" % e}
        except MemoryError:
            out = {"error": "the source needs more than %d MiB to parse" % (MAX_MEMORY_BYTES // 1048576)}
    sys.stdout.write(json.dumps(out, allow_nan=False) + "\n")


if __name__ == "__main__":
    _main()
