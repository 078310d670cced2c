/**
 * deps for Python sessions: the same DepsService (list, add, remove, sync, one install at a time),
 * with pip into `<base>/deps/python/venv` and a list of its own — npm specs and Python specs never
 * share a list, so a TypeScript and a Python session on one base each see their language's packages.
 * The list is `<base>/deps-python.txt`, or the storage's shared Python list (Redis: `<base>:deps:python`),
 * so every machine on one Redis installs the same packages into its own local venv when it starts.
 */
import os from "node:os";
import path from "node:path";
import type { StorageBackend } from "../../storage/protocol.js";
import { DepsService } from "../service.js";
import { FileDepsStore } from "../store.js";
import { pipPackages } from "./installer.js";

export { parsePythonSpec, normalizePythonName } from "./spec.js";
export { pipPackages, venvOf } from "./installer.js";

export interface PythonDepsOptions {
  /** The interpreter the venv is made with: the session's own, so what pip installs fits it. */
  python: string;
  allowRuntimeDeps?: boolean;
  installTimeoutMs?: number;
  /** Packages the operator configured (PEP 508 names and specifiers): always listed, installed at start, not removable by agents. */
  deps?: string[];
}

/** A storage without a disk home (Redis) keeps the Python list and venv under ~/.cache/ts-code-mode. */
export function pythonDepsServiceFor(options: PythonDepsOptions, storage: Pick<StorageBackend, "basePath" | "pythonDepsList"> | string | undefined): DepsService {
  const backend = typeof storage === "string" ? { basePath: storage } : storage;
  const basePath = backend?.basePath;
  const home = basePath ?? path.join(os.homedir(), ".cache", "ts-code-mode");
  const dir = path.join(home, "deps", "python");
  const file = basePath ? path.join(basePath, "deps-python.txt") : path.join(dir, "deps.txt");
  return new DepsService({
    store: backend?.pythonDepsList ?? new FileDepsStore(path.resolve(file)),
    configured: options.deps ?? [],
    dir,
    manager: pipPackages(options.python),
    allowRuntimeDeps: options.allowRuntimeDeps ?? true,
    ...(options.installTimeoutMs !== undefined ? { installTimeoutMs: options.installTimeoutMs } : {}),
  });
}
