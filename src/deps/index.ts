/** Deps layer: spec validation, the configured list, installing, and the service behind `deps`. */
import os from "node:os";
import path from "node:path";
import { DepsService } from "./service.js";
import { parseDepSpec } from "./spec.js";
import type { StorageBackend } from "../storage/protocol.js";
import { FileDepsStore, type DepsStore } from "./store.js";

export { DepsService, type DepEntry, type DepsServiceOptions, type InstallResult } from "./service.js";
export { FileDepsStore, type DepsStore } from "./store.js";
export { parseDepSpec, MAX_NAME_LENGTH, type DepSpec, type SpecOptions } from "./spec.js";

/** The deps options an executor takes (validated by the executor). */
export interface DepsConfig {
  /** Packages the operator wants installed, e.g. ["lodash@^4", "dayjs"]. Installed at start. */
  deps?: string[];
  /** A plain list, one spec a line; it is also where agents' additions are written. Default `<base>/deps.txt`. */
  depsFile?: string;
  /** Folder packages are installed into. Default `<base>/deps` (file storage) or ~/.cache/ts-code-mode/deps. */
  depsDir?: string;
  /** Let agent code call deps.add / deps.remove. Default true. */
  allowRuntimeDeps?: boolean;
  /** Run install scripts. Default false (`npm install --ignore-scripts`). */
  allowInstallScripts?: boolean;
  /** Accept local folders and tarballs as specs. Default false. */
  allowLocalPaths?: boolean;
  /** Progress of installing the configured deps when the executor starts: what is installed, and the installer's output lines. */
  onDepsOutput?: (line: string) => void;
}

/** Operator-configured specs are checked when the executor is constructed: a typo fails at once. */
export function validateDepsConfig(config: DepsConfig): void {
  for (const spec of config.deps ?? []) parseDepSpec(spec, { allowLocalPaths: config.allowLocalPaths ?? false });
}

/**
 * The deps service for a storage: the list lives in `depsFile` when given, else in the storage's
 * shared list (Redis), else in `<base>/deps.txt`; packages go to `depsDir`, else `<base>/deps`,
 * else ~/.cache/ts-code-mode/deps (a storage without a disk home). A string is a base folder.
 */
export function depsServiceFor(config: DepsConfig, storage: Pick<StorageBackend, "basePath" | "depsList"> | string | undefined): DepsService {
  const backend = typeof storage === "string" ? { basePath: storage } : storage;
  const basePath = backend?.basePath;
  const home = basePath ?? path.join(os.homedir(), ".cache", "ts-code-mode");
  const dir = config.depsDir ?? path.join(home, "deps");
  const file = config.depsFile ?? (basePath ? path.join(basePath, "deps.txt") : path.join(dir, "deps.txt"));
  const store: DepsStore = config.depsFile === undefined && backend?.depsList ? backend.depsList : new FileDepsStore(path.resolve(file));
  return new DepsService({
    store,
    dir,
    configured: config.deps ?? [],
    allowRuntimeDeps: config.allowRuntimeDeps ?? true,
    allowInstallScripts: config.allowInstallScripts ?? false,
    allowLocalPaths: config.allowLocalPaths ?? false,
  });
}
