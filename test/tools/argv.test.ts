import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import { buildArgv, mergeArgs } from "../../src/tools/adapters/cli/argv.js";
import { parseCliTool, type CliToolSpec } from "../../src/tools/adapters/cli/schema.js";

function spec(doc: Record<string, unknown>): CliToolSpec {
  return parseCliTool({ name: "t", ...doc }, "test.yaml");
}

const curl = spec({
  name: "curl",
  schema: {
    options: {
      silent: { type: "boolean", short: "s" },
      header: { type: "array", short: "H" },
      max_time: { type: "number" },
      retries: { type: "integer", default: 0 },
      request: { type: "string", short: "X" },
      color: { type: "string", joined: true },
      level: { type: "integer", short: "n", joined: true },
    },
    positional: [
      { name: "url", type: "string", required: true },
      { name: "extra", type: "array" },
    ],
  },
  recipes: {
    get: { description: "GET", preset: { silent: true, request: "GET" }, params: { url: {} } },
    post: { preset: { request: "POST" }, params: { url: {}, request: { default: "PUT" } } },
  },
});

describe("buildArgv", () => {
  it("starts with the command, defaulting to the tool name", () => {
    expect(buildArgv(spec({}), {})).toEqual(["t"]);
    expect(buildArgv(spec({ command: "/usr/bin/env" }), {})).toEqual(["/usr/bin/env"]);
  });

  it("accepts a command list as fixed leading words", () => {
    expect(buildArgv(spec({ command: ["git", "log"] }), {})).toEqual(["git", "log"]);
  });

  it("keeps a command with spaces as one word (no shell, no splitting)", () => {
    expect(buildArgv(spec({ command: "/opt/my tools/run" }), {})).toEqual(["/opt/my tools/run"]);
  });

  it("emits options in schema order, then positionals in schema order, whatever the args order", () => {
    const argv = buildArgv(curl, { extra: ["x", "y"], url: "http://h", request: "GET", silent: true });
    expect(argv).toEqual(["curl", "-s", "-X", "GET", "http://h", "x", "y"]);
  });

  it("uses the short flag when given, else --long with _ turned into -", () => {
    expect(buildArgv(curl, { request: "GET", max_time: 2.5, url: "u" })).toEqual(["curl", "--max-time", "2.5", "-X", "GET", "u"]);
  });

  it("emits a boolean flag only when true", () => {
    expect(buildArgv(curl, { silent: true, url: "u" })).toEqual(["curl", "-s", "u"]);
    expect(buildArgv(curl, { silent: false, url: "u" })).toEqual(["curl", "u"]);
  });

  it("repeats the flag for each array element", () => {
    expect(buildArgv(curl, { header: ["A: 1", "B: 2"], url: "u" })).toEqual(["curl", "-H", "A: 1", "-H", "B: 2", "u"]);
    expect(buildArgv(curl, { header: [], url: "u" })).toEqual(["curl", "u"]);
  });

  it("stringifies integers and numbers", () => {
    expect(buildArgv(curl, { retries: 3, max_time: 0.5, url: "u" })).toEqual(["curl", "--max-time", "0.5", "--retries", "3", "u"]);
  });

  it("joins the value into the flag's word when joined: true", () => {
    expect(buildArgv(curl, { color: "never", level: 5, url: "u" })).toEqual(["curl", "--color=never", "-n5", "u"]);
  });

  it("passes values verbatim as single words (spaces, quotes, shell syntax)", () => {
    const evil = "$(rm -rf /); `x` 'q' \"d\" | & > f";
    expect(buildArgv(curl, { request: evil, url: evil })).toEqual(["curl", "-X", evil, evil]);
  });

  it("skips absent and null values", () => {
    expect(buildArgv(curl, { request: undefined, header: null, url: "u" })).toEqual(["curl", "u"]);
  });

  it("refuses a positional given after a missing earlier one", () => {
    expect(() => buildArgv(curl, { extra: ["x"] })).toThrow(/'extra'.*without 'url'/);
  });

  it("refuses values argv cannot carry (objects, non-boolean flags)", () => {
    expect(() => buildArgv(curl, { request: { a: 1 }, url: "u" })).toThrow(ToolError);
    expect(() => buildArgv(curl, { silent: "yes", url: "u" })).toThrow(/must be a boolean/);
  });
});

