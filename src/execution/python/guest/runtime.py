"""Guest runtime of ts-code-mode's PythonExecutor.

Runs the agent's Python snippets REPL-style (globals persist, the last expression is the value,
top-level await) and reaches the host only through frames on two pipes: fd 3 carries the host's
messages here, fd 4 carries ours to the host. A frame is a 4-byte big-endian length and that many
bytes of UTF-8 JSON; values that JSON cannot hold travel as one-key tagged objects
({"$bytes": base64}, {"$int": "digits"}, {"$float": "nan"}, and {"$dict": [[k, v], ...]} for a
dict that would look like a tag). The host validates every frame: it owns all data and all limits.

Namespace calls are synchronous (py-code-mode style); each also has `call_async` for asyncio.
A reader thread takes the host's frames, so replies to many calls in flight settle in any order.
The host interrupts a run past its deadline with SIGINT and kills the process if that fails.
"""

import ast
import asyncio
import base64
import inspect
import json
import math
import os
import signal
import sys
import threading
import time
import traceback

IN_FD = 3
OUT_FD = 4
TAGS = ("$bytes", "$int", "$float", "$dict")
MAX_DEPTH = 200
SAFE_INT = 2**53

LIMITS = json.loads(os.environ.pop("TS_CODE_MODE_LIMITS", "{}"))
DISPLAY_MAX = LIMITS.get("display", 20000)
STREAM_MAX = LIMITS.get("stream", 100000)
CHUNK_MAX = LIMITS.get("chunk", 65536)
ERROR_NAME_MAX = LIMITS.get("errorName", 100)
ERROR_MESSAGE_MAX = LIMITS.get("errorMessage", 19000)
ERROR_STACK_MAX = LIMITS.get("errorStack", 19000)
VALUE_MAX_BYTES = LIMITS.get("value", 16 * 1048576)
FLUSH_SECONDS = LIMITS.get("flushMs", 50) / 1000.0

# The runtime's own folder must not shadow the agent's imports.
_here = os.path.dirname(os.path.abspath(__file__))


