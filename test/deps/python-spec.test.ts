import { describe, expect, it } from "vitest";
import { parsePythonSpec } from "../../src/deps/python/spec.js";

describe("parsePythonSpec", () => {
  it.each([
    ["requests", "requests", "requests"],
    ["requests>=2", "requests", "requests>=2"],
    ["Text_Unidecode >= 1.0, < 2", "text-unidecode", "text-unidecode>=1.0,<2"],
    ["zope.interface~=6.1", "zope-interface", "zope-interface~=6.1"],
    ["requests[socks, Security]==2.*", "requests", "requests[socks,security]==2.*"],
    ["torch==2.13.0+cpu", "torch", "torch==2.13.0+cpu"],
    ["pkg (>=1,<2)", "pkg", "pkg>=1,<2"],
    ["pkg===1.0", "pkg", "pkg===1.0"],
  ])("accepts %j as %s (%s)", (raw, name, spec) => {
    expect(parsePythonSpec(raw)).toEqual({ name, spec, local: false });
  });

  it.each([
    ["", /empty/],
    [42, /must be a string/],
    ["six\n--index-url=x", /control characters/],
    ["requests; os.system('touch /tmp/pwned')", /Environment markers/],
    ['requests>=2; python_version >= "3"', /Environment markers/],
    ["--index-url x", /pip options are not allowed/],
    ["-r requirements.txt", /pip options are not allowed/],
    ["-e .", /pip options are not allowed/],
    ["git+https://github.com/psf/requests", /URLs, VCS and direct references/],
    ["https://files.example/pkg-1.0-py3-none-any.whl", /URLs, VCS and direct references/],
    ["requests @ https://evil.example/requests.whl", /URLs, VCS and direct references/],
    ["file:///tmp/pkg", /URLs, VCS and direct references/],
    ["./local", /Local paths/],
    ["../up", /Local paths/],
    ["/abs/pkg-1.0-py3-none-any.whl", /Local paths/],
    ["~/pkg", /Local paths/],
    ["pkg-1.0.tar.gz", /Local paths/],
    ["requests[so$cks]", /extras/],
    ["requests>=2 && rm -rf /", /version specifier/],
    ["requests>=$(id)", /version specifier/],
    ["requests 2.0", /version specifier/],
    ["_private", /valid Python package name/],
    [`${"a".repeat(201)}`, /longer than 200/],
  ])("refuses %j", (raw, reason) => {
    expect(() => parsePythonSpec(raw)).toThrow(reason);
  });
});
