/**
 * The adapter examples run as a user runs them (`node examples/<name>.mjs`, importing the built
 * package by its own name), and the snippets of docs/adapters.md are exactly the marked part of
 * those examples (`// --- README: <label> ---`, a name kept from when they were in the README), so
 * every snippet there is code that ran here.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt, REPO } from "../cli/harness.js";
import { readDoc } from "../helpers/docs.js";

const EXAMPLES = [
  { file: "ai-sdk.mjs", label: "Vercel AI SDK", subpath: "ts-code-mode/ai" },
  { file: "openai-agents.mjs", label: "OpenAI Agents", subpath: "ts-code-mode/openai-agents" },
  { file: "langchain.mjs", label: "LangChain", subpath: "ts-code-mode/langchain" },
] as const;

beforeAll(ensureBuilt, 180_000);

/** The lines between `// --- README: <label> ---` and `// --- end ---` in the example. */
async function marked(file: string, label: string): Promise<string> {
  const source = await readFile(path.join(REPO, "examples", file), "utf8");
  const start = source.indexOf(`// --- README: ${label} ---\n`);
  const end = source.indexOf("// --- end ---", start);
  expect(start, `${file} marks its README part`).toBeGreaterThan(-1);
  return source.slice(source.indexOf("\n", start) + 1, end).trimEnd();
}


describe("adapter examples and the framework snippets of docs/adapters.md", () => {
  it.each(EXAMPLES)("examples/$file runs a full loop: the snippet found and called a real tool", async ({ file }) => {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(REPO, "examples", file)], { cwd: REPO, timeout: 60_000 });
    expect(stdout).toBe("run_code said: --- value ---\nhello from code mode\n");
  });

  it.each(EXAMPLES)("the $label snippet of docs/adapters.md is the marked part of examples/$file", async ({ file, label, subpath }) => {
    const blocks = [...(await readDoc("docs/adapters.md")).matchAll(/```js\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? "");
    const snippet = await marked(file, label);
    expect(snippet).toContain(`from "${subpath}"`);
    expect(blocks).toContain(snippet);
  });
});
