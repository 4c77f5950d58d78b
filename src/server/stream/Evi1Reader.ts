/**
 * The incremental EVI1 reader of a stream: answer text in, body text with
 * placeholder markers out, and each citation queued for verification as soon
 * as its evidence line arrives.
 *
 * It reads a text as `Evi1.Parser` does (a line that is exactly `EVI1` starts
 * the one appendix; a second is `Evi1ExtraAppendix`, an `END_EVI1` line in the
 * body a malformed line), but fails (with an `Abort`) at the first line that
 * shows an issue, where the parser lists them all.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { checkManifest, sentences } from "../../answer/Answer.js"
import * as Evi1 from "../../answer/Evi1.js"
import type { UncitedText } from "../../answer/Records.js"
import { Evi1Invalid, type Evi1Issue, StreamLimitExceeded, StreamLineInvalid } from "../../Errors.js"
import type { FootnoteMark, StreamFailure, StreamLimits, StreamOptions } from "./Events.js"
import type { PendingDelta, StreamReader } from "./Machine.js"
import { blankLines, decodeInputLine } from "./Ndjson.js"
import { Abort, type ClaimState, type Footnote, type Verification } from "./Verification.js"

const isMarkerChar = (c: number) => c === 91 || c === 93 || c === 123 || c === 125 || c === 99 || (c >= 48 && c <= 57)

const lineIssue = (issue: Evi1Issue) => new Abort(new Evi1Invalid({ issues: [issue] }))

/**
 * @since 0.1.0
 */
export class Evi1Reader {
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

  constructor(
    private readonly options: StreamOptions,
    private readonly limits: StreamLimits,
    private readonly verification: Verification
  ) {}

  /** The claims seen so far. */
  claimStates(): Iterable<ClaimState> {
    return this.claims.values()
  }

  /** The citations (footnotes) seen so far. */
  citations(): number {
    return this.footnotes
  }

  /** The text streamed since the last call, with its markers (undefined when there is none). */
  takeDelta(): PendingDelta | undefined {
    if (this.delta === "") return undefined
    const delta = { text: this.delta, footnotes: this.marks }
    this.delta = ""
    this.marks = []
    return delta
  }

  /** The input ended: its last line is read, and an appendix must have ended. */
  endInput(): void {
    if (this.rest !== "") {
      const line = this.rest
      this.rest = ""
      if (this.phase === "body") this.body(line)
      else this.appendixLine(line)
    }
    if (this.phase === "appendix") {
      throw lineIssue({ _tag: "Evi1MalformedLine", line: this.lineNo, detail: "the appendix does not end with END_EVI1" })
    }
  }


  /** More answer text (throws `Abort` at the first issue). */
  text(chunk: string): void {
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
          missing.push({ _tag: "Evi1MissingEvidence", line: note.line, claimId: note.claim.id, source: note.source! })
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
    this.verification.add({ note, citation: { source: entry.source, captureSha256: entry.captureSha256, quote: evidence.quote } })
  }
}

/**
 * NDJSON delta lines (`ndjsonLines`' elements) through an `Evi1Reader`, and at the end the whole
 * text once more through `Evi1.Parser` and `Evi1.toAnswer`.
 *
 * @since 0.1.0
 */
export const evi1Lines = (options: StreamOptions, limits: StreamLimits) => (verification: Verification): StreamReader<string> => {
  const reader = new Evi1Reader(options, limits, verification)
  const whole = new Evi1.Parser()
  let inputLine = 0
  let received = 0
  return {
    read: (line) => {
      const blank = blankLines(line)
      if (blank > 0) {
        inputLine += blank
        return
      }
      inputLine++
      if (line === "\r") return
      const decoded = decodeInputLine(line)
      if (Either.isLeft(decoded)) {
        const first = decoded.left.issues[0]
        const at = first.path.length === 0 ? "" : ` at ${first.path.join(".")}`
        throw new Abort(new StreamLineInvalid({ line: inputLine, detail: `${first.message}${at}` }))
      }
      const text = decoded.right.text
      received += text.length
      if (received > limits.maxAnswerChars) {
        throw new Abort(new StreamLimitExceeded({ limit: "answer-size", max: limits.maxAnswerChars, received }))
      }
      whole.push(text)
      reader.text(text)
    },
    takeDelta: () => reader.takeDelta(),
    endInput: () => reader.endInput(),
    final: (): Either.Either<ReadonlyArray<UncitedText>, StreamFailure> => {
      // The whole text once more through the batch path's parser and binding: the stream never grounds less strictly.
      const document = whole.end()
      if (Either.isLeft(document)) return Either.left(document.left)
      const bound = Evi1.toAnswer(document.right, options.manifest, { manifestDigest: options.manifestDigest })
      return Either.map(bound, (answer) => answer.uncited)
    },
    claims: () => reader.claimStates(),
    citations: () => reader.citations()
  }
}
