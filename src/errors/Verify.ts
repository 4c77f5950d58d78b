/**
 * Verification's errors: the per-fact failures (`FactError`) and the whole-report ones (`VerifyError`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { formatIssues, Issue, Omitted, short } from "./Shared.js"
import { SemanticMismatch } from "./Review.js"
import { CorruptCapture, LegacyCapture, MissingCapture } from "./Store.js"
import { SnippetCutsToken } from "./Boundaries.js"
import { HiddenEvidence } from "./Visibility.js"
import { SignatureInvalid, UnknownSigningKey, UnsignedCapture } from "./Signature.js"
import { TaggedError } from "./TaggedError.js"

// ---------------------------------------------------------------------------
// Verification: per-fact failures
// ---------------------------------------------------------------------------

export const NotApprovedReason = Schema.Literal(
  "not-in-approved-set",
  "not-canonical",
  "scheme-not-allowed",
  "userinfo",
  "fragment",
  "host-not-allowed"
)
export type NotApprovedReason = typeof NotApprovedReason.Type

/** The source is not an exact member of the operator's approved set (or breaks the URL policy). */
export class NotApproved extends TaggedError<NotApproved>()("NotApproved", {
  source: Schema.String,
  reason: NotApprovedReason,
  detail: Schema.String
}) {
  override get message() {
    return `Source ${JSON.stringify(this.source)} is not approved: ${this.detail}`
  }
}

/** The fact's label is not one of the approved labels. */
export class UnknownLabel extends TaggedError<UnknownLabel>()("UnknownLabel", {
  label: Schema.String
}) {
  override get message() {
    return `Label ${JSON.stringify(this.label)} is not an approved label`
  }
}

/** The label was already used by an earlier fact of the same report. */
export class DuplicateLabel extends TaggedError<DuplicateLabel>()("DuplicateLabel", {
  label: Schema.String,
  firstIndex: Schema.NonNegativeInt
}) {
  override get message() {
    // Facts are numbered from 1 for humans, as in every rendering; `firstIndex` stays 0-based.
    return `Label ${JSON.stringify(this.label)} is already used by fact ${this.firstIndex + 1}`
  }
}

/**
 * `report`: the digest the report names (`reported`) differs from this run's capture (`stored`).
 * `stored`: the stored text no longer hashes to the capture's own recorded digest (the capture was altered).
 */
export const DigestMismatchKind = Schema.Literal("report", "stored")
export type DigestMismatchKind = typeof DigestMismatchKind.Type

/**
 * Three digests, always all present, so each field means the same for both kinds:
 * `reported` is the digest the report names, `stored` the digest recorded in this
 * run's capture record, `computed` the SHA-256 of the record's text as read now.
 * `kind: "report"`: `reported` ≠ `stored` (and `computed` = `stored`).
 * `kind: "stored"`: `computed` ≠ `stored`; the capture was altered.
 */
export class DigestMismatch extends TaggedError<DigestMismatch>()("DigestMismatch", {
  source: Schema.String,
  kind: DigestMismatchKind,
  reported: Schema.String,
  stored: Schema.String,
  computed: Schema.String
}) {
  override get message() {
    return this.kind === "report"
      ? `The report names capture ${short(this.reported)}… of ${this.source}, but this run's capture is ${short(this.stored)}…`
      : `The capture of ${this.source} was altered: its text hashes to ${short(this.computed)}…, not its recorded ${short(this.stored)}…`
  }
}

/**
 * A repair diagnostic, never acceptance: the capture's passage nearest to a snippet that does not
 * occur verbatim. `method: "normalized/1"` (score 1) when the snippet occurs after normalisation,
 * else `fuzzy` (score in [0, 1)). `span` is in raw UTF-16 code units of the capture text; `text`
 * is the capture's text in it (cut past 2,000 code units); `differences` is a word diff, snippet
 * `[-…-]` against capture `{+…+}`, white space made visible (src/anchor/Differences.ts).
 */
export const NearestPassage = Schema.Struct({
  method: Schema.Literal("normalized/1", "fuzzy"),
  score: Schema.Number.pipe(Schema.between(0, 1)),
  // Strict too: the passage's `onExcessProperty: "error"` below holds for its span.
  span: Schema.Struct({ start: Schema.NonNegativeInt, end: Schema.NonNegativeInt }),
  text: Schema.String,
  differences: Schema.String
}).annotations({ identifier: "NearestPassage", parseOptions: { onExcessProperty: "error" } })
export type NearestPassage = typeof NearestPassage.Type

/**
 * The first number, sign or unit a quote changes against the capture's text where it matches after
 * normalisation (src/anchor/MeaningGuard.ts): `quote` says what the capture writes as `capture`
 * (`""`: that side has no such token). Its presence means the quote is NOT the capture's text.
 */
