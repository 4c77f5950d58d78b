/**
 * Anthropic Messages API responses with Citations, as answers.
 *
 * The documents of the request are the run's manifest sources in order:
 * `document_index` i is manifest source i + 1 (pass the captures' texts as
 * plain-text documents in manifest order). Each `text` content block that
 * carries citations becomes one claim (id `block-<i>`, i the block's 0-based
 * position in `content`) whose text is the block's LAST sentence: its citations
 * (mapped to the manifest's source and capture digest) attach there, and the
 * block's earlier sentences are uncited text like the sentences of text blocks
 * without citations. Other block types (thinking, tool use) are not part of
 * the answer.
 *
 * Decoding: the vendor envelope (the response, its content blocks and
 * citation objects) may carry keys citegate does not read; they are ignored,
 * as the API adds fields over time. Every field citegate reads must be present
 * with its type, and a citation of another type than `char_location`,
 * `page_location` or `content_block_location` is an `InvalidAnswer` (it could
 * not be checked).
 *
 * Locations:
 * - `char_location`: `start_char_index`/`end_char_index` count Unicode code
 *   points of the document text (0-based, end exclusive). The API documents
 *   them as character indices; citegate counts code points (not UTF-16 code
 *   units), so for text beyond the BMP an index counted in UTF-16 units fails
 *   closed with `SpanMismatch`. `cited_text` must occur in the capture
 *   (`SnippetAbsent`) and exactly at those indices (`SpanMismatch`).
 * - `page_location`: `start_page_number` (1-based) to `end_page_number`
 *   (exclusive) become the citation's `page` range, checked by the Verifier as
 *   a report's `page`: `cited_text` must lie within those pages of the capture
 *   (`AnchorMismatch`; `no-such-anchor` when the capture has no such pages).
 * - `content_block_location`: no capture has content blocks, so these
 *   citations fail with `AnchorUnsupported` (retracted in drop mode).
 *
 * The response names no manifest: the caller must (`manifestDigest`,
 * `--manifest-digest`), so a response drafted against another run is
 * `StaleManifest`, never re-bound.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Arr from "effect/Array"
import { NonBlankString } from "../Domain.js"
import { InvalidAnswer, type Issue, type StaleManifest } from "../Errors.js"
import { plainDataIssue } from "../internal/decode.js"
import * as StrictJson from "../internal/strictJson.js"
import type { Manifest } from "../Manifest.js"
import { checkManifest, citationTotalIssue, resolveNumber, sentences } from "./Answer.js"
import { invalidOf } from "./Provider.js"
import { type BoundAnswer, type Citation, limits, type UncitedText } from "./Records.js"

// Vendor objects: unknown keys ignored (no onExcessProperty annotation; decoded with "ignore" below).
const Index = Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))

export const CharLocation = Schema.Struct({
  type: Schema.Literal("char_location"),
  cited_text: NonBlankString,
  document_index: Index,
  start_char_index: Index,
  end_char_index: Index
})

export const PageLocation = Schema.Struct({
  type: Schema.Literal("page_location"),
  cited_text: NonBlankString,
  document_index: Index,
  start_page_number: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  end_page_number: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
})

export const ContentBlockLocation = Schema.Struct({
  type: Schema.Literal("content_block_location"),
  cited_text: NonBlankString,
  document_index: Index,
  start_block_index: Index,
  end_block_index: Index
})

export const TextCitation = Schema.Union(CharLocation, PageLocation, ContentBlockLocation)
export type TextCitation = typeof TextCitation.Type

export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  citations: Schema.optional(Schema.NullOr(Schema.Array(TextCitation)))
})

/** Any other content block: only its type is read (it must not claim to be text). */
export const OtherBlock = Schema.Struct({
  type: Schema.String.pipe(Schema.filter((t) => t !== "text" || "a text block must have text and valid citations"))
})

export const Response = Schema.Struct({
  content: Schema.Array(Schema.Union(TextBlock, OtherBlock)).pipe(Schema.maxItems(limits.maxClaims))
})
export type Response = typeof Response.Type

const lenientDecode = Schema.decodeUnknownEither(Response, { errors: "all", onExcessProperty: "ignore" })

