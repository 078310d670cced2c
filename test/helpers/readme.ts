/** README.md's and docs/'s text, for tests that check what the docs tell users against what runs. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { REPO } from "../cli/harness.js";

/** The whole text of a document of the repository, e.g. `docs/agents.md`. */
export async function readDoc(doc: string): Promise<string> {
  return readFile(path.join(REPO, doc), "utf8");
}

/** The text of the `## <title>` section of a document, up to the next `## ` heading. */
export async function docSection(doc: string, title: string): Promise<string> {
  const text = await readDoc(doc);
  const start = text.indexOf(`\n## ${title}\n`);
  expect(start, `${doc} has a '## ${title}' section`).toBeGreaterThan(-1);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

/** The text of README.md's `## <title>` section, up to the next `## ` heading. */
export async function readmeSection(title: string): Promise<string> {
  return docSection("README.md", title);
}
