/**
 * The records citegate reads and writes. Every struct is strict: an unknown key
 * is a decode error, never silently stripped, so a field a model invents (a
 * `value` on an unavailable fact, say) cannot slip through.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as crypto from "node:crypto"
import { passedMemo } from "./internal/passedMemo.js"

/** Annotation that makes a struct reject unknown keys wherever it is decoded. */
const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** The options every decode in citegate uses: collect all issues, reject unknown keys. */
export const decodeOptions = { errors: "all", onExcessProperty: "error" } as const

const isBlank = (s: string) => !/\S/u.test(s)

/**
 * A string with at least one non-whitespace character, in well-formed Unicode:
 * no lone surrogate, which every rendering would show as U+FFFD and which
 * could let a snippet match half of a character.
 */
export const NonBlankString = Schema.String.pipe(
  Schema.filter(
    (s) =>
      isBlank(s) ? "must not be empty or blank" : s.isWellFormed() || "must be well-formed Unicode (no lone surrogates)",
    { identifier: "NonBlankString" }
  )
)

/** SHA-256 digest as 64 lowercase hex characters. */
export const Sha256Hex = Schema.String.pipe(
  Schema.filter((s) => /^[0-9a-f]{64}$/.test(s) || "must be 64 lowercase hex characters (SHA-256)"),
  Schema.brand("Sha256Hex")
)
export type Sha256Hex = typeof Sha256Hex.Type

/**
 * `crypto.hash` (Node 20.12 and later) digests in one call, with no Hash object: about a third less
 * per small capture than `createHash`, the same digest (a string as UTF-8 either way).
 */
const oneShotHash: typeof crypto.hash | undefined = (crypto as { readonly hash?: typeof crypto.hash }).hash

/** SHA-256 of bytes, or of a string's UTF-8 encoding. */
export const sha256Of = (data: string | Uint8Array): Sha256Hex =>
  (oneShotHash !== undefined
    ? oneShotHash("sha256", data, "hex")
    : crypto.createHash("sha256").update(data).digest("hex")) as Sha256Hex

/** Why a URL string is not canonical. */
export interface UrlProblem {
  readonly reason: "not-canonical" | "scheme-not-allowed" | "userinfo" | "fragment"
  readonly detail: string
}

/**
 * Why a URL string is not canonical, or `undefined` when it is. Canonical means
 * the string is exactly its own WHATWG-parsed `href` (nothing would be silently
 * rewritten), http(s), without userinfo or fragment in any form.
 */
export const urlProblem = (s: string): UrlProblem | undefined => {
  if (!URL.canParse(s)) return { reason: "not-canonical", detail: "is not an absolute URL" }
  const url = new URL(s)
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { reason: "scheme-not-allowed", detail: `uses ${url.protocol}; only https (and http in test mode) are allowed` }
  }
  const authority = /^[a-z][a-z0-9+.-]*:[/\\]*([^/?#\\]*)/i.exec(s)?.[1] ?? ""
  if (url.username !== "" || url.password !== "" || authority.includes("@")) {
    return { reason: "userinfo", detail: "must not contain userinfo" }
  }
  if (s.includes("#")) return { reason: "fragment", detail: "must not contain a fragment" }
  if (url.href !== s) return { reason: "not-canonical", detail: `is not in canonical form (it parses as ${url.href})` }
  return undefined
}

/** An absolute http(s) URL string that is exactly its own canonical form. */
export const SourceUrl = Schema.String.pipe(
  Schema.filter((s) => {
    const problem = urlProblem(s)
    return problem === undefined || `URL ${problem.detail}`
  }),
  Schema.brand("SourceUrl")
)
export type SourceUrl = typeof SourceUrl.Type

/** A fact label: non-blank, at most 200 characters. */
export const Label = NonBlankString.pipe(Schema.maxLength(200), Schema.brand("Label"))
export type Label = typeof Label.Type

const rfc3339Utc = (s: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(s)) return false
  const time = Date.parse(s)
  // Date.parse rolls a day the month lacks (02-30) and hour 24 over to the next day; RFC 3339 has neither.
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 19) === s.slice(0, 19)
}

/**
 * Timestamps that passed are remembered: the same few recur (a capture's `accessedAt` is checked
 * for every fact citing it, each time a result is encoded), and the check (a parse and a Date) was a
 * tenth of the result's encoding. At most 1,024 (then forgotten); a valid one is at most 30 long.
 */
const isRfc3339Utc = passedMemo(rfc3339Utc, { maxEntries: 1_024 })

