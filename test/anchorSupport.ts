/** Shared by the anchoring tests: one capture of a chosen text, verified through the real Gate and file store. */
import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { makeCaptureRecord, type SourceUrl, type VerifiedCitation } from "../src/Domain.js"
import { ReportRejected } from "../src/Errors.js"
import type { VerifiedReport } from "../src/verify/VerifiedReport.js"
import { accessedAt, gateFor, runDirectoryWith } from "./support.js"

export const SOURCE = "https://docs.anchor.test/notes.txt" as SourceUrl

export const recordOf = (text: string) => makeCaptureRecord({ source: SOURCE, text, accessedAt, contentType: "text/plain" })

export const configWith = (verify: Record<string, unknown> = {}) => ({
  sources: [SOURCE],
  labels: ["a", "b", "c"],
  verify: { mode: "reject", ...verify }
})

/** A cited fact of `text`'s capture. */
export const fact = (text: string, snippet: string, extra: Record<string, unknown> = {}, label = "a") => ({
  state: "cited" as const,
  label,
  source: SOURCE,
  captureSha256: recordOf(text).sha256,
  snippet,
  ...extra
})

/** Checks a report of facts against one capture of `text` under the given `verify` options. */
export const check = (text: string, facts: ReadonlyArray<unknown>, verify: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const directory = yield* runDirectoryWith([recordOf(text)])
    const gate = yield* gateFor(directory, configWith(verify))
    return yield* gate.check({ facts })
  })

/** The one verified citation of a report. */
export const onlyCitation = (report: VerifiedReport): VerifiedCitation => {
  assert.strictEqual(report.facts.length, 1)
  const entry = report.facts[0]!
  if (!("evidence" in entry)) return assert.fail("expected a verified citation")
  return entry
}

/** The single failure of a rejected report. */
export const onlyFailure = (error: unknown) => {
  assert.instanceOf(error, ReportRejected)
  assert.strictEqual(error.failures.length, 1)
  return error.failures[0]!.error
}
