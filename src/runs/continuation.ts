/**
 * Continuations: what a paused run hands out so that any process sharing the storage can resume it.
 *
 *   tcm1.<base64url(JSON payload)>.<base64url(HMAC-SHA256(key, "tcm1." + payload))>
 *
 * The payload names the run, a nonce (the one the run's header expects: a later pause replaces it),
 * an expiry, and the workspace and storage it belongs to. Verification is in a fixed order, so each
 * refusal has one stable error: format and signature (ContinuationInvalidError), scope
 * (ContinuationScopeError), expiry (ContinuationExpiredError). Whether it was used already is the
 * ledger's to say (a claim on the nonce, see durable.ts).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { StorageDescriptor } from "../storage/protocol.js";
import { ContinuationExpiredError, ContinuationInvalidError, ContinuationScopeError } from "./errors.js";

const VERSION = "tcm1";
/** Longest continuation accepted (a real one is ~250 characters). */
export const MAX_CONTINUATION_CHARS = 4_096;

export interface ContinuationPayload {
  run: string;
  nonce: string;
  /** Expiry, epoch ms. */
  exp: number;
  /** Workspace id, "" for none. */
  ws: string;
  /** Storage identity (storageIdentity()). */
  st: string;
}

/** Where a continuation may be used: one workspace of one storage. */
export interface ContinuationScope {
  workspace: string;
  storage: string;
}

/** The secret from options or TS_CODE_MODE_RUNS_SECRET, checked: at least 32 bytes. */
export function continuationKey(secret: string | Uint8Array | undefined): Buffer {
  const raw = secret ?? process.env["TS_CODE_MODE_RUNS_SECRET"];
  if (raw === undefined || raw === "") {
    throw new TypeError(
      "Durable runs need a key to sign continuations: pass new Session({ durable: { secret } }) or set TS_CODE_MODE_RUNS_SECRET " +
        "(at least 32 characters; every process that resumes runs of this storage needs the same key).",
    );
  }
  const key = typeof raw === "string" ? Buffer.from(raw, "utf8") : Buffer.from(raw);
  if (key.byteLength < 32) throw new TypeError(`The continuation key is ${key.byteLength} bytes long; at least 32 are needed (e.g. 64 hex digits from \`openssl rand -hex 32\`).`);
  return key;
}

/**
 * What identifies a storage, without credentials: its type, where it is (folder, or Redis host and
 * prefix) and the workspace. Hashed, so a continuation does not reveal paths or hosts.
 */
export function storageScope(descriptor: StorageDescriptor): ContinuationScope {
  let where: string;
  if (descriptor.type === "file") where = `file:${descriptor.basePath}`;
  else {
    let host = descriptor.url;
    try {
      const u = new URL(descriptor.url);
      host = `${u.hostname}:${u.port || "6379"}${u.pathname}`;
    } catch {
      // keep the text; it is only hashed
    }
    where = `redis:${host}:${descriptor.prefix}`;
  }
  return { workspace: descriptor.workspaceId ?? "", storage: createHash("sha256").update(where).digest("base64url").slice(0, 22) };
}

export function newNonce(): string {
  return randomBytes(16).toString("base64url");
}

export function signContinuation(key: Buffer, payload: ContinuationPayload): string {
  const body = `${VERSION}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}`;
  return `${body}.${createHmac("sha256", key).update(body).digest("base64url")}`;
}

/** The payload of a continuation this key signed for this scope and that has not expired; throws otherwise. */
export function verifyContinuation(key: Buffer, token: unknown, scope: ContinuationScope, now = Date.now()): ContinuationPayload {
  if (typeof token !== "string" || token.length > MAX_CONTINUATION_CHARS) throw new ContinuationInvalidError("Not a continuation: expected the string a paused run returned (tcm1....).");
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== VERSION) throw new ContinuationInvalidError("Not a continuation: expected the string a paused run returned (tcm1.<payload>.<signature>).");
  const body = `${parts[0]}.${parts[1]}`;
  const expected = createHmac("sha256", key).update(body).digest();
  const given = Buffer.from(parts[2]!, "base64url");
  if (given.byteLength !== expected.byteLength || !timingSafeEqual(given, expected)) {
    throw new ContinuationInvalidError("The continuation's signature does not match: it was altered, or signed with another key (every process resuming runs needs the same TS_CODE_MODE_RUNS_SECRET).");
  }
  let payload: ContinuationPayload;
  try {
    payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as ContinuationPayload;
  } catch {
    throw new ContinuationInvalidError("The continuation's payload is not JSON.");
  }
  if (typeof payload.run !== "string" || typeof payload.nonce !== "string" || typeof payload.exp !== "number" || typeof payload.ws !== "string" || typeof payload.st !== "string") {
    throw new ContinuationInvalidError("The continuation's payload lacks run, nonce, exp, ws or st.");
  }
  if (payload.ws !== scope.workspace) {
    throw new ContinuationScopeError(`This continuation belongs to ${payload.ws ? `workspace "${payload.ws}"` : "no workspace"}, not to this session's ${scope.workspace ? `workspace "${scope.workspace}"` : "storage without a workspace"}.`);
  }
  if (payload.st !== scope.storage) throw new ContinuationScopeError("This continuation belongs to another storage (another folder, Redis server or prefix) than this session's.");
  if (payload.exp <= now) throw new ContinuationExpiredError(`This continuation expired at ${new Date(payload.exp).toISOString()}; the run stays paused in the ledger (see \`ts-code-mode runs list\`), and can be rolled back.`);
  return payload;
}

/**
 * The run a continuation names, read without checking its signature: only for routing and for
 * refusing a continuation sent to another run's URL. `resume` verifies it in full.
 */
export function continuationRun(token: string): string | null {
  const part = token.split(".")[1];
  if (part === undefined) return null;
  try {
    const run = (JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as { run?: unknown }).run;
    return typeof run === "string" ? run : null;
  } catch {
    return null;
  }
}
