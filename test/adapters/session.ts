/**
 * A real session for the adapter tests: FileStorage in a temp folder and a SubprocessExecutor (a
 * real child node) with the example tool YAMLs (echo, wc, ... run as real commands).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { ensureBuilt, REPO } from "../cli/harness.js";

export const EXAMPLE_TOOLS = path.join(REPO, "examples", "tools");

export interface TestSession {
  session: Session;
  close(): Promise<void>;
}

export const EXAMPLE_SKILLS = path.join(REPO, "examples", "skills");

export async function testSession(options: { skillRoots?: string[] } = {}): Promise<TestSession> {
  await ensureBuilt(); // the child runtime is dist/execution/subprocess/child.js
  const dir = await mkdtemp(path.join(os.tmpdir(), "tcm-adapters-"));
  const session = new Session({
    storage: new FileStorage({ basePath: path.join(dir, "store") }),
    executor: new SubprocessExecutor({ toolsPath: EXAMPLE_TOOLS, defaultTimeoutMs: 20_000, ...options }),
  });
  await session.start();
  return {
    session,
    async close() {
      await session.close();
      await rm(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** A snippet that calls a real CLI tool, keeps a variable and saves an artifact: proof the code really ran. */
export const ECHO_SNIPPET = 'const said = (await tools.echo.say({ text: ["code", "mode"] })).trim();\nawait artifacts.save("said.txt", said);\nsaid.toUpperCase()';

/** A durable session over the journal fixture (test/runs/fixture.ts): `journal.pay` pauses the run; `lines()` counts every tool execution. */
export interface DurableJournal extends TestSession {
  lines(): Promise<string[]>;
}

export async function durableJournal(): Promise<DurableJournal> {
  const { journalFixture, SECRET } = await import("../runs/fixture.js");
  await ensureBuilt();
  const fx = await journalFixture();
  const session = new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new SubprocessExecutor({ toolsPath: fx.tools, defaultTimeoutMs: 20_000 }), durable: { secret: SECRET } });
  return {
    session,
    lines: () => fx.lines(),
    async close() {
      await session.close();
      await rm(fx.dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** Two calls that run, then one that pauses the run: `{ a, b, paid }` once decided. */
export const PAYING_SNIPPET = 'const a = (await tools.journal.add({ line: "a" })).trim();\nconst b = (await tools.journal.add({ line: "b" })).trim();\nlet paid;\ntry { paid = (await tools.journal.pay({ line: "pay 7" })).trim(); } catch (e) { paid = `refused: ${e.message}`; }\n({ a, b, paid })';
