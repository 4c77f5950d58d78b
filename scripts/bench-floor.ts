/**
 * The floor of a verify row: what citegate must do for a report of v1 captures whose every quote is
 * found as it stands, written as one plain loop (no Effect, no Schema, no step of its own per
 * check), to measure how much of citegate's cost above the raw limit is required work and how much
 * is its own structure. It refuses (throws) anything outside that shape; it is a measure, not a
 * verifier. It uses citegate's plain helpers where citegate has one (strict JSON's member count,
 * a digest's form, strict UTF-8). What it does per capture and per fact, and what the raw limit
 * leaves out:
 *
 * - the report: strict JSON (a repeated key refused), exactly `facts`, each fact exactly the five
 *   keys of a cited fact, a known label cited once, an approved source, a digest of 64 hex digits,
 *   a snippet with a non-space character, well-formed;
 * - each capture: opened without following a link, checked to be a regular file under the size
 *   limit, read whole, closed; strict UTF-8; strict JSON of exactly a v1 record's seven keys, its
 *   source the one cited (a canonical URL), its time a real instant, its byte length the text's, its
 *   digest the text's SHA-256 and the one cited;
 * - each fact: the first occurrence and whether there is a second (ambiguity), and the evidence the
 *   verified report carries (span, offsets in three units, the quote with its context copied out).
 */
import * as fs from "node:fs"
import { sha256Of, urlProblem } from "../src/Domain.js"
import { isSha256Hex } from "../src/internal/recordDecode.js"
import { countAndParse } from "../src/internal/strictJson.js"
import { decodeStrictUtf8 } from "../src/internal/strictUtf8.js"

const openFlags = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK
const scratch = Buffer.allocUnsafe(256 * 1024)
const context = 32

/** `YYYY-MM-DDTHH:MM:SS.sssZ` naming a real instant (what `toISOString` writes). */
const isTimestamp = (s: unknown): s is string => {
  if (typeof s !== "string" || s.length !== 24) return false
  const time = Date.parse(s)
  return !Number.isNaN(time) && new Date(time).toISOString() === s
}

// Sources found canonical, as citegate remembers them (a record's source is checked once per process).
const canonical = new Set<string>()
const isCanonical = (source: string): boolean => {
  if (canonical.has(source)) return true
  if (urlProblem(source) !== undefined) return false
  canonical.add(source)
  return true
}

const isHex = (s: unknown): s is string => typeof s === "string" && isSha256Hex(s)

const nonBlank = /\S/u
const isText = (s: unknown): s is string => typeof s === "string" && nonBlank.test(s) && s.isWellFormed()

/** A flat copy of a piece of text (V8 keeps a slice of 13 or more units as a view of the whole). */
const owned = (piece: string): string => piece.length < 13 ? piece : (" " + piece).slice(1)

// A declaration, not an arrow: a call to it then narrows the types after it.
function refuse(why: string): never {
  throw new Error(`the plain loop does not take this report: ${why}`)
}

const readRecord = (file: string, maxBytes: number): string => {
  const fd = fs.openSync(file, openFlags)
  let bytes: Buffer
  try {
    const stats = fs.fstatSync(fd)
    if (!stats.isFile() || stats.size > maxBytes) refuse("not a regular file, or too large")
    const buffer = stats.size < scratch.length ? scratch : Buffer.allocUnsafe(stats.size + 1)
    const read = fs.readSync(fd, buffer, 0, stats.size + 1, 0)
    if (read !== stats.size) refuse("a short read")
    bytes = buffer.subarray(0, read)
  } finally {
    fs.closeSync(fd)
  }
  return decodeStrictUtf8(bytes)
}

interface Fact {
  readonly state: string
  readonly label: string
  readonly source: string
  readonly captureSha256: string
  readonly snippet: string
}

/** The verified report of `reportText`, every fact checked as citegate checks it; throws on anything else. */
export const plainLoop = (
  reportText: string,
  fileOf: (source: string) => string,
  labels: ReadonlySet<string>,
  sources: ReadonlySet<string>
) => {
  // citegate's own first steps of strict JSON: the member count (a repeated key adds one) and `JSON.parse`.
  const parsed = countAndParse(reportText) ?? refuse("not JSON")
  const declared = parsed.members
  const report = parsed.value as { facts: Array<Fact> }
  let keys = 0
  for (const _ in report) keys++
  if (keys !== 1 || !Array.isArray(report.facts)) refuse("not a report of facts")
  if (declared !== 1 + 5 * report.facts.length) refuse("a repeated or extra key")
  const seen = new Set<string>()
  const bySource = new Map<string, Array<number>>()
  report.facts.forEach((fact, i) => {
    let factKeys = 0
    for (const _ in fact) factKeys++
    if (factKeys !== 5 || fact.state !== "cited" || !isText(fact.label) || !labels.has(fact.label) || seen.has(fact.label)) refuse("a fact")
    if (!sources.has(fact.source) || !isHex(fact.captureSha256) || !isText(fact.snippet)) refuse("a fact")
    seen.add(fact.label)
    const cited = bySource.get(fact.source)
    if (cited === undefined) bySource.set(fact.source, [i])
    else cited.push(i)
  })
  const verified: Array<unknown> = new Array(report.facts.length)
  for (const [source, cited] of bySource) {
    const stored = readRecord(fileOf(source), 400 * 1024 * 1024)
    const parsedRecord = countAndParse(stored)
    if (parsedRecord === undefined || parsedRecord.members !== 7) refuse("a record's keys")
    const record = parsedRecord.value as Record<string, unknown>
    const { accessedAt, byteLength, contentType, format, sha256, text } = record
    if (format !== "citegate.capture/1" || record["source"] !== source || !isHex(sha256) || typeof text !== "string") refuse("a record")
    if (!isTimestamp(accessedAt) || typeof contentType !== "string" || !isCanonical(source)) refuse("a record")
    const ascii = text.length <= 64 * 1024 && Buffer.byteLength(text, "utf8") === text.length
    if (!ascii || byteLength !== text.length) refuse("a record's length (the loop takes ASCII text only)")
    if (sha256Of(text) !== sha256) refuse("a digest")
    for (const i of cited) {
      const fact = report.facts[i]!
      if (fact.captureSha256 !== sha256) refuse("another capture")
      const start = text.indexOf(fact.snippet)
      if (start === -1) refuse("a quote not found")
      const end = start + fact.snippet.length
      const ambiguous = text.indexOf(fact.snippet, start + 1) !== -1
      const span = { start, end }
      verified[i] = {
        index: i,
        fact,
        evidence: {
          span,
          occurrences: ambiguous ? 2 : 1,
          accessedAt,
          method: "exact",
          ambiguous,
          offsets: { utf16: { start, end }, codePoints: { start, end }, utf8: { start, end } },
          selector: [
            {
              type: "TextQuoteSelector",
              // Copies, as citegate keeps them: a slice would keep the whole capture text alive.
              exact: owned(text.slice(start, end)),
              prefix: owned(text.slice(Math.max(0, start - context), start)),
              suffix: owned(text.slice(end, end + context))
            },
            { type: "TextPositionSelector", start, end }
          ]
        }
      }
    }
  }
  return { format: "citegate.verified/1", outcome: "grounded", mode: "drop", facts: verified, retractions: [], proves: "provenance-only", semanticReview: "not-performed" }
}
