/**
 * Streaming verification of a drafted EVI1 answer, independent of HTTP.
 *
 * Input: the drafting model's output as NDJSON lines `{"type":"delta","text":"…"}`.
 * Output: events with monotonic ids (1, 2, 3, …):
 *
 * - `delta`: body text as it arrives, each citation group `[n]…{cX}` replaced
 *   by placeholder footnote markers `[^k]` (k counts citations in body order;
 *   `footnotes` gives each marker's offset in the whole streamed text);
 * - `citation`: footnote k verified (through the Verifier, the one matching path);
 * - `retraction`: footnote k failed (its typed reasons); `removeSentence` when its
 *   claim has no citation left, with the claim's sentence and its span;
 * - `error`: why the stream ended early (a typed error), always followed by
 * - `done`: exactly one, last: `grounded | no_evidence | rejected` and a summary.
 *
 * Evidence lines are only known in the appendix, so citations verify as the
 * appendix arrives: the evidence lines of one input chunk go to the Verifier in
 * one call (each capture read and rehashed once per call), never the whole
 * answer again. At the end the whole text is parsed once more by `Evi1.Parser`
 * and bound by `Evi1.toAnswer`, so a stream never grounds what `verify-answer`
 * would reject.
 *
 * A stream reads a text as `Evi1.Parser` does (a line that is exactly `EVI1`
 * starts the one appendix; a second is `Evi1ExtraAppendix`, an `END_EVI1` line
 * in the body a malformed line), but fails at the first line that shows an
 * issue, where the parser lists them all.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { checkManifest, sentences } from "../answer/Answer.js"
import { boundedFindings } from "../answer/Sentences.js"
import * as Evi1 from "../answer/Evi1.js"
import { type CitationRule, limits as answerLimits } from "../answer/Records.js"
import {
  AnswerLimitExceeded,
  AnswerRejected,
  AnswerTooLarge,
  CitationError,
  type CitationRejection,
  Evi1Invalid,
  type Evi1Issue,
  StaleManifest,
  StreamDeadline,
  StreamLimitExceeded,
  StreamLineInvalid,
  UncitedSentence,
  VerificationTimeout
} from "../Errors.js"
import { HiddenKind, MatchMethod, Visibility } from "../Domain.js"
import { decodeJson } from "../internal/decode.js"
import type { Manifest } from "../Manifest.js"
import * as Verifier from "../verify/Verifier.js"

// ---------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------

/**
 * The bounds of one stream, each checked before the work it bounds.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamLimits {
  /** Bytes of one NDJSON input line (checked while the line arrives, before it is decoded). */
  readonly maxLineBytes: number
  /** Bytes of NDJSON input in total (blank lines and JSON syntax included). */
  readonly maxInputBytes: number
  /** UTF-16 code units of answer text in total (at most the answers' 16 Mi limit). */
  readonly maxAnswerChars: number
  /** Claims (`{cX}` markers). */
  readonly maxClaims: number
  /** Citations (`[n]` of all claims: the footnotes). */
  readonly maxCitations: number
  /** Milliseconds from the stream's start to its `done`: input, parsing and verification together. */
  readonly deadlineMs: number
}

/** @since 0.1.0 */
export const defaultLimits: StreamLimits = {
  maxLineBytes: 64 * 1024,
  maxInputBytes: 8 * 1024 * 1024,
  maxAnswerChars: 1024 * 1024,
  maxClaims: 1_000,
  maxCitations: 4_000,
  deadlineMs: 120_000
}

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

const strict = { parseOptions: { onExcessProperty: "error" as const } }
const Id = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
const Offset = Schema.NonNegativeInt
const Span = Schema.Struct({ start: Offset, end: Offset })

/** A placeholder marker `[^footnote]` at `at` (UTF-16 offset in the whole streamed text). */
export const FootnoteMark = Schema.Struct({
  footnote: Id,
  claimId: Schema.String,
  /** The manifest's source number. */
  source: Id,
  at: Offset
}).annotations({ identifier: "FootnoteMark" })

export const DeltaEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("delta"),
  text: Schema.String,
  footnotes: Schema.Array(FootnoteMark)
}).annotations({ identifier: "DeltaEvent" })

