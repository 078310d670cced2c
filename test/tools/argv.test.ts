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
