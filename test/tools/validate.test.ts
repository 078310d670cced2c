import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors.js";
import type { CallableInfo } from "../../src/tools/protocol.js";
import { toolNameProblem, validateArgs } from "../../src/tools/validate.js";

const get: CallableInfo = {
  name: "get",
  description: "GET",
  returns: "string",
  params: [
    { name: "url", type: "string", required: true, description: "URL to request" },
    { name: "silent", type: "boolean", required: false },
    { name: "retries", type: "integer", required: false },
    { name: "ratio", type: "number", required: false },
    { name: "header", type: "array", items: "string", required: false },
    { name: "method", type: "string", required: false, enum: ["GET", "POST"] },
    {
      name: "opts",
      type: "object",
      required: false,
      properties: [{ name: "depth", type: "integer", required: true }],
    },
    { name: "anything", type: "unknown", required: false },
  ],
};

function error(args: unknown): ToolError {
  try {
    validateArgs("curl", "get", get, args);
  } catch (e) {
    expect(e).toBeInstanceOf(ToolError);
    return e as ToolError;
  }
  throw new Error("expected a ToolError");
}

describe("validateArgs", () => {
  it("returns the given arguments without undefined/null entries", () => {
    expect(validateArgs("curl", "get", get, { url: "u", silent: undefined, retries: null, header: ["a"] })).toEqual({ url: "u", header: ["a"] });
  });

  it("names an unknown argument, suggests the closest and lists accepted ones", () => {
    const e = error({ urll: "u" });
    expect(e.code).toBe("INVALID_INPUT");
    expect(e.recoverable).toBe(true);
    expect(e.message).toContain("tools.curl.get: Unknown argument 'urll'. Did you mean: url?");
    expect(e.message).toContain("Accepted: url, silent, retries");
  });

  it("says when a callable takes no arguments", () => {
    const none: CallableInfo = { name: "all", description: "", params: [], returns: "string" };
    expect(() => validateArgs("uname", "all", none, { x: 1 })).toThrow(/tools\.uname\.all takes no arguments/);
  });

  it("names param, expected and got for a wrong type", () => {
    expect(error({ url: 5 }).message).toContain("'url' expected string, got number 5");
    expect(error({ url: "u", silent: "yes" }).message).toContain("'silent' expected boolean, got string \"yes\"");
    expect(error({ url: "u", retries: 1.5 }).message).toContain("'retries' expected integer, got number 1.5");
    expect(error({ url: "u", ratio: Number.NaN }).message).toContain("'ratio' expected number, got NaN");
    expect(error({ url: "u", header: "a" }).message).toContain("'header' expected array of string, got string");
    expect(error({ url: "u", header: ["a", 2] }).message).toContain("'header[1]' expected string, got number 2");
    expect(error({ url: "u", opts: [] }).message).toContain("'opts' expected object, got array");
    expect(error({ url: "u", opts: { depth: "x" } }).message).toContain("'opts.depth' expected integer");
    expect(error({ url: "u", opts: {} }).message).toContain("'opts.depth' is required");
    expect(error({ url: "u", silent: 1 }).code).toBe("INVALID_INPUT");
  });

  it("checks enums", () => {
    expect(error({ url: "u", method: "PUT" }).message).toContain("'method' expected one of \"GET\", \"POST\", got string \"PUT\"");
  });

  it("accepts anything for unknown-typed params", () => {
    expect(validateArgs("curl", "get", get, { url: "u", anything: { deep: [1] } })).toMatchObject({ anything: { deep: [1] } });
  });

  it("reports a missing required param with MISSING_PARAM", () => {
    const e = error({ silent: true });
    expect(e.code).toBe("MISSING_PARAM");
    expect(e.message).toContain("tools.curl.get: Missing required argument 'url' (URL to request)");
    expect(error(undefined).code).toBe("MISSING_PARAM");
  });

  it("requires a plain object", () => {
    for (const bad of ["u", 5, ["u"], new Date()]) {
      const e = error(bad);
      expect(e.code).toBe("INVALID_INPUT");
      expect(e.message).toMatch(/takes one argument, an object of named parameters like \{ url: \.\.\. \}/);
    }
  });

  it("labels the escape hatch with the tool name alone", () => {
    expect(() => validateArgs("curl", null, get, { nope: 1 })).toThrow(/^tools\.curl: Unknown argument 'nope'\./);
  });
});

describe("toolNameProblem", () => {
  it("accepts identifiers and refuses others, namespace methods and reserved words", () => {
    expect(toolNameProblem("curl")).toBeNull();
    expect(toolNameProblem("_x9")).toBeNull();
    expect(toolNameProblem("9x")).toMatch(/identifier/);
    expect(toolNameProblem("my-tool")).toMatch(/identifier/);
    for (const n of ["list", "search", "describe", "call"]) expect(toolNameProblem(n)).toMatch(/reserved/);
    for (const n of ["then", "delete", "class", "constructor"]) expect(toolNameProblem(n)).toMatch(/reserved/);
  });
});