export const CitationEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("citation"),
  footnote: Id,
  claimId: Schema.String,
  /** The manifest's source number, and that source's URL and capture digest. */
  sourceNumber: Id,
  source: Schema.String,
  captureSha256: Schema.String,
  quote: Schema.String,
  /** Where the quote occurs in the capture's text (UTF-16 code units, end exclusive). */
  span: Span,
  occurrences: Id,
  page: Schema.optional(Id),
  /** How the quote was matched (`exact`, or `normalized/2` under that policy: NOT verbatim). Always sent. */
  method: Schema.optional(MatchMethod),
  /** The capture's own text at `span`, sent when `method` is not `exact` (the quote is not that text). */
  captureText: Schema.optional(Schema.String),
  /** Whether a reader sees the quote on the page: `ocr` or `hidden` as the evidence says; absent means visible. */
  visibility: Schema.optional(Visibility),
  /** Why the quote is not visible (sent with `ocr` and `hidden`). */
  hiddenBy: Schema.optional(Schema.NonEmptyArray(HiddenKind))
}).annotations({ identifier: "CitationEvent" })

export const RetractionEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("retraction"),
  footnote: Id,
  claimId: Schema.String,
  /** The claim's sentence (markers removed). */
  claim: Schema.String,
  /** The claim's sentence with its markers in the streamed text (UTF-16 offsets, end exclusive). */
  sentence: Span,
  /** The claim has no citation left: remove its sentence, not only the marker. */
  removeSentence: Schema.Boolean,
  reasons: Schema.NonEmptyArray(CitationError)
}).annotations({ identifier: "RetractionEvent" })

/** Why a stream ended early, or was rejected at its end. */
export const StreamFailure = Schema.Union(
  StreamLineInvalid,
  StreamLimitExceeded,
  StreamDeadline,
  StaleManifest,
  Evi1Invalid,
  AnswerTooLarge,
  AnswerLimitExceeded,
  AnswerRejected,
  VerificationTimeout
)
export type StreamFailure = typeof StreamFailure.Type

export const ErrorEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("error"),
  error: StreamFailure
}).annotations({ identifier: "ErrorEvent" })

export const Summary = Schema.Struct({
  claims: Offset,
  claimsGrounded: Offset,
  claimsRemoved: Offset,
  citations: Offset,
  citationsVerified: Offset,
  citationsRetracted: Offset
}).annotations({ identifier: "StreamSummary" })
export type Summary = typeof Summary.Type

export const DoneState = Schema.Literal("grounded", "no_evidence", "rejected")
export type DoneState = typeof DoneState.Type

export const DoneEvent = Schema.Struct({
  id: Id,
  type: Schema.Literal("done"),
  state: DoneState,
  summary: Summary,
  /** Factual-looking sentences without citation (known at the end). */
  uncited: Schema.Array(UncitedSentence)
}).annotations({ identifier: "DoneEvent" })

/**
 * @since 0.1.0
 * @category models
 */
export const StreamEvent = Schema.Union(DeltaEvent, CitationEvent, RetractionEvent, ErrorEvent, DoneEvent)
export type StreamEvent = typeof StreamEvent.Type

const encodeStreamEvent = Schema.encodeSync(StreamEvent, { onExcessProperty: "ignore" })

/** One event as JSON (typed errors encoded with their `_tag`). */
export const encodeEvent = (event: StreamEvent): string => JSON.stringify(encodeStreamEvent(event))

/** An event from its JSON, strictly (for clients and tests). */
export const decodeEvent = (text: string): StreamEvent =>
  Schema.decodeUnknownSync(StreamEvent, { onExcessProperty: "error" })(JSON.parse(text))

// ---------------------------------------------------------------------------
// NDJSON input
// ---------------------------------------------------------------------------

/** One line of a streamed answer's NDJSON request body. */
export const InputLine = Schema.Struct({
  type: Schema.Literal("delta"),
  text: Schema.String
}).annotations({ ...strict, identifier: "DeltaLine" })
const decodeInputLine = decodeJson(InputLine)

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const stop: unique symbol = Symbol("stop")

