import { describe, expect, it } from "vitest";
import { parseDepSpec } from "../../src/deps/spec.js";

describe("parseDepSpec", () => {
  it.each([
    ["lodash", "lodash", "lodash"],
    ["Lodash@4", "lodash", "lodash@4"],
    ["lodash@^4.17", "lodash", "lodash@^4.17"],
    ["@Scope/Pkg@1.2.x", "@scope/pkg", "@scope/pkg@1.2.x"],
    ["dayjs@>=1.2 <2", "dayjs", "dayjs@>=1.2 <2"],
    ["pkg@1 || 2", "pkg", "pkg@1 || 2"],
    ["pkg@latest", "pkg", "pkg@latest"],
    ["csv@npm:csv-parse@^5", "csv", "csv@npm:csv-parse@^5"],
    ["  spaced  ", "spaced", "spaced"],
  ])("accepts %j as %s (%s)", (raw, name, spec) => {
    expect(parseDepSpec(raw)).toEqual({ name, spec, local: false });
  });

  it.each([
    ["", /empty/],
    ["   ", /empty/],
    ["lo\u0000dash", /control characters/],
    ["a\nb", /control characters/],
    ["lodash; rm -rf /", /shell metacharacters/],
    ["lodash && echo", /shell metacharacters/],
    ["$(whoami)", /shell metacharacters/],
    ["`id`", /shell metacharacters/],
    ["https://evil.example/p.tgz", /Local paths|URLs/],
    ["git+ssh://git@github.com/a/b.git", /URLs and git/],
    ["github:user/repo", /URLs and git/],
    ["file:../x", /Local paths/],
    ["./local", /Local paths/],
    ["/abs/pkg", /Local paths/],
    ["../up", /Local paths/],
    ["x".repeat(215), /longer than 214/],
    [".hidden", /not a valid npm package name/],
    ["_under", /not a valid npm package name/],
    ["lodash@", /not a semver range/],
    [42, /must be a string/],
  ])("refuses %j", (raw, message) => {
    expect(() => parseDepSpec(raw)).toThrow(message);
  });

  it("accepts local paths only when the operator allows them", () => {
    expect(parseDepSpec("/tmp/pkg-1.0.0.tgz", { allowLocalPaths: true })).toEqual({ name: "/tmp/pkg-1.0.0.tgz", spec: "/tmp/pkg-1.0.0.tgz", local: true });
  });
});
