import { describe, expect, test } from "vitest";
import { InvalidNameError } from "../../src/errors.js";
import { RESERVED_WORKFLOW_NAMES, isWellFormedWorkflowName, validateWorkflowName } from "../../src/workflows/names.js";

describe("validateWorkflowName", () => {
  test.each(["triple", "scan_host", "_private", "A1", "x", "a".repeat(100)])("accepts %s", (name) => {
    expect(() => validateWorkflowName(name)).not.toThrow();
  });

  const rejected: Array<[string, unknown, RegExp]> = [
    ["path traversal", "../x", /Invalid workflow name "\.\.\/x".*identifier/],
    ["slash", "a/b", /identifier.*Try "a_b"/],
    ["hyphen, with a suggestion", "scan-host", /Try "scan_host"/],
    ["leading digit", "1abc", /a letter or underscore/],
    ["space", "my flow", /Try "my_flow"/],
    ["dot", "x.ts", /Try "x_ts"/],
    ["empty", "", /empty/],
    ["too long", "a".repeat(101), /101 characters long; the limit is 100/],
    ["not a string", 42, /must be a string, got number/],
    ["null", null, /got null/],
    ["non-ASCII letters", "café", /identifier/],
  ];
  test.each(rejected)("rejects %s", (_title, name, message) => {
    let caught: unknown;
    try {
      validateWorkflowName(name);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidNameError);
    expect((caught as Error).name).toBe("InvalidNameError");
    expect((caught as Error).message).toMatch(message);
  });

  test.each([...RESERVED_WORKFLOW_NAMES])("rejects reserved name %s and says why", (name) => {
    expect(() => validateWorkflowName(name)).toThrow(InvalidNameError);
    expect(() => validateWorkflowName(name)).toThrow(/reserved/);
  });

  test("the reserved list covers the namespace methods and thenable/prototype traps", () => {
    for (const n of ["list", "search", "get", "create", "delete", "invoke", "describe", "then", "__proto__", "constructor"]) {
      expect(RESERVED_WORKFLOW_NAMES).toContain(n);
    }
  });

  test("a reserved name is still well formed (lookups treat it as absent, not malformed)", () => {
    expect(isWellFormedWorkflowName("list")).toBe(true);
    expect(isWellFormedWorkflowName("../x")).toBe(false);
  });
});