/**
 * Decode a parsed Messages API response (vendor keys citegate does not read
 * are ignored). The value must be plain JSON data (what `decodeResponseJson` parses).
 */
export const decodeResponse = (input: unknown): Either.Either<Response, InvalidAnswer> => {
  const notPlain = plainDataIssue(input)
  if (notPlain !== undefined) return Either.left(new InvalidAnswer({ issues: [notPlain] }))
  const tooMany = citationTotalIssue(input, "content")
  if (tooMany !== undefined) return Either.left(new InvalidAnswer({ issues: [tooMany] }))
  return Either.mapLeft(lenientDecode(input), invalidOf)
}

/** Decode response JSON text: size limit, strict JSON (no repeated or prototype keys), then `decodeResponse`. */
export const decodeResponseJson = (text: string): Either.Either<Response, InvalidAnswer> => {
  if (text.length > limits.maxChars) {
    return Either.left(new InvalidAnswer({ issues: [{ path: [], message: `is longer than ${limits.maxChars} characters` }] }))
  }
  const parsed = StrictJson.parse(text, { maxArrayLength: limits.maxClaims })
  return parsed._tag === "Left" ? Either.left(new InvalidAnswer({ issues: [parsed.issue] })) : decodeResponse(parsed.value)
}

/**
 * The response as an answer bound to this run's manifest (named by the
 * caller): document_index i is manifest source i + 1.
 */
export const toAnswer = (
  response: Response,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> => {
  const checked = checkManifest(manifest, [options.manifestDigest])
  if (Either.isLeft(checked)) return Either.left(checked.left)
  const issues: Array<Issue> = []
  const claims: Array<BoundAnswer["claims"][number]> = []
  const uncited: Array<UncitedText> = []
  response.content.forEach((block, b) => {
    if (block.type !== "text" || !("text" in block)) return
    const citations = block.citations ?? []
    if (citations.length === 0) {
      for (const s of sentences(block.text)) uncited.push({ text: s, line: null })
      return
    }
    const bound: Array<Citation> = []
    citations.forEach((c, j) => {
      const resolved = resolveNumber(manifest, c.document_index + 1)
      if (Either.isLeft(resolved)) {
        issues.push({ path: ["content", b, "citations", j, "document_index"], message: resolved.left })
        return
      }
      const base = { ...resolved.right, quote: c.cited_text }
      switch (c.type) {
        case "char_location":
          if (c.end_char_index <= c.start_char_index) {
            issues.push({ path: ["content", b, "citations", j, "end_char_index"], message: "must be greater than start_char_index" })
            return
          }
          bound.push({ ...base, chars: { start: c.start_char_index, end: c.end_char_index } })
          return
        case "page_location":
          // Anthropic's end page is exclusive: a one-page citation has end = start + 1.
          if (c.end_page_number <= c.start_page_number) {
            issues.push({ path: ["content", b, "citations", j, "end_page_number"], message: "must be greater than start_page_number" })
            return
          }
          bound.push({ ...base, page: { start: c.start_page_number, end: c.end_page_number } })
          return
        case "content_block_location":
          if (c.end_block_index <= c.start_block_index) {
            issues.push({ path: ["content", b, "citations", j, "end_block_index"], message: "must be greater than start_block_index" })
            return
          }
          bound.push({ ...base, blocks: { start: c.start_block_index, end: c.end_block_index } })
          return
      }
    })
    // The citations attach to the block's last sentence; its other sentences are uncited text, each
    // checked by the uncited-sentence rule (a block is never one claim however many sentences it holds).
    const all = sentences(block.text)
    const last = all.pop()
    if (last === undefined) {
      issues.push({ path: ["content", b, "text"], message: "a cited text block must have text" })
      return
    }
    for (const s of all) uncited.push({ text: s, line: null })
    claims.push({ id: `block-${b}`, text: last, citations: bound })
  })
  if (Arr.isNonEmptyArray(issues)) return Either.left(new InvalidAnswer({ issues }))
  return Either.right({ manifest: checked.right, claims, uncited })
}

/** Decode response JSON text and bind it to this run's manifest (named by the caller). */
export const fromJson = (
  text: string,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> =>
  Either.flatMap(decodeResponseJson(text), (response) => toAnswer(response, manifest, options))
