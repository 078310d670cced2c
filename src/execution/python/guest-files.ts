/**
 * Where the Python guest's files are: in a checkout, src/execution/python/guest (a dist/ built by
 * tsc alone has no copy, or an old one); in the installed package, the copy `npm run build` put next
 * to this module in dist/. A module of its own so the host can find workflow_signature.py without
 * loading the executor.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export function pythonGuestFile(name: string): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const source = path.resolve(here, "..", "..", "..", "src", "execution", "python", "guest", name);
  if (existsSync(source)) return source;
  const beside = path.join(here, "guest", name);
  if (existsSync(beside)) return beside;
  throw new Error(`ts-code-mode's Python guest file ${name} is missing at ${beside}; run \`npm run build\` first`);
}