export const MeaningChangeInfo = Schema.Struct({
  quote: Schema.String,
  capture: Schema.String
}).annotations({ identifier: "MeaningChange", parseOptions: { onExcessProperty: "error" } })
export type MeaningChangeInfo = typeof MeaningChangeInfo.Type

/** The snippet does not occur verbatim (exact code units) in the capture text. */
export class SnippetAbsent extends TaggedError<SnippetAbsent>()("SnippetAbsent", {
  source: Schema.String,
  captureSha256: Schema.String,
  snippet: Schema.String,
  /** The nearest passage, when one scores at least the documented minimum and diagnostics ran. */
  nearest: Schema.optional(NearestPassage),
  /**
   * Set when the snippet equals the capture's text only up to a changed number, sign or unit: under
   * `normalized/2` the reason the normalised match was refused, under any policy a fact about the
   * nearest passage.
   */
  changed: Schema.optional(MeaningChangeInfo)
}) {
  override get message() {
    const nearest = this.nearest === undefined
      ? ""
      : ` (nearest passage: ${this.nearest.method}, score ${this.nearest.score})`
    const changed = this.changed === undefined
      ? ""
      : `; the quote writes ${JSON.stringify(this.changed.quote)} where the capture has ${JSON.stringify(this.changed.capture)}`
    return `The snippet does not occur verbatim in capture ${short(this.captureSha256)}… of ${this.source}${nearest}${changed}`
  }
}

/**
 * The snippet occurs in the capture, but not inside the page or heading section
 * the fact names (`reason: "outside"`), or the capture has no such anchor
 * (`reason: "no-such-anchor"`).
 */
/** `page 2`, or `pages 2–3` for an excerpt across a page break. */
export const pagesLabel = (first: number, last: number | undefined): string =>
  last === undefined || last === first ? `page ${first}` : `pages ${first}–${last}`

export class AnchorMismatch extends TaggedError<AnchorMismatch>()("AnchorMismatch", {
  source: Schema.String,
  captureSha256: Schema.String,
  snippet: Schema.String,
  /** `page 3` or `heading Results > Q3`, as the fact named it. */
  anchor: Schema.String,
  reason: Schema.Literal("outside", "no-such-anchor"),
  /** Where the excerpt's first occurrence is: its page and innermost heading path (v2 captures that have them). */
  foundPage: Schema.optional(Schema.Int),
  /** The page the excerpt ends on, when it runs past `foundPage` (a quote across a page break). */
  foundLastPage: Schema.optional(Schema.Int),
  foundHeading: Schema.optional(Schema.Array(Schema.String)),
  /** How many pages the capture has (v2 captures with pages). */
  pages: Schema.optional(Schema.NonNegativeInt),
  /** The capture's distinct heading paths in text order, at most 50 (internal/anchors.ts `maxListedHeadings`)... */
  headings: Schema.optional(Schema.Array(Schema.Array(Schema.String))),
  /** ...and how many more there are. */
  headingsOmitted: Schema.optional(Schema.NonNegativeInt)
}) {
  override get message() {
    const where = [
      ...(this.foundPage === undefined ? [] : [pagesLabel(this.foundPage, this.foundLastPage)]),
      ...(this.foundHeading === undefined ? [] : [`heading ${this.foundHeading.join(" > ")}`])
    ]
    const found = where.length === 0 ? "" : ` (it is on ${where.join(", ")})`
    return this.reason === "outside"
      ? `The snippet occurs in capture ${short(this.captureSha256)}… of ${this.source}, but not inside ${this.anchor}${found}`
      : `Capture ${short(this.captureSha256)}… of ${this.source} has no ${this.anchor}${found}`
  }
}

/**
 * What the citation quotes occurs more than once, and nothing picks one
 * occurrence: with a `prefix` and/or `suffix`, `occurrences` (at least 2) of
 * them still match with it; without, the policy is `verify.ambiguous: "reject"`
 * and `occurrences` counts the snippet itself. The Verifier stops counting at
 * the second occurrence, so it reports 2 for "two or more".
 */
export class AmbiguousSnippet extends TaggedError<AmbiguousSnippet>()("AmbiguousSnippet", {
  source: Schema.String,
  captureSha256: Schema.String,
  snippet: Schema.String,
  occurrences: Schema.Int,
  prefix: Schema.optional(Schema.String),
  suffix: Schema.optional(Schema.String)
}) {
  override get message() {
    const context = this.prefix === undefined && this.suffix === undefined ? "" : " with the given prefix/suffix"
    return `The snippet occurs more than once${context} in capture ${short(this.captureSha256)}… of ${this.source}; ` +
      "exactly one occurrence must be named"
  }
}