/**
 * How many blank input lines an element of a line stream stands for: a run of
 * blank lines may come as one element made of that many LFs (a line itself
 * never contains an LF); 0 for any other element.
 *
 * @since 0.1.0
 */
export const blankLines = (line: string): number => {
  if (line.length === 0) return 1
  if (line.charCodeAt(0) !== 10) return 0
  for (let i = 1; i < line.length; i++) if (line.charCodeAt(i) !== 10) return 0
  return line.length
}

/**
 * Bytes to NDJSON lines (without their LF), each line bounded while it arrives:
 * past `maxLineBytes` the stream fails with `StreamLimitExceeded` and nothing
 * more of that line is held; past `maxInputBytes` in total likewise (blank
 * lines cost no answer text, so they are bounded here). Invalid UTF-8 is a
 * `StreamLineInvalid`. A run of blank lines (empty or a lone CR) in one chunk
 * comes out as one element of that many LFs (`blankLines`), so a body of
 * nothing but line ends costs a scan, not an element per line.
 *
 * @since 0.1.0
 */
export const ndjsonLines = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  maxLineBytes: number,
  maxInputBytes: number = Number.MAX_SAFE_INTEGER
): Stream.Stream<string, E | StreamLimitExceeded | StreamLineInvalid> =>
  Stream.suspend(() => {
    let parts: Array<Uint8Array> = []
    let held = 0
    let total = 0
    let lineNo = 0
    const lineOf = (last: Uint8Array): Either.Either<string, StreamLineInvalid> => {
      lineNo++
      const all = parts.length === 0 ? last : Buffer.concat([...parts, last])
      parts = []
      held = 0
      try {
        return Either.right(utf8.decode(all))
      } catch {
        return Either.left(new StreamLineInvalid({ line: lineNo, detail: "not valid UTF-8" }))
      }
    }
    const tooLong = (received: number) => new StreamLimitExceeded({ limit: "line-length", max: maxLineBytes, received })
    // Lines before a failure in the same chunk still go out, then the failure: the chunk is cut there.
    let failure: StreamLimitExceeded | StreamLineInvalid | undefined
    const lines = bytes.pipe(
      Stream.mapChunks((chunks) => {
        const out: Array<string | typeof stop> = []
        // A run of blank lines (the cheapest input to send) goes out as ONE element of that many LFs
        // (see `blankLines`): megabytes of LFs cost a scan, not millions of elements.
        let blanks = 0
        const flushBlanks = () => {
          if (blanks > 0) out.push("\n".repeat(blanks))
          blanks = 0
        }
        const fail = (error: StreamLimitExceeded | StreamLineInvalid) => {
          flushBlanks()
          failure = error
          out.push(stop)
          return Chunk.unsafeFromArray(out)
        }
        for (const chunk of chunks) {
          total += chunk.length
          if (total > maxInputBytes) return fail(new StreamLimitExceeded({ limit: "input-size", max: maxInputBytes, received: total }))
          let from = 0
          for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, from)) {
            if (held + nl - from > maxLineBytes) return fail(tooLong(held + nl - from))
            // Blank: empty, or a lone CR (CRLF line ends); the machine skips both.
            if (held === 0 && (nl === from || (nl === from + 1 && chunk[from] === 13))) {
              lineNo++
              blanks++
              from = nl + 1
              continue
            }
            flushBlanks()
            const line = lineOf(chunk.subarray(from, nl))
            if (Either.isLeft(line)) return fail(line.left)
            out.push(line.right)
            from = nl + 1
          }
          flushBlanks()
          if (from < chunk.length) {
            held += chunk.length - from
            if (held > maxLineBytes) return fail(tooLong(held))
            // A copy: the caller may reuse its buffer.
            parts.push(chunk.slice(from))
          }
        }
        return Chunk.unsafeFromArray(out)
      }),
      // Nothing more is pulled from the body after a failure.
      Stream.takeUntil((line) => line === stop),
      Stream.filter((line): line is string => line !== stop)
    )
    return Stream.concat(
      lines,
      Stream.suspend(() => {
        if (failure !== undefined) return Stream.fail(failure)
        if (held === 0) return Stream.empty
        const line = lineOf(new Uint8Array(0))
        return Either.isLeft(line) ? Stream.fail(line.left) : Stream.make(line.right)
      })
    )
  })

