/**
 * Cloudflare's code-mode "hello" (the Quick Start of @cloudflare/codemode: two AI SDK tools,
 * getWeather and sendEmail, one code tool given to streamText as `tools: { codemode }`) on
 * ts-code-mode. The user's part is unchanged — the tools, the streamText call — except the import
 * (`createCodeModeTool` from "ts-code-mode/ai" instead of `createCodeTool` from
 * "@cloudflare/codemode/ai") and the one call that makes the code tool:
 *
 *   createCodeTool({ tools, executor })         →   createCodeModeTool(tools, { executor })
 *
 * It runs in every local executor that runs TypeScript (the remote one serves code tools through
 * `serve --tools-module`, covered by the matrix's tools-code row) (written for this test; the model is the AI
 * SDK's scripted mock, which writes the code the way our run_code description asks).
 */
import { simulateReadableStream, streamText, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createCodeModeTool } from "../../src/adapters/ai.js";
import type { Executor } from "../../src/execution/protocol.js";
import { ContainerExecutor } from "../../src/execution/container/executor.js";
import { InProcessExecutor } from "../../src/execution/in-process/executor.js";
import { SandboxExecutor } from "../../src/execution/sandbox/executor.js";
import { SubprocessExecutor } from "../../src/execution/subprocess/executor.js";
import type { CodeToolSet } from "../../src/tools/code/tool-set.js";
import { ensureBuilt } from "../cli/harness.js";
import { ensureTestImage } from "../helpers/container.js";

let image = "";
beforeAll(async () => {
  await ensureBuilt();
  // The suite's one shared container image (built once per machine).
  image = await ensureTestImage();
}, 900_000);

const EXECUTORS: Array<{ name: string; make: (o: { tools: CodeToolSet }) => Executor }> = [
  { name: "in-process", make: ({ tools }) => new InProcessExecutor({ tools }) },
  { name: "subprocess", make: ({ tools }) => new SubprocessExecutor({ tools }) },
  { name: "sandbox (quickjs)", make: ({ tools }) => new SandboxExecutor({ tools }) },
  { name: "sandbox (deno)", make: ({ tools }) => new SandboxExecutor({ engine: "deno", tools }) },
  // The tools' functions stay on the host; the code runs in the container and calls them over RPC.
  { name: "container", make: ({ tools }) => new ContainerExecutor({ image, tools }) },
];

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const CODE = [
  'const weather = await tools.getWeather({ location: "London" });',
  'if (weather.includes("sunny")) await tools.sendEmail({ to: "team@example.com", subject: "Nice day!", body: `It\'s ${weather}` });',
  "({ weather, notified: sent.length === 1 })",
].join("\n");

/** One streamed step: the model calls the code tool with CODE (and saw the tools' declarations in its description). */
function model(seen: { description?: string }): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doStream: async (options) => {
      const t = options.tools?.find((x) => x.name === "codemode");
      if (t && t.type === "function") seen.description = t.description;
      const chunks: LanguageModelV3StreamPart[] = [
        { type: "tool-call", toolCallId: "c1", toolName: "codemode", input: JSON.stringify({ code: CODE.replace("sent.length === 1", "true") }) },
        { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage },
      ];
      return { stream: simulateReadableStream({ chunks }) };
    },
  });
}

describe("Cloudflare's codemode hello on ts-code-mode", () => {
  const opened: Array<{ close(): Promise<void> }> = [];
  afterAll(async () => {
    await Promise.all(opened.map((t) => t.close()));
  });

  it.each(EXECUTORS)("runs in the $name executor with the user's tools and streamText call as they are", async ({ make }) => {
    const sent: string[] = [];
    const seen: { description?: string } = {};
    const executor = make;

    // --- the user's code (the peer's Quick Start) ---
    const tools = {
      getWeather: tool({
        description: "Get weather for a location",
        inputSchema: z.object({ location: z.string() }),
        execute: async ({ location }) => `Weather in ${location}: 72°F, sunny`,
      }),
      sendEmail: tool({
        description: "Send an email",
        inputSchema: z.object({ to: z.string(), subject: z.string(), body: z.string() }),
        execute: async ({ to }) => {
          sent.push(to);
          return `Email sent to ${to}`;
        },
      }),
    };
    const codemode = createCodeModeTool(tools, { executor }); // was: createCodeTool({ tools, executor })
    opened.push(codemode);
    const result = streamText({ model: model(seen), system: "You are a helpful assistant.", messages: [{ role: "user", content: "Tell the team if London is sunny" }], tools: { codemode } });
    // --- end of the user's code ---

    const [toolResult] = await result.toolResults;
    expect(toolResult?.toolName).toBe("codemode");
    const output = toolResult?.output as { text: string; isError: boolean; structured: { ok: boolean; value: unknown } };
    expect(output.isError).toBe(false);
    expect(output.structured.value).toEqual({ weather: "Weather in London: 72°F, sunny", notified: true });
    expect(sent).toEqual(["team@example.com"]);
    expect(seen.description).toContain("(args: getWeather.Args): Promise<unknown>;");
    expect(seen.description).toContain("location: string;");
  }, 120_000);
});
