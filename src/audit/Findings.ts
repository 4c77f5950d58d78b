/**
 * Audit step 4: one finding per citation (unchanged, relocated, changed,
 * deleted, source_missing). Only excerpts gone from the new capture go on to
 * the candidate search; each new text (or section of it) is prepared once per
 * audit, and the loop yields to the timers so the audit's deadline can land.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { CaptureRecord, SourceUrl } from "../Domain.js"
import type { CaptureReadError } from "../Errors.js"
import { locate } from "../internal/anchors.js"
import { type Prepared, prepare } from "../anchor/Nearest.js"
import type * as Verifier from "../verify/Verifier.js"
import type { Baseline, Item } from "./Baseline.js"
import { boundedMatch, candidateOf, grownCandidate } from "./Candidates.js"
import { materialChanges } from "./Material.js"
import type { NewRecords } from "./NewCaptures.js"
import { type Finding, limits, type Location, type MissingReason, type Thresholds } from "./Records.js"

/** Yields to the event loop's timers between citations' candidate searches (an interrupt can land). */
const yieldToTimers: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/** Milliseconds of candidate search between yields. */
const sliceMs = 20

const readReason = (error: CaptureReadError): MissingReason => (error._tag === "MissingCapture" ? "not-captured" : "unreadable")

type Head = { readonly subject: Item["subject"]; readonly source: string; readonly snippet: string; readonly old: Location }

/** The new capture could not be read: why, or the re-capture's own failure when the operator's run names one. */
const missing = (
  head: Head,
  error: CaptureReadError,
  failure: { readonly tag: string; readonly detail: string } | undefined
): Finding =>
  failure !== undefined && error._tag === "MissingCapture"
    ? { status: "source_missing", ...head, reason: "capture-failed", errorTag: failure.tag, detail: failure.detail }
    : { status: "source_missing", ...head, reason: readReason(error), errorTag: error._tag, detail: error.message }

/** Found, but only where it keeps the old occurrence's token boundaries: `4,210` inside `4,210,000` is a change. */
const found = (head: Head, oldText: string, record: CaptureRecord, span: { start: number; end: number }, thresholds: Thresholds): Finding => {
  const at = boundedMatch(oldText, head.old.span, record.text, head.snippet, span)
  if (at !== undefined) {
    return {
      status: at === head.old.span ? "unchanged" : "relocated",
      ...head,
      new: { captureSha256: record.sha256, accessedAt: record.accessedAt, span: at, ...locate(record, at) }
    }
  }
  const candidate = grownCandidate(record, head.snippet, head.old.span, span, thresholds)
  return {
    status: "changed",
    ...head,
    new: { captureSha256: record.sha256, accessedAt: record.accessedAt },
    candidate,
    material: materialChanges(head.snippet, candidate.text)
  }
}

export interface FindingsInput {
  readonly items: ReadonlyArray<Item>
  readonly baseline: Baseline
  readonly newRecords: NewRecords
  readonly results: ReadonlyMap<number, Verifier.CitationResult>
  readonly thresholds: Thresholds
  readonly captureFailures?: ReadonlyMap<string, { readonly tag: string; readonly detail: string }> | undefined
}

/** One finding per item, in item order. */
export const findings = (
  { baseline, captureFailures, items, newRecords, results, thresholds }: FindingsInput
): Effect.Effect<Array<Finding>> =>
  Effect.gen(function*() {
    const preparedTexts = new Map<CaptureRecord, Map<string, Prepared>>()
    const prepared = (record: CaptureRecord, from: number, to: number): Prepared => {
      let byRange = preparedTexts.get(record)
      if (byRange === undefined) preparedTexts.set(record, byRange = new Map())
      const key = `${from}:${to}`
      let entry = byRange.get(key)
      if (entry === undefined) byRange.set(key, entry = prepare(record.text, { from, to }))
      return entry
    }
    const out: Array<Finding> = []
    let sliceStart = Date.now()
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      const head: Head = { subject: item.subject, source: item.source, snippet: item.snippet, old: baseline.locations[i]! }
      const newRecord = newRecords.get(item.source)!
      if (Either.isLeft(newRecord)) {
        out.push(missing(head, newRecord.left, captureFailures?.get(item.source)))
        continue
      }
      const record = newRecord.right
      const result = results.get(i)!
      const oldText = baseline.old.captures.get(item.source as SourceUrl)!.text
      if (Either.isRight(result)) {
        out.push(found(head, oldText, record, result.right.span, thresholds))
        continue
      }
      const notAbsent = result.left.find((e) => e._tag !== "SnippetAbsent")
      if (notAbsent !== undefined) {
        // The new capture was read but does not check out (its text no longer hashes to its digest, or it
        // changed between the two reads): there is no trustworthy new text to compare with.
        out.push({ status: "source_missing", ...head, reason: "unreadable", errorTag: notAbsent._tag, detail: notAbsent.message })
        continue
      }
      const newCapture = { captureSha256: record.sha256, accessedAt: record.accessedAt }
      if (item.snippet.length > limits.maxCandidateExcerpt) {
        out.push({ status: "deleted", ...head, new: newCapture, unsearched: "excerpt-too-long" })
        continue
      }
      const { best, passed } = candidateOf(record, item.snippet, head.old, thresholds, prepared, oldText.length)
      if (passed) {
        out.push({ status: "changed", ...head, new: newCapture, candidate: best!, material: materialChanges(item.snippet, best!.text) })
      } else {
        out.push({ status: "deleted", ...head, new: newCapture, ...(best === undefined ? {} : { nearest: best }) })
      }
      if (Date.now() - sliceStart >= sliceMs) {
        yield* yieldToTimers
        sliceStart = Date.now()
      }
    }
    return out
  })