/** Why one fact of a report failed verification. */
export const FactError = Schema.Union(
  NotApproved,
  UnknownLabel,
  DuplicateLabel,
  MissingCapture,
  CorruptCapture,
  LegacyCapture,
  DigestMismatch,
  SnippetAbsent,
  AnchorMismatch,
  AmbiguousSnippet,
  HiddenEvidence,
  SnippetCutsToken,
  SemanticMismatch,
  UnsignedCapture,
  SignatureInvalid,
  UnknownSigningKey
)
export type FactError = typeof FactError.Type

/** A failed fact: its position and label in the report, and why it failed. */
export const FactRejection = Schema.Struct({
  index: Schema.NonNegativeInt,
  label: Schema.String,
  error: FactError
}).annotations({ identifier: "FactRejection" })
export type FactRejection = typeof FactRejection.Type

// ---------------------------------------------------------------------------
// Verification: whole-report failures
// ---------------------------------------------------------------------------

/** The report is not a valid report: its schema issues with their paths (the first 20, the rest counted). */
export class InvalidReport extends TaggedError<InvalidReport>()("InvalidReport", {
  issues: Schema.NonEmptyArray(Issue),
  omitted: Omitted
}) {
  override get message() {
    return `The report is invalid: ${formatIssues(this.issues, this.omitted)}`
  }
}

/** At least one fact failed verification; every failure is listed, in report order. */
export class ReportRejected extends TaggedError<ReportRejected>()("ReportRejected", {
  failures: Schema.NonEmptyArray(FactRejection)
}) {
  override get message() {
    const n = this.failures.length
    return `The report was rejected: ${n} fact failure${n === 1 ? "" : "s"}: ` +
      // Numbered from 1, as every rendering numbers facts; `index` stays 0-based.
      this.failures.map((f) => `fact ${f.index + 1} (${JSON.stringify(f.label)}): ${f.error._tag}`).join(", ")
  }
}

/** The tags of `FactError`, in a fixed order (the order of `groupFailures`' keys). */
export const factErrorTags = [
  "NotApproved",
  "UnknownLabel",
  "DuplicateLabel",
  "MissingCapture",
  "CorruptCapture",
  "LegacyCapture",
  "DigestMismatch",
  "SnippetAbsent",
  "AnchorMismatch",
  "AmbiguousSnippet",
  "HiddenEvidence",
  "SnippetCutsToken",
  "SemanticMismatch",
  "UnsignedCapture",
  "SignatureInvalid",
  "UnknownSigningKey"
] as const satisfies ReadonlyArray<FactError["_tag"]>
// A FactError tag missing from the list above is a type error here.
const _everyFactErrorTagListed: Exclude<FactError["_tag"], typeof factErrorTags[number]> extends never ? true : never = true
void _everyFactErrorTagListed

/** A failed fact whose error is known to carry one tag. */
export interface FactRejectionOf<Tag extends FactError["_tag"]> {
  readonly index: number
  readonly label: string
  readonly error: Extract<FactError, { readonly _tag: Tag }>
}

/** Failures grouped by error tag: every tag is a key, each with its (possibly empty) typed list, report order kept. */
export type GroupedFailures = { readonly [Tag in FactError["_tag"]]: ReadonlyArray<FactRejectionOf<Tag>> }

/**
 * Group the failures of a `ReportRejected` (or drop-mode `retractions`) by the
 * tag of their error, so each group is typed without narrowing `_tag` by hand.
 */
export const groupFailures = (failures: ReportRejected | ReadonlyArray<FactRejection>): GroupedFailures => {
  const list: ReadonlyArray<FactRejection> = "failures" in failures ? failures.failures : failures
  const groups = Object.fromEntries(factErrorTags.map((tag) => [tag, [] as Array<FactRejection>])) as Record<
    FactError["_tag"],
    Array<FactRejection>
  >
  for (const failure of list) groups[failure.error._tag].push(failure)
  return groups as unknown as GroupedFailures
}


/**
 * Verification did not finish within the configured deadline (`verify.timeoutMs`).
 * Nothing in the report is accepted; no partial result is returned.
 */
export class VerificationTimeout extends TaggedError<VerificationTimeout>()("VerificationTimeout", {
  timeoutMs: Schema.Int.pipe(Schema.positive())
}) {
  override get message() {
    return `Verification did not finish within ${this.timeoutMs} ms; nothing in the report is accepted`
  }
}

export const VerifyError = Schema.Union(InvalidReport, ReportRejected, VerificationTimeout)
export type VerifyError = typeof VerifyError.Type
