/** Types of bench/peers.mjs for the test that checks docs/peers.md against what the script writes. */
export interface Figure {
  key: "cold_ms" | "warm_ms" | "call_ms" | "session_kib";
  label: string;
  unit: string;
  scale: number;
}
export type Samples = Array<Partial<Record<Figure["key"], number>>>;
export interface Side {
  title: string;
  samples: Samples;
  error: string | null;
}
export const FIGURES: Figure[];
export const PEERS: Array<{ name: string; title: string; pkg: string }>;
export const OURS: Array<{ name: string; title: string }>;
export function renderTable(input: { rounds: number; ours: Side[]; peers: Side[]; floors: { node: number | null; nodeNoCa?: number | null; twoProcess?: number | null; ipc: number | null; process?: number | null }; python: string | null }): string;
export const README_TABLE_START: string;
export const README_TABLE_END: string;
export function withReadmeTable(readme: string, table: string, date: string): string;
