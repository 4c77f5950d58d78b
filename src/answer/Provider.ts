/**
 * What the provider adapters (Bedrock, Gemini, OpenAI, Cohere) share: tying a named document to
 * an approved source (exact URL or declared document id, nothing else), converting the providers'
 * offset units to UTF-16 positions, attaching citations to sentences of the generated text, and the
 * vendor-envelope decoding (size limit, strict JSON, citation total, lenient keys).
 *
 * The adapters only build a `BoundAnswer`; matching is the Answers service's (`Answer.make`), the
 * one path every answer takes.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Arr from "effect/Array"
import type { Sha256Hex } from "../Domain.js"
import { type CitationError, InvalidAnswer, type Issue, NotApproved, UnresolvableSource } from "../Errors.js"
import { boundMessage, boundSegment } from "../internal/bounded.js"
import { maxIssues, plainDataIssue } from "../internal/decode.js"
import * as StrictJson from "../internal/strictJson.js"
import type { Manifest } from "../Manifest.js"
import { sentences } from "./Sentences.js"
import {
  type BoundClaim,
  type Citation,
  type DocumentCitation,
  limits,
  type UncitedText,
  type UnresolvedCitation
} from "./Records.js"

/** The provider answer formats (`--format-in`, `?format=`). */
export const providerFormats = ["bedrock", "gemini", "openai", "openai-chat", "cohere"] as const
export type ProviderFormat = (typeof providerFormats)[number]

// ---------------------------------------------------------------------------
// Documents to approved sources
// ---------------------------------------------------------------------------

/** A Gemini grounding redirect (`https://vertexaisearch.cloud.google.com/grounding-api-redirect/…`): names no page. */
export const isGroundingRedirect = (url: string): boolean => {
  if (!URL.canParse(url)) return false
  const u = new URL(url)
  return u.hostname === "vertexaisearch.cloud.google.com" && u.pathname.startsWith("/grounding-api-redirect/")
}

export interface Resolved {
  readonly source: string
  readonly captureSha256: Sha256Hex
}

/**
 * The approved source a provider's document names: a URL equal, character for character, to a
 * manifest source, or an id equal to a manifest entry's declared `documentId`. Nothing looser
 * (no normalisation, no title or domain matching): a grounding redirect never resolves.
 */
export const resolveDocument = (
  manifest: Manifest,
  format: ProviderFormat,
  named: { readonly urls?: ReadonlyArray<string>; readonly ids?: ReadonlyArray<string> }
): Either.Either<Resolved, CitationError> => {
  const urls = (named.urls ?? []).filter((u) => u !== "")
  const ids = (named.ids ?? []).filter((i) => i !== "")
  const document = urls[0] ?? ids[0] ?? ""
  const redirect = urls.find(isGroundingRedirect)
  if (redirect !== undefined) return Either.left(new UnresolvableSource({ format, document: redirect, reason: "redirect-url" }))
  const entry = manifest.sources.find((s) => urls.includes(s.source)) ??
    manifest.sources.find((s) => s.documentId !== undefined && ids.includes(s.documentId))
  if (entry !== undefined) {
    return entry.status === "captured"
      ? Either.right({ source: entry.source, captureSha256: entry.captureSha256 })
      : Either.left(new UnresolvableSource({ format, document, reason: "no-capture" }))
  }
  if (urls.length > 0) {
    return Either.left(
      new NotApproved({
        source: urls[0]!,
        reason: "not-in-approved-set",
        detail: "it is not exactly one of this run's manifest sources, and no declared document id matches"
      })
    )
  }
  return Either.left(new UnresolvableSource({ format, document, reason: ids.length > 0 ? "undeclared-document-id" : "no-document" }))
}

// ---------------------------------------------------------------------------
// Claims under construction
// ---------------------------------------------------------------------------

/** A claim being built by an adapter: its three kinds of citation (see `BoundClaim`). */
export interface Draft {
  readonly citations: Array<Citation>
  readonly documents: Array<DocumentCitation>
  readonly unresolved: Array<{ readonly citation: DocumentCitation | UnresolvedCitation; readonly error: CitationError }>
}

export const emptyDraft = (): Draft => ({ citations: [], documents: [], unresolved: [] })

export const draftSize = (draft: Draft): number => draft.citations.length + draft.documents.length + draft.unresolved.length

/** Add a document-level citation, or its resolution failure. */
export const addDocument = (
  draft: Draft,
  format: ProviderFormat,
  document: string,
  resolved: Either.Either<Resolved, CitationError>
): void => {
  if (Either.isRight(resolved)) draft.documents.push({ level: "document", format, document, ...resolved.right })
  else draft.unresolved.push({ citation: { level: "unresolved", format, document }, error: resolved.left })
}

