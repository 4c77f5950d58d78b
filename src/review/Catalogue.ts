/**
 * The label catalogue compiled for lookups: per label its terms, units,
 * currency, period and missing-value markers, and one index from every metric
 * term (as a folded word n-gram) to the labels that use it.
 *
 * @since 0.3.0
 */
import { catalogueLimits, defaultMissing, type LabelSpec } from "./Records.js"
import * as Period from "./Period.js"

export interface CompiledLabel {
  readonly spec: LabelSpec
  /** Folded metric terms and aliases. */
  readonly terms: ReadonlySet<string>
  /** Folded unit words. */
  readonly units: ReadonlySet<string>
  readonly period: Period.Period | undefined
  readonly missing: ReadonlyArray<string>
}

export interface Catalogue {
  readonly labels: ReadonlyMap<string, CompiledLabel>
  /** Folded metric term → the labels whose metric it names. */
  readonly terms: ReadonlyMap<string, ReadonlySet<string>>
  /** Every unit word of any label (folded): a unit found next to a value that is none of the label's own. */
  readonly units: ReadonlySet<string>
}

/** Words as the adapter compares them: letters and digits, lower-case, a plural `s` dropped (`sales` ~ `sale`). */
export const wordPattern = /[\p{L}\p{N}]+(?:['’]\p{L}+)*/gu

export const fold = (word: string): string => {
  const lower = word.toLowerCase().replace(/’/gu, "'")
  return lower.length > 3 && lower.endsWith("s") && !lower.endsWith("ss") ? lower.slice(0, -1) : lower
}

/** A term as a key: its folded words joined by one space. */
export const termKey = (term: string): string => (term.match(wordPattern) ?? []).map(fold).join(" ")

export const maxTermWords = catalogueLimits.termWords

export const compile = (specs: ReadonlyArray<LabelSpec>): Catalogue => {
  const labels = new Map<string, CompiledLabel>()
  const terms = new Map<string, Set<string>>()
  const units = new Set<string>()
  for (const spec of specs) {
    const own = new Set([...spec.metric.terms, ...(spec.metric.aliases ?? [])].map(termKey).filter((k) => k !== ""))
    const ownUnits = new Set((spec.units ?? []).map(termKey).filter((k) => k !== ""))
    for (const key of own) terms.set(key, (terms.get(key) ?? new Set()).add(spec.label))
    for (const unit of ownUnits) units.add(unit)
    labels.set(spec.label, {
      spec,
      terms: own,
      units: ownUnits,
      period: spec.period === undefined ? undefined : Period.parseExpected(spec.period),
      missing: spec.missing ?? defaultMissing
    })
  }
  return { labels, terms, units }
}
