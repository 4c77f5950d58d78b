/**
 * What a renderer is given: a verified report (with the captures its citations
 * were verified against) or the typed error that rejected the report. Renderers
 * are pure functions of this value.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import * as Schema from "effect/Schema"
import type { CaptureRecord, HiddenKind } from "../Domain.js"
import { CaptureSignatureError, hiddenLabel, VerifyError } from "../Errors.js"
import {
  type HumanReview,
  HumanReview as HumanReviewSchema,
  type JudgeReview,
  JudgeReview as JudgeReviewSchema
} from "../review/Records.js"
import { VerifiedReport } from "../verify/VerifiedReport.js"
import { html as escapeHtml, markdown as escapeMarkdown } from "./Escape.js"

export type Rendering = Data.TaggedEnum<{
  Verified: {
    readonly report: VerifiedReport
    readonly captures: ReadonlyMap<string, CaptureRecord>
    /** The matching policy in force (`verify.matching`): every page header states it when given. */
    readonly matching?: string | undefined
    // --- semantic review hooks: each outcome its own section, never merged with provenance ---
    /** The entailment judge's review (`review.judge`), when one ran. */
    readonly judge?: JudgeReview | undefined
    /** Recorded human review decisions about the report's verified facts, when any were recorded. */
    readonly humanReview?: HumanReview | undefined
    /** Captures whose signed attestation does not hold (`verify.signatures: "check"`); shown beside provenance. */
    readonly signatureNotes?: ReadonlyArray<CaptureSignatureError> | undefined
  }
  Rejected: { readonly error: VerifyError; readonly matching?: string | undefined }
}>
export const Rendering = Data.taggedEnum<Rendering>()

/** The rendering of a Gate outcome (`Effect.either(gate.checkJsonWithCaptures(…))`). */
export const fromOutcome = (
  outcome: Either.Either<
    {
      readonly report: VerifiedReport
      readonly captures: ReadonlyMap<string, CaptureRecord>
      readonly signatureNotes?: ReadonlyArray<CaptureSignatureError> | undefined
    },
    VerifyError
  >,
  matching?: string
): Rendering =>
  Either.match(outcome, {
    onLeft: (error) => Rendering.Rejected({ error, matching }),
    onRight: ({ captures, report, signatureNotes }) =>
      Rendering.Verified({
        report,
        captures,
        matching,
        ...(signatureNotes === undefined || signatureNotes.length === 0 ? {} : { signatureNotes })
      })
  })

export const resultFormat = "citegate.result/1" as const

/**
 * The JSON rendering: a stable, documented shape that decodes with this Schema.
 * `status: "verified"` carries the VerifiedReport; `status: "rejected"` carries
 * the error with its `_tag` and every field. Decode with `decodeOptions`.
 */
export const RenderedResult = Schema.Union(
  Schema.Struct({
    format: Schema.Literal(resultFormat),
    status: Schema.Literal("verified"),
    report: VerifiedReport,
    // --- semantic review hooks ---
    judge: Schema.optional(JudgeReviewSchema),
    humanReview: Schema.optional(HumanReviewSchema),
    /** Captures whose signed attestation does not hold (`verify.signatures: "check"`); absent when none. */
    signatureNotes: Schema.optional(Schema.Array(CaptureSignatureError))
  }),
  Schema.Struct({
    format: Schema.Literal(resultFormat),
    status: Schema.Literal("rejected"),
    error: VerifyError
  })
)
export type RenderedResult = typeof RenderedResult.Type

export const toResult = (rendering: Rendering): RenderedResult =>
  Match.valueTags(rendering, {
    Verified: ({ humanReview, judge, report, signatureNotes }): RenderedResult => ({
      format: resultFormat,
      status: "verified",
      report,
      ...(signatureNotes === undefined || signatureNotes.length === 0 ? {} : { signatureNotes }),
      // --- semantic review hooks ---
      ...(judge === undefined ? {} : { judge }),
      ...(humanReview === undefined ? {} : { humanReview })
    }),
    Rejected: ({ error }): RenderedResult => ({ format: resultFormat, status: "rejected", error })
  })

/** Counts shown in every format's headline. */
export const counts = (report: VerifiedReport) => {
  const cited = report.facts.filter((entry) => entry.fact.state === "cited").length
  return { cited, unavailable: report.facts.length - cited, retracted: report.retractions.length }
}

export const provenanceNote =
  "Provenance only: each verified excerpt occurs verbatim in the exact capture named. " +
  "Semantic review (is it the right metric, unit, period for the label?) was not performed."

export const unavailableNote = "Unavailable: the drafter's reason is an unverified explanation, not evidence."

export const digestPrefix = (digest: string) => digest.slice(0, 12)

/** `1 failure`, `2 failures`: a count with its noun in the right number. */
export const plural = (n: number, singular: string, pluralForm = `${singular}s`) =>
  `${n} ${n === 1 ? singular : pluralForm}`

