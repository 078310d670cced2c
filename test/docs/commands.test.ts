/**
 * Every shell block of README.md and docs/*.md says on the line above it whether a test runs it
 * (`<!-- docs: run by test/x.test.ts -->`, a test that reads that document) or why it is not run
 * (`<!-- docs: not run: reason -->`), so a new block cannot go in unchecked (issue 41). The
 * README's quick-start block (the commands after `npm run demo`) is run here, as written.
 */
import { exec } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "../cli/harness.js";

const DOCS = ["README.md", ...readdirSync(path.join(REPO, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const MARKER = /^<!-- docs: (run by (test\/\S+\.test\.ts)|not run(?: as written)?: .+) -->$/;

interface Block {
  doc: string;
  line: number;
  marker: string | undefined;
  body: string;
}

function shellBlocks(doc: string): Block[] {
  const lines = readFileSync(path.join(REPO, doc), "utf8").split("\n");
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash|shell|console)\s*$/.test(lines[i]!)) continue;
    const end = lines.indexOf("```", i + 1);
    out.push({ doc, line: i + 1, marker: lines[i - 1], body: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return out;
}

const ALL = DOCS.flatMap(shellBlocks);

describe("shell blocks in README.md and docs/", () => {
  it("each says which test runs it, or why none does", () => {
    const unmarked = ALL.filter((b) => !MARKER.test(b.marker ?? "")).map((b) => `${b.doc}:${b.line}`);
    expect(unmarked).toEqual([]);
  });

  it("each named test exists and reads that document", () => {
    const wrong: string[] = [];
    for (const b of ALL) {
      const test = MARKER.exec(b.marker ?? "")?.[2];
      if (!test) continue;
      const file = path.join(REPO, test);
      if (!existsSync(file)) wrong.push(`${b.doc}:${b.line}: ${test} does not exist`);
      else if (!readFileSync(file, "utf8").includes(b.doc === "README.md" ? "README" : b.doc.replace(/^docs\//, ""))) wrong.push(`${b.doc}:${b.line}: ${test} does not read ${b.doc}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe("README.md quick start, as written", () => {
  let dir: string;
  beforeAll(async () => {
    await ensureBuilt();
    dir = await tempDir();
    // What `npm run demo` leaves: ./demo with the example tools and workflows.
    expect((await cli(["init", "--base", "./demo"], { cwd: dir })).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await cleanup(dir);
  });

  it("every command of the block after `npm run demo` exits 0 with the output it promises", async () => {
    const block = ALL.find((b) => b.doc === "README.md" && b.marker === "<!-- docs: run by test/docs/commands.test.ts -->");
    expect(block).toBeDefined();
    const outputs: string[] = [];
    for (const line of block!.body.split("\n").filter((l) => l.trim() && !l.startsWith("#"))) {
      // `node dist/cli/main.js` is the clone's CLI: point it at this checkout's build.
      const command = line.replaceAll("node dist/cli/main.js", `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(REPO, "dist/cli/main.js"))}`);
      const { stdout } = await promisify(exec)(command, { cwd: dir, timeout: 120_000, shell: "/bin/sh" });
      outputs.push(stdout);
    }
    expect(outputs[0]).toContain("hello");
    expect(outputs[1]?.trim()).toBe("42");
    expect(JSON.parse(outputs[2]!)).toMatchObject({ ok: true, value: 42 });
    expect(outputs[3]).toMatch(/wc/);
  }, 300_000);
});