/** RFC 3339 timestamp in UTC (`Z`), as produced by `Date.prototype.toISOString`. */
export const Rfc3339Utc = Schema.String.pipe(
  Schema.filter((s) => isRfc3339Utc(s) || "must be an RFC 3339 UTC timestamp such as 2026-01-31T12:00:00.000Z"),
  Schema.brand("Rfc3339Utc")
)
export type Rfc3339Utc = typeof Rfc3339Utc.Type

// ---------------------------------------------------------------------------
// Reports (what a drafting model proposes)
// ---------------------------------------------------------------------------

// Records are plain Structs rather than Classes: decoding thousands of them is a hot path, and a
// class instance per record roughly doubles the decoding cost (docs/performance.md).

/** Longest `prefix` or `suffix` a citation may give, in UTF-16 code units. */
export const maxQuoteContext = 1_000

/**
 * A citation's `prefix` or `suffix`: non-empty (whitespace counts), well-formed,
 * at most `maxQuoteContext` code units. Well-formed, so that prefix + snippet +
 * suffix is one well-formed string searched as a whole.
 */
export const QuoteContext = Schema.String.pipe(
  Schema.filter(
    (s) =>
      s.length === 0
        ? "must not be empty"
        : s.length > maxQuoteContext
        ? `must be at most ${maxQuoteContext} characters`
        : s.isWellFormed() || "must be well-formed Unicode (no lone surrogates)",
    { identifier: "QuoteContext" }
  )
)

/**
 * A fact backed by an excerpt of one exact capture.
 *
 * A verified span never splits a surrogate pair. The snippet is well-formed
 * (NonBlankString) and so is the capture text (CaptureRecord), and the span is
 * where the snippet's code units occur in the text. A well-formed snippet cannot
 * begin with a low surrogate (nothing before it to pair with) nor end with a
 * high surrogate (nothing after it), so the text's unit at `start` is not the
 * low half of a pair and the unit before `end` is not the high half of one:
 * both boundaries fall between characters. Each high surrogate inside the
 * snippet is followed by its low one in the snippet, hence in the text too.
 */
export const CitedFact = Schema.Struct({
  state: Schema.Literal("cited"),
  label: Label,
  source: NonBlankString,
  captureSha256: Sha256Hex,
  snippet: NonBlankString,
  /** The PDF page the excerpt must lie on (numbered from 1). */
  page: Schema.optional(Schema.Int.pipe(Schema.between(1, 1_000_000))),
  /** The heading path (outermost first) whose section the excerpt must lie in. */
  heading: Schema.optional(
    Schema.NonEmptyArray(NonBlankString.pipe(Schema.maxLength(1_000))).pipe(Schema.maxItems(6))
  ),
  /** Text that must come right before the excerpt (as a TextQuoteSelector's `prefix`): picks one occurrence. */
  prefix: Schema.optional(QuoteContext),
  /** Text that must come right after the excerpt (as a TextQuoteSelector's `suffix`): picks one occurrence. */
  suffix: Schema.optional(QuoteContext)
}).annotations({ ...strict, identifier: "CitedFact" })
export type CitedFact = typeof CitedFact.Type

/**
 * A fact the drafter could not ground. It carries a reason and nothing else: no
 * source, snippet, digest or value, so a guess can never pose as evidence.
 */
export const UnavailableFact = Schema.Struct({
  state: Schema.Literal("unavailable"),
  label: Label,
  reason: NonBlankString
}).annotations({ ...strict, identifier: "UnavailableFact" })
export type UnavailableFact = typeof UnavailableFact.Type

export const Fact = Schema.Union(CitedFact, UnavailableFact)
export type Fact = typeof Fact.Type

/** Default upper bound on the number of facts in one report. */
export const defaultMaxFacts = 100

const tooManyFactsMessage = (maxFacts: number, length: number) => `must hold at most ${maxFacts} facts, got ${length}`

/**
 * The fact limit, checked before any fact is decoded. In report JSON text, the
 * structural pass refuses any array longer than `maxFacts` (`facts` is a
 * report's only array) before `JSON.parse` builds its elements; for a value,
 * one look at the length of an own `facts` array. Either way a million facts
 * cost one linear pass, and one issue.
 */
export const factLimits = (maxFacts: number) => ({
  maxArrayLength: maxFacts,
  arrayTooLong: (path: ReadonlyArray<string | number>, length: number) =>
    path.length === 1 && path[0] === "facts"
      ? tooManyFactsMessage(maxFacts, length)
      : `must hold at most ${maxFacts} elements (the fact limit), got ${length}`,
  precheck: (input: unknown) => {
    if (typeof input !== "object" || input === null) return undefined
    const facts = Object.getOwnPropertyDescriptor(input, "facts")?.value
    return Array.isArray(facts) && facts.length > maxFacts
      ? { path: ["facts"], message: tooManyFactsMessage(maxFacts, facts.length) }
      : undefined
  }
})

