/**
 * MCP run_code is bounded whatever the run's value: a DAG of 2^40 paths (41 arrays) or a value 7
 * deep and 60 wide comes back as a result, with the structured value left out and the text saying
 * what was cut, and the server keeps answering. The built server over stdio, per executor.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseWithExampleTools, callTool, cleanup, connectStdio, ensureBuilt, structuredOf, tempDir, textOf, type StdioConnection } from "./harness.js";

const DAG = "let a: any = [1]; for (let i = 0; i < 40; i++) a = [a, a]; a";
const WIDE_DEEP = "let o: any = 0; for (let l = 0; l < 7; l++) { const n: any = {}; for (let k = 0; k < 60; k++) n['k' + k] = o; o = n; } o";

beforeAll(ensureBuilt);

describe.each(["in-process", "subprocess", "sandbox"])("run_code with --executor %s", (executor) => {
  let dir: string;
  let conn: StdioConnection;

  beforeAll(async () => {
    dir = await tempDir();
    await baseWithExampleTools(dir);
    conn = await connectStdio(["--base", "base", "--executor", executor], { cwd: dir });
  });
  afterAll(async () => {
    await conn.close();
    await cleanup(dir);
  });

  it("a DAG of 2^40 paths: ok, no structured value, and the server answers the next call", async () => {
    const result = await callTool(conn.client, "run_code", { code: DAG });
    const structured = structuredOf(result);
    expect(structured["ok"]).toBe(true);
    expect(structured).not.toHaveProperty("value");
    expect(textOf(result)).toContain("[Array]");
    expect(structuredOf(await callTool(conn.client, "run_code", { code: "1 + 1" }))).toMatchObject({ ok: true, value: 2 });
  });

  it("a value 7 deep and 60 wide of one shared object: the text says what was cut", async () => {
    const result = await callTool(conn.client, "run_code", { code: WIDE_DEEP });
    expect(structuredOf(result)["ok"]).toBe(true);
    // The sandbox prunes its copy of the value before rendering, with its own note; the others say how many paths.
    expect(textOf(result)).toMatch(executor === "sandbox" ? /cut|not shown/ : /display cut: the value is more than 10,000 values \(2,799,360,000,000 paths through shared references/);
  });
});