// ---------------------------------------------------------------------------
// The machine of one stream
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions {
  readonly manifest: Manifest
  /** The manifest digest the answer was drafted against, when the caller names it (else the appendix's MANIFEST line). */
  readonly manifestDigest?: string | undefined
  /** `drop` (default): failed citations are retracted. `reject`: any retraction makes the answer rejected. */
  readonly mode?: "drop" | "reject" | undefined
  readonly uncited?: "report" | "reject" | undefined
  /** Which uncited sentences need a citation (`answers.needsCitation`; the documented default when absent). */
  readonly needsCitation?: CitationRule | undefined
}

interface ClaimState {
  readonly index: number
  readonly id: string
  readonly text: string
  readonly sentence: { readonly start: number; readonly end: number }
  readonly total: number
  verified: number
  retracted: number
}

interface Footnote {
  readonly footnote: number
  readonly claim: ClaimState
  readonly citationIndex: number
  readonly source: number
  readonly line: number
}

interface Pending {
  readonly note: Footnote
  readonly citation: Verifier.CitationInput
}

/** A failure found by the synchronous parts, carried out of them. */
class Abort {
  constructor(readonly error: StreamFailure) {}
}

const isMarkerChar = (c: number) => c === 91 || c === 93 || c === 123 || c === 125 || c === 99 || (c >= 48 && c <= 57)

const lineIssue = (issue: Evi1Issue) => new Abort(new Evi1Invalid({ issues: [issue] }))

class Machine {
  private nextId = 1
  private inputLine = 0
  private received = 0
  private readonly whole = new Evi1.Parser()

  private phase: "body" | "appendix" | "ended" = "body"
  /** The line of the `EVI1` that started the appendix. */
  private appendixStart = 0
  private lineNo = 1
  /** The current line from the first character not yet parsed. */
  private rest = ""
  /** Whether everything of the current line so far could still be the line `EVI1`. */
  private maybeEvi1 = true
  /** In `rest`: where the trailing run of characters that could belong to a marker starts. */
  private heldFrom = 0
  /** Prose since the line's start or the last marker (the next claim's sentence is its last). */
  private prose = ""
  private proseAt = 0
  /** Length of the streamed (output) text so far. */
  private out = 0
  private delta = ""
  private marks: Array<typeof FootnoteMark.Type> = []

  private readonly claims = new Map<string, ClaimState>()
  private readonly notes = new Map<string, Footnote>()
  private footnotes = 0
  private appendixLines = 0
  private manifestChecked = false
  private readonly evidenceLine = new Map<string, number>()
  private batch: Array<Pending> = []
  private verified = 0
  private retracted = 0
  private removed = 0
  private readonly rejections: Array<CitationRejection> = []
  private finished = false
  /** Events made before a failure in the same input chunk: sent before the error. */
  private carry: Array<StreamEvent> = []

  constructor(
    private readonly options: StreamOptions,
    private readonly limits: StreamLimits,
    private readonly verifier: Verifier.VerifierShape
  ) {}

  private id(): number {
    return this.nextId++
  }

  // --- input lines -----------------------------------------------------------

  feed(lines: Chunk.Chunk<string>): Effect.Effect<Array<StreamEvent>, StreamFailure> {
    return Effect.suspend(() => {
      const events: Array<StreamEvent> = []
      try {
        for (const line of lines) {
          const blank = blankLines(line)
          if (blank > 0) {
            this.inputLine += blank
            continue
          }
          this.inputLine++
          if (line === "\r") continue
          const decoded = decodeInputLine(line)
          if (Either.isLeft(decoded)) {
            const first = decoded.left.issues[0]
            const at = first.path.length === 0 ? "" : ` at ${first.path.join(".")}`
            throw new Abort(new StreamLineInvalid({ line: this.inputLine, detail: `${first.message}${at}` }))
          }
          const text = decoded.right.text
          this.received += text.length
          if (this.received > this.limits.maxAnswerChars) {
            throw new Abort(new StreamLimitExceeded({ limit: "answer-size", max: this.limits.maxAnswerChars, received: this.received }))
          }
          this.whole.push(text)
          this.text(text)
          const delta = this.flushDelta()
          if (delta !== undefined) events.push(delta)
        }
      } catch (e) {
        if (!(e instanceof Abort)) throw e
        this.carry = events
        return Effect.fail(e.error)
      }
      return Effect.map(this.verifyBatch(), (verified) => [...events, ...verified])
    })
  }

