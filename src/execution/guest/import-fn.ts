/**
 * Name of the guest-side function that `import x from "pkg"` and `import("pkg")` in a snippet are
 * rewritten to call, so imports resolve where the executor says (its deps folder, the project).
 * Kept apart from prepare.ts so a guest can know it without loading the TypeScript stripper.
 */
export const IMPORT_FN = "__tcm_import";