/** Where a verified span lies, when its capture has anchors: `page 3`, `section Results › Q3`; `undefined` otherwise. */
export const anchorText = (evidence: { readonly page?: number | undefined; readonly heading?: ReadonlyArray<string> | undefined }) => {
  const parts: Array<string> = []
  if (evidence.page !== undefined) parts.push(`page ${evidence.page}`)
  if (evidence.heading !== undefined) parts.push(`section ${evidence.heading.join(" › ")}`)
  return parts.length === 0 ? undefined : parts.join(", ")
}

/** Facts are numbered from 1 in human renderings (fact N is `facts[N - 1]`); JSON keeps the 0-based `index`. */
export const factNumber = (index: number) => index + 1

/**
 * The label of an excerpt matched only after normalisation (`verify.matching: "normalized/2"`, or
 * `normalized/1` in a result stored before it): not verbatim, so every format says so and shows the
 * capture's own text at the span.
 */
export const normalizedNote = (evidence: { readonly method?: string | undefined }): string | undefined =>
  evidence.method === "normalized/2"
    ? "matched under normalized/2 (opt-in), NOT verbatim: the quote equals the capture's text only after normalisation (case, spacing, quotes, dashes, compatibility forms), with every number, sign and unit as the capture writes it"
    : evidence.method === "normalized/1"
    ? "matched under normalized/1 (opt-in), NOT verbatim: the quote equals the capture's text only after normalisation (case, spacing, quotes, dashes, compatibility forms)"
    : undefined

/** Is this evidence a normalised (not verbatim) match? */
export const isNormalized = (evidence: { readonly method?: string | undefined }): boolean =>
  evidence.method !== undefined && evidence.method !== "exact"

/** The line a page header carries: the matching policy the verification applied. */
export const matchingLine = (matching: string): string =>
  matching === "exact"
    ? "Matching policy: exact (every excerpt is the capture's text, code unit for code unit)"
    : `Matching policy: ${matching} (opt-in: an excerpt labelled NOT verbatim equals the capture's text only after normalisation; every other excerpt is verbatim)`

/**
 * A rendered page with the matching policy stated right under its first line (the headline in text,
 * the `#` title in Markdown, the `<h1>` in HTML); unchanged when the caller did not say (`undefined`)
 * or for JSON, whose results carry each excerpt's `method`.
 */
export const withMatching = (format: "text" | "markdown" | "html", page: string, matching: string | undefined): string => {
  if (matching === undefined) return page
  const line = matchingLine(matching)
  if (format === "html") {
    const at = page.indexOf("</h1>")
    return at < 0 ? page : `${page.slice(0, at + 5)}\n<p class="note matching">${escapeHtml(line)}</p>${page.slice(at + 5)}`
  }
  const at = page.indexOf("\n")
  const inserted = format === "text" ? line : `\n*${escapeMarkdown(line)}*`
  return at < 0 ? `${page}\n${inserted}` : `${page.slice(0, at + 1)}${inserted}\n${page.slice(at + 1)}`
}

/** The capture's own text at a span, from the evidence's TextQuoteSelector (absent on older results). */
export const captureReads = (evidence: { readonly selector?: readonly [{ readonly exact: string }, unknown] | undefined }) =>
  evidence.selector?.[0].exact

/**
 * The mark of an excerpt drawn from text a reader does not see as text (`Evidence.visibility`), in
 * every rendering: `hidden` (invisible, background-coloured, tiny or off-page text) or `ocr` (the
 * recognised text of a scanned page). Visible excerpts carry none.
 */
export const visibilityNote = (evidence: {
  readonly visibility?: string | undefined
  readonly hiddenBy?: ReadonlyArray<HiddenKind> | undefined
}): string | undefined =>
  evidence.visibility === "hidden"
    ? `HIDDEN TEXT: the excerpt is text no reader sees on the page (${hiddenLabel(evidence.hiddenBy ?? [])}); it occurs in the capture, but the page does not show it`
    : evidence.visibility === "ocr"
    ? "OCR: the excerpt is the recognised text of a scanned page (drawn invisibly over the page image); the reader sees the image, check the quote against it"
    : undefined

/**
 * How often an excerpt occurs: `1 occurrence`, or `more than one occurrence`. The Verifier counts up
 * to two (ambiguity needs only "more than one"), so a count of 2 means two or more; results stored
 * before that carry exact counts, of which the same words are just as true.
 */
export const occurrencesText = (occurrences: number): string =>
  occurrences >= 2 ? "more than one occurrence" : plural(occurrences, "occurrence")

/** The flag of an excerpt that occurs more than once with nothing naming one occurrence. */
export const ambiguityNote = (evidence: { readonly ambiguous?: boolean | undefined; readonly occurrences: number }) =>
  evidence.ambiguous === true ? `ambiguous: ${occurrencesText(evidence.occurrences)}, the first is shown` : undefined
