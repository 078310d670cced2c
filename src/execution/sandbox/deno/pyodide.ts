/**
 * The deno engine's Python mode: the same deno process, driver, frame key, freeze, watchdog and
 * RpcProvider as for TypeScript (see engine.ts, driver.ts), with Pyodide (CPython compiled to
 * WebAssembly, npm `pyodide`) loaded into it before any agent code runs. The process's only
 * permission is reading the Pyodide folder (process.ts: --allow-read=<folder> instead of
 * --deny-read): Python reaches JavaScript through `js` / `pyodide.code.run_js` / `pyodide.ffi`,
 * and there it meets the same denied Deno as agent TypeScript does.
 *
 * The Python surface is the CPython guest's own (../../python/guest/runtime.py and the modules
 * beside it, written to Pyodide's in-memory file system and imported from there): its namespaces, REPL compile step, error and value
 * shapes. Only what talks to the outside is replaced here — a namespace call becomes a call of the
 * sandbox guest's `call` (so it crosses as every sandbox call does), print() becomes "write"
 * frames, and a run is a coroutine the driver awaits. With WebAssembly JSPI (V8 in deno has it),
 * `pyodide.ffi.run_sync` suspends Python on a pending call, so namespace calls are synchronous as
 * in CPython (`tools.x.y(a=1)`), with `await tools.x.y.call_async(a=1)` for concurrency.
 *
 * Values cross between Python and JavaScript in the CPython guest's wire format (JSON with
 * {"$bytes"}, {"$int"}, {"$float"}, {"$dict"} tags), the one runtime.py already validates.
 */
import { existsSync } from "node:fs";
import { installedPackage } from "./installed-package.js";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { ValidationError } from "../../../errors.js";

/** The folder of the installed `pyodide` package: the one thing the Python sandbox may read. */
export function pyodideFolder(): string {
  const dir = installedPackage("pyodide")?.dir;
  if (dir === undefined) throw new ValidationError('SandboxExecutor({ language: "python" }) needs the pyodide package: npm install pyodide@314');
  if (!existsSync(path.join(dir, "pyodide.asm.wasm"))) throw new ValidationError(`the pyodide package at ${dir} has no pyodide.asm.wasm; reinstall it (npm install pyodide@314)`);
  // deno's --allow-read takes a comma-separated list: a comma would widen or break the grant.
  if (dir.includes(",")) throw new ValidationError(`the pyodide folder ${JSON.stringify(dir)} contains a comma, which deno's --allow-read cannot take; install the package elsewhere`);
  return dir;
}

/**
 * Python run inside Pyodide, once, before the key is read and before the sandbox guest boots. It
 * imports runtime.py (module level only: its main() needs threads and pipes) and replaces the
 * parts that talk to the outside. `setup` receives the driver's call and write functions.
 */
const ADAPTER = String.raw`
import asyncio, inspect, json, sys
from pyodide.ffi import run_sync, can_run_sync
sys.path.insert(0, "/tcm")
import runtime as rt  # it loads its siblings, then takes its own folder off sys.path

_host = {}

def _args_json(ns, op, args):
    try:
        return json.dumps(rt.to_wire(list(args)), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise TypeError("%s.%s: arguments must be plain data; %s" % (ns, op, e)) from None

def _settled(text, ns, op=None):
    reply = json.loads(text, object_hook=rt._untag)
    if reply.get("ok"):
        return reply.get("v")
    error = reply.get("e")
    if isinstance(error, dict) and error.get("name") == "RunInterrupted":
        # The host stopped the run (deadline or cancel) while it waited here: unwind it.
        raise rt.RunInterrupted(str(error.get("message", "")))
    raise rt.host_error(error, ns, op)

def call_sync(ns, op, args):
    if not can_run_sync():
        raise RuntimeError("%s.%s: a synchronous call cannot wait here; use 'await %s.%s.call_async(...)'" % (ns, op, ns, op))
    return _settled(run_sync(_host["call"](ns, op, _args_json(ns, op, args))), ns, op)

async def call_async(ns, op, args):
    return _settled(await _host["call"](ns, op, _args_json(ns, op, args)), ns, op)

class _Output:
    """print() and sys.stderr: each write goes to the host at once (it bounds and streams it)."""
    def write(self, stream, text):
        if text:
            _host["write"](stream, text)
    def flush(self):
        pass

def _workflow_invoke(name, /, *args, **kwargs):
    run, given = rt._load_workflow(name, args, kwargs)
    result = run(**given)
    return run_sync(result) if inspect.isawaitable(result) else result

rt.call_sync = call_sync
rt.call_async = call_async
rt._output = _Output()
rt._workflow_invoke = _workflow_invoke

def setup(call, write):
    _host["call"] = call
    _host["write"] = write

def _end_tasks():
    current = asyncio.current_task()
    for task in asyncio.all_tasks():
        if task is not current:
            task.cancel()

_current = [None]

def interrupt():
    """The host stopped the run while it awaited (a timer, a future): cancel its task so it unwinds."""
    task = _current[0]
    if task is not None:
        task.cancel()

async def run(code):
    g = rt.user_globals
    value = rt._NO_VALUE
    try:
        code_obj, has_value = rt._compile(code)
        result = eval(code_obj, g)
        if code_obj.co_flags & inspect.CO_COROUTINE:
            task = asyncio.ensure_future(result)
            _current[0] = task
            try:
                await task
            finally:
                _current[0] = None
        if has_value:
            value = g.pop(rt.LAST, None)
    except BaseException as exc:  # everything the code raises is its result
        return json.dumps({"ok": False, "error": rt._error_of(exc, 0)})
    finally:
        g.pop(rt.LAST, None)
        _end_tasks()
    wired, ok = rt._wire_value(value)
    return json.dumps({"ok": True, "has": ok, "value": wired, "display": rt._display(value)}, ensure_ascii=False, allow_nan=False)
`;

