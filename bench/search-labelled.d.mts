/** Types of bench/search-labelled.mjs for the test that shares its evaluation. */
export interface KindFigures {
  n: number;
  hit1: number;
  hit3: number;
  misses?: Array<{ query: string; expect: string; got: string[] }>;
}
export const LABELLED: Record<"tools" | "workflows" | "skills", Array<{ query: string; expect: string }>>;
export function ranked(session: { run(code: string): Promise<{ ok: boolean; value: unknown; error: { message: string } | null }> }, kind: string, query: string): Promise<string[]>;
export function evaluate(session: { run(code: string): Promise<{ ok: boolean; value: unknown; error: { message: string } | null }> }): Promise<Record<"tools" | "workflows" | "skills" | "all", KindFigures>>;
