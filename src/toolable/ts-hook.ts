/** The module hook behind `ts-code-mode/toolable/register`: `.ts` / `.mts` files load as ES modules with their types stripped. */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

interface LoadResult {
  format?: string | null;
  source?: string | ArrayBuffer | Uint8Array;
  shortCircuit?: boolean;
}
type NextLoad = (url: string, context: unknown) => Promise<LoadResult>;

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  if (!/^file:.*\.m?ts$/.test(url)) return nextLoad(url, context);
  const { transform } = await import("sucrase");
  const code = await readFile(fileURLToPath(url), "utf8");
  const out = transform(code, { transforms: ["typescript"], filePath: fileURLToPath(url), disableESTransforms: true, keepUnusedImports: false });
  return { format: "module", source: out.code, shortCircuit: true };
}