/** The Report schema for a given fact limit. */
export const makeReport = (maxFacts: number) =>
  Schema.Struct({
    facts: Schema.Array(Fact).pipe(
      Schema.filter((facts) => facts.length <= maxFacts || tooManyFactsMessage(maxFacts, facts.length))
    )
  }).annotations({ ...strict, identifier: "Report" })

/** A drafted report with the default fact limit. */
export const Report = makeReport(defaultMaxFacts)
export type Report = typeof Report.Type

// ---------------------------------------------------------------------------
// Capture records (written only by trusted capture code)
// ---------------------------------------------------------------------------

export const captureFormat = "citegate.capture/1" as const
export const captureFormatV2 = "citegate.capture/2" as const

const WellFormedString = Schema.String.pipe(
  Schema.filter((s) => s.isWellFormed() || "must be well-formed Unicode (no lone surrogates)")
)

/**
 * A v1 capture: a `text/plain` UTF-8 body. `text` is the fetched body decoded as UTF-8 (a BOM
 * kept), so the UTF-8 bytes of `text` are exactly the body and `sha256` is the digest of those
 * bytes. Plain-text captures are still written as v1: the body is the text (extraction `text/1`
 * is the identity), so there is nothing a second file would add.
 */
export const CaptureRecordV1 = Schema.Struct({
  format: Schema.Literal(captureFormat),
  source: SourceUrl,
  sha256: Sha256Hex,
  accessedAt: Rfc3339Utc,
  contentType: Schema.String,
  byteLength: Schema.NonNegativeInt,
  text: WellFormedString
}).annotations({ ...strict, identifier: "CaptureRecordV1" })
export type CaptureRecordV1 = typeof CaptureRecordV1.Type

/**
 * The extraction algorithms. An id names one algorithm forever: changing what
 * it produces from the same bytes means a new id (docs/design.md#extraction).
 */
export const ExtractionId = Schema.Literal("text/1", "markdown/1", "html/1", "pdf/1", "markdown/2", "html/2", "pdf/2")
export type ExtractionId = typeof ExtractionId.Type

/** The body as the server sent it, stored beside the record under its digest. */
export const BodyRef = Schema.Struct({
  sha256: Sha256Hex,
  byteLength: Schema.NonNegativeInt,
  contentType: Schema.String
}).annotations({ ...strict, identifier: "BodyRef" })
export type BodyRef = typeof BodyRef.Type

/** A page of a PDF in the extracted text: UTF-16 code units, end exclusive; pages number from 1. */
export const PageAnchor = Schema.Struct({
  number: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  start: Schema.NonNegativeInt,
  end: Schema.NonNegativeInt
}).annotations({ ...strict, identifier: "PageAnchor" })
export type PageAnchor = typeof PageAnchor.Type

/**
 * A heading's section in the extracted text: from the heading's first code
 * unit to the start of the next heading of the same or a higher level (or the
 * end of the text). `path` is the texts of the enclosing headings, outermost
 * first, ending with this heading's own text.
 */
export const HeadingAnchor = Schema.Struct({
  level: Schema.Int.pipe(Schema.between(1, 6)),
  text: Schema.String,
  path: Schema.Array(Schema.String),
  start: Schema.NonNegativeInt,
  end: Schema.NonNegativeInt
}).annotations({ ...strict, identifier: "HeadingAnchor" })
export type HeadingAnchor = typeof HeadingAnchor.Type

/**
 * A run of a capture's map back to its body (`markdown/2`): `length` code units
 * of the text from `textStart` equal the body (decoded as UTF-8, a BOM counted,
 * in UTF-16 code units) from `bodyStart`. Text between runs was written by the
 * extraction rule and stands for the body between them.
 */
export const BodyRun = Schema.Tuple(Schema.NonNegativeInt, Schema.NonNegativeInt, Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)))
export type BodyRun = typeof BodyRun.Type

/**
 * Why a stretch of a capture's text is not text a reader sees on the page
 * (`pdf/2`): `ocr` drawn invisibly (render mode 3 or 7, or a fill alpha of 0)
 * over an image, the recognised text of a scanned page, whose content is the
 * image a reader sees; `invisible` drawn invisibly over no image; `background`
 * drawn in the colour of what lies beneath it (white on the white page);
 * `tiny` drawn smaller than 1 pt; `offpage` drawn outside the page's visible
 * area. docs/design.md (extraction, `pdf/2`) gives the rule.
 */
