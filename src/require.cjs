"use strict";
// What `require("ts-code-mode")` loads (package.json "exports", condition "require"): the package is
// ES modules only, and this says so in one line instead of Node's ERR_PACKAGE_PATH_NOT_EXPORTED.
const error = new Error(
  'ts-code-mode is an ES module package (ESM only): use `import { Session } from "ts-code-mode"`, or from CommonJS `const { Session } = await import("ts-code-mode")`; require() is not supported.',
);
error.code = "ERR_REQUIRE_ESM";
throw error;
