/**
 * `node --import ts-code-mode/toolable/register tool.ts`: runs a TypeScript toolable executable on
 * Node 20 without a build step. Registers a module hook that strips types with sucrase (already a
 * dependency) from `.ts` / `.mts` files; everything else loads as usual.
 */
import { register } from "node:module";

register(new URL("./ts-hook.js", import.meta.url));