  private flushDelta(): StreamEvent | undefined {
    if (this.delta === "") return undefined
    const event: StreamEvent = { id: this.id(), type: "delta", text: this.delta, footnotes: this.marks }
    this.delta = ""
    this.marks = []
    return event
  }

  private text(chunk: string): void {
    let from = 0
    for (let nl = chunk.indexOf("\n", from); nl !== -1; nl = chunk.indexOf("\n", from)) {
      this.append(chunk.slice(from, nl))
      this.completeLine()
      from = nl + 1
    }
    if (from < chunk.length) this.append(chunk.slice(from))
  }

  /** More of the current line: in the body, everything that can no longer be part of a marker is streamed. */
  private append(piece: string): void {
    const base = this.rest.length
    this.rest += piece
    if (this.phase !== "body") return
    for (let i = piece.length - 1; i >= 0; i--) {
      const c = piece.charCodeAt(i)
      // A high surrogate ending the piece waits for its pair: a delta never splits a character.
      if (!isMarkerChar(c) && !(i === piece.length - 1 && c >= 0xd800 && c <= 0xdbff)) {
        this.heldFrom = base + i + 1
        break
      }
    }
    if (this.maybeEvi1) {
      if (this.rest.length <= 4 && "EVI1".startsWith(this.rest)) return
      this.maybeEvi1 = false
    }
    // Cut right after a character that cannot belong to a marker: the scan of the two parts equals the scan of the line.
    if (this.heldFrom > 0) {
      this.body(this.rest.slice(0, this.heldFrom))
      this.rest = this.rest.slice(this.heldFrom)
      this.heldFrom = 0
    }
  }

  private completeLine(): void {
    const line = this.rest
    this.rest = ""
    this.heldFrom = 0
    if (this.phase === "body") {
      if (this.maybeEvi1 && line === "EVI1") {
        this.phase = "appendix"
        this.appendixStart = this.lineNo
      } else if (line === "END_EVI1") {
        // As `Evi1.Parser` reads it: a protocol line in the body is never prose.
        throw lineIssue({ _tag: "Evi1MalformedLine", line: this.lineNo, detail: "END_EVI1 without an EVI1 line before it" })
      } else {
        this.body(line)
        this.emitText("\n")
        this.prose = ""
        this.proseAt = this.out
      }
    } else this.appendixLine(line)
    this.maybeEvi1 = true
    this.lineNo++
  }

  // --- the body ----------------------------------------------------------------

  private body(text: string): void {
    // An empty line parses to one empty text segment: nothing is emitted.
    const { issues, segments } = Evi1.parseLine(text, this.lineNo)
    if (issues.length > 0) throw new Abort(new Evi1Invalid({ issues: issues as [Evi1Issue, ...Array<Evi1Issue>] }))
    for (const segment of segments) {
      if (segment._tag === "Text") {
        this.prose += segment.text
        this.emitText(segment.text)
      } else this.cite(segment)
    }
  }

  private emitText(text: string): void {
    this.delta += text
    this.out += text.length
  }

