/** README.md's sections, for tests that check what the README tells users against what runs. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { REPO } from "../cli/harness.js";

/** The text of the `## <title>` section, up to the next `## ` heading. */
export async function readmeSection(title: string): Promise<string> {
  const readme = await readFile(path.join(REPO, "README.md"), "utf8");
  const start = readme.indexOf(`\n## ${title}\n`);
  expect(start, `README.md has a '## ${title}' section`).toBeGreaterThan(-1);
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}
