/**
 * Where the configured package list lives. The file store is a plain list, one spec a line (the
 * `deps.txt` of a base folder, or the operator's `depsFile`); comments (#) and blank lines are kept
 * out of the list. A Redis store (per prefix/workspace) plugs in behind the same interface.
 */
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../storage/atomic.js";

export interface DepsStore {
  /** Specs as written, in order. */
  list(): Promise<string[]>;
  /** Replace the whole list (callers read, change, write). */
  write(specs: string[]): Promise<void>;
}

export class FileDepsStore implements DepsStore {
  constructor(readonly file: string) {}

  async list(): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    return text
      .split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter(Boolean);
  }

  async write(specs: string[]): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    await writeFileAtomic(this.file, specs.length ? `${specs.join("\n")}\n` : "");
  }
}
