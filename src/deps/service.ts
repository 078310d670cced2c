/**
 * DepsService: the host side of the `deps` namespace. It keeps the configured list (operator
 * `deps` plus what agents added, in a DepsStore), installs into the executor's deps folder, and
 * refuses changes when runtime deps are disabled.
 */
import { access, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { ValidationError } from "../errors.js";
import { SerialQueue } from "../serial-queue.js";
import { npmInstall, prepareDepsDir, type InstallOptions, type InstallOutcome } from "./installer.js";
import { parseDepSpec, type DepSpec, type SpecOptions } from "./spec.js";
import type { DepsStore } from "./store.js";

/** What differs between languages: how a spec is read, how packages are installed, how one is found. */
export interface PackageManager {
  /** Names the installer in messages: "npm install", "pip install". */
  readonly label: string;
  parse(raw: unknown, options: SpecOptions): DepSpec;
  prepare(dir: string): Promise<void>;
  install(specs: string[], options: InstallOptions): Promise<InstallOutcome>;
  present(dir: string, dep: DepSpec): Promise<boolean>;
}

/** npm: a private package.json in the deps folder, packages under its node_modules. */
export const npmPackages: PackageManager = {
  label: "npm install",
  parse: parseDepSpec,
  prepare: prepareDepsDir,
  install: npmInstall,
  async present(dir, dep) {
    if (dep.local) return true;
    try {
      await access(path.join(dir, "node_modules", dep.name, "package.json"));
      return true;
    } catch {
      return false;
    }
  },
};

export interface DepsServiceOptions {
  store: DepsStore;
  /** Folder with its own package.json and node_modules; agent code imports from here. */
  dir: string;
  /** Operator-configured specs, always part of the list. */
  configured?: string[];
  /** Default true. When false, agents may list and sync but not add or remove. */
  allowRuntimeDeps?: boolean;
  /** Run packages' install scripts. Default false. */
  allowInstallScripts?: boolean;
  /** Accept local folders and tarballs as specs. Default false. */
  allowLocalPaths?: boolean;
  /** Per install run. Default 5 minutes. */
  installTimeoutMs?: number;
  /** Default npm; Python sessions use pip (./python/). */
  manager?: PackageManager;
}

export interface DepEntry {
  name: string;
  spec: string;
  /** Configured by the operator (not removable by agents). */
  configured: boolean;
  installed: boolean;
}

export interface InstallResult {
  installed: string[];
  alreadyPresent: string[];
  failed: Array<{ spec: string; error: string }>;
}

/** Our own record of what was installed with which spec, next to node_modules. */
const RECORD = ".ts-code-mode-installed.json";

export class DepsService {
  readonly dir: string;
  readonly allowRuntimeDeps: boolean;
  private readonly queue = new SerialQueue();
  private readonly manager: PackageManager;

  constructor(private readonly options: DepsServiceOptions) {
    this.dir = path.resolve(options.dir);
    this.allowRuntimeDeps = options.allowRuntimeDeps ?? true;
    this.manager = options.manager ?? npmPackages;
    // Operator specs are checked at construction: a typo in config must fail loudly, at once.
    for (const s of options.configured ?? []) this.parse(s);
  }

  async list(): Promise<DepEntry[]> {
    const record = await this.readRecord();
    const entries = await this.entries();
    return Promise.all(
      entries.map(async ({ dep, configured }) => ({ name: dep.name, spec: dep.spec, configured, installed: record[dep.name] === dep.spec && (await this.present(dep)) })),
    );
  }

  /** Validates, installs, and on success adds the spec to the list (replacing one for the same name). */
  async add(raw: unknown, onOutput?: (line: string) => void): Promise<InstallResult> {
    this.assertRuntimeDeps("add");
    const dep = this.parse(raw);
    return this.queue.run(async () => {
      const result = await this.install([dep], onOutput);
      if (result.failed.length === 0) {
        const stored = (await this.options.store.list()).filter((s) => this.tryParse(s)?.name !== dep.name);
        await this.options.store.write([...stored, dep.spec]);
      }
      return result;
    });
  }

  /** Removes a spec from the list. Installed files stay until the folder is cleaned; the result says so. */
  async remove(raw: unknown): Promise<{ removed: boolean; note: string }> {
    this.assertRuntimeDeps("remove");
    const dep = this.parse(raw);
    return this.queue.run(async () => {
      if ((this.options.configured ?? []).some((s) => this.tryParse(s)?.name === dep.name)) {
        return { removed: false, note: `${dep.name} is configured by the operator and cannot be removed from agent code.` };
      }
      const stored = await this.options.store.list();
      const kept = stored.filter((s) => this.tryParse(s)?.name !== dep.name);
      if (kept.length === stored.length) return { removed: false, note: `${dep.name} is not in the list.` };
      await this.options.store.write(kept);
      return { removed: true, note: `${dep.name} was removed from the list (configuration only); its installed files stay until the deps folder is cleaned.` };
    });
  }

  /** Installs everything configured that is not installed yet. */
  async sync(onOutput?: (line: string) => void): Promise<InstallResult> {
    return this.queue.run(async () => this.install((await this.entries()).map((e) => e.dep), onOutput));
  }

  private async install(deps: DepSpec[], onOutput?: (line: string) => void): Promise<InstallResult> {
    const result: InstallResult = { installed: [], alreadyPresent: [], failed: [] };
    const record = await this.readRecord();
    const todo: DepSpec[] = [];
    for (const dep of deps) {
      if (record[dep.name] === dep.spec && (await this.present(dep))) result.alreadyPresent.push(dep.spec);
      else todo.push(dep);
    }
    if (todo.length === 0) return result;
    await this.manager.prepare(this.dir);
    const opts = { dir: this.dir, allowScripts: this.options.allowInstallScripts ?? false, timeoutMs: this.options.installTimeoutMs ?? 300_000, ...(onOutput ? { onOutput } : {}) };
    // One install run for all; when it fails, one at a time, so each failure is pinned on its spec.
    const together = await this.manager.install(todo.map((d) => d.spec), opts);
    const outcomes = together.ok ? todo.map((d) => ({ dep: d, ok: true, output: "" })) : [];
    // With one spec the failure is already pinned: running the installer again would only repeat its error.
    if (!together.ok && todo.length === 1) outcomes.push({ dep: todo[0]!, ...together });
    else if (!together.ok) for (const dep of todo) outcomes.push({ dep, ...(await this.manager.install([dep.spec], opts)) });
    for (const { dep, ok, output } of outcomes) {
      if (ok) {
        record[dep.name] = dep.spec;
        result.installed.push(dep.spec);
      } else result.failed.push({ spec: dep.spec, error: output || `${this.manager.label} failed` });
    }
    await writeFile(path.join(this.dir, RECORD), `${JSON.stringify(record, null, 2)}\n`);
    return result;
  }

  private async entries(): Promise<Array<{ dep: DepSpec; configured: boolean }>> {
    const byName = new Map<string, { dep: DepSpec; configured: boolean }>();
    for (const s of this.options.configured ?? []) {
      const dep = this.parse(s);
      byName.set(dep.name, { dep, configured: true });
    }
    for (const s of await this.options.store.list()) {
      const dep = this.tryParse(s);
      if (dep && !byName.get(dep.name)?.configured) byName.set(dep.name, { dep, configured: false });
    }
    return [...byName.values()];
  }

  private present(dep: DepSpec): Promise<boolean> {
    return this.manager.present(this.dir, dep);
  }

  private async readRecord(): Promise<Record<string, string>> {
    try {
      return JSON.parse(await readFile(path.join(this.dir, RECORD), "utf8")) as Record<string, string>;
    } catch {
      return {};
    }
  }

  private parse(raw: unknown): DepSpec {
    return this.manager.parse(raw, { allowLocalPaths: this.options.allowLocalPaths ?? false });
  }

  private tryParse(raw: string): DepSpec | null {
    try {
      return this.parse(raw);
    } catch {
      return null;
    }
  }

  private assertRuntimeDeps(what: string): void {
    if (!this.allowRuntimeDeps) {
      throw new ValidationError(`runtime deps are disabled by the operator (allowRuntimeDeps: false); cannot ${what}. deps.list() and deps.sync() still work.`);
    }
  }
}