def _load_sibling(name):
    """A module of this folder, loaded by path under a private name (the folder is not on sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_ts_code_mode_" + name, os.path.join(_here, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_workflow_signature = _load_sibling("workflow_signature")
_replies = _load_sibling("replies")
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]

# deps.add installs with pip into this venv (made with this interpreter); its site-packages goes
# first on sys.path once it exists, so an installed package is importable in the next statement.
_DEPS_VENV = os.environ.pop("TS_CODE_MODE_PY_VENV", "")
_DEPS_SITE = os.path.join(_DEPS_VENV, "lib", "python%d.%d" % sys.version_info[:2], "site-packages") if _DEPS_VENV else ""


def _sync_deps_path(installed=False):
    if not _DEPS_SITE:
        return
    if _DEPS_SITE not in sys.path:
        if not os.path.isdir(_DEPS_SITE):
            return
        import site

        site.addsitedir(_DEPS_SITE)  # also runs the venv's .pth files
        sys.path.remove(_DEPS_SITE)
        sys.path.insert(0, _DEPS_SITE)
    if installed:
        import importlib

        importlib.invalidate_caches()


def cut(text, limit):
    if len(text) <= limit:
        return text
    return text[:limit] + "\n\u2026 [%d more characters cut]" % (len(text) - limit)


# ---------------------------------------------------------------- values on the wire


def to_wire(value, depth=0):
    if depth > MAX_DEPTH:
        raise ValueError("value nested more than %d levels deep" % MAX_DEPTH)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if -SAFE_INT < value < SAFE_INT else {"$int": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, (str, int, float, bool)) or k is None:
                key = k if isinstance(k, str) else json.dumps(k)
            else:
                raise TypeError("dict keys must be str, int, float, bool or None, not %s" % type(k).__name__)
            out[key] = to_wire(v, depth + 1)
        if len(out) == 1 and next(iter(out)) in TAGS:
            return {"$dict": [[k, v] for k, v in out.items()]}
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_wire(v, depth + 1) for v in value]
    raise TypeError("a %s cannot be sent to the host (plain data only: dict, list, str, bytes, int, float, bool, None)" % type(value).__name__)


def _untag(obj):
    if len(obj) == 1:
        key, raw = next(iter(obj.items()))
        if key == "$bytes" and isinstance(raw, str):
            return base64.b64decode(raw)
        if key == "$int" and isinstance(raw, str):
            return int(raw)
        if key == "$float" and isinstance(raw, str):
            return float(raw)
        if key == "$dict" and isinstance(raw, list):
            return {k: v for k, v in raw}
    return obj


def encode_frame(message):
    body = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    return len(body).to_bytes(4, "big") + body


# ---------------------------------------------------------------- the channel to the host

_write_lock = threading.Lock()
# An interrupt must never land between two writes of one frame (the host would read garbage):
# while the main thread writes, the SIGINT handler only notes it, and send() raises afterwards.
_sending = [False]
_deferred = [False]


def send(message):
    frame = encode_frame(message)
    main = threading.current_thread() is threading.main_thread()
    with _write_lock:
        if main:
            _sending[0] = True
        try:
            view = memoryview(frame)
            while view:
                n = os.write(OUT_FD, view)
                view = view[n:]
        finally:
            if main:
                _sending[0] = False
    if main and _deferred[0]:
        _deferred[0] = False
        if _running[0]:
            raise RunInterrupted()


def _read_exact(n):
    chunks = []
    while n > 0:
        chunk = os.read(IN_FD, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class _Pending:
    __slots__ = ("event", "loop", "future", "ok", "value", "ns", "op")

    def __init__(self, loop=None, future=None, ns=None, op=None):
        self.event = None if future else threading.Event()
        self.loop = loop
        self.future = future
        self.ok = False
        self.value = None
        self.ns = ns
        self.op = op


_pending = {}
_pending_lock = threading.Lock()
_next_call = [1]
_runs = []
_runs_ready = threading.Condition()


def _reader():
    while True:
        header = _read_exact(4)
        body = header and _read_exact(int.from_bytes(header, "big"))
        if body is None:
            # The host went away: nothing can reach us any more.
            os._exit(0)
        message = json.loads(body.decode("utf-8"), object_hook=_untag)
        kind = message.get("type")
        if kind == "reply":
            with _pending_lock:
                entry = _pending.pop(message.get("callId"), None)
            if entry is None:
                continue
            entry.ok = bool(message.get("ok"))
            entry.value = message.get("value") if entry.ok else message.get("error")
            if entry.future is not None:
                entry.loop.call_soon_threadsafe(_settle_future, entry)
            else:
                entry.event.set()
        elif kind == "run":
            with _runs_ready:
                _runs.append(message)
                _runs_ready.notify()
        elif kind == "stop":
            # The host's deadline or cancel (a StopMessage). This thread always reads it, busy or
            # idle main thread alike: the run is interrupted as by the host's SIGINT, variables kept.
            # One for a run that already ended is stale and ignored.
            if _running[0] and _current_run[0] == message.get("runId"):
                _stop_reason[0] = "cancel" if message.get("reason") == "cancel" else "timeout"
                os.kill(os.getpid(), signal.SIGINT)


def _settle_future(entry):
    if entry.future.done():
        return
    if entry.ok:
        entry.future.set_result(entry.value)
    else:
        entry.future.set_exception(host_error(entry.value, entry.ns, entry.op))


class HostError(Exception):
    """A namespace call that failed on the host; the subclass carries the host error's name.
    As py-code-mode's NamespaceError: `namespace`, `operation` (of the call) and `original_type`
    (the host error's name)."""

    details = None
    namespace = None
    operation = None
    original_type = None


# py-code-mode's per-namespace classes (its SubprocessExecutor kernel raises them): every failure
# of a call of that namespace is one, whatever its name (`except ToolError` catches an unknown
# tool too, as there). ToolError is below.
class WorkflowError(HostError):
    pass


class ArtifactError(HostError):
    pass


class DepsError(HostError):
    pass


class SkillError(HostError):
    pass


class ToolError(HostError):
    """A tool call failed. As in TypeScript: code (e.g. "NOT_FOUND"), recoverable (the same call
    with other input may work), suggestion, context; also tool, callable, exit_code, status, stderr."""

    code = None
    recoverable = False
    suggestion = None
    context = None
    tool = None
    callable = None
    exit_code = None
    status = None
    stderr = None


class NotFoundError(HostError):
    suggestions = None


class ValidationError(HostError):
    pass


# py-code-mode's names, for agents that catch them: a missing artifact, tool or workflow is a
# NotFoundError of its namespace; ToolCallError is ToolError; CodeModeError is every host error.
class ArtifactNotFoundError(NotFoundError, ArtifactError):
    pass


class ToolNotFoundError(NotFoundError, ToolError):
    pass


class WorkflowNotFoundError(NotFoundError, WorkflowError):
    pass


# Named NotFoundError all the same: a run's error name is the same in every executor and language.
for _cls in (ArtifactNotFoundError, ToolNotFoundError, WorkflowNotFoundError):
    _cls.__name__ = _cls.__qualname__ = "NotFoundError"

SkillNotFoundError = WorkflowNotFoundError
ToolCallError = ToolError
CodeModeError = NamespaceError = RPCError = HostError
_ERROR_BY_NS = {"tools": ToolError, "workflows": WorkflowError, "artifacts": ArtifactError, "deps": DepsError, "skills": SkillError}

# The classes an agent can name in `except` (they are in its globals); any other host error name
# gets a class of its own on first sight, kept in a bounded cache.
_KNOWN_ERRORS = {cls.__name__: cls for cls in (HostError, ToolError, NotFoundError, ValidationError)}
_NOT_FOUND_BY_NS = {"artifacts": ArtifactNotFoundError, "tools": ToolNotFoundError, "workflows": WorkflowNotFoundError}
ERROR_GLOBALS = {
    "ToolError": ToolError, "NotFoundError": NotFoundError, "ValidationError": ValidationError,
    "ArtifactNotFoundError": ArtifactNotFoundError, "ToolNotFoundError": ToolNotFoundError,
    "WorkflowNotFoundError": WorkflowNotFoundError, "SkillNotFoundError": SkillNotFoundError,
    "ToolCallError": ToolCallError, "CodeModeError": CodeModeError,
    "NamespaceError": NamespaceError, "RPCError": RPCError, "WorkflowError": WorkflowError,
    "ArtifactError": ArtifactError, "DepsError": DepsError, "SkillError": SkillError,
}
_error_classes = {}
# TypeScript's camelCase detail names, as Python attributes.
_DETAIL_ATTRS = {"exitCode": "exit_code"}


def _error_class(name, ns):
    """The class named `name` (a known one, or one made once and cached) that is also the class of namespace `ns`."""
    cls = _KNOWN_ERRORS.get(name)
    if cls is NotFoundError and ns in _NOT_FOUND_BY_NS:
        return _NOT_FOUND_BY_NS[ns]
    ns_cls = _ERROR_BY_NS.get(ns)
    if cls is not None and (ns_cls is None or issubclass(cls, ns_cls)):
        return cls
    key = (name, ns)
    made = _error_classes.get(key)
    if made is None:
        if len(_error_classes) >= 200:
            _error_classes.clear()
        # The namespace's class first: a generic name (HostError, Error) must not precede its subclass.
        bases = tuple(b for b in (ns_cls, cls) if b is not None) or (HostError,)
        made = type(name, bases, {})
        _error_classes[key] = made
    return made


def host_error(wire, ns=None, op=None):
    wire = wire if isinstance(wire, dict) else {}
    name = str(wire.get("name") or "Error")
    if not name.isidentifier():
        name = "HostError"
    err = _error_class(name, ns)(str(wire.get("message", "")))
    err.namespace, err.operation, err.original_type = ns, op, name
    details = wire.get("details")
    err.details = details
    if isinstance(details, dict):
        for key, value in details.items():
            if isinstance(key, str) and key.isidentifier() and not key.startswith("_"):
                setattr(err, _DETAIL_ATTRS.get(key, key), value)
    return err


def _register(entry):
    with _pending_lock:
        call_id = _next_call[0]
        _next_call[0] += 1
        _pending[call_id] = entry
    return call_id


def _message(call_id, ns, op, args):
    try:
        return {"type": "call", "callId": call_id, "ns": ns, "op": op, "args": to_wire(list(args))}
    except (TypeError, ValueError) as e:
        with _pending_lock:
            _pending.pop(call_id, None)
        raise TypeError("%s.%s: arguments must be plain data; %s" % (ns, op, e)) from None


def call_sync(ns, op, args):
    _output.flush()
    entry = _Pending(ns=ns, op=op)
    call_id = _register(entry)
    send(_message(call_id, ns, op, args))
    try:
        entry.event.wait()
    finally:
        with _pending_lock:
            _pending.pop(call_id, None)
    if entry.ok:
        return entry.value
    raise host_error(entry.value, ns, op)


async def call_async(ns, op, args):
    _output.flush()
    loop = asyncio.get_running_loop()
    entry = _Pending(loop, loop.create_future(), ns, op)
    call_id = _register(entry)
    send(_message(call_id, ns, op, args))
    try:
        return await entry.future
    finally:
        with _pending_lock:
            _pending.pop(call_id, None)


# ---------------------------------------------------------------- namespaces


def _named_args(what, args, kwargs):
    """tools.x.y(a=1) and tools.x.y({"a": 1}) both send {"a": 1}."""
    if args and kwargs:
        raise TypeError("%s: pass either keyword arguments or one dict, not both" % what)
    if len(args) > 1 or (args and not isinstance(args[0], dict)):
        raise TypeError("%s: takes keyword arguments (or one dict of them), e.g. %s(url=\"...\")" % (what, what))
    return dict(args[0]) if args else (kwargs or None)


async def _replied(coro, reply):
    return reply(await coro)


class _Op:
    """One host operation: call it for the result, or `await op.call_async(...)` to run calls in parallel."""

    __slots__ = ("_ns", "_op", "_shape", "_label", "_reply")

    def __init__(self, ns, op, shape, label):
        self._ns, self._op, self._shape, self._label = ns, op, shape, label
        # How the reply reaches the agent (replies.py: metadata as Records); None: as it came.
        self._reply = None

    def __call__(self, *args, **kwargs):
        value = call_sync(self._ns, self._op, self._shape(*args, **kwargs))
        return value if self._reply is None else self._reply(value)

    def call_async(self, *args, **kwargs):
        coro = call_async(self._ns, self._op, self._shape(*args, **kwargs))
        return coro if self._reply is None else _replied(coro, self._reply)

    def call_sync(self, *args, **kwargs):
        """py-code-mode's name for the plain call."""
        return self(*args, **kwargs)

    def __repr__(self):
        return "<%s>" % self._label


def _positional(ns, op, names, required):
    def shape(*args, **kwargs):
        if len(args) > len(names):
            raise TypeError("%s.%s() takes at most %d arguments" % (ns, op, len(names)))
        values = list(args)
        for name in names[len(args):]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            else:
                break
        if kwargs:
            raise TypeError("%s.%s() got unexpected argument(s) %s" % (ns, op, ", ".join(sorted(kwargs))))
        if len(values) < required:
            raise TypeError("%s.%s() needs %s" % (ns, op, ", ".join(names[:required])))
        return values

    return shape


def _search(ns, default_limit=None):
    """search(query, limit=N) (py-code-mode) or search(query, {"limit": N}) (ours): [query, options]."""
    def shape(*args, **kwargs):
        if not args and "query" not in kwargs:
            raise TypeError("%s.search() needs a query" % ns)
        if len(args) > 2:
            raise TypeError("%s.search() takes a query and a limit (or an options dict)" % ns)
        query = args[0] if args else kwargs.pop("query")
        options = dict(kwargs.pop("options", None) or {})
        second = args[1] if len(args) > 1 else None
        if isinstance(second, dict):
            options.update(second)
        elif second is not None:
            options["limit"] = second
        if "limit" in kwargs:
            options["limit"] = kwargs.pop("limit")
        if kwargs:
            raise TypeError("%s.search() got unexpected argument(s) %s; it takes query and limit" % (ns, ", ".join(sorted(kwargs))))
        if "limit" not in options and default_limit is not None:
            options["limit"] = default_limit
        return [query, options] if options else [query]

    return shape


def _artifacts_save(*args, **kwargs):
    """save(name, data, description="") (py-code-mode) or save(name, data, {"description": ..., "metadata": ...})."""
    if len(args) > 3:
        raise TypeError("artifacts.save() takes name, data and a description (or an options dict)")
    values = list(args)
    for key in ("name", "data")[len(values):]:
        if key not in kwargs:
            raise TypeError("artifacts.save() needs name and data, e.g. artifacts.save(\"results.json\", {\"a\": 1})")
        values.append(kwargs.pop(key))
    options = dict(kwargs.pop("options", None) or {})
    third = values[2] if len(values) > 2 else None
    if isinstance(third, dict):
        options.update(third)
    elif third is not None:
        options["description"] = third
    for key in ("description", "metadata", "kind"):
        if key in kwargs:
            options[key] = kwargs.pop(key)
    if kwargs:
        raise TypeError("artifacts.save() got unexpected argument(s) %s; it takes name, data, description" % ", ".join(sorted(kwargs)))
    return values[:2] + ([options] if options else [])


def _deps_spec(op):
    """deps.add("pandas>=2") / deps.add(package="pandas>=2") (py-code-mode) / deps.add(spec=...)."""
    def shape(*args, **kwargs):
        given = list(args) + [kwargs.pop(k) for k in ("spec", "package") if k in kwargs]
        if kwargs or len(given) != 1:
            raise TypeError("deps.%s() takes one package spec, e.g. deps.%s(\"requests>=2\")" % (op, op))
        return given

    return shape


class _Namespace:
    def __init__(self, ns, ops):
        self._name = ns
        self._ops = {op: _Op(ns, op, shape, "%s.%s" % (ns, op)) for op, shape in ops.items()}

    def __getattr__(self, name):
        ops = self.__dict__.get("_ops", {})
        if name in ops:
            return ops[name]
        raise AttributeError("%s has no operation %r; it has: %s" % (self._name, name, ", ".join(sorted(ops))))

    def __dir__(self):
        return sorted(self._ops)

    def __repr__(self):
        return "<%s: %s>" % (self._name, ", ".join(sorted(self._ops)))


class _Tool:
    """tools.<name>: its callables as attributes (tools.curl.get(url=...)); calling it directly uses the tool's default."""

    def __init__(self, name):
        self._tool = name
        self._direct = _Op("tools", "call", lambda *a, **k: [name, None, _named_args("tools.%s" % name, a, k)], "tools.%s" % name)

    def __getattr__(self, callable_name):
        if callable_name.startswith("__"):
            raise AttributeError(callable_name)
        if callable_name == "list":
            return self._list
        return _Callable(self._tool, callable_name)

    __getitem__ = __getattr__


    def _list(self, *args, **kwargs):
        """py-code-mode's tools.<name>.list(): the tool's callables (name, description, signature).
        A tool with a callable of its own named `list` gets that call instead."""
        callables = _replies.record(call_sync("tools", "callables", [self._tool]))
        if any(c.get("name") == "list" for c in callables):
            return _Callable(self._tool, "list")(*args, **kwargs)
        if args or kwargs:
            raise TypeError("tools.%s.list() takes no arguments: it lists the tool's callables" % self._tool)
        return callables

    def __call__(self, *args, **kwargs):
        return self._direct(*args, **kwargs)

    def call_async(self, *args, **kwargs):
        return self._direct.call_async(*args, **kwargs)

    def call_sync(self, *args, **kwargs):
        return self._direct(*args, **kwargs)

    def __repr__(self):
        return "<tools.%s>" % self._tool


class _Members(_Namespace):
    """A namespace whose other attributes are members: tools.<tool>, workflows.<name>."""

    def __init__(self, ns, ops, member):
        super().__init__(ns, ops)
        self._member = member

    def __getattr__(self, name):
        ops = self.__dict__.get("_ops", {})
        if name in ops:
            return ops[name]
        if name.startswith("__") or name == "_member":
            raise AttributeError(name)
        return self.__dict__["_member"](name)

    __getitem__ = __getattr__


class _Callable(_Op):
    """tools.<tool>.<callable>: call it; `.session(...)` opens a toolable session with it."""

    __slots__ = ("_tool", "_callable")

    def __init__(self, tool, callable_name):
        label = "tools.%s.%s" % (tool, callable_name)
        _Op.__init__(self, "tools", "call", lambda *a, **k: [tool, callable_name, _named_args(label, a, k)], label)
        self._tool, self._callable = tool, callable_name

    @property
    def session(self):
        """A toolable session: `with tools.x.y.session(...) as s:`, or `s = await tools.x.y.session.call_async(...)`."""
        return _SessionOpener(self._tool, self._callable, self._label)


class _SessionOpener:
    __slots__ = ("_tool", "_callable", "_label")

    def __init__(self, tool, callable_name, label):
        self._tool, self._callable, self._label = tool, callable_name, label

    def __call__(self, *args, **kwargs):
        opened = call_sync("tools", "session", [self._tool, self._callable, _named_args(self._label, args, kwargs)])
        return _ToolSession(opened["id"])

    async def call_async(self, *args, **kwargs):
        opened = await call_async("tools", "session", [self._tool, self._callable, _named_args(self._label, args, kwargs)])
        return _ToolSession(opened["id"])


class _ToolSession:
    """A toolable session: send(message), next() (an event dict, None at the end), iterate over it,
    close() (the final envelope). Each is one host call; the async forms end in _async. A context
    manager (with / async with) closes it on the way out."""

    def __init__(self, session_id):
        self.id = session_id
        self._closed = False
        self._final = None

    def send(self, message=None, **kwargs):
        return call_sync("tools", "sessionSend", [self.id, _named_args("session.send", (message,) if message is not None else (), kwargs)])

    def next(self):
        return call_sync("tools", "sessionNext", [self.id])

    def close(self):
        if not self._closed:
            self._final = call_sync("tools", "sessionClose", [self.id])
            self._closed = True
        return self._final

    async def send_async(self, message=None, **kwargs):
        return await call_async("tools", "sessionSend", [self.id, _named_args("session.send", (message,) if message is not None else (), kwargs)])

    async def next_async(self):
        return await call_async("tools", "sessionNext", [self.id])

    async def close_async(self):
        if not self._closed:
            self._final = await call_async("tools", "sessionClose", [self.id])
            self._closed = True
        return self._final

    def __iter__(self):
        while True:
            event = self.next()
            if event is None:
                return
            yield event

    def __aiter__(self):
        return self._events_async()

    async def _events_async(self):
        while True:
            event = await self.next_async()
            if event is None:
                return
            yield event

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.close_async()
        return False

    def __repr__(self):
        return "<tool session %s%s>" % (self.id, " closed" if self._closed else "")


def _tool_call_shape(tool, callable_name=None, args=None, **kwargs):
    return [tool, callable_name, _named_args("tools.call", (args,) if args is not None else (), kwargs)]


def _load_workflow(name, args, kwargs):
    """The workflow's run function, defined in a fresh module of this interpreter, and its kwargs.
    The host's load refuses a TypeScript workflow (and one this session may not run)."""
    if not isinstance(name, str):
        raise TypeError("workflows.invoke: name must be a string")
    given = _named_args("workflows.%s" % name, args, kwargs) or {}
    loaded = call_sync("workflows", "load", [name])
    module = {"__name__": "workflow_%s" % name, **_guest_globals()}
    filename = "<workflow %s>" % name
    exec(compile(_parse(loaded["source"], filename), filename, "exec", dont_inherit=True), module)
    run = module.get("run")
    if not callable(run):
        raise TypeError("workflows.%s: the workflow defines no function named run" % name)
    return run, given


def _workflow_invoke(name, /, *args, **kwargs):
    run, given = _load_workflow(name, args, kwargs)
    result = run(**given)
    if inspect.iscoroutine(result):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return _loop.run_until_complete(result)
        result.close()
        raise RuntimeError(
            "workflows.%s: its run is async and this code runs in an event loop (it awaits); "
            "use `await workflows.%s.call_async(...)`" % (name, name)
        )
    return result


async def _workflow_invoke_async(name, /, *args, **kwargs):
    run, given = _load_workflow(name, args, kwargs)
    result = run(**given)
    return (await result) if inspect.isawaitable(result) else result


class _Workflow:
    """workflows.<name>: call it with keyword arguments (or one dict); `await ….call_async(...)` from async code."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        return _workflow_invoke(self._name, *args, **kwargs)

    def call_async(self, *args, **kwargs):
        return _workflow_invoke_async(self._name, *args, **kwargs)

    def call_sync(self, *args, **kwargs):
        return self(*args, **kwargs)

    def __repr__(self):
        return "<workflows.%s>" % self._name


def _python_workflow(source):
    """Checks a Python workflow (it parses and defines run) and reads its docstring and run's parameters
    (workflow_signature.py: the host reads workflows saved elsewhere with the same code)."""
    if not isinstance(source, str):
        raise TypeError("workflows.create: source must be a string of Python")
    sig = _workflow_signature.signature(source)
    e = sig["syntaxError"]
    if e is not None:
        raise SyntaxError("workflows.create: syntax error at line %s:%s: %s" % (e["line"], e["column"], e["message"]))
    if not sig["hasRun"]:
        raise ValueError("workflows.create: a Python workflow must define a function named run at the top level, "
                         "e.g.\n" + _workflow_signature.RUN_EXAMPLE)
    return sig["params"], sig["description"]


_CREATE_POSITIONAL = ("name", "source", "description")


def _create_shape(*args, **kwargs):
    """create(name, source, description="") (py-code-mode), keywords, or one dict. A workflow
    created here is Python unless `language` says otherwise: the language is the guest's, never
    guessed from the source."""
    if args and not (len(args) == 1 and isinstance(args[0], dict)):
        if len(args) > len(_CREATE_POSITIONAL):
            raise TypeError("workflows.create() takes name, source and description (other fields as keywords)")
        clash = [k for k in _CREATE_POSITIONAL[:len(args)] if k in kwargs]
        if clash:
            raise TypeError("workflows.create(): %s given twice" % ", ".join(clash))
        spec = dict(zip(_CREATE_POSITIONAL, args))
        spec.update(kwargs)
    else:
        spec = _named_args("workflows.create", args, kwargs)
    if isinstance(spec, dict):
        spec = dict(spec)
        spec.setdefault("language", "python")
    if isinstance(spec, dict) and spec.get("language") == "python":
        # Checked here for a Python error at once; the host reads the docstring and signature itself
        # (the same workflow_signature.py), so a derived description stays derived and a hand edit re-reads it.
        _python_workflow(spec.get("source"))
    return [spec]


tools = _Members("tools", {
    "list": _positional("tools", "list", [], 0),
    "search": _search("tools"),
    "describe": _positional("tools", "describe", ["name"], 1),
    "call": _tool_call_shape,
}, _Tool)
workflows = _Members("workflows", {
    "list": _positional("workflows", "list", [], 0),
    "search": _search("workflows"),
    "get": _positional("workflows", "get", ["name"], 1),
    "create": _create_shape,
    "delete": _positional("workflows", "delete", ["name"], 1),
}, _Workflow)


class _Invoke:
    """workflows.invoke(name, **kwargs) (or one dict); `await workflows.invoke(...)` / `.call_async(...)` from async code.
    The run goes through the module's _workflow_invoke at call time (the Pyodide adapter replaces it)."""

    __slots__ = ()

    def __call__(self, name, /, *args, **kwargs):
        return _workflow_invoke(name, *args, **kwargs)

    call_sync = __call__

    def call_async(self, name, /, *args, **kwargs):
        return _workflow_invoke_async(name, *args, **kwargs)

    def __repr__(self):
        return "<workflows.invoke>"


workflows._ops["invoke"] = _Invoke()
class _ArtifactRecords(_Op):
    """artifacts.list() / get(): each record also under py-code-mode's keys (created_at, updated_at)."""

    __slots__ = ()

    @staticmethod
    def _snake(record):
        if isinstance(record, dict):
            for camel, snake in (("createdAt", "created_at"), ("updatedAt", "updated_at")):
                if camel in record:
                    record.setdefault(snake, record[camel])
        return record

    def __call__(self, *args, **kwargs):
        value = _Op.__call__(self, *args, **kwargs)
        return [self._snake(r) for r in value] if isinstance(value, list) else self._snake(value)

    async def call_async(self, *args, **kwargs):
        value = await _Op.call_async(self, *args, **kwargs)
        return [self._snake(r) for r in value] if isinstance(value, list) else self._snake(value)


artifacts = _Namespace("artifacts", {
    "save": _artifacts_save,
    "load": _positional("artifacts", "load", ["name"], 1),
    "get": _positional("artifacts", "get", ["name"], 1),
    "list": _positional("artifacts", "list", [], 0),
    "exists": _positional("artifacts", "exists", ["name"], 1),
    "delete": _positional("artifacts", "delete", ["name"], 1),
})
deps = _Namespace("deps", {
    "list": _positional("deps", "list", [], 0),
    "add": _deps_spec("add"),
    "remove": _deps_spec("remove"),
    "sync": _positional("deps", "sync", [], 0),
})


def _skills_create_shape(*args, **kwargs):
    spec = _named_args("skills.create", args, kwargs)
    return [spec]


class _Skills(_Namespace):
    """Agent Skills (SKILL.md folders): list, search, load, read, run, create, delete — as in
    TypeScript. py-code-mode 0.10 called its workflows `skills`; its forms that cannot mean an
    Agent Skill still work and go to workflows: skills.invoke(name, **kwargs), skills.<name>(**kwargs),
    and skills.create(name, source, description) (a `source` means a workflow; an Agent Skill has a body)."""

    def __getattr__(self, name):
        ops = self.__dict__.get("_ops", {})
        if name in ops:
            return ops[name]
        if name.startswith("__"):
            raise AttributeError(name)
        return _Workflow(name)


def _skills_create(*args, **kwargs):
    if "source" in kwargs or (len(args) >= 2 and isinstance(args[1], str)) or (len(args) == 1 and isinstance(args[0], dict) and "source" in args[0]):
        return workflows.create(*args, **kwargs)
    return call_sync("skills", "create", _skills_create_shape(*args, **kwargs))


def _skills_read(*args, **kwargs):
    """read(name, path, {"as": "bytes"}) or read(name, path, as_="bytes")."""
    if "as_" in kwargs:
        kwargs["options"] = dict(kwargs.get("options") or {}, **{"as": kwargs.pop("as_")})
    return _positional("skills", "read", ["name", "path", "options"], 2)(*args, **kwargs)


skills = _Skills("skills", {
    "list": _positional("skills", "list", [], 0),
    "search": _search("skills"),
    "load": _positional("skills", "load", ["name"], 1),
    "read": _skills_read,
    "run": _positional("skills", "run", ["name", "script", "args"], 2),
    "delete": _positional("skills", "delete", ["name"], 1),
})
skills._ops["create"] = _skills_create
skills._ops["invoke"] = workflows._ops["invoke"]
# An Agent Skill is read with load(); get(name) is py-code-mode 0.10's workflow lookup.
skills._ops["get"] = workflows._ops["get"]


def _agent_member(name):
    """agents.<name>(input=..., attachments=...): a child agent call, answered on the host by the agent runtime."""
    label = "agents.%s" % name
    return _Op("agents", "call", lambda *a, **k: [name, _named_args(label, a, k)], label)


def _agent_call_shape(name, args=None, /, **kwargs):
    if args is not None and kwargs:
        raise TypeError("agents.call: pass either a dict of arguments or keyword arguments, not both")
    return [name, args if args is not None else (kwargs or None)]


# An agent named like an operation (list, call) is reached with agents.call("list", input=...).
agents = _Members("agents", {"list": _positional("agents", "list", [], 0), "call": _agent_call_shape}, _agent_member)

_NAMESPACES = ("tools", "workflows", "artifacts", "deps", "skills", "agents")
_AWAITABLE = "__tcm_awaitable__"


def _awaitable(op):
    """The awaitable form of a namespace operation (anything without call_async is awaited as it is)."""
    call_async_of = getattr(op, "call_async", None)
    if callable(call_async_of):
        return call_async_of

    async def plain(*args, **kwargs):
        result = op(*args, **kwargs)
        return (await result) if inspect.isawaitable(result) else result

    return plain


class _AwaitedCalls(ast.NodeTransformer):
    """`await tools.x.y(a=1)` means `await tools.x.y.call_async(a=1)`; plain calls stay synchronous.
    py-code-mode awaits its calls in async code (its in-process proxies return coroutines there, its
    Pyodide executor's are all async), so agent code and workflows written that way run in both
    Python guests. Only a call awaited directly on a namespace's attribute chain is rewritten."""

    def visit_Await(self, node):
        self.generic_visit(node)
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            root = call.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in _NAMESPACES:
                helper = ast.Name(id=_AWAITABLE, ctx=ast.Load())
                call.func = ast.copy_location(ast.Call(func=helper, args=[call.func], keywords=[]), call.func)
        return node


def _parse(source, filename):
    """The agent's snippet or a workflow's source, with awaited namespace calls made awaitable."""
    return ast.fix_missing_locations(_AwaitedCalls().visit(ast.parse(source, filename, "exec")))


def _guest_globals():
    """What the agent's code (and a workflow's module) sees besides the builtins."""
    return {"__builtins__": __builtins__, "tools": tools, "workflows": workflows, "artifacts": artifacts, "deps": deps, "skills": skills, "agents": agents, _AWAITABLE: _awaitable, **ERROR_GLOBALS}


class _InstallOp(_Op):
    """deps.add / deps.sync: what they installed is importable right after the call."""

    __slots__ = ()

    def __call__(self, *args, **kwargs):
        try:
            return _Op.__call__(self, *args, **kwargs)
        finally:
            _sync_deps_path(installed=True)


for _name in ("list", "get"):
    _plain = artifacts._ops[_name]
    artifacts._ops[_name] = _ArtifactRecords(_plain._ns, _plain._op, _plain._shape, _plain._label)

for _name in ("add", "sync"):
    _plain = deps._ops[_name]
    deps._ops[_name] = _InstallOp(_plain._ns, _plain._op, _plain._shape, _plain._label)

# Metadata replies read as py-code-mode's agents read them (replies.py): w.name as well as w["name"],
# r.already_present, params["n"], `"pandas" in deps.list()`, `if deps.remove(...)`.
for _ns_obj, _names, _reply in (
    (tools, ("list", "search"), _replies.record),
    (workflows, ("list", "search", "get", "create"), _replies.record),
    (artifacts, ("save", "get", "list"), _replies.record),
    (deps, ("add", "sync"), _replies.record),
    (deps, ("list",), _replies.dep_list),
    (deps, ("remove",), _replies.removal),
    (skills, ("list", "search", "load"), _replies.record),
):
    for _name in _names:
        _ns_obj._ops[_name]._reply = _reply


# ---------------------------------------------------------------- output


class _Output:
    """The current run's stdout/stderr: kept up to STREAM_MAX per stream, streamed in batches when asked."""

    def __init__(self):
        self.lock = threading.RLock()
        self.run_id = None
        self.stream = False
        self.parts = {"stdout": [], "stderr": []}
        self.size = {"stdout": 0, "stderr": 0}
        self.dropped = {"stdout": 0, "stderr": 0}
        self.queue = []
        self.timer = None

    def begin(self, run_id, stream):
        with self.lock:
            self.run_id, self.stream = run_id, stream
            for s in ("stdout", "stderr"):
                self.parts[s], self.size[s], self.dropped[s] = [], 0, 0

    def write(self, stream, text):
        with self.lock:
            room = STREAM_MAX - self.size[stream]
            kept = text if len(text) <= room else text[: max(room, 0)]
            self.dropped[stream] += len(text) - len(kept)
            if not kept:
                return
            self.parts[stream].append(kept)
            self.size[stream] += len(kept)
            if self.stream and self.run_id is not None:
                self.queue.append((stream, kept))
                if self.timer is None:
                    self.timer = threading.Timer(FLUSH_SECONDS, self.flush)
                    self.timer.daemon = True
                    self.timer.start()

    def flush(self):
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            queue, self.queue = self.queue, []
            run_id = self.run_id
            if run_id is None:
                return
            for stream, text in queue:
                for i in range(0, len(text), CHUNK_MAX):
                    send({"type": "output", "runId": run_id, "stream": stream, "text": text[i : i + CHUNK_MAX]})

    def end(self):
        self.flush()
        with self.lock:
            self.run_id = None
            out = {}
            for s in ("stdout", "stderr"):
                body = "".join(self.parts[s])
                if self.dropped[s]:
                    body += "\n\u2026 [%d more characters of output cut]\n" % self.dropped[s]
                out[s] = body
                self.parts[s] = []
            return out


_output = _Output()


class _Stream:
    def __init__(self, name):
        self.name = name
        self.encoding = "utf-8"
        self.errors = "replace"

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError("write() argument must be str, not %s" % type(text).__name__)
        _output.write(self.name, text)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def writable(self):
        return True


sys.stdout = _Stream("stdout")
sys.stderr = _Stream("stderr")

# ---------------------------------------------------------------- running snippets


class RunInterrupted(BaseException):
    """Raised in the running code when the host interrupts it (its deadline passed)."""


_running = [False]


def _on_interrupt(signum, frame):
    if not _running[0]:
        return
    if _sending[0]:
        _deferred[0] = True
        return
    raise RunInterrupted()


signal.signal(signal.SIGINT, _on_interrupt)

FLAGS = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
user_globals = {"__name__": "__main__", **_guest_globals()}
_loop = asyncio.new_event_loop()
_NO_VALUE = object()


LAST = "__ts_code_mode_last__"


def _compile(code):
    """One code object for the whole snippet (a coroutine when it awaits anywhere); the last
    expression's value is assigned to LAST, so it is the run's value."""
    tree = _parse(code, "<run>")
    has_value = bool(tree.body) and isinstance(tree.body[-1], ast.Expr)
    if has_value:
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(ast.Assign(targets=[ast.Name(id=LAST, ctx=ast.Store())], value=last.value), last)
        ast.fix_missing_locations(tree)
    return compile(tree, "<run>", "exec", flags=FLAGS, dont_inherit=True), has_value


def _evaluate(code_obj):
    result = eval(code_obj, user_globals)
    if code_obj.co_flags & inspect.CO_COROUTINE:
        task = _loop.create_task(result)
        try:
            _loop.run_until_complete(task)
        except RunInterrupted:
            task.cancel()
            raise


def _end_tasks():
    """Tasks the run started and did not await do not outlive it."""
    for task in asyncio.all_tasks(_loop):
        task.cancel()


def _display(value):
    if value is _NO_VALUE or value is None:
        return ""
    if isinstance(value, str):
        return cut(value, DISPLAY_MAX)
    try:
        return cut(repr(value), DISPLAY_MAX)
    except Exception as e:  # a broken __repr__ is the value's problem, not the run's
        return "[value could not be displayed: %s]" % e


def _wire_value(value):
    if value is _NO_VALUE:
        return None, False
    try:
        wired = to_wire(value)
        if len(json.dumps(wired, ensure_ascii=False, allow_nan=False)) > VALUE_MAX_BYTES:
            return None, False
        return wired, True
    except (TypeError, ValueError, RecursionError):
        return None, False


def _error_of(exc, timeout_ms):
    if isinstance(exc, RunInterrupted) and _stop_reason[0] == "cancel":
        return {"name": "CancelledError", "message": "The run was cancelled; the code was interrupted and variables are kept."}
    if isinstance(exc, RunInterrupted):
        return {
            "name": "TimeoutError",
            "message": "Execution timed out after %d ms; the code was interrupted and variables are kept." % timeout_ms,
        }
    if isinstance(exc, KeyboardInterrupt):
        return {"name": "KeyboardInterrupt", "message": "interrupted"}
    name = type(exc).__name__
    if isinstance(exc, SyntaxError):
        message = "%s (line %s)" % (exc.msg, exc.lineno)
    else:
        message = str(exc)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<run>"]
    stack = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + "%s: %s" % (name, message)
    return {"name": cut(name, ERROR_NAME_MAX), "message": cut(message, ERROR_MESSAGE_MAX), "stack": cut(stack, ERROR_STACK_MAX)}


_current_run = [None]
# Why the running code was interrupted: "timeout" (also the host's SIGINT) or "cancel".
_stop_reason = ["timeout"]


def run(message):
    run_id = message["runId"]
    _current_run[0] = run_id
    _stop_reason[0] = "timeout"
    timeout_ms = message.get("timeoutMs", 0)
    started = time.perf_counter()
    _output.begin(run_id, bool(message.get("stream")))
    value, error = _NO_VALUE, None
    try:
        _sync_deps_path()
        _deferred[0] = False
        _running[0] = True
        try:
            code_obj, has_value = _compile(message["script"])
            _evaluate(code_obj)
            if has_value:
                value = user_globals.pop(LAST, None)
        finally:
            _running[0] = False
    except BaseException as exc:  # everything the code raises is its result
        if isinstance(exc, SystemExit):
            os._exit(exc.code if isinstance(exc.code, int) else 1)
        error = _error_of(exc, timeout_ms)
    finally:
        user_globals.pop(LAST, None)
        _end_tasks()
    wired, has_value = _wire_value(value) if error is None else (None, False)
    output = _output.end()
    result = {
        "ok": error is None,
        "display": _display(value) if error is None else "",
        "stdout": output["stdout"],
        "stderr": output["stderr"],
        "error": error,
        "durationMs": (time.perf_counter() - started) * 1000,
    }
    if has_value:
        result["value"] = wired
    send({"type": "result", "runId": run_id, "result": result})


def main():
    threading.Thread(target=_reader, name="ts-code-mode-reader", daemon=True).start()
    asyncio.set_event_loop(_loop)
    send({"type": "ready"})
    while True:
        with _runs_ready:
            while not _runs:
                _runs_ready.wait()
            message = _runs.pop(0)
        run(message)


if __name__ == "__main__":
    main()
