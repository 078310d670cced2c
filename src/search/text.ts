/**
 * Turning code into text a sentence-embedding model can use. Universal Sentence Encoder was trained
 * on English sentences: raw source costs several times more to embed than a sentence (every
 * bracket and quote is a token) and its punctuation only adds noise. The words of the code —
 * identifiers split at camelCase and snake_case, strings, comments — carry what it is about.
 */
import { tokenize } from "./lexical.js";

/** Language keywords and ubiquitous helpers: present in every workflow, so they say nothing about one. */
const NOISE = new Set(
  (
    "export async function const let var await return new if else for of while do switch case break continue try catch " +
    "finally throw typeof instanceof void null undefined true false class extends import default string number boolean " +
    "unknown any object interface type run map filter split join length"
  ).split(" "),
);

/** The first `max` distinct words of `source`, in order of appearance, without keywords or numbers. */
export function codeWords(source: string, max = 48): string {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const t of tokenize(source)) {
    if (t.length < 2 || NOISE.has(t) || /^\d/.test(t) || seen.has(t)) continue;
    seen.add(t);
    out.push(t);
    if (out.length >= max) break;
  }
  return out.join(" ");
}