/** Add a citation whose document cannot resolve (`UnresolvableSource` with its reason): it names no approved source. */
export const addUnresolved = (draft: Draft, format: ProviderFormat, document: string, reason: UnresolvableSource["reason"]): void => {
  draft.unresolved.push({ citation: { level: "unresolved", format, document }, error: new UnresolvableSource({ format, document, reason }) })
}

/** Add a quote-level citation whose document is resolved, or its resolution failure. */
export const addQuote = (
  draft: Draft,
  format: ProviderFormat,
  document: string,
  resolved: Either.Either<Resolved, CitationError>,
  location: Omit<Citation, "source" | "captureSha256">
): void => {
  if (Either.isRight(resolved)) draft.citations.push({ ...resolved.right, ...location })
  else draft.unresolved.push({ citation: { level: "unresolved", format, document }, error: resolved.left })
}

export const toClaim = (id: string, text: string, draft: Draft): BoundClaim => ({
  id,
  text,
  citations: draft.citations,
  documents: draft.documents,
  unresolved: draft.unresolved
})

// ---------------------------------------------------------------------------
// Offsets: UTF-8 bytes and code points to UTF-16
// ---------------------------------------------------------------------------

/**
 * UTF-8 byte offsets of `text` to UTF-16 offsets in O(log n) each after one scan: `undefined` for
 * an offset inside a character's bytes or past the end (a byte offset taken as a string index
 * slices wrongly as soon as the text holds a non-ASCII character).
 */
export const utf8Offsets = (text: string) => {
  // For every non-ASCII code point: its byte start, its UTF-8 length, its UTF-16 start and length.
  const byteAt: Array<number> = []
  const bytes: Array<number> = []
  const u16At: Array<number> = []
  const u16Len: Array<number> = []
  let b = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) {
      b++
      continue
    }
    const astral = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length
    const n = c < 0x800 ? 2 : astral ? 4 : 3
    byteAt.push(b)
    bytes.push(n)
    u16At.push(i)
    u16Len.push(astral ? 2 : 1)
    b += n
    if (astral) i++
  }
  const byteLength = b
  const toUtf16 = (byte: number): number | undefined => {
    if (!Number.isInteger(byte) || byte < 0 || byte > byteLength) return undefined
    // The last non-ASCII character starting at or before `byte`.
    let lo = 0
    let hi = byteAt.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (byteAt[mid]! <= byte) lo = mid + 1
      else hi = mid
    }
    const k = lo - 1
    if (k < 0) return byte
    if (byte === byteAt[k]) return u16At[k]
    const after = byteAt[k]! + bytes[k]!
    if (byte < after) return undefined
    return u16At[k]! + u16Len[k]! + (byte - after)
  }
  return { byteLength, toUtf16 }
}

// ---------------------------------------------------------------------------
// Sentences with positions
// ---------------------------------------------------------------------------

/** Sentences of `text` as `sentences` splits them, each with its UTF-16 range (before trimming). */
export const sentenceSpans = (text: string): Array<{ readonly start: number; readonly end: number; readonly text: string }> => {
  const out: Array<{ start: number; end: number; text: string }> = []
  let start = 0
  const push = (end: number) => {
    const s = text.slice(start, end).trim()
    if (s !== "") out.push({ start, end, text: s })
    start = end
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if ((c === 46 || c === 33 || c === 63) && i + 1 < text.length && /\s/.test(text[i + 1]!)) push(i + 1)
  }
  push(text.length)
  return out
}

/**
 * Claims from one generated text and citations attached at UTF-16 positions: each sentence holding
 * a position (the sentence whose range contains it; a position at the very end belongs to the last
 * sentence) becomes one claim with those citations; the other sentences are uncited text.
 */
export const claimsAtPositions = (
  idPrefix: string,
  text: string,
  attached: ReadonlyArray<{ readonly at: number; readonly add: (draft: Draft) => void }>,
  claims: Array<BoundClaim>,
  uncited: Array<UncitedText>
): void => {
  const spans = sentenceSpans(text)
  const drafts = spans.map(() => undefined as Draft | undefined)
  for (const a of attached) {
    let lo = 0
    let hi = spans.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (spans[mid]!.end <= a.at) lo = mid + 1
      else hi = mid
    }
    const k = Math.min(lo, spans.length - 1)
    if (k < 0) continue
    a.add(drafts[k] ??= emptyDraft())
  }
  spans.forEach((span, k) => {
    const draft = drafts[k]
    if (draft === undefined || draftSize(draft) === 0) uncited.push({ text: span.text, line: null })
    else claims.push(toClaim(`${idPrefix}-s${k}`, span.text, draft))
  })
}

