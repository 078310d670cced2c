/**
 * The real Python interpreter behind a command the product starts (`python3`, a toolable `.py`
 * file, a skill script), found once per process.
 *
 * With pyenv (or asdf) the `python3` on PATH is a bash script, a shim, that runs `pyenv exec`: four
 * or five more bash processes before Python starts, about a second on a loaded machine, on every
 * call. The interpreter tells where it really is (`sys.executable`); later spawns start that file
 * directly. A venv's `bin/python3` is not a script, so it is used as it is (and keeps its venv).
 *
 * What a shim picks can depend on the folder (`.python-version`) and the environment
 * (`PYENV_VERSION`, PATH), so the answer is cached per command, folder, PATH and version
 * variables, for the life of the process: switching the version of an already-used folder in a
 * running server takes a restart to be seen. When the interpreter does not answer (missing, broken,
 * slow) the command is returned unchanged and the real spawn reports what is wrong, as before.
 */
import { execFile } from "node:child_process";
import { accessSync, closeSync, constants, openSync, readSync } from "node:fs";
import path from "node:path";

/** Command names that mean "the Python on PATH". */
const PYTHON_NAME = /^python(3(\.\d+)?)?$/;
/** `#!/usr/bin/env python3` (the usual first line of a Python tool): the kernel would start PATH's python3. */
const ENV_PYTHON_SHEBANG = /^#!\s*\/usr\/bin\/env\s+(python(?:3(?:\.\d+)?)?)\s*$/;
/** A generous bound: the answer is cached, and a slow one only means the shim is used this time. */
const PROBE_TIMEOUT_MS = 30_000;
const PROBE = "import sys; print(sys.executable)";

/**
 * Answers kept, oldest forgotten first: a server running commands in a folder per session would
 * otherwise keep one entry per folder for its whole life.
 */
const MAX_CACHED = 256;
const cache = new Map<string, Promise<string>>();

/** How many answers are kept (tests: the cache stays bounded). */
export function cachedPythonAnswers(): number {
  return cache.size;
}

export interface PythonPlace {
  /** The folder the program runs in (a shim reads `.python-version` from it). */
  cwd: string;
  /** The environment the program gets (its PATH and PYENV_* / ASDF_* variables choose the interpreter). */
  env: Record<string, string | undefined>;
}

/**
 * `argv` with a Python interpreter started through a script (a shim) replaced by the real one:
 * `python3 …` and a file starting `#!/usr/bin/env python3` both become `<real python> …`. Any other
 * argv is returned as it is.
 */
export async function withRealPython(argv: readonly string[], place: PythonPlace): Promise<string[]> {
  const first = argv[0];
  if (first === undefined) return [...argv];
  if (PYTHON_NAME.test(first)) return [await realPython(first, place), ...argv.slice(1)];
  // A file the kernel would refuse to start (no x bit) stays refused.
  const shebang = path.isAbsolute(first) && isExecutable(first) ? firstLine(first)?.match(ENV_PYTHON_SHEBANG) : null;
  if (shebang) {
    const python = await realPython(shebang[1]!, place);
    // Only when it pays: a python that is no shim is left to the kernel, which starts it as fast.
    if (python !== shebang[1]) return [python, ...argv];
  }
  return [...argv];
}

/** The interpreter `command` (a name on PATH or a path) really runs, or `command` itself when it is no script or does not answer. */
export function realPython(command: string, place: PythonPlace): Promise<string> {
  const versionVars = Object.keys(place.env)
    .filter((k) => k.startsWith("PYENV") || k.startsWith("ASDF"))
    .sort()
    .map((k) => `${k}=${place.env[k]}`);
  const key = JSON.stringify([command, path.resolve(place.cwd), place.env["PATH"] ?? "", versionVars]);
  let found = cache.get(key);
  if (!found) {
    found = probe(command, place);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(key, found);
  }
  return found;
}

async function probe(command: string, place: PythonPlace): Promise<string> {
  const file = command.includes("/") ? path.resolve(place.cwd, command) : onPath(command, place.env["PATH"] ?? "");
  // Not found: the spawn says so. No script: nothing to save.
  if (!file || !firstLine(file)?.startsWith("#!")) return command;
  return new Promise((resolve) => {
    execFile(command, ["-c", PROBE], { cwd: place.cwd, env: place.env, timeout: PROBE_TIMEOUT_MS, encoding: "utf8", maxBuffer: 64 * 1024 }, (err, stdout) => {
      const executable = stdout.trim();
      resolve(!err && path.isAbsolute(executable) && isExecutable(executable) ? executable : command);
    });
  });
}

function onPath(name: string, pathVar: string): string | undefined {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const full = path.join(dir, name);
    if (isExecutable(full)) return full;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first line of a file (up to 200 bytes), or undefined when it cannot be read. */
function firstLine(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const buf = Buffer.alloc(200);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString("latin1").split("\n")[0];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
