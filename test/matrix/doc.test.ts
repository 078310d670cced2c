/**
 * docs/matrix.md is the matrix the tests run (test/matrix/cells.ts), rendered. A change to a cell
 * without the docs fails here; `UPDATE_MATRIX=1 npx vitest run test/matrix/doc.test.ts` rewrites it.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { renderMatrixDoc } from "./cells.js";

const DOC = fileURLToPath(new URL("../../docs/matrix.md", import.meta.url));

it("docs/matrix.md is rendered from test/matrix/cells.ts", async () => {
  const rendered = renderMatrixDoc();
  if (process.env.UPDATE_MATRIX === "1") await writeFile(DOC, rendered);
  expect(await readFile(DOC, "utf8").catch(() => "(docs/matrix.md is missing)")).toBe(rendered);
});
