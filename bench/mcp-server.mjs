/**
 * The MCP server as a client meets it: `ts-code-mode mcp` over stdio, driven by the SDK's client.
 * Prints the footprint of each surface (the whole `tools/list` result plus the server instructions,
 * what a host pays before the first call; the default "code" surface has a budget of 4,000
 * characters), the server's start (spawn + initialize + tools/list), and round trips of
 * `run_code("1+1")`, a tool call through `run_code`, and `search_tools` (surface full).
 *
 *   npm run build && node bench/mcp-server.mjs
 */
import { copyFile, mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { measure, printJsonLine, printTable, resultRow, timed, withTempDir } from "./lib.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const MAIN = path.join(ROOT, "dist", "cli", "main.js");

/** The budget for the default surface: about 1,000 tokens. */
const FOOTPRINT_BUDGET = 4_000;

async function connect(base, surface = "code") {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [MAIN, "mcp", "--base", base, "--surface", surface], stderr: "ignore" }));
  return client;
}

async function footprint(base, surface) {
  const client = await connect(base, surface);
  const listed = await client.listTools();
  const instructions = client.getInstructions() ?? "";
  const chars = JSON.stringify(listed).length + instructions.length;
  await client.close();
  return { case: `footprint: tools/list + instructions (--surface ${surface})`, surface, tools: listed.tools.length, chars, approx_tokens: Math.round(chars / 4), budget_chars: surface === "code" ? FOOTPRINT_BUDGET : null };
}

await withTempDir("tcm-bench-mcp-", async (dir) => {
  const base = path.join(dir, "base");
  await mkdir(path.join(base, "tools"), { recursive: true });
  for (const f of await readdir(path.join(ROOT, "examples", "tools"))) await copyFile(path.join(ROOT, "examples", "tools", f), path.join(base, "tools", f));
  const rows = [];
  const starts = await measure(
    () =>
      timed(async () => {
        const c = await connect(base);
        await c.listTools();
        await c.close();
      }),
    { iterations: 10, warmup: 1 },
  );
  rows.push(resultRow({ name: "server start: spawn + initialize + tools/list", executor: "subprocess", iterations: 10, samples: starts }));
  const sizes = [await footprint(base, "code"), await footprint(base, "full")];
  for (const f of sizes) {
    printJsonLine(f);
    const over = f.budget_chars !== null && f.chars > f.budget_chars ? `  OVER the budget of ${f.budget_chars}` : "";
    process.stderr.write(`${f.case}: ${f.tools} tools, ${f.chars.toLocaleString("en-US")} characters (~${f.approx_tokens} tokens)${over}\n`);
  }
  const client = await connect(base, "full");
  const call = (name, args) => () => timed(() => client.callTool({ name, arguments: args }));
  for (const [name, fn, iterations] of [
    ['run_code("1+1")', call("run_code", { code: "1+1" }), 500],
    ["run_code calling a CLI tool (echo, real spawn)", call("run_code", { code: 'await tools.echo.say({ text: ["hi"] })' }), 200],
    ['search_tools("count lines")', call("search_tools", { query: "count lines" }), 500],
  ]) {
    rows.push(resultRow({ name, executor: "subprocess", iterations, samples: await measure(fn, { iterations, warmup: 20 }) }));
  }
  await client.close();
  for (const row of rows) printJsonLine(row);
  printTable(rows);
});