export const HiddenKind = Schema.Literal("ocr", "invisible", "background", "tiny", "offpage")
export type HiddenKind = typeof HiddenKind.Type

/**
 * A stretch of the text a reader does not see as text: `[start, end, kind]`,
 * UTF-16 code units, end exclusive. Runs are in text order and do not overlap.
 */
export const HiddenRun = Schema.Tuple(Schema.NonNegativeInt, Schema.NonNegativeInt, HiddenKind)
export type HiddenRun = typeof HiddenRun.Type

/** Most hidden runs one record carries; past it the last run is extended (over-marking, never under). */
export const maxHiddenRuns = 10_000

/**
 * A v2 capture: the body kept as sent (`body`, a file beside the record), the
 * text extracted from it by `extraction`, and the anchors found on the way.
 * `sha256` is the digest of the UTF-8 bytes of `text` (what reports cite as
 * `captureSha256`); `body.sha256` is the digest of the body bytes.
 */
export const CaptureRecordV2 = Schema.Struct({
  format: Schema.Literal(captureFormatV2),
  source: SourceUrl,
  sha256: Sha256Hex,
  accessedAt: Rfc3339Utc,
  extraction: ExtractionId,
  body: BodyRef,
  pages: Schema.optional(Schema.Array(PageAnchor)),
  headings: Schema.optional(Schema.Array(HeadingAnchor)),
  bodyMap: Schema.optional(Schema.Array(BodyRun)),
  /** The stretches of `text` no reader sees as text (`pdf/2`; absent when there are none). */
  hidden: Schema.optional(Schema.Array(HiddenRun).pipe(Schema.maxItems(maxHiddenRuns))),
  text: WellFormedString
}).annotations({ ...strict, identifier: "CaptureRecordV2" })
export type CaptureRecordV2 = typeof CaptureRecordV2.Type

/** Any capture record citegate reads: v1 (`text/plain`) or v2 (extracted). */
export const CaptureRecord = Schema.Union(CaptureRecordV1, CaptureRecordV2)
export type CaptureRecord = typeof CaptureRecord.Type

/** The body a record describes: for v1 the text's own bytes, for v2 the stored body. */
export const recordBody = (record: CaptureRecord): BodyRef =>
  record.format === captureFormat
    ? { sha256: record.sha256, byteLength: record.byteLength, contentType: record.contentType }
    : record.body

/** The extraction a record's text came from (`text/1` for every v1 record). */
export const recordExtraction = (record: CaptureRecord): ExtractionId =>
  record.format === captureFormat ? "text/1" : record.extraction

/** A v1 record of a text body, digest and byte length computed from the text's UTF-8 bytes. */
export const makeCaptureRecord = (fields: {
  readonly source: SourceUrl
  readonly text: string
  readonly accessedAt: Rfc3339Utc
  readonly contentType: string
}): CaptureRecordV1 =>
  CaptureRecordV1.make({
    format: captureFormat,
    source: fields.source,
    sha256: sha256Of(fields.text),
    accessedAt: fields.accessedAt,
    contentType: fields.contentType,
    byteLength: Buffer.byteLength(fields.text), // UTF-8, Buffer's default for a string
    text: fields.text
  })

/** What a successful capture returns: enough to cite it, without the text. */
export const CaptureRef = Schema.Struct({
  source: SourceUrl,
  sha256: Sha256Hex,
  accessedAt: Rfc3339Utc,
  byteLength: Schema.NonNegativeInt
}).annotations({ ...strict, identifier: "CaptureRef" })
export type CaptureRef = typeof CaptureRef.Type

// ---------------------------------------------------------------------------
// Verified reports
// ---------------------------------------------------------------------------

/** Where the excerpt first occurs in the capture text: UTF-16 code units, end exclusive. */
export const Span = Schema.Struct({
  start: Schema.NonNegativeInt,
  end: Schema.NonNegativeInt
}).annotations({ ...strict, identifier: "Span" })
export type Span = typeof Span.Type

/** The span in UTF-16 code units (= `span`), Unicode code points and UTF-8 bytes of the capture text. */
export const SpanOffsets = Schema.Struct({
  utf16: Span,
  codePoints: Span,
  utf8: Span
}).annotations({ ...strict, identifier: "SpanOffsets" })
export type SpanOffsets = typeof SpanOffsets.Type

/**
 * W3C Web Annotation TextQuoteSelector: `exact` is the capture's text at the
 * span; `prefix` and `suffix` are up to 32 code points of the capture around it.
 */
