/**
 * Fitting labelled sections of text (value, stdout, stderr, error) into one character budget.
 * A model's context is the scarce resource: a run that prints megabytes must not flood it, yet a
 * short error must never be pushed out by a long stdout. So the budget is shared "water-filling"
 * style: sections shorter than their fair share keep everything, the long ones split the rest, and
 * each cut section keeps its head and its tail (where errors and final results usually are) around
 * a marker saying how many characters were cut.
 */

export interface Section {
  label: string;
  text: string;
}

export interface FittedSection extends Section {
  /** Characters removed from this section (0 when it is whole). */
  cut: number;
}

export interface FittedSections {
  sections: FittedSection[];
  /** Characters removed in all sections together. */
  cut: number;
}

/** Room kept per section for its cut marker, so the whole rendering stays within the limit. */
const MARKER_RESERVE = 48;
/** Share of a cut section's budget given to its beginning; the rest shows its end. */
const HEAD_SHARE = 0.6;

/** `--- label ---` lines between sections: unambiguous even when the output itself has "stdout:" lines. */
export function renderSections(sections: readonly Section[]): string {
  return sections.map((s) => `--- ${s.label} ---\n${s.text}`).join("\n");
}

/**
 * Cuts `sections` so that `renderSections` of the result is at most `maxChars` long (as long as
 * `maxChars` leaves room for the labels and markers). Sections that fit are returned unchanged.
 */
export function fitSections(sections: readonly Section[], maxChars: number): FittedSections {
  if (renderSections(sections).length <= maxChars) return { sections: sections.map((s) => ({ ...s, cut: 0 })), cut: 0 };
  const overhead = renderSections(sections.map((s) => ({ label: s.label, text: "" }))).length + MARKER_RESERVE * sections.length;
  const shares = waterFill(
    sections.map((s) => s.text.length),
    Math.max(0, maxChars - overhead),
  );
  let total = 0;
  const fitted = sections.map((s, i) => {
    const share = shares[i] ?? 0;
    if (s.text.length <= share) return { ...s, cut: 0 };
    const cut = s.text.length - share;
    total += cut;
    return { label: s.label, text: cutMiddle(s.text, share), cut };
  });
  return { sections: fitted, cut: total };
}

/**
 * Splits `budget` among items of the given lengths: an item shorter than an equal share of what is
 * left keeps its length, and what it does not use goes to the others.
 */
export function waterFill(lengths: readonly number[], budget: number): number[] {
  const shares = new Array<number>(lengths.length).fill(0);
  const order = lengths.map((len, i) => ({ len, i })).sort((a, b) => a.len - b.len);
  let left = budget;
  order.forEach(({ len, i }, k) => {
    const share = Math.min(len, Math.floor(left / (order.length - k)));
    shares[i] = share;
    left -= share;
  });
  return shares;
}

/** Keeps `keep` characters of `text`: its beginning and end around a marker naming how many were cut. */
export function cutMiddle(text: string, keep: number): string {
  if (text.length <= keep) return text;
  const headEnd = safeBoundary(text, Math.ceil(keep * HEAD_SHARE));
  const tailStart = safeBoundary(text, text.length - (keep - headEnd));
  const cut = tailStart - headEnd;
  return `${text.slice(0, headEnd)}\n[… ${cut.toLocaleString("en-US")} characters cut …]\n${text.slice(tailStart)}`;
}

/** Moves an index off the middle of a surrogate pair, so a cut never leaves half an emoji. */
function safeBoundary(text: string, index: number): number {
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}