  private cite(segment: Evi1.CiteSegment): void {
    const { claimId, line, sources } = segment
    if (this.claims.size + 1 > this.limits.maxClaims) {
      throw new Abort(new StreamLimitExceeded({ limit: "claims", max: this.limits.maxClaims, received: this.claims.size + 1 }))
    }
    if (this.footnotes + sources.length > this.limits.maxCitations) {
      throw new Abort(
        new StreamLimitExceeded({ limit: "citations", max: this.limits.maxCitations, received: this.footnotes + sources.length })
      )
    }
    const first = this.claims.get(claimId)
    if (first !== undefined) {
      const firstLine = [...this.notes.values()].find((n) => n.claim === first)?.line ?? line
      throw lineIssue({ _tag: "Evi1DuplicateClaimId", line, claimId, firstLine })
    }
    const manifest = this.options.manifest
    for (const n of sources) {
      const entry = manifest.sources[n - 1]
      if (entry === undefined || n < 1) {
        throw lineIssue({ _tag: "Evi1SourceOutOfRange", line, claimId, source: n, sources: manifest.sources.length })
      }
      if (entry.status !== "captured") throw lineIssue({ _tag: "Evi1SourceUnavailable", line, claimId, source: n, url: entry.source })
    }
    // The claim's text is the last sentence before its marker, exactly as Evi1.toAnswer cuts it.
    const text = sentences(this.prose).pop() ?? ""
    if (text === "") {
      throw lineIssue({ _tag: "Evi1MalformedLine", line, detail: `{${claimId}} ends no sentence (no text before its citation group)` })
    }
    const start = this.proseAt + this.prose.trimEnd().length - text.length
    const firstFootnote = this.footnotes + 1
    const marks = sources.map((_, k) => `[^${firstFootnote + k}]`)
    const claim: ClaimState = {
      index: this.claims.size,
      id: claimId,
      text,
      sentence: { start, end: this.out + marks.reduce((n, m) => n + m.length, 0) },
      total: sources.length,
      verified: 0,
      retracted: 0
    }
    this.claims.set(claimId, claim)
    sources.forEach((source, citationIndex) => {
      const footnote = ++this.footnotes
      this.marks.push({ footnote, claimId, source, at: this.out })
      this.notes.set(`${claimId}|${source}`, { footnote, claim, citationIndex, source, line })
      this.emitText(marks[citationIndex]!)
    })
    this.prose = ""
    this.proseAt = this.out
  }

  // --- the appendix ------------------------------------------------------------

  private checkManifest(named: string | undefined): void {
    const checked = checkManifest(this.options.manifest, [named, this.options.manifestDigest])
    if (Either.isLeft(checked)) throw new Abort(checked.left)
    this.manifestChecked = true
  }

  private appendixLine(line: string): void {
    const lineNo = this.lineNo
    if (line === "EVI1") throw lineIssue({ _tag: "Evi1ExtraAppendix", line: lineNo, firstLine: this.appendixStart })
    if (this.phase === "ended") {
      if (/\S/u.test(line)) {
        throw lineIssue({ _tag: "Evi1MalformedLine", line: lineNo, detail: "text after END_EVI1 (only blank lines may follow the appendix)" })
      }
      return
    }
    const first = this.appendixLines++ === 0
    if (line === "END_EVI1") {
      if (!this.manifestChecked) this.checkManifest(undefined)
      const missing: Array<Evi1Issue> = []
      for (const [key, note] of this.notes) {
        if (!this.evidenceLine.has(key)) {
          missing.push({ _tag: "Evi1MissingEvidence", line: note.line, claimId: note.claim.id, source: note.source })
        }
      }
      if (missing.length > 0) {
        throw new Abort(new Evi1Invalid({ issues: missing.slice(0, Evi1.maxListedIssues) as [Evi1Issue, ...Array<Evi1Issue>], ...(missing.length > Evi1.maxListedIssues ? { omitted: missing.length - Evi1.maxListedIssues } : {}) }))
      }
      this.phase = "ended"
      return
    }
    if (first && line.startsWith("MANIFEST ")) {
      const digest = line.slice("MANIFEST ".length)
      if (!/^[0-9a-f]{64}$/.test(digest)) {
        throw lineIssue({ _tag: "Evi1MalformedLine", line: lineNo, detail: "MANIFEST must be followed by 64 lowercase hex characters" })
      }
      this.checkManifest(digest)
      return
    }
    if (!this.manifestChecked) this.checkManifest(undefined)
    const parsed = Evi1.parseEvidence(line, lineNo)
    if (Either.isLeft(parsed)) throw lineIssue({ _tag: "Evi1MalformedLine", line: lineNo, detail: parsed.left })
    const evidence = parsed.right
    const key = `${evidence.claimId}|${evidence.source}`
    const firstLine = this.evidenceLine.get(key)
    if (firstLine !== undefined) {
      throw lineIssue({ _tag: "Evi1DuplicateEvidence", line: lineNo, claimId: evidence.claimId, source: evidence.source, firstLine })
    }
    const note = this.notes.get(key)
    if (note === undefined) throw lineIssue({ _tag: "Evi1UnusedEvidence", line: lineNo, claimId: evidence.claimId, source: evidence.source })
    this.evidenceLine.set(key, lineNo)
    const entry = this.options.manifest.sources[evidence.source - 1]!
    // Checked at the marker: every cited number is a captured source of the manifest.
    if (entry.status !== "captured") throw lineIssue({ _tag: "Evi1SourceUnavailable", line: lineNo, claimId: evidence.claimId, source: evidence.source, url: entry.source })
    this.batch.push({ note, citation: { source: entry.source, captureSha256: entry.captureSha256, snippet: evidence.quote } })
  }

