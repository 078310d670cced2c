/**
 * Option injection into CLI tools, with the real commands an agent reaches through the shipped
 * examples (`date`, `wc`, `grep`, `echo`) and a few fixtures (`ls`, `printf`): a value given for a
 * positional or for an option's value is never parsed as an option by the command.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { ToolRegistry } from "../../src/tools/registry.js";

const EXAMPLES = fileURLToPath(new URL("../../examples/tools", import.meta.url));

let dir: string;
let examples: ToolRegistry;
let fixtures: ToolRegistry;
/** A file the agent must not be able to read through an injected option. */
let secret: string;
const SECRET_TEXT = "2001-02-03 secret-line-7f3a";

async function rejection(p: Promise<unknown>): Promise<ToolError> {
  try {
    const value = await p;
    throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
  } catch (e) {
    expect(e).toBeInstanceOf(ToolError);
    return e as ToolError;
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "tcm-inject-"));
  secret = path.join(dir, "secret.txt");
  await writeFile(secret, `${SECRET_TEXT}\n`);
  await mkdir(path.join(dir, "tree", "hidden-subdir-9c1e"), { recursive: true });
  await writeFile(path.join(dir, "tree", "hidden-subdir-9c1e", "note.txt"), "needle secret-line-7f3a\n");
  await writeFile(path.join(dir, "tree", "top.txt"), "hay\n");
  // wc --files0-from reads NUL-separated file names from this list.
  await writeFile(path.join(dir, "names0"), `${secret}\0`);
  const tools = path.join(dir, "tools");
  await mkdir(tools);
  await writeFile(
    path.join(tools, "lsc.yaml"),
    `name: lsc
command: ls
schema:
  options:
    color: { type: string, description: "ls --color takes an OPTIONAL value: a separate word is not consumed" }
  positional:
    - { name: paths, type: array }
`,
  );
  await writeFile(
    path.join(tools, "pf.yaml"),
    `name: pf
command: printf
schema:
  positional:
    - { name: format, type: string, required: true }
    - { name: values, type: array, allow_leading_dash: true, description: "printf reads only its first word as a possible option" }
`,
  );
  examples = await ToolRegistry.load(EXAMPLES);
  fixtures = await ToolRegistry.load(tools);
});

afterAll(async () => {
  await examples?.close();
  await fixtures?.close();
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

describe("positionals cannot become options", () => {
  it("date.format: a format of --file=<path> is a date operand after --, never reads the file", async () => {
    const e = await rejection(examples.call("date", "format", { format: `--file=${secret}` }));
    expect(e.message).toContain("invalid date");
    expect(e.message).not.toContain("2001");
    // The same through the escape hatch.
    const direct = await rejection(examples.call("date", null, { format: `--file=${secret}` }));
    expect(direct.message).not.toContain("2001");
  });

  it("wc.lines: a file named --files0-from=<list> is a file name, not a list of files to count", async () => {
    const e = await rejection(examples.call("wc", "lines", { files: [`--files0-from=${path.join(dir, "names0")}`] }));
    expect(e.message).toContain("No such file");
    expect(e.message).not.toContain(secret);
  });

  it("grep.search: a path of -r does not turn on recursion into a directory", async () => {
    const e = await rejection(examples.call("grep", "search", { pattern: "needle", paths: ["-r", path.join(dir, "tree")] }));
    expect(e.message).not.toContain("secret-line-7f3a");
    expect(e.message).toMatch(/-r: No such file/);
  });

  it("a path starting with '-' is read as a file name after --", async () => {
    const e = await rejection(examples.call("grep", "search", { pattern: "needle", paths: ["-no-such-file-7f3a"] }));
    expect(e.message).toContain("-no-such-file-7f3a: No such file");
  });

  it("echo (no end_of_options: echo prints `--`) refuses a word starting with '-' instead of running echo -n/-e", async () => {
    const e = await rejection(examples.call("echo", "say", { text: ["-e", "a\\tb"] }));
    expect(e.code).toBe("INVALID_INPUT");
    expect(e.message).toContain("tools.echo.say: 'text' cannot start with '-'");
    const direct = await rejection(examples.call("echo", null, { text: ["-n", "x"] }));
    expect(direct.code).toBe("INVALID_INPUT");
    // Words that merely contain a dash are fine.
    expect(await examples.call("echo", "say", { text: ["a-b", "x -n"] })).toBe("a-b x -n\n");
  });

  it("allow_leading_dash lets a positional take values starting with '-'; the others stay guarded", async () => {
    expect(await fixtures.call("pf", null, { format: "%d|%s\n", values: ["-5", "--version"] })).toBe("-5|--version\n");
    const e = await rejection(fixtures.call("pf", null, { format: "--help" }));
    expect(e.code).toBe("INVALID_INPUT");
  });
});

describe("option values cannot become options", () => {
  it("a value starting with '-' goes in the flag's own word: ls --color=-R fails instead of listing recursively", async () => {
    const e = await rejection(fixtures.call("lsc", null, { color: "-R", paths: [path.join(dir, "tree")] }));
    expect(e.message).toContain("invalid argument");
    expect(e.message).not.toContain("note.txt");
  });

  it("grep's pattern -v stays the pattern (-e-v), it does not invert the match", async () => {
    const file = path.join(dir, "lines.txt");
    await writeFile(file, "plain\nwith -v inside\n");
    expect(await examples.call("grep", "search", { pattern: "-v", paths: [file] })).toBe("2:with -v inside\n");
  });
});
