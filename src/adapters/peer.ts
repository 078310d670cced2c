/**
 * Loading a framework package (an optional peer dependency) for one adapter subpath. The adapters
 * load their framework with a dynamic import at module start instead of a static `import`, so that
 * a project without the package gets an error that says which package to install and why, rather
 * than Node's bare "Cannot find package 'langchain' imported from .../dist/adapters/langchain.js".
 */

export interface PeerPackage {
  /** The package specifier to import, e.g. "@openai/agents". */
  name: string;
  /** What needs it: the subpath ("ts-code-mode/openai-agents") or the feature ("the container executor"). */
  adapter: string;
  /** What to install, e.g. "@openai/agents@^0.14.3". */
  install: string;
}

/**
 * Packages of heavy integrations, loaded on first use by the feature that needs them (never at
 * import time), so a project that does not use that feature works without them and one that does
 * gets a MissingPeerError naming the install line.
 */
export const INTEGRATION_PACKAGES = {
  dockerode: { name: "dockerode", adapter: "the container executor (--executor container, containers prune, image build)", install: "dockerode@^5.0.1" },
  ai: { name: "ai", adapter: "agents (ts-code-mode agent, agents.*)", install: "ai@^6" },
  openai: { name: "@ai-sdk/openai", adapter: "agents with an openai: or OpenAI-compatible model", install: "@ai-sdk/openai@^3" },
  anthropic: { name: "@ai-sdk/anthropic", adapter: "agents with an anthropic: model", install: "@ai-sdk/anthropic@^3" },
  ioredis: { name: "ioredis", adapter: "RedisStorage from a URL (--redis, { url })", install: "ioredis@^6" },
  typescript: { name: "typescript", adapter: "exact workflow signatures and console highlighting", install: "typescript@~5.9" },
} as const satisfies Record<string, PeerPackage>;

/** Thrown when an adapter's framework package (or an integration's package) is not installed. */
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

/** loadPeer for a CommonJS package needed synchronously (`require`, e.g. from `createRequire(import.meta.url)`). */
export function requirePeer<T>(peer: PeerPackage, require: (name: string) => unknown): T {
  try {
    return require(peer.name) as T;
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
