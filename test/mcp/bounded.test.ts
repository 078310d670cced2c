/**
 * No reply can break the transport: every tool result (text and structuredContent) and every
 * resource read is bounded, with a visible note saying how to get the rest from code.
 */
import path from "node:path";
import { mkdir, writeFile } from "node:fs/promises";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { callTool, cleanup, connectStdio, ensureBuilt, structuredOf, tempDir, textOf, type StdioConnection } from "./harness.js";

let dir: string;
let conn: StdioConnection | undefined;

beforeAll(ensureBuilt);
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await conn?.close();
  conn = undefined;
  await cleanup(dir);
});

const MIB = 1024 * 1024;

interface Truncated {
  shown: number;
  total: number;
  unit: string;
  rest: string;
}

describe("bounded replies over stdio", () => {
  it("load_artifact of a 20 MiB text artifact: a cut reply with a note, and the connection keeps working", async () => {
    conn = await connectStdio(["--base", "base", "--surface", "full"], { cwd: dir });
    const { client } = conn;
    const saved = await callTool(client, "run_code", { code: `await artifacts.save("big.txt", "a".repeat(${10 * MIB}) + "b".repeat(${10 * MIB})); "saved"` });
    expect(structuredOf(saved)).toMatchObject({ ok: true, value: "saved" });

    const r = await callTool(client, "load_artifact", { name: "big.txt" });
    expect(r.isError).toBeFalsy();
    const text = textOf(r);
    expect(text.length).toBeLessThanOrEqual(24_000);
    expect(text.match(/characters cut/g)).toHaveLength(1);
    expect(text).toContain('get the rest in run_code: (await artifacts.load("big.txt")).slice(start, end) or read the resource artifact://big.txt');
    const structured = structuredOf<{ text: string; truncated: Truncated }>(r);
    expect(JSON.stringify(structured).length).toBeLessThanOrEqual(24_000 + 1_000);
    expect(structured.text.startsWith("aaaa")).toBe(true);
    expect(structured.text.endsWith("bbbb")).toBe(true);
    expect(structured.truncated).toMatchObject({ total: 20 * MIB, unit: "characters" });

    // The same data as a resource: cut at the resource limit, not sent whole.
    const read = await client.readResource({ uri: "artifact://big.txt" });
    const content = read.contents[0] as { text: string };
    expect(content.text.length).toBeLessThanOrEqual(1_000_000);
    expect(content.text).toMatch(/\[resource cut: it is 20,971,520 characters/);

    expect(structuredOf(await callTool(client, "run_code", { code: '(await artifacts.load("big.txt")).slice(10485758, 10485762)' }))).toMatchObject({ value: "aabb" });
  });

  it("load_artifact of large JSON and bytes: the data is left out of structuredContent and the note says how to read it", async () => {
    conn = await connectStdio(["--base", "base", "--surface", "full", "--max-output", "2000"], { cwd: dir });
    const { client } = conn;
    await callTool(client, "run_code", {
      code: 'await artifacts.save("rows.json", Array.from({ length: 500 }, (_, i) => ({ i }))); await artifacts.save("blob.bin", new Uint8Array(5000))',
    });
    const json = await callTool(client, "load_artifact", { name: "rows.json" });
    expect(textOf(json).length).toBeLessThanOrEqual(2000);
    expect(structuredOf(json)).not.toHaveProperty("json");
    expect(structuredOf<{ truncated: Truncated }>(json).truncated.rest).toContain('(await artifacts.load("rows.json"))');
    const bytes = await callTool(client, "load_artifact", { name: "blob.bin" });
    expect(structuredOf(bytes)).not.toHaveProperty("base64");
    expect(textOf(bytes)).toContain('(await artifacts.load("blob.bin")).subarray(start, end)');
  });

  it("lists keep the items that fit and say how many there were", async () => {
    const tools = path.join(dir, "tools");
    await mkdir(tools, { recursive: true });
    for (let i = 0; i < 40; i++) {
      await writeFile(path.join(tools, `t${i}.yaml`), `name: t${i}\ndescription: Tool number ${i} with a description long enough to take some room in a listing\ncommand: echo\n`);
    }
    conn = await connectStdio(["--tools", tools, "--storage", "data", "--surface", "full", "--max-output", "2000"], { cwd: dir });
    const r = await callTool(conn.client, "list_tools");
    const { tools: listed, truncated } = structuredOf<{ tools: unknown[]; truncated: Truncated }>(r);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.length).toBeLessThan(40);
    expect(truncated).toEqual({ shown: listed.length, total: 40, unit: "items", rest: `(await tools.list()).slice(${listed.length})` });
    expect(JSON.stringify(structuredOf(r)).length).toBeLessThanOrEqual(2000 + 200);
    expect(textOf(r)).toContain(`[${listed.length} of 40 items shown (--max-output)`);
  });
});
