/**
 * The incremental EVI1 parser: body lines scanned as they arrive (claims and citations counted
 * against the limits while scanning), the appendix read at the end, then evidence matched against
 * citations. `end` runs the named steps below in a fixed order, so the issues come out the same.
 */
import * as Either from "effect/Either"
import { AnswerLimitExceeded, AnswerTooLarge, type Evi1Invalid, type Evi1Issue } from "../../Errors.js"
import { limits } from "../Records.js"
import { Issues, maxHeldIssues } from "./Issues.js"
import { manifestPrefix, parseBodyLine, parseEvidenceLine } from "./Lines.js"
import type { Appendix, CiteSegment, Document, Evidence, Segment } from "./Records.js"

/** A body line's issues: those held (up to the parser's budget) and how many more there were. */
interface LineIssues {
  readonly held: Array<Evi1Issue>
  extra: number
}

/** Where the appendix stands among the lines. */
interface Layout {
  /** 0-based index of the first `EVI1` line, or -1. */
  readonly startAt: number
  /** 0-based index of the first `END_EVI1` after it, or -1. */
  readonly endAt: number
  /** Lines before the appendix (all lines without one). */
  readonly bodyEnd: number
}

const layoutOf = (lines: ReadonlyArray<string>, startAt: number): Layout => ({
  startAt,
  endAt: startAt === -1 ? -1 : lines.indexOf("END_EVI1", startAt + 1),
  bodyEnd: startAt === -1 ? lines.length : startAt
})

/** Step 1: protocol lines out of place in the body, and an appendix without its end. */
const checkProtocolLines = (lines: ReadonlyArray<string>, layout: Layout, issues: Issues): void => {
  const hasAppendix = layout.startAt !== -1
  for (let i = 0; i < layout.bodyEnd; i++) {
    // A CRLF text would otherwise read as a body without appendix: say why instead.
    if (lines[i] === "END_EVI1" || (!hasAppendix && lines[i] === "END_EVI1\r")) {
      const detail = lines[i] === "END_EVI1"
        ? "END_EVI1 without an EVI1 line before it"
        : "END_EVI1 followed by CR: EVI1 lines end with LF alone"
      issues.push({ _tag: "Evi1MalformedLine", line: i + 1, detail })
    }
  }
  if (hasAppendix && layout.endAt === -1) {
    issues.push({ _tag: "Evi1MalformedLine", line: lines.length, detail: "the appendix does not end with END_EVI1" })
  }
}

/**
 * Step 2: the appendix (manifest line, evidence lines, what trails it). `malformedFor` collects the
 * (claim, source) pairs whose evidence line is malformed: reported as such, not also as missing.
 */
const readAppendix = (lines: ReadonlyArray<string>, layout: Layout, issues: Issues, malformedFor: Set<string>): Appendix => {
  const { endAt, startAt } = layout
  // Without END_EVI1, every line after EVI1 is read as evidence, but the empty rest after a final LF.
  const last = endAt !== -1 ? endAt : lines[lines.length - 1] === "" ? lines.length - 1 : lines.length
  for (let i = last + 1; i < lines.length; i++) {
    if (lines[i] === "EVI1") issues.push({ _tag: "Evi1ExtraAppendix", line: i + 1, firstLine: startAt + 1 })
    else if (/\S/u.test(lines[i]!)) {
      issues.push({ _tag: "Evi1MalformedLine", line: i + 1, detail: "text after END_EVI1 (only blank lines may follow the appendix)" })
    }
  }
  let manifest: string | undefined
  const evidence: Array<Evidence> = []
  for (let i = startAt + 1; i < last; i++) {
    const line = lines[i]!
    if (line === "EVI1") {
      issues.push({ _tag: "Evi1ExtraAppendix", line: i + 1, firstLine: startAt + 1 })
      continue
    }
    if (i === startAt + 1 && line.startsWith(manifestPrefix)) {
      const digest = line.slice(manifestPrefix.length)
      if (/^[0-9a-f]{64}$/.test(digest)) manifest = digest
      else issues.push({ _tag: "Evi1MalformedLine", line: i + 1, detail: "MANIFEST must be followed by 64 lowercase hex characters" })
      continue
    }
    const parsed = parseEvidenceLine(line, i + 1)
    if (Either.isLeft(parsed)) {
      issues.push({ _tag: "Evi1MalformedLine", line: i + 1, detail: parsed.left })
      // The line meant evidence for this (claim, source): that one issue is enough, not a missing one too.
      const meant = /^(c[0-9]{1,9})\|([1-9][0-9]{0,5})\|/.exec(line)
      if (meant !== null) malformedFor.add(`${meant[1]}|${Number(meant[2])}`)
    } else evidence.push(parsed.right)
  }
  return { manifest, evidence, trailing: lines.slice(last + 1).map((l) => `\n${l}`).join("") }
}

