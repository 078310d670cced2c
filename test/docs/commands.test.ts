/**
 * Every shell block of README.md and docs/*.md, and every code block of README.md, says on the line
 * above it whether a test runs it (`<!-- docs: run by test/x.test.ts -->`, a test that reads that
 * document) or why it is not run (`<!-- docs: not run: reason -->`), so a new block cannot go in
 * unchecked (issue 41); every block names its language (`text` for what is not code). The README's
 * command-line example (the commands after `npm run demo`) and its library example are run here, as
 * written; every page of docs/ is one link from the README, and every relative link of README and
 * docs/ reaches its file and heading.
 */
import { exec, execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, cli, ensureBuilt, REPO, tempDir } from "../cli/harness.js";

const DOCS = ["README.md", ...readdirSync(path.join(REPO, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const MARKER = /^<!-- docs: (run by (test\/\S+\.test\.ts)|not run(?: as written)?: .+) -->$/;

interface Block {
  doc: string;
  line: number;
  /** The language of the opening fence (`sh`, `js`, ...; empty when none is given). */
  lang: string;
  marker: string | undefined;
  body: string;
}

/** The fenced blocks of a document whose language matches `lang` (an opening fence at the start of a line). */
function blocks(doc: string, lang: RegExp): Block[] {
  const lines = readFileSync(path.join(REPO, doc), "utf8").split("\n");
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf("```", i + 1);
    if (lang.test(open[1]!)) out.push({ doc, line: i + 1, lang: open[1]!, marker: lines[i - 1], body: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return out;
}

const SHELL = /^(sh|bash|shell|console)$/;
/** Shell blocks everywhere, and every block of the README (the page a newcomer runs first). */
const ALL = [...DOCS.filter((d) => d !== "README.md").flatMap((d) => blocks(d, SHELL)), ...blocks("README.md", /^/)];

describe("shell blocks in README.md and docs/", () => {
  it("each says which test runs it, or why none does", () => {
    const unmarked = ALL.filter((b) => !MARKER.test(b.marker ?? "")).map((b) => `${b.doc}:${b.line}`);
    expect(unmarked).toEqual([]);
  });

  it("every block names its language, so a shell block cannot hide as an untagged one", () => {
    const untagged = DOCS.flatMap((d) => blocks(d, /^$/)).map((b) => `${b.doc}:${b.line}`);
    expect(untagged).toEqual([]);
  });

  it("reports the blocks marked not run, with their reasons (each one a command no test proves)", () => {
    const notRun = ALL.filter((b) => b.marker?.startsWith("<!-- docs: not run")).map((b) => `${b.doc}:${b.line}: ${b.marker!.replace(/^<!-- docs: | -->$/g, "")}`);
    process.stdout.write(`docs blocks not run (${notRun.length}):\n${notRun.map((l) => `  ${l}\n`).join("")}`);
    expect(notRun.every((l) => / not run(?: as written)?: \S/.test(l))).toBe(true);
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

/** The prose lines of a document (fenced blocks left out), with their line numbers. */
function proseLines(doc: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fenced = false;
  readFileSync(path.join(REPO, doc), "utf8")
    .split("\n")
    .forEach((text, i) => {
      if (text.startsWith("```")) fenced = !fenced;
      else if (!fenced) out.push({ line: i + 1, text });
    });
  return out;
}

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens. */
function anchors(doc: string): Set<string> {
  const heading = /^#+ (.+)$/;
  return new Set(proseLines(doc).flatMap(({ text }) => {
    const m = heading.exec(text);
    return m ? [m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, "").replaceAll(" ", "-")] : [];
  }));
}

describe("README.md links", () => {
  it("every relative link of README and docs/ reaches a file, and its #anchor a heading there", () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      for (const { line, text } of proseLines(doc)) {
        for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
          const link = m[1]!;
          if (/^[a-z]+:/.test(link)) continue;
          const [file, anchor] = link.split("#") as [string, string | undefined];
          const target = file === "" ? doc : path.normalize(path.join(path.dirname(doc), file));
          if (!existsSync(path.join(REPO, target))) broken.push(`${doc}:${line}: ${link} (no such file)`);
          else if (anchor && target.endsWith(".md") && !anchors(target).has(anchor)) broken.push(`${doc}:${line}: ${link} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("every page of docs/ is one click from the README", () => {
    const readme = readFileSync(path.join(REPO, "README.md"), "utf8");
    const unlinked = DOCS.filter((d) => d !== "README.md" && !readme.includes(`](${d})`) && !readme.includes(`](${d}#`));
    expect(unlinked).toEqual([]);
  });
});

describe("README.md examples, as written", () => {
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
    const block = ALL.find((b) => b.doc === "README.md" && b.marker === "<!-- docs: run by test/docs/commands.test.ts -->" && SHELL.test(b.lang));
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

  it("the library example prints what its comment says, from a program next to ./demo", async () => {
    const block = ALL.find((b) => b.doc === "README.md" && b.marker === "<!-- docs: run by test/docs/commands.test.ts -->" && b.lang === "js");
    expect(block).toBeDefined();
    const expected = /console\.log\(.*\); \/\/ (.+)$/m.exec(block!.body)?.[1];
    expect(expected, "the block says what it prints in a comment").toBeDefined();
    // `ts-code-mode` is this checkout's build, as `npm install` of the package would give it.
    const program = block!.body.replace('from "ts-code-mode"', `from ${JSON.stringify(pathToFileURL(path.join(REPO, "dist/index.js")).href)}`);
    await writeFile(path.join(dir, "library.mjs"), program);
    const { stdout } = await promisify(execFile)(process.execPath, ["library.mjs"], { cwd: dir, timeout: 120_000 });
    expect(stdout.trim()).toBe(expected);
  }, 180_000);
});