/**
 * A snapshot file starts with this many bytes: the SHA-256 of the rest in hex, then "\n"s. A
 * multiple of 8, so the snapshot's bytes stay aligned for the typed arrays Pyodide views them with.
 */
export const SNAPSHOT_HEADER_BYTES = 72;

/** A snapshot the guest may start from (pyodide-snapshot.ts): its path and the SHA-256 it must have. */
export interface SnapshotRef {
  file: string;
  sha256: string;
}

/**
 * The JavaScript that loads Pyodide and the adapter (as module `_tcm_adapter`), shared by the guest
 * prelude and the snapshot maker: `loadPyodide` is in scope, `opts` are extra loadPyodide options.
 */
function loadFresh(folder: string, guestFiles: Record<string, string>): string {
  const indexURL = folder.endsWith(path.sep) ? folder : folder + path.sep;
  return `async (loadPyodide, opts) => {
  const pyodide = await loadPyodide({ indexURL: ${JSON.stringify(indexURL)}, env: { HOME: "/home/pyodide" }, stdin: () => null, stdout: () => {}, stderr: () => {}, ...opts });
  const files = ${JSON.stringify(guestFiles)};
  pyodide.FS.mkdirTree("/tcm");
  for (const name of Object.keys(files)) pyodide.FS.writeFile("/tcm/" + name, files[name]);
  const mod = pyodide.runPython('import sys, types\\n_m = types.ModuleType("_tcm_adapter")\\nsys.modules["_tcm_adapter"] = _m\\n_m');
  const ns = mod.__dict__;
  pyodide.runPython(${JSON.stringify(ADAPTER)}, { globals: ns });
  pyodide.runPython("del _m");
  ns.destroy();
  mod.destroy();
  for (const name of Object.keys(files)) pyodide.FS.unlink("/tcm/" + name);
  return pyodide;
}`;
}

const PYODIDE_IMPORT = (folder: string): string => `(await import(${JSON.stringify(pathToFileURL(path.join(folder, "pyodide.mjs")).href)})).loadPyodide`;

/**
 * JavaScript put before the driver (it runs first, as the main module's top-level await): loads
 * Pyodide from the granted folder while WebAssembly still exists (the sandbox guest's boot removes
 * it from the globals), runs the adapter, and leaves `PY` for the driver. Python's stdin is empty
 * (input() raises EOFError), said explicitly: the process's real stdin is the protocol channel.
 *
 * With a snapshot, Pyodide starts from it (the adapter is already imported there) when the file
 * has the SHA-256 the host checked; any failure — unreadable, changed, a failed restore — falls
 * back to the normal load. A restored interpreter reseeds `random` (its state is in the snapshot,
 * so every session would otherwise draw the same numbers).
 */
export function pyodidePrelude(folder: string, guestFiles: Record<string, string>, snapshot?: SnapshotRef): string {
  return `const PY = await (async () => {
  const loadPyodide = ${PYODIDE_IMPORT(folder)};
  const loadFresh = ${loadFresh(folder, guestFiles)};
  let pyodide;
  const snap = ${JSON.stringify(snapshot ?? null)};
  if (snap) {
    try {
      // The file: a ${SNAPSHOT_HEADER_BYTES}-byte header (the SHA-256), then the snapshot (pyodide-snapshot.ts).
      const bytes = Deno.readFileSync(snap.file).subarray(${SNAPSHOT_HEADER_BYTES});
      const digest = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
      if (digest === snap.sha256) {
        pyodide = await loadPyodide({ indexURL: ${JSON.stringify(folder.endsWith(path.sep) ? folder : folder + path.sep)}, env: { HOME: "/home/pyodide" }, stdin: () => null, stdout: () => {}, stderr: () => {}, _loadSnapshot: bytes });
        pyodide.runPython('import sys\\nif "random" in sys.modules: sys.modules["random"].seed()');
      }
    } catch {
      pyodide = undefined;
    }
  }
  pyodide ??= await loadFresh(loadPyodide, {});
  const mod = pyodide.pyimport("_tcm_adapter");
  return { setup: mod.setup, run: mod.run, interrupt: mod.interrupt };
})();
`;
}

/**
 * The snapshot maker's program (pyodide-snapshot.ts runs it with the guest's permissions): the
 * guest's load, then Pyodide's memory snapshot written to stdout. No agent code ever runs in it.
 */
export function pyodideSnapshotMaker(folder: string, guestFiles: Record<string, string>): string {
  return `const loadPyodide = ${PYODIDE_IMPORT(folder)};
const pyodide = await (${loadFresh(folder, guestFiles)})(loadPyodide, { _makeSnapshot: true });
const bytes = pyodide.makeMemorySnapshot();
let at = 0;
while (at < bytes.length) at += await Deno.stdout.write(bytes.subarray(at));
`;
}
