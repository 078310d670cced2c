#!/usr/bin/env -S node --import ts-code-mode/toolable/register
/**
 * A toolable executable written in TypeScript with `ts-code-mode/toolable`: a tiny notes tool that
 * any toolable caller (the Python reference registry, or ts-code-mode's `type: toolable` adapter, see
 * notes.yaml) can discover and call. Run it: `node --import ts-code-mode/toolable/register notes.ts --discover`.
 */
import { z } from "zod";
import { defineTool, definePrompt, defineResource, partialResult, runCli, ToolError } from "ts-code-mode/toolable";

const NOTES: Record<string, string> = { "1": "first note", "2": "second note" };

const add = defineTool({
  name: "add",
  summary: "Add two integers",
  description: "Returns their sum.",
  input: z.object({ a: z.number().int().describe("first"), b: z.number().int().default(0) }),
  examples: [{ a: 1, b: 2 }],
  tags: ["math"],
  run: ({ a, b }) => ({ sum: a + b }),
});

const get = defineTool({
  name: "get",
  summary: "Read a note by id",
  input: z.object({ id: z.string(), dry_run: z.boolean().default(false) }),
  run: ({ id }) => {
    const text = NOTES[id];
    if (text === undefined) throw new ToolError("NOT_FOUND", `No note ${id}`, { suggestion: `Known ids: ${Object.keys(NOTES).join(", ")}`, context: { id } });
    return { id, text };
  },
});

const batch = defineTool({
  name: "batch",
  summary: "Read several notes; missing ones fail",
  input: z.object({ ids: z.array(z.string()) }),
  run: ({ ids }) => {
    const found = ids.filter((id) => NOTES[id] !== undefined);
    const errors = ids.filter((id) => NOTES[id] === undefined).map((id) => new ToolError("NOT_FOUND", `No note ${id}`));
    return partialResult({ notes: found.map((id) => NOTES[id]) }, { total: ids.length, errors });
  },
});

const count = defineTool({
  name: "count",
  summary: "Count, streaming progress",
  streaming: true,
  input: z.object({ to: z.number().int().default(3) }),
  run: ({ to }, ctx) => {
    for (let i = 1; i <= to; i++) ctx.progress(`counted ${i}`, Math.floor((i * 100) / to));
    ctx.log("counting done");
    ctx.artifact("count.txt", "file:///tmp/count.txt");
    return { counted: to };
  },
});

const repl = defineTool({
  name: "repl",
  summary: "Echo session",
  session: true,
  input: z.object({}),
  run: async (_input, ctx) => {
    for (;;) {
      const msg = await ctx.session!.next();
      if (msg["action"] === "quit") return;
      ctx.session!.emit({ type: "echo", data: msg });
      ctx.session!.emit({ type: "awaiting_input", prompt: "> " });
    }
  },
});

const ask = defineTool({
  name: "ask",
  summary: "Ask the caller's model",
  input: z.object({ question: z.string() }),
  run: async ({ question }, ctx) => ({ answer: await ctx.sample(question, { system: "Be brief" }) }),
});

await runCli({
  name: "notes",
  version: "0.1.0",
  tools: [add, get, batch, count, repl, ask],
  resources: [defineResource({ uriPattern: "notes://{id}", summary: "A note by id", mimeTypes: ["application/json"], read: ({ id }) => (id && NOTES[id] !== undefined ? { id, text: NOTES[id] } : Promise.reject(new ToolError("NOT_FOUND", `No note ${id}`))) })],
  prompts: [definePrompt({ name: "greet", summary: "Greeting prompt", arguments: { who: "Who to greet" }, render: (args) => ({ prompt: `Say hello to ${String(args["who"] ?? "someone")}.` }) })],
});
