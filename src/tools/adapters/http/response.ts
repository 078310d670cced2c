/**
 * Reading a response body with a byte cap, and turning it into the value a call returns:
 * JSON types parsed, text types as a string, binary types as a Uint8Array. The body is read
 * chunk by chunk and the stream is cancelled as soon as the cap is passed, so a server sending
 * an endless body costs at most `cap` bytes of memory.
 */

/** Bytes of a body, or `truncated` when the stream had more than `cap` bytes (the rest is not read). */
export interface BodyBytes {
  bytes: Uint8Array;
  truncated: boolean;
}

/** Read at most `cap` bytes of `body`; cancel the stream (closing the connection) when it has more. */
export async function readBounded(body: ReadableStream<Uint8Array> | null, cap: number): Promise<BodyBytes> {
  if (!body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > cap) {
        chunks.push(value.subarray(0, cap - size));
        size = cap;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return { bytes, truncated };
}

export type BodyKind = "json" | "text" | "binary" | "unknown";

const BINARY_TYPES: ReadonlySet<string> = new Set([
  "application/octet-stream",
  "application/pdf",
  "application/zip",
  "application/gzip",
  "application/x-gzip",
  "application/x-tar",
  "application/x-protobuf",
  "application/protobuf",
  "application/wasm",
  "application/msgpack",
  "application/x-msgpack",
  "application/cbor",
]);

/** Media type without parameters, lower case (`application/json; charset=utf-8` → `application/json`). */
export function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]!.trim().toLowerCase();
}

export function bodyKind(contentType: string | null): BodyKind {
  const type = mediaType(contentType);
  if (!type) return "unknown";
  if (type === "application/json" || type.endsWith("+json") || type === "text/json") return "json";
  if (/^(image|audio|video|font)\//.test(type) || BINARY_TYPES.has(type)) return "binary";
  if (type.startsWith("text/") || type.endsWith("+xml") || /^application\/(xml|javascript|ecmascript|x-www-form-urlencoded|yaml|x-yaml|graphql|x-ndjson|ndjson)$/.test(type)) {
    return "text";
  }
  return "unknown";
}

function charsetOf(contentType: string | null): string {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "");
  return m?.[1] ?? "utf-8";
}

/** Decode text with the charset the server named (UTF-8 when it named none or an unknown one). */
export function decodeText(bytes: Uint8Array, contentType: string | null): string {
  try {
    return new TextDecoder(charsetOf(contentType)).decode(bytes);
  } catch {
    return new TextDecoder().decode(bytes);
  }
}

export class InvalidJsonError extends Error {
  override readonly name = "InvalidJsonError";
}

/**
 * The value of a successful response body. An unknown or absent content type is returned as text
 * when the bytes are valid UTF-8 and as a Uint8Array otherwise, so binary data is never mangled.
 */
export function decodeBody(bytes: Uint8Array, contentType: string | null): unknown {
  const kind = bodyKind(contentType);
  if (kind === "binary") return bytes;
  if (kind === "json") {
    const text = decodeText(bytes, contentType);
    if (!text.trim()) return null;
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new InvalidJsonError(e instanceof Error ? e.message : String(e));
    }
  }
  if (kind === "text") return decodeText(bytes, contentType);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return bytes;
  }
}
