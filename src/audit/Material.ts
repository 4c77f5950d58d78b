/**
 * Material-change flags between a cited excerpt and the passage that replaced
 * it: numbers, negations, dates and units that one side has and the other
 * has not. Lexical: tokens are compared as normalised strings, nothing is
 * parsed into meaning (`thirty` is a word, not a number; `1,000` and `1000`
 * are the same number; `30%` and `30` are not).
 *
 * One left-to-right scan of each side with one regular expression whose
 * alternatives cannot backtrack into each other, then multiset differences:
 * linear in the two lengths. Inputs are an excerpt and one candidate passage,
 * both already bounded by the audit.
 *
 * @since 0.1.0
 */
import { type Token, tokens } from "../internal/materialTokens.js"
import type { MaterialFlag, MaterialKind } from "./Records.js"

// The tokenizer is an internal leaf (semantic review reads it too); re-exported: part of the public AuditMaterial namespace.
export { type PlacedToken, placedTokens, tokens } from "../internal/materialTokens.js"

/** The tokens of `a` (in order) not matched by one of `b`, counting repeats (multiset difference). */
const minus = (a: ReadonlyArray<Token>, b: ReadonlyArray<Token>): Array<string> => {
  const counts = new Map<string, number>()
  for (const t of b) counts.set(t.key, (counts.get(t.key) ?? 0) + 1)
  const out: Array<string> = []
  for (const t of a) {
    const n = counts.get(t.key) ?? 0
    if (n > 0) counts.set(t.key, n - 1)
    else out.push(t.text)
  }
  return out
}

const kinds: ReadonlyArray<MaterialKind> = ["numbers", "negation", "dates", "units"]

/**
 * The material changes from `before` to `after`: per kind, the tokens only
 * `before` has and those only `after` has. A kind is flagged when either list
 * is non-empty; kinds in a fixed order (numbers, negation, dates, units).
 */
export const materialChanges = (before: string, after: string): ReadonlyArray<MaterialFlag> => {
  const old = tokens(before)
  const now = tokens(after)
  const flags: Array<MaterialFlag> = []
  for (const kind of kinds) {
    const oldTokens = minus(old.filter((t) => t.kind === kind), now.filter((t) => t.kind === kind))
    const newTokens = minus(now.filter((t) => t.kind === kind), old.filter((t) => t.kind === kind))
    if (oldTokens.length > 0 || newTokens.length > 0) flags.push({ kind, oldTokens, newTokens })
  }
  return flags
}
