/**
 * Semantic review in renderings: the number adapter's outcome per fact, as its
 * own section, never mixed into provenance. Pure; values are returned
 * unescaped (each renderer escapes them for its format).
 */
import type { FactReview, NumberReview } from "../review/Records.js"
import { cut } from "../internal/bounded.js"
import { maxShownLength } from "./Describe.js"
import { factNumber, provenanceNote } from "./Rendering.js"

/**
 * The provenance note, saying where semantic review is when any ran (the number adapter, the judge,
 * recorded human review: `reviewed`) instead of "was not performed".
 */
export const provenanceNoteOf = (report: { readonly numberReview?: NumberReview | undefined }, reviewed = false): string =>
  report.numberReview === undefined && !reviewed
    ? provenanceNote
    : "Provenance only: each verified excerpt occurs verbatim in the exact capture named. " +
      "Semantic review is a separate outcome, shown in its own section (it does not change provenance)."

/** The section's heading. */
export const heading = (review: NumberReview): string =>
  `Semantic review: number adapter ${review.adapter} (review.numbers: ${review.policy}), separate from provenance`

const tokens = (list: ReadonlyArray<string>) => list.map((t) => JSON.stringify(cut(t, maxShownLength))).join(", ") || "none"

/** One fact's outcome: its headline and its detail lines. */
export const factLines = (fact: FactReview): { readonly headline: string; readonly details: ReadonlyArray<string> } => {
  const found = fact.found
  const read = `read: metric ${tokens(found.metric)}; period ${tokens(found.period)}; value ${tokens(found.value)}; unit ${tokens(found.unit)}`
  const head = `fact ${factNumber(fact.index)} ${JSON.stringify(cut(fact.label, maxShownLength))}`
  switch (fact.outcome) {
    case "consistent":
      return { headline: `${head}: consistent`, details: [read] }
    case "mismatch":
      return {
        headline: `${head}: MISMATCH ${fact.mismatches.map((m) => m.aspect).join(", ")}`,
        details: [
          ...fact.mismatches.map((m) =>
            `${m.aspect}: expected ${m.expected.join(" / ") || "none"}; found ${tokens(m.found)}` +
            (m.missing === true ? " (a missing-value marker: the source states no value)" : "")
          ),
          read
        ]
      }
    case "needs_review":
      return { headline: `${head}: needs review`, details: [...fact.reasons.map((r) => `why: ${r}`), read] }
  }
}

/** `; semantic review: mismatch: metric` — the adapter's outcomes in one phrase, for status lines (empty when off). */
export const summary = (report: { readonly numberReview?: NumberReview | undefined }): string => {
  const facts = report.numberReview?.facts ?? []
  if (facts.length === 0) return ""
  const parts = facts.map((f) =>
    f.outcome === "mismatch" ? `mismatch: ${f.mismatches.map((m) => m.aspect).join(", ")}` : f.outcome.replace("_", " ")
  )
  return `; semantic review: ${[...new Set(parts)].join("; ")}`
}