  /** The citations completed since the last call, in one Verifier call. */
  private verifyBatch(): Effect.Effect<Array<StreamEvent>, VerificationTimeout> {
    const batch = this.batch
    if (batch.length === 0) return Effect.succeed([])
    this.batch = []
    return Effect.map(this.verifier.checkCitations(batch.map((p) => p.citation)), (checked) =>
      batch.map(({ citation, note }, i): StreamEvent => {
        const result = checked.results[i]!
        const claim = note.claim
        if (Either.isRight(result)) {
          claim.verified++
          this.verified++
          const evidence = result.right
          return {
            id: this.id(),
            type: "citation",
            footnote: note.footnote,
            claimId: claim.id,
            sourceNumber: note.source,
            source: citation.source,
            captureSha256: citation.captureSha256,
            quote: citation.snippet,
            span: evidence.span,
            occurrences: evidence.occurrences,
            ...(evidence.page === undefined ? {} : { page: evidence.page }),
            method: evidence.method ?? "exact",
            ...(evidence.method === undefined || evidence.method === "exact" || evidence.selector === undefined
              ? {}
              : { captureText: evidence.selector[0].exact }),
            // Absent means visible, as on the evidence.
            ...(evidence.visibility === undefined ? {} : { visibility: evidence.visibility }),
            ...(evidence.hiddenBy === undefined ? {} : { hiddenBy: evidence.hiddenBy })
          }
        }
        claim.retracted++
        this.retracted++
        const removeSentence = claim.verified === 0 && claim.retracted === claim.total
        if (removeSentence) this.removed++
        for (const error of result.left) {
          this.rejections.push({ claimIndex: claim.index, claimId: claim.id, citationIndex: note.citationIndex, error })
        }
        return {
          id: this.id(),
          type: "retraction",
          footnote: note.footnote,
          claimId: claim.id,
          claim: claim.text,
          sentence: claim.sentence,
          removeSentence,
          reasons: result.left as [CitationError, ...Array<CitationError>]
        }
      }))
  }

  // --- the end -------------------------------------------------------------------

  private summary(): Summary {
    let grounded = 0
    for (const claim of this.claims.values()) if (claim.verified > 0) grounded++
    return {
      claims: this.claims.size,
      claimsGrounded: grounded,
      claimsRemoved: this.removed,
      citations: this.footnotes,
      citationsVerified: this.verified,
      citationsRetracted: this.retracted
    }
  }