/** Step 3: the body, its lines' segments with text runs merged across line breaks; a repeated claim id is an issue. */
const assembleBody = (
  lineCount: number,
  bodyLines: ReadonlyArray<ReadonlyArray<Segment>>,
  bodyIssues: ReadonlyArray<LineIssues>,
  bodyEnd: number,
  issues: Issues
): Array<Segment> => {
  const body: Array<Segment> = []
  const firstLineOfClaim = new Map<string, number>()
  let text = ""
  for (let i = 0; i < bodyEnd; i++) {
    issues.addLine(bodyIssues[i]!)
    for (const segment of bodyLines[i]!) {
      if (segment._tag === "Text") text += segment.text
      else {
        if (text !== "") body.push({ _tag: "Text", text })
        text = ""
        body.push(segment)
        const first = firstLineOfClaim.get(segment.claimId)
        if (first === undefined) firstLineOfClaim.set(segment.claimId, segment.line)
        else issues.push({ _tag: "Evi1DuplicateClaimId", line: segment.line, claimId: segment.claimId, firstLine: first })
      }
    }
    // The line break after every body line but the last of the text (the body before EVI1 keeps its own).
    if (i < lineCount - 1) text += "\n"
  }
  if (text !== "") body.push({ _tag: "Text", text })
  return body
}

/** Step 4: evidence against citations: each (claim, source) of the body needs exactly one evidence line. */
const matchEvidence = (
  body: ReadonlyArray<Segment>,
  appendix: Appendix | undefined,
  malformedFor: ReadonlySet<string>,
  issues: Issues
): void => {
  // "cX|n" -> the first citation of it (a repeated claim id is reported once, as a duplicate).
  const cited = new Map<string, { readonly claimId: string; readonly source: number; readonly line: number }>()
  for (const segment of body) {
    if (segment._tag !== "Cite") continue
    for (const n of segment.sources) {
      const key = `${segment.claimId}|${n}`
      if (!cited.has(key)) cited.set(key, { claimId: segment.claimId, source: n, line: segment.line })
    }
  }
  const given = new Map<string, number>()
  for (const e of appendix?.evidence ?? []) {
    const key = `${e.claimId}|${e.source}`
    const first = given.get(key)
    if (first !== undefined) {
      issues.push({ _tag: "Evi1DuplicateEvidence", line: e.line, claimId: e.claimId, source: e.source, firstLine: first })
      continue
    }
    given.set(key, e.line)
    if (!cited.has(key)) issues.push({ _tag: "Evi1UnusedEvidence", line: e.line, claimId: e.claimId, source: e.source })
  }
  for (const [key, c] of cited) {
    if (!given.has(key) && !malformedFor.has(key)) {
      issues.push({ _tag: "Evi1MissingEvidence", line: c.line, claimId: c.claimId, source: c.source })
    }
  }
}

/**
 * Parses EVI1 text arriving in chunks (split anywhere: inside a marker, a
 * line, the appendix). Complete lines are parsed as they arrive: the appendix
 * starts at the first line that is exactly `EVI1` (the streaming route reads
 * it the same way), so body lines are known as they come and their claims and
 * citations are counted while scanning. Past a count limit nothing more is
 * stored and `end` fails with `AnswerLimitExceeded`. The result is the same
 * for every way of cutting the text into chunks.
 */