describe("buildArgv: no value becomes an option", () => {
  const guarded = spec({
    schema: {
      options: { mode: { type: "string", short: "m" }, label: { type: "string" }, tag: { type: "array" } },
      positional: [{ name: "files", type: "array" }],
    },
  });
  const ended = spec({ end_of_options: true, schema: { options: { mode: { type: "string", short: "m" } }, positional: [{ name: "files", type: "array" }] } });
  const optIn = spec({ schema: { positional: [{ name: "nums", type: "array", allow_leading_dash: true }] } });

  it("writes an option value that starts with '-' inside the flag's word", () => {
    expect(buildArgv(guarded, { mode: "-x", label: "--all", tag: ["a", "-b"] })).toEqual(["t", "-m-x", "--label=--all", "--tag", "a", "--tag=-b"]);
    expect(buildArgv(guarded, { mode: "x", label: "a-b" })).toEqual(["t", "-m", "x", "--label", "a-b"]);
  });

  it("puts positionals after -- when the command reads it (end_of_options: true)", () => {
    expect(buildArgv(ended, { mode: "x", files: ["-r", "--files0-from=/etc/passwd", "a"] })).toEqual(["t", "-m", "x", "--", "-r", "--files0-from=/etc/passwd", "a"]);
    expect(buildArgv(ended, { files: ["a"] })).toEqual(["t", "--", "a"]);
    // No positional, no --: it would otherwise be an operand of its own for some commands.
    expect(buildArgv(ended, { mode: "x" })).toEqual(["t", "-m", "x"]);
  });

  it("refuses a positional starting with '-' otherwise, with a hint for the agent and for the author", () => {
    expect(() => buildArgv(guarded, { files: ["a", "-r"] })).toThrow(ToolError);
    expect(() => buildArgv(guarded, { files: ["--files0-from=x"] })).toThrow(/tools\.t: 'files' cannot start with '-'.*'\.\/--files0-from=x'.*end_of_options: true.*allow_leading_dash: true/);
    expect(() => buildArgv(guarded, { files: ["-"] })).toThrow(/cannot start with '-'/);
    expect(buildArgv(guarded, { files: ["a-b", "./-r"] })).toEqual(["t", "a-b", "./-r"]);
  });

  it("lets a positional with allow_leading_dash: true take such values as they are", () => {
    expect(buildArgv(optIn, { nums: ["-5", "3"] })).toEqual(["t", "-5", "3"]);
  });

  it("refuses at load a default or preset the guard would refuse at every call", () => {
    expect(() => spec({ schema: { positional: [{ name: "f", default: "-x" }] } })).toThrow(/'f' value "-x" starts with '-'/);
    expect(() => spec({ schema: { positional: [{ name: "f" }] }, recipes: { r: { preset: { f: "--all" } } } })).toThrow(/recipes\.r\.preset: 'f' value "--all"/);
    expect(() => spec({ end_of_options: true, schema: { positional: [{ name: "f", default: "-x" }] } })).not.toThrow();
  });
});

describe("mergeArgs", () => {
  const get = curl.recipes.find((r) => r.name === "get")!;
  const post = curl.recipes.find((r) => r.name === "post")!;

  it("applies schema defaults for the escape hatch", () => {
    expect(mergeArgs(curl, null, { url: "u" })).toEqual({ retries: 0, url: "u" });
    expect(buildArgv(curl, mergeArgs(curl, null, { url: "u" }))).toEqual(["curl", "--retries", "0", "u"]);
  });

  it("layers schema defaults < preset < recipe param defaults < caller's args", () => {
    expect(mergeArgs(curl, get, { url: "u" })).toEqual({ retries: 0, silent: true, request: "GET", url: "u" });
    // post: preset POST is overridden by the param default PUT, which the caller overrides.
    expect(mergeArgs(curl, post, { url: "u" })["request"]).toBe("PUT");
    expect(mergeArgs(curl, post, { url: "u", request: "PATCH" })["request"]).toBe("PATCH");
  });

  it("lets a preset override a schema default", () => {
    const s = spec({
      schema: { options: { mode: { type: "string", default: "a" } } },
      recipes: { r: { preset: { mode: "b" } } },
    });
    expect(mergeArgs(s, s.recipes[0]!, {})).toEqual({ mode: "b" });
  });

  it("treats null caller values as not given", () => {
    expect(mergeArgs(curl, get, { url: "u", request: null })["request"]).toBe("GET");
  });
});