  end(): Effect.Effect<Array<StreamEvent>, StreamFailure> {
    const self = this
    return Effect.gen(function*() {
      const events: Array<StreamEvent> = []
      try {
        if (self.rest !== "") {
          const line = self.rest
          self.rest = ""
          if (self.phase === "body") self.body(line)
          else self.appendixLine(line)
        }
        if (self.phase === "appendix") {
          throw lineIssue({ _tag: "Evi1MalformedLine", line: self.lineNo, detail: "the appendix does not end with END_EVI1" })
        }
      } catch (e) {
        if (e instanceof Abort) return yield* Effect.fail(e.error)
        throw e
      }
      const delta = self.flushDelta()
      if (delta !== undefined) events.push(delta)
      events.push(...yield* self.verifyBatch())
      // The whole text once more through the batch path's parser and binding: the stream never grounds less strictly.
      const document = self.whole.end()
      if (Either.isLeft(document)) return yield* Effect.fail(document.left)
      const bound = Evi1.toAnswer(document.right, self.options.manifest, { manifestDigest: self.options.manifestDigest })
      if (Either.isLeft(bound)) return yield* Effect.fail(bound.left)
      const uncited = yield* boundedFindings(bound.right.uncited, self.options.needsCitation)
      const rejectCitations = self.options.mode === "reject" && self.rejections.length > 0
      const rejectUncited = self.options.uncited === "reject" && uncited.length > 0
      if (rejectCitations || rejectUncited) {
        return yield* Effect.fail(new AnswerRejected({ citations: self.rejections, uncited: rejectUncited ? uncited : [] }))
      }
      const summary = self.summary()
      self.finished = true
      events.push({
        id: self.id(),
        type: "done",
        state: summary.claimsGrounded > 0 ? "grounded" : "no_evidence",
        summary,
        uncited
      })
      return events
    })
  }

  /** The stream ended early: its typed error, then the one `done`. */
  fail(error: StreamFailure): Array<StreamEvent> {
    if (this.finished) return []
    this.finished = true
    const events: Array<StreamEvent> = this.carry
    this.carry = []
    const delta = this.flushDelta()
    if (delta !== undefined) events.push(delta)
    events.push({ id: this.id(), type: "error", error })
    events.push({ id: this.id(), type: "done", state: "rejected", summary: this.summary(), uncited: [] })
    return events
  }
}

// ---------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface AnswerStreamShape {
  readonly limits: StreamLimits
  /**
   * The events of one streamed answer. Never fails: an input failure (a
   * malformed line, a limit, the deadline) becomes an `error` event, and
   * every stream ends with exactly one `done`.
   */
  readonly stream: (
    lines: Stream.Stream<string, StreamLineInvalid | StreamLimitExceeded>,
    options: StreamOptions
  ) => Stream.Stream<StreamEvent>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class AnswerStream extends Context.Tag("citegate/AnswerStream")<AnswerStream, AnswerStreamShape>() {}

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (limits: Partial<StreamLimits> = {}): Effect.Effect<AnswerStreamShape, never, Verifier.Verifier> =>
  Effect.gen(function*() {
    const verifier = yield* Verifier.Verifier
    const resolved: StreamLimits = {
      ...defaultLimits,
      ...limits,
      maxAnswerChars: Math.min(limits.maxAnswerChars ?? defaultLimits.maxAnswerChars, answerLimits.maxChars),
      maxClaims: Math.min(limits.maxClaims ?? defaultLimits.maxClaims, answerLimits.maxClaims)
    }

    const stream = (
      lines: Stream.Stream<string, StreamLineInvalid | StreamLimitExceeded>,
      options: StreamOptions
    ): Stream.Stream<StreamEvent> =>
      Stream.suspend(() => {
        const machine = new Machine(options, resolved, verifier)
        const deadline = Effect.sleep(resolved.deadlineMs).pipe(
          Effect.zipRight(Effect.fail(new StreamDeadline({ timeoutMs: resolved.deadlineMs })))
        )
        return lines.pipe(
          Stream.mapChunksEffect((chunk) => Effect.map(machine.feed(chunk), Chunk.unsafeFromArray)),
          Stream.concat(Stream.fromIterableEffect(Effect.suspend(() => machine.end()))),
          Stream.interruptWhen(deadline),
          Stream.catchAll((error: StreamFailure) => Stream.fromIterable(machine.fail(error)))
        )
      })

    return AnswerStream.of({ limits: resolved, stream })
  })

/**
 * The AnswerStream service over the Verifier (which brings the run's store and policy).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (limits: Partial<StreamLimits> = {}): Layer.Layer<AnswerStream, never, Verifier.Verifier> =>
  Layer.effect(AnswerStream, make(limits))