export const TextQuoteSelector = Schema.Struct({
  type: Schema.Literal("TextQuoteSelector"),
  exact: Schema.String,
  prefix: Schema.String,
  suffix: Schema.String
}).annotations({ ...strict, identifier: "TextQuoteSelector" })
export type TextQuoteSelector = typeof TextQuoteSelector.Type

/** W3C Web Annotation TextPositionSelector: code points of the capture text, end exclusive. */
export const TextPositionSelector = Schema.Struct({
  type: Schema.Literal("TextPositionSelector"),
  start: Schema.NonNegativeInt,
  end: Schema.NonNegativeInt
}).annotations({ ...strict, identifier: "TextPositionSelector" })
export type TextPositionSelector = typeof TextPositionSelector.Type

/**
 * How an excerpt was matched: `exact` (code-unit equality, the default) or
 * `normalized/2` (only under `verify.matching: "normalized/2"`: the normalised
 * snippet occurs in the normalised capture, the span is the raw text it maps to,
 * and the quote's numbers, signs and units equal the span's). `normalized/1` is
 * read in results stored before `normalized/2`: it means the older, looser
 * normalisation (docs/verification.md), which no verification produces any more.
 */
export const MatchMethod = Schema.Literal("exact", "normalized/1", "normalized/2")
export type MatchMethod = typeof MatchMethod.Type

/** How an excerpt reads on the page: see `Evidence.visibility`. */
export const Visibility = Schema.Literal("visible", "ocr", "hidden")
export type Visibility = typeof Visibility.Type

// The fields after `heading` are optional so that results written before they existed still decode;
// the Verifier always sets them.
export const Evidence = Schema.Struct({
  span: Span,
  occurrences: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  accessedAt: Rfc3339Utc,
  /** The PDF page the span starts on (v2 records with pages). */
  page: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  /** The path of the innermost heading whose section holds the whole span (v2 records with headings). */
  heading: Schema.optional(Schema.Array(Schema.String)),
  /** How the excerpt was matched; absent means `exact`. */
  method: Schema.optional(MatchMethod),
  /** True when what the citation quotes (with its prefix and suffix, if any) occurs more than once. */
  ambiguous: Schema.optional(Schema.Boolean),
  /** The span in every unit. */
  offsets: Schema.optional(SpanOffsets),
  /** W3C Web Annotation selectors of the span (the `selector` of a SpecificResource whose source is the fact's). */
  selector: Schema.optional(Schema.Tuple(TextQuoteSelector, TextPositionSelector)),
  /**
   * Whether a reader sees the excerpt as text on the page; absent means visible. `hidden`: the span
   * overlaps text no reader sees (`hiddenBy` says why); `ocr`: it overlaps only the recognised text
   * of a scanned page (the reader sees the image). Set from the capture's `hidden` runs.
   */
  visibility: Schema.optional(Visibility),
  /** Why the span is not visible: the kinds of the hidden runs it overlaps, in a fixed order. */
  hiddenBy: Schema.optional(Schema.NonEmptyArray(HiddenKind))
}).annotations({ ...strict, identifier: "Evidence" })
export type Evidence = typeof Evidence.Type

/** A cited fact whose excerpt was found verbatim in the capture it names. */
export const VerifiedCitation = Schema.Struct({
  index: Schema.NonNegativeInt,
  fact: CitedFact,
  evidence: Evidence
}).annotations({ ...strict, identifier: "VerifiedCitation" })
export type VerifiedCitation = typeof VerifiedCitation.Type

/** An unavailable fact, passed on as given: an explanation, never evidence. */
export const UnavailableEntry = Schema.Struct({
  index: Schema.NonNegativeInt,
  fact: UnavailableFact
}).annotations({ ...strict, identifier: "UnavailableEntry" })
export type UnavailableEntry = typeof UnavailableEntry.Type

export const VerifiedEntry = Schema.Union(VerifiedCitation, UnavailableEntry)
export type VerifiedEntry = typeof VerifiedEntry.Type

export const isVerifiedCitation = (entry: VerifiedEntry): entry is VerifiedCitation => entry.fact.state === "cited"

/**
 * `grounded`: at least one cited fact survived verification.
 * `no_evidence`: none did; a terminal state of its own, not an empty answer.
 */
export const Outcome = Schema.Literal("grounded", "no_evidence")
export type Outcome = typeof Outcome.Type

export const Mode = Schema.Literal("reject", "drop")
export type Mode = typeof Mode.Type

export const verifiedFormat = "citegate.verified/1" as const
