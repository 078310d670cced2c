/**
 * Tool YAML documents kept in Redis (`<prefix>:tools`, file stem → YAML text), so a container can
 * take its tools from the same server as its workflows. This module only stores text: parsing is
 * the tools layer's job (storage knows nothing about tools), e.g.
 *
 *   for (const doc of await loadToolDocuments(storage)) createToolAdapter(parseYaml(doc.text), { file: doc.file, dir }, ...)
 */
import { InvalidNameError } from "../../errors.js";
import { artifactNameProblem, compareNames } from "../names.js";
import type { RedisConnection } from "./connection.js";
import type { RedisKeys } from "./keys.js";

export interface ToolDocument {
  /** The file stem, e.g. "curl" for curl.yaml. */
  name: string;
  /** `<name>.yaml`: what error messages and `pull` call it. */
  file: string;
  text: string;
}

/** One file-name segment without its extension: printable, no "/" or "\", not starting with ".". */
export function validateToolFileStem(name: unknown): string {
  const problem = typeof name === "string" && name.includes("/") ? 'it contains "/"' : artifactNameProblem(name);
  if (problem) {
    throw new InvalidNameError(
      `Invalid tool file name ${JSON.stringify(String(name))}: ${problem}. Accepted: a file name without ".yaml", e.g. "curl".`,
    );
  }
  return name as string;
}

export class RedisToolStore {
  constructor(
    private readonly conn: RedisConnection,
    private readonly keys: RedisKeys,
  ) {}

  /** Every document, sorted by name. */
  async list(): Promise<ToolDocument[]> {
    const all = await this.conn.run("list tool documents", (c) => c.hgetall(this.keys.tools));
    return Object.entries(all)
      .map(([name, text]) => ({ name, file: `${name}.yaml`, text }))
      .sort((a, b) => compareNames(a.name, b.name));
  }

  async get(name: string): Promise<ToolDocument | null> {
    validateToolFileStem(name);
    const text = await this.conn.run(`read tool document "${name}"`, (c) => c.hget(this.keys.tools, name));
    return text === null ? null : { name, file: `${name}.yaml`, text };
  }

  /** Writes all documents in one transaction; `clear` first removes those not given (atomically). */
  async saveMany(docs: ReadonlyArray<{ name: string; text: string }>, options: { clear?: boolean } = {}): Promise<void> {
    const fields: string[] = [];
    for (const d of docs) fields.push(validateToolFileStem(d.name), d.text);
    if (fields.length === 0 && !options.clear) return;
    await this.conn.run(`save ${docs.length} tool documents`, async (c) => {
      const tx = c.multi();
      if (options.clear) tx.del(this.keys.tools);
      if (fields.length) tx.hset(this.keys.tools, ...fields);
      const results = await tx.exec();
      const failed = results?.find(([err]) => err !== null)?.[0];
      if (failed) throw failed;
    });
  }

  async delete(name: string): Promise<boolean> {
    validateToolFileStem(name);
    return (await this.conn.run(`delete tool document "${name}"`, (c) => c.hdel(this.keys.tools, name))) === 1;
  }
}

/** The tool YAML documents stored under a RedisStorage's prefix, sorted by name. */
export async function loadToolDocuments(storage: { readonly tools: RedisToolStore }): Promise<ToolDocument[]> {
  return storage.tools.list();
}