export class Parser {
  private pending = ""
  private readonly lines: Array<string> = []
  private readonly bodyLines: Array<Array<Segment>> = []
  private readonly bodyIssues: Array<LineIssues> = []
  private heldBodyIssues = 0
  private received = 0
  private ended = false
  /** 0-based index of the first `EVI1` line, or -1 while the body goes on. */
  private appendixAt = -1
  private claims = 0
  private citations = 0
  private over: AnswerLimitExceeded | undefined

  /** Feed the next chunk. Past `limits.maxChars` in total, nothing more is stored and `end` fails. */
  push(chunk: string): void {
    if (this.ended) throw new Error("EVI1 parser: push after end")
    this.received += chunk.length
    if (this.received > limits.maxChars || this.over !== undefined) return
    let from = 0
    for (let nl = chunk.indexOf("\n"); nl !== -1 && this.over === undefined; nl = chunk.indexOf("\n", from)) {
      this.completeLine(this.pending + chunk.slice(from, nl))
      this.pending = ""
      from = nl + 1
    }
    if (this.over === undefined) this.pending += chunk.slice(from)
  }

  private completeLine(line: string): void {
    this.lines.push(line)
    if (this.appendixAt !== -1) return // appendix lines are parsed at the end
    if (line === "EVI1") {
      this.appendixAt = this.lines.length - 1
      return
    }
    const issues: LineIssues = { held: [], extra: 0 }
    const sink = {
      push: (issue: Evi1Issue) => {
        if (this.heldBodyIssues < maxHeldIssues) {
          this.heldBodyIssues++
          issues.held.push(issue)
        } else issues.extra++
      }
    }
    const segments = parseBodyLine(line, this.lines.length, sink, limits.maxClaims - this.claims)
    this.bodyLines.push(segments)
    this.bodyIssues.push(issues)
    for (const segment of segments) if (segment._tag === "Cite") this.count(segment)
  }

  /** Counts a citation group against the limits; past one, everything held is dropped. */
  private count(segment: CiteSegment): void {
    if (this.over !== undefined) return
    this.claims++
    this.citations += segment.sources.length
    this.over = segment.sources.length > limits.maxCitationsPerClaim
      ? new AnswerLimitExceeded({ limit: "citations-per-claim", max: limits.maxCitationsPerClaim, received: segment.sources.length })
      : this.claims > limits.maxClaims
      ? new AnswerLimitExceeded({ limit: "claims", max: limits.maxClaims, received: this.claims })
      : this.citations > limits.maxCitations
      ? new AnswerLimitExceeded({ limit: "citations", max: limits.maxCitations, received: this.citations })
      : undefined
    if (this.over !== undefined) {
      this.lines.length = 0
      this.bodyLines.length = 0
      this.bodyIssues.length = 0
      this.pending = ""
    }
  }

  /** The text has ended: the document, or every issue. */
  end(): Either.Either<Document, Evi1Invalid | AnswerTooLarge | AnswerLimitExceeded> {
    this.ended = true
    if (this.received > limits.maxChars) {
      return Either.left(new AnswerTooLarge({ maxChars: limits.maxChars, receivedChars: this.received }))
    }
    if (this.over === undefined) this.completeLine(this.pending)
    if (this.over !== undefined) return Either.left(this.over)
    this.pending = ""
    const lines = this.lines
    const issues = new Issues()
    const malformedFor = new Set<string>()
    const layout = layoutOf(lines, this.appendixAt)
    checkProtocolLines(lines, layout, issues)
    const appendix = layout.startAt === -1 ? undefined : readAppendix(lines, layout, issues, malformedFor)
    const body = assembleBody(lines.length, this.bodyLines, this.bodyIssues, layout.bodyEnd, issues)
    matchEvidence(body, appendix, malformedFor, issues)
    if (!issues.isEmpty) return Either.left(issues.toError())
    return Either.right({ body, appendix })
  }
}
