/**
 * Reading an OpenAPI document: from a file or an http(s) URL, gzip-compressed or not, JSON or
 * YAML. A spec is input we did not write (a vendor's 15 MB document, a URL that answers with
 * anything), so every step is bounded: bytes read, bytes after decompression, YAML size (the YAML
 * parser is ~50× slower than JSON.parse, so its cap is what bounds parse time) and YAML aliases
 * (a "billion laughs" document), and the download's time.
 */
import { open } from "node:fs/promises";
import { builtin } from "../../../builtin-on-first-use.js";
import { ValidationError } from "../../../errors.js";
import { readBounded } from "../http/response.js";
import type { SpecLocation } from "./schema.js";

/** Largest spec accepted, after decompression (GitHub's full REST description is 13 MB). */
export const MAX_SPEC_BYTES = 64 * 1024 * 1024;
/** Largest YAML spec: YAML parses at a few MB per second; convert larger specs to JSON. */
export const MAX_YAML_SPEC_BYTES = 8 * 1024 * 1024;
/** Aliases a YAML spec may use (anchors legitimately share a few schemas; a bomb uses thousands). */
const MAX_YAML_ALIASES = 1_000;
/** How long fetching a spec URL may take. */
export const SPEC_FETCH_TIMEOUT_MS = 30_000;

export interface SpecLimits {
  maxBytes?: number;
  maxYamlBytes?: number;
  fetchTimeoutMs?: number;
}

function mib(n: number): string {
  return `${Math.round((n / (1024 * 1024)) * 10) / 10} MiB`;
}

async function readFileBounded(file: string, cap: number, label: string): Promise<Uint8Array> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ValidationError(`${label}: cannot read the spec file ${file}${code === "ENOENT" ? " (no such file)" : code ? ` (${code})` : ""}`);
  }
  try {
    const size = (await handle.stat()).size;
    if (size > cap) throw new ValidationError(`${label}: the spec file ${file} is ${mib(size)}; at most ${mib(cap)} is accepted`);
    const bytes = new Uint8Array(size);
    let offset = 0;
    while (offset < size) {
      const { bytesRead } = await handle.read(bytes, offset, size - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return bytes.subarray(0, offset);
  } finally {
    await handle.close();
  }
}

async function fetchBounded(url: string, cap: number, timeoutMs: number, label: string): Promise<Uint8Array> {
  const shown = new URL(url);
  const where = `${shown.origin}${shown.pathname}`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: "application/json, application/yaml;q=0.9, */*;q=0.5" } });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new ValidationError(`${label}: fetching the spec from ${where} returned ${res.status}`);
    }
    const { bytes, truncated } = await readBounded(res.body, cap);
    if (truncated) throw new ValidationError(`${label}: the spec at ${where} is larger than ${mib(cap)}, the most accepted`);
    return bytes;
  } catch (e) {
    if (e instanceof ValidationError) throw e;
    const reason = e instanceof Error && e.name === "TimeoutError" ? `it took longer than ${timeoutMs} ms` : e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e);
    throw new ValidationError(`${label}: cannot fetch the spec from ${where}: ${reason}`);
  }
}

/** The spec's bytes as stored or served (maybe gzip): what the operation index's spec hash is taken of. */
export async function readSpecRaw(location: Exclude<SpecLocation, { kind: "document" }>, label: string, limits: SpecLimits = {}): Promise<Uint8Array> {
  const cap = limits.maxBytes ?? MAX_SPEC_BYTES;
  return location.kind === "file" ? readFileBounded(location.path, cap, label) : fetchBounded(location.url, cap, limits.fetchTimeoutMs ?? SPEC_FETCH_TIMEOUT_MS, label);
}

/** `raw` decompressed when it is gzip (by its magic bytes, whatever the name), else `raw` itself. */
export function decompressSpec(raw: Uint8Array, label: string, limits: SpecLimits = {}): Uint8Array {
  const cap = limits.maxBytes ?? MAX_SPEC_BYTES;
  if (raw[0] !== 0x1f || raw[1] !== 0x8b) return raw;
  try {
    // maxOutputLength stops a gzip bomb at the cap instead of after filling memory.
    return builtin("node:zlib").gunzipSync(raw, { maxOutputLength: cap });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError) throw new ValidationError(`${label}: the spec decompresses to more than ${mib(cap)}, the most accepted`);
    throw new ValidationError(`${label}: the spec looks gzip-compressed but does not decompress: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The spec's bytes, decompressed when they are gzip. */
export async function readSpecBytes(location: Exclude<SpecLocation, { kind: "document" }>, label: string, limits: SpecLimits = {}): Promise<Uint8Array> {
  return decompressSpec(await readSpecRaw(location, label, limits), label, limits);
}

/** A YAML parser (the `yaml` package's `parse`), passed in so that parsing JSON never loads it. */
export type YamlParse = (text: string, options: { maxAliasCount: number }) => unknown;

/** Whether decompressed spec bytes are JSON (the first byte after ASCII whitespace and a UTF-8 byte order mark is `{`); else they are YAML. */
export function isJsonSpec(bytes: Uint8Array): boolean {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return bytes[i] === 0x7b;
}

/**
 * Parse decompressed spec bytes, synchronously: an operation described for the first time after a
 * load from the operation index parses the document inside a getter. `parseYaml` is needed for
 * YAML specs only (see isJsonSpec).
 */
export function parseSpecSync(bytes: Uint8Array, label: string, limits: SpecLimits, parseYaml: YamlParse | undefined): unknown {
  // Buffer's decoder is several times faster than TextDecoder on a 13 MB spec.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  if (isJsonSpec(bytes)) {
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new ValidationError(`${label}: the spec is not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const yamlCap = limits.maxYamlBytes ?? MAX_YAML_SPEC_BYTES;
  if (bytes.byteLength > yamlCap) {
    throw new ValidationError(`${label}: the YAML spec is ${mib(bytes.byteLength)}; YAML specs up to ${mib(yamlCap)} are accepted (convert larger ones to JSON, which has a ${mib(limits.maxBytes ?? MAX_SPEC_BYTES)} limit)`);
  }
  if (!parseYaml) throw new Error(`${label}: internal: a YAML spec was parsed without the YAML parser`);
  try {
    return parseYaml(text, { maxAliasCount: MAX_YAML_ALIASES });
  } catch (e) {
    // A RangeError here is a document nested deeper than the parser's stack.
    throw new ValidationError(`${label}: the spec is not valid YAML or JSON: ${(e instanceof Error ? e.message : String(e)).split("\n")[0]!.slice(0, 300)}`);
  }
}

/** The YAML parser, loaded only for a spec that needs it. */
export async function yamlParserFor(bytes: Uint8Array): Promise<YamlParse | undefined> {
  return isJsonSpec(bytes) ? undefined : (await import("yaml")).parse as YamlParse;
}

/** Parse spec bytes: JSON when the text starts with `{`, else YAML (within its own size cap). */
export async function parseSpec(bytes: Uint8Array, label: string, limits: SpecLimits = {}): Promise<unknown> {
  return parseSpecSync(bytes, label, limits, await yamlParserFor(bytes));
}
