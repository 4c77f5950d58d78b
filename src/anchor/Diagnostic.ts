/**
 * The repair diagnostic a verification attaches to `SnippetAbsent`: the nearest
 * passage with its differences. It is computed after the exact search has
 * failed and only adds a field to that failure; it never changes an outcome.
 *
 * Bounded, so diagnostics stay within the verification deadline:
 * - at most `maxPerCapture` diagnostics per capture and `maxPerVerification` in all
 *   per verification (the first failures in input order): a repair loop needs the
 *   few failures of a draft, and a rejection of a hundred quotes stays cheap;
 * - captures longer than `maxDiagnosedLength` code units get none;
 * - once diagnostics have used `budgetMs` of wall time in one verification, the
 *   remaining failures get none (the Verifier passes a quarter of `verify.timeoutMs`,
 *   at most `maxBudgetMs`; the one diagnostic running when it runs out finishes);
 * - each capture (the same record object) is normalised once per verification, and the
 *   failures of one capture diagnosed together (`Diagnoser.all`) share one exact search and
 *   one trigram look-up of it (`Nearest.nearestEach`), with the same results as one at a time.
 *
 * @since 0.2.0
 */
import type { NearestPassage } from "../Errors.js"
import { cut } from "../internal/bounded.js"
import { differences } from "./Differences.js"
import { type Nearest, nearestEach, nearestIn, type Prepared, prepare } from "./Nearest.js"

/** Diagnosed failures per capture in one verification. */
export const maxPerCapture = 8

/** Diagnosed failures in one verification, over all captures. */
export const maxPerVerification = 16

/** The most wall time diagnostics may use in one verification, whatever the deadline. */
export const maxBudgetMs = 500

/** Longest capture text (UTF-16 code units) diagnosed: 16 Mi, about 160 MB of offset map at most. */
export const maxDiagnosedLength = 16 * 1024 * 1024

/** Longest passage text carried in a diagnostic; a longer one is cut (head, ellipsis, length). */
export const maxPassageText = 2_000

/** A found passage as a diagnostic: its text cut to `maxPassageText`, with its differences from the snippet. */
const asPassage = (snippet: string, found: Nearest | undefined): NearestPassage | undefined =>
  found === undefined ? undefined : {
    method: found.method,
    score: found.score,
    span: found.span,
    text: cut(found.text, maxPassageText),
    differences: differences(snippet, found.text)
  }

/** The nearest passage to `snippet` in `text` with its differences, or undefined (no similar passage). */
export const nearestPassage = (text: string | Prepared, snippet: string): NearestPassage | undefined =>
  asPassage(snippet, nearestIn(typeof text === "string" ? prepare(text) : text, snippet))

/** Diagnoses for one verification: `{ nearest }` to spread into a `SnippetAbsent`, or `{}`. */
export type Diagnose = (capture: { readonly text: string }, snippet: string) => { readonly nearest?: NearestPassage }

/** A `Diagnose` that can also diagnose several failures of one capture at once. */
export interface Diagnoser extends Diagnose {
  /**
   * `snippets.map((s) => diagnose(capture, s))`, with the same bounds and results, in one
   * exact search and one trigram look-up of the capture for all of them.
   */
  readonly all: (capture: { readonly text: string }, snippets: ReadonlyArray<string>) => Array<{ readonly nearest?: NearestPassage }>
}

/**
 * A diagnoser for one verification, sharing its bounds across every capture. `budgetMs` is the
 * wall time diagnostics may use in total (capped at `maxBudgetMs`).
 */
export const forVerification = (budgetMs: number): Diagnoser => {
  const prepared = new Map<object, { readonly prepared: Prepared; count: number }>()
  const budget = Math.min(budgetMs, maxBudgetMs)
  let spent = 0
  let diagnosed = 0
  const all = (capture: { readonly text: string }, snippets: ReadonlyArray<string>) => {
    const out: Array<{ readonly nearest?: NearestPassage }> = []
    // The search shared by the snippets that may still be diagnosed (`first` onwards), made on first need.
    let each: ((k: number) => Nearest | undefined) | undefined
    let first = 0
    snippets.forEach((snippet, k) => {
      if (spent >= budget || diagnosed >= maxPerVerification || capture.text.length > maxDiagnosedLength) {
        out.push({})
        return
      }
      const started = performance.now()
      try {
        let entry = prepared.get(capture)
        if (entry === undefined) prepared.set(capture, entry = { prepared: prepare(capture.text), count: 0 })
        if (entry.count >= maxPerCapture) {
          out.push({})
          return
        }
        if (each === undefined) {
          // At most this many more are diagnosed, one per snippet in order, whatever the budget does.
          const room = Math.min(maxPerCapture - entry.count, maxPerVerification - diagnosed)
          each = nearestEach(entry.prepared, snippets.slice(k, k + room))
          first = k
        }
        entry.count++
        diagnosed++
        const nearest = asPassage(snippet, each(k - first))
        out.push(nearest === undefined ? {} : { nearest })
      } finally {
        spent += performance.now() - started
      }
    })
    return out
  }
  const one: Diagnose = (capture, snippet) => all(capture, [snippet])[0]!
  return Object.assign(one, { all })
}