/** The uncited sentences of `text` outside the given UTF-16 ranges (which may overlap). */
export const uncitedOutside = (text: string, ranges: ReadonlyArray<{ readonly start: number; readonly end: number }>, uncited: Array<UncitedText>) => {
  const sorted = [...ranges].sort((a, b) => a.start - b.start)
  let at = 0
  for (const r of sorted) {
    if (r.start > at) for (const s of sentences(text.slice(at, r.start))) uncited.push({ text: s, line: null })
    at = Math.max(at, r.end)
  }
  for (const s of sentences(text.slice(at))) uncited.push({ text: s, line: null })
}

// ---------------------------------------------------------------------------
// Decoding vendor envelopes
// ---------------------------------------------------------------------------

/** The first `maxIssues` issues, bounded in length, and how many more there were. */
export const invalidOf = (error: ParseResult.ParseError): InvalidAnswer => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error)
  const issues = all.slice(0, maxIssues).map((issue) => ({
    path: issue.path.map((p) => boundSegment(typeof p === "symbol" ? String(p) : p)),
    message: boundMessage(issue.message)
  }))
  return Arr.isNonEmptyArray(issues)
    ? new InvalidAnswer({ issues, ...(all.length > issues.length ? { omitted: all.length - issues.length } : {}) })
    : new InvalidAnswer({ issues: [{ path: [], message: "invalid" }] })
}

/** Elements reached by a path of keys, `*` walking an array: for counting citations before any decoding. */
const countAt = (value: unknown, path: ReadonlyArray<string>, cap: number): number => {
  if (path.length === 0) return 1
  if (typeof value !== "object" || value === null) return 0
  const [head, ...rest] = path
  if (head === "*") {
    if (!Array.isArray(value)) return 0
    let n = 0
    for (const item of value) {
      n += countAt(item, rest, cap - n)
      if (n > cap) return n
    }
    return n
  }
  return countAt(Object.getOwnPropertyDescriptor(value, head!)?.value, rest, cap)
}

/**
 * A lenient vendor decoder (keys citegate does not read are ignored, as APIs add fields) behind the
 * same guards as every answer: plain data, and at most `limits.maxCitations` citations in total
 * (counted along each path in `citationPaths`, ending at the citation array's elements) before the
 * Schema builds anything; JSON text additionally the size limit and strict JSON first.
 */
export const vendorDecoder = <A, I>(schema: Schema.Schema<A, I, never>, citationPaths: ReadonlyArray<ReadonlyArray<string>>) => {
  const lenient = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })
  const decode = (input: unknown): Either.Either<A, InvalidAnswer> => {
    const notPlain = plainDataIssue(input, { maxArrayLength: limits.maxClaims })
    if (notPlain !== undefined) return Either.left(new InvalidAnswer({ issues: [notPlain] }))
    let total = 0
    for (const path of citationPaths) total += countAt(input, path, limits.maxCitations - total)
    if (total > limits.maxCitations) {
      const issue: Issue = { path: [], message: `must hold at most ${limits.maxCitations} citations in total, got more` }
      return Either.left(new InvalidAnswer({ issues: [issue] }))
    }
    return Either.mapLeft(lenient(input), invalidOf)
  }
  const decodeJson = (text: string): Either.Either<A, InvalidAnswer> => {
    if (text.length > limits.maxChars) {
      return Either.left(new InvalidAnswer({ issues: [{ path: [], message: `is longer than ${limits.maxChars} characters` }] }))
    }
    const parsed = StrictJson.parse(text, { maxArrayLength: limits.maxClaims })
    return parsed._tag === "Left" ? Either.left(new InvalidAnswer({ issues: [parsed.issue] })) : decode(parsed.value)
  }
  return { decode, decodeJson }
}

/** Vendor indices: non-negative integers. */
export const Index = Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))

/** The issues collected while mapping, or the bound answer. */
export const finish = (
  issues: ReadonlyArray<Issue>,
  manifest: Sha256Hex,
  claims: ReadonlyArray<BoundClaim>,
  uncited: ReadonlyArray<UncitedText>
) =>
  Arr.isNonEmptyReadonlyArray(issues)
    ? Either.left(new InvalidAnswer({ issues: issues.slice(0, maxIssues) as unknown as Arr.NonEmptyReadonlyArray<Issue>, ...(issues.length > maxIssues ? { omitted: issues.length - maxIssues } : {}) }))
    : Either.right({ manifest, claims, uncited })
