/** Deps layer: spec validation, the configured list, installing, and the service behind `deps`. */
import os from "node:os";
import path from "node:path";
import { DepsService } from "./service.js";
import { parseDepSpec } from "./spec.js";
import { FileDepsStore } from "./store.js";

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
}

/** Operator-configured specs are checked when the executor is constructed: a typo fails at once. */
export function validateDepsConfig(config: DepsConfig): void {
  for (const spec of config.deps ?? []) parseDepSpec(spec, { allowLocalPaths: config.allowLocalPaths ?? false });
}

/** Where deps go for a storage with this base folder (undefined: a storage without a disk home). */
export function depsServiceFor(config: DepsConfig, basePath: string | undefined): DepsService {
  const home = basePath ?? path.join(os.homedir(), ".cache", "ts-code-mode");
  const dir = config.depsDir ?? path.join(home, "deps");
  const file = config.depsFile ?? (basePath ? path.join(basePath, "deps.txt") : path.join(dir, "deps.txt"));
  return new DepsService({
    store: new FileDepsStore(path.resolve(file)),
    dir,
    configured: config.deps ?? [],
    allowRuntimeDeps: config.allowRuntimeDeps ?? true,
    allowInstallScripts: config.allowInstallScripts ?? false,
    allowLocalPaths: config.allowLocalPaths ?? false,
  });
}
