/**
 * "Take your tools, add code mode": each framework's example builds a session from the user's own
 * tools (AI SDK tools as they are, OpenAI Agents and LangChain tools through fromAgentsTools /
 * fromLangChainTools), runs a full agent loop with the framework's scripted model, and the code the
 * model wrote calls those tools. The first example of each section of docs/frameworks.md is
 * exactly the marked part of its example file, so the docs show code that ran here.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { tool as agentsTool } from "@openai/agents";
import { tool as langchainTool } from "langchain";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { fromAgentsTools } from "../../src/adapters/openai-agents.js";
import { fromLangChainTools } from "../../src/adapters/langchain.js";
import { ensureBuilt, REPO } from "../cli/harness.js";

const EXAMPLES = [
  { file: "your-tools-ai-sdk.mjs", label: "Vercel AI SDK", subpath: "ts-code-mode/ai" },
  { file: "your-tools-openai-agents.mjs", label: "OpenAI Agents", subpath: "ts-code-mode/openai-agents" },
  { file: "your-tools-langchain.mjs", label: "LangChain", subpath: "ts-code-mode/langchain" },
] as const;

beforeAll(ensureBuilt, 180_000);

async function marked(file: string, label: string): Promise<string> {
  const source = await readFile(path.join(REPO, "examples", file), "utf8");
  const start = source.indexOf(`// --- docs: ${label} ---\n`);
  const end = source.indexOf("// --- end ---", start);
  expect(start, `${file} marks its docs part`).toBeGreaterThan(-1);
  return source.slice(source.indexOf("\n", start) + 1, end).trimEnd();
}

/** The first ```js block under `## <label>` in docs/frameworks.md. */
async function firstDocsExample(label: string): Promise<string> {
  const doc = await readFile(path.join(REPO, "docs", "frameworks.md"), "utf8");
  const start = doc.indexOf(`## ${label}\n`);
  expect(start, `docs/frameworks.md has a section ## ${label}`).toBeGreaterThan(-1);
  const block = /```js\n([\s\S]*?)\n```/.exec(doc.slice(start));
  return block?.[1] ?? "";
}

describe("take your tools, add code mode", () => {
  it.each(EXAMPLES)("examples/$file: the model's code calls the user's own tool, twice at once", async ({ file }) => {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(REPO, "examples", file)], { cwd: REPO, timeout: 90_000 });
    expect(stdout).toBe("run_code said: --- value ---\nRome\n");
  });

  it.each(EXAMPLES)("the first $label example of docs/frameworks.md is the marked part of examples/$file", async ({ file, label, subpath }) => {
    const snippet = await marked(file, label);
    expect(snippet).toContain(`from "${subpath}"`);
    expect(await firstDocsExample(label)).toBe(snippet);
  });
});

describe("the converters", () => {
  it("fromAgentsTools: name, description and JSON Schema come from the function tool; calls go through its invoke", async () => {
    const t = agentsTool({ name: "double", description: "Double it", parameters: z.object({ n: z.number() }), execute: async ({ n }) => n * 2 });
    const { double } = fromAgentsTools([t]);
    expect(double!.description).toBe("Double it");
    expect(await double!.execute({ n: 4 }, { signal: new AbortController().signal, toolCallId: "x", runId: "r", executor: "host", timeoutMs: undefined })).toBe(8);
    expect(() => fromAgentsTools([{ name: "x" } as never])).toThrow(/not a function tool/);
  });

  it("fromLangChainTools: the tool's schema and invoke", async () => {
    const t = langchainTool(async ({ n }: { n: number }) => n + 1, { name: "inc", description: "Add one", schema: z.object({ n: z.number() }) });
    const { inc } = fromLangChainTools([t]);
    expect(inc!.description).toBe("Add one");
    expect(await inc!.execute({ n: 1 }, { signal: new AbortController().signal, toolCallId: "x", runId: "r", executor: "host", timeoutMs: undefined })).toBe(2);
    expect(() => fromLangChainTools([{} as never])).toThrow(/not a LangChain tool/);
  });
});
