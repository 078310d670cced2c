/**
 * Loading a framework package (an optional peer dependency) for one adapter subpath. The adapters
 * load their framework with a dynamic import at module start instead of a static `import`, so that
 * a project without the package gets an error that says which package to install and why, rather
 * than Node's bare "Cannot find package 'langchain' imported from .../dist/adapters/langchain.js".
 */

export interface PeerPackage {
  /** The package specifier to import, e.g. "@openai/agents". */
  name: string;
  /** The subpath that needs it, e.g. "ts-code-mode/openai-agents". */
  adapter: string;
  /** What to install, e.g. "@openai/agents@^0.14.3". */
  install: string;
}

/** Thrown when an adapter's framework package is not installed. */
export class MissingPeerError extends Error {
  override readonly name = "MissingPeerError";
  constructor(
    readonly peer: PeerPackage,
    options: { cause?: unknown } = {},
  ) {
    super(`${peer.adapter} needs the package ${JSON.stringify(peer.name)}, which is not installed. Install it next to ts-code-mode: npm install ${peer.install}`, options);
  }
}

/** Imports `peer.name`; a missing package (and only that) becomes a MissingPeerError. */
export async function loadPeer<T>(peer: PeerPackage, load: (name: string) => Promise<unknown> = (name) => import(name)): Promise<T> {
  try {
    return (await load(peer.name)) as T;
  } catch (err) {
    if (isMissing(err, peer.name)) throw new MissingPeerError(peer, { cause: err });
    throw err;
  }
}

/** Node's "not found" for this package itself, not for something the package imports (that is a broken install, reported as is). */
function isMissing(err: unknown, specifier: string): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code !== "ERR_MODULE_NOT_FOUND" && e?.code !== "MODULE_NOT_FOUND") return false;
  const message = typeof e.message === "string" ? e.message : "";
  return [specifier, packageName(specifier)].some((n) => message.includes(`'${n}'`) || message.includes(`"${n}"`));
}

/** "@langchain/core/tools" → "@langchain/core"; "ai/test" → "ai". */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}
