/**
 * What the console's browser tests share: one headless Chromium per test file (Debian's, from the
 * prerequisites list, driven by playwright-core), a base folder with the journal tool of the
 * durable-run tests, runs paused by a real durable session, and the built CLI's `console` /
 * `serve --console` as child processes.
 */
import { chromium, type Browser } from "playwright-core";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import type { ExecutionResult } from "../../src/execution/protocol.js";
import { Session } from "../../src/session.js";
import { FileStorage } from "../../src/storage/file/storage.js";
import { WorkflowLibrary } from "../../src/workflows/library.js";
import { spawnListening, type ListeningProcess } from "../cli/harness.js";
import { journalFixture, SECRET, type JournalFixture } from "../runs/fixture.js";

export { cleanup, ensureBuilt, REPO } from "../cli/harness.js";
export { SECRET, type JournalFixture } from "../runs/fixture.js";
export const TOKEN = "console-test-token-0123456789abcdef";
/** Generous: the CI machine is a loaded 2-core box. */
export const UI_TIMEOUT_MS = 30_000;

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    timeout: 60_000,
  });
}

export async function consoleBase(): Promise<JournalFixture> {
  return journalFixture();
}

/** Runs `code` in a durable in-process session on the fixture's folders; it pauses at tools.journal.pay. */
export async function runDurable(fx: JournalFixture, code: string): Promise<ExecutionResult> {
  const session = new Session({ storage: new FileStorage({ basePath: fx.storage }), executor: new InProcessExecutor({ toolsPath: fx.tools }), durable: { secret: SECRET } });
  try {
    return await session.run(code);
  } finally {
    await session.close();
  }
}

/** A workflow saved as an untrusted (sandbox) session would save it. */
export async function saveUntrustedWorkflow(fx: JournalFixture, input: { name: string; source: string; description?: string }): Promise<void> {
  const storage = new FileStorage({ basePath: fx.storage });
  try {
    await new WorkflowLibrary(storage.workflows, { principal: { trust: "untrusted", executor: "sandbox" } }).create(input);
  } finally {
    await storage.close();
  }
}

export async function saveArtifact(fx: JournalFixture, name: string, data: string | Uint8Array, description = ""): Promise<void> {
  const storage = new FileStorage({ basePath: fx.storage });
  try {
    await storage.artifacts.save(name, data, { description });
  } finally {
    await storage.close();
  }
}

/** `ts-code-mode console` on the fixture's folders (token and runs secret in its environment). */
export function startConsole(fx: JournalFixture, options: { token?: string | null; args?: string[] } = {}): Promise<ListeningProcess> {
  const token = options.token === undefined ? TOKEN : options.token;
  const env: NodeJS.ProcessEnv = { ...process.env, TS_CODE_MODE_RUNS_SECRET: SECRET };
  delete env["TS_CODE_MODE_TOKEN"];
  if (token !== null) env["TS_CODE_MODE_TOKEN"] = token;
  return spawnListening(["console", "--port", "0", "--executor", "in-process", "--tools", fx.tools, "--storage", fx.storage, ...(options.args ?? [])], { what: "console", env });
}
