/** Type-checks generated TypeScript (tools.describe output, README blocks) with the real compiler. */
import ts from "typescript";

const libCache = new Map<string, ts.SourceFile>();

/** Type-check `code` as a standalone script with strict options; return the diagnostics as text. */
export function typeErrors(code: string): string[] {
  const fileName = "/virtual/check.ts";
  const options: ts.CompilerOptions = {
    noEmit: true,
    strict: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2022.d.ts"],
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const original = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, onError, create) => {
    if (name === fileName) return ts.createSourceFile(name, code, lang);
    // lib.*.d.ts files are the same for every check; parsing them once keeps the suite fast.
    let sf = libCache.get(name);
    if (!sf) {
      sf = original(name, lang, onError, create);
      if (sf) libCache.set(name, sf);
    }
    return sf;
  };
  const baseFileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === fileName || baseFileExists(name);
  const program = ts.createProgram([fileName], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
}
