/**
 * AWS Bedrock Converse responses with citations (`citationsContent`), as answers.
 *
 * The documents of the request are the run's documents hand-off (`sources --format bedrock`), in
 * manifest order: `documentIndex` i is manifest source i + 1. Each `citationsContent` block becomes
 * one claim (id `block-<i>`, i its 0-based position in `output.message.content`) whose text is the
 * LAST sentence of its generated `content` texts (joined); its earlier sentences and every plain
 * `text` block are uncited text. Other blocks (reasoning, tool use) are not part of the answer.
 *
 * A citation's quote is its `sourceContent` texts joined (Bedrock returns the cited passage there):
 * quote-level, searched verbatim in the capture by the Verifier (`SnippetAbsent`). Its `location`:
 * - `documentChar {documentIndex, start, end}`: code points of the document text, 0-based, end
 *   exclusive (as Anthropic's `char_location`, which Claude on Bedrock returns here; AWS leaves the
 *   unit unstated). The quote must be exactly there (`SpanMismatch`); an index counted in another
 *   unit (UTF-16 units, bytes) fails closed on non-ASCII text, never matches elsewhere.
 * - `documentPage {documentIndex, start, end}`: 1-based pages. AWS leaves the end unstated, so the
 *   narrower reading is taken: `end > start` is exclusive (pages start…end-1), `end = start` is that
 *   one page. The quote must lie within them (`AnchorMismatch`).
 * - `documentChunk`: no capture has chunks: `AnchorUnsupported` (as Anthropic's content blocks).
 * - `web {url}`: the URL must equal a manifest source exactly (or be a declared document id's
 *   source); with `sourceContent` the quote is still checked, without it the citation is
 *   document-level (policy `answers.citations`). Bedrock has been seen returning `web` for PDF
 *   documents: such a citation resolves only if its URL is the approved source.
 * - `searchResultLocation`: `UnresolvableSource` (search results are not part of the hand-off).
 * A citation without `sourceContent` text is document-level; one without a location names no
 * document (`UnresolvableSource`). A `documentIndex` outside the manifest or of a source missing in
 * this run is an `InvalidAnswer`, as for Anthropic.
 *
 * Decoding: vendor keys citegate does not read are ignored (the SDK adds `$metadata`); every field
 * it reads must have its type; an unknown location kind is an `InvalidAnswer`.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type InvalidAnswer, type Issue, type StaleManifest } from "../Errors.js"
import type { Manifest } from "../Manifest.js"
import { checkManifest, resolveNumber } from "./Answer.js"
import {
  addDocument,
  addUnresolved,
  addQuote,
  type Draft,
  emptyDraft,
  finish,
  Index,
  resolveDocument,
  toClaim,
  vendorDecoder
} from "./Provider.js"
import { type BoundAnswer, type BoundClaim, limits, type UncitedText } from "./Records.js"
import { sentences } from "./Sentences.js"

const format = "bedrock" as const

const Range = Schema.Struct({ documentIndex: Index, start: Index, end: Index })

export const CitationLocation = Schema.Union(
  Schema.Struct({ documentChar: Range }),
  Schema.Struct({ documentPage: Range }),
  Schema.Struct({ documentChunk: Range }),
  Schema.Struct({ web: Schema.Struct({ url: Schema.optional(Schema.String), domain: Schema.optional(Schema.String) }) }),
  Schema.Struct({ searchResultLocation: Schema.Unknown })
)
export type CitationLocation = typeof CitationLocation.Type

export const BedrockCitation = Schema.Struct({
  title: Schema.optional(Schema.String),
  source: Schema.optional(Schema.String),
  sourceContent: Schema.optional(Schema.Array(Schema.Struct({ text: Schema.String }))),
  location: Schema.optional(CitationLocation)
})
export type BedrockCitation = typeof BedrockCitation.Type

export const CitationsBlock = Schema.Struct({
  citationsContent: Schema.Struct({
    content: Schema.optional(Schema.Array(Schema.Struct({ text: Schema.String }))),
    citations: Schema.optional(Schema.Array(BedrockCitation))
  })
})

export const TextBlock = Schema.Struct({ text: Schema.String })

/** Any other content block (reasoning, tool use, …): it must not look like text or citations. */
export const OtherBlock = Schema.Object.pipe(
  Schema.filter((block) => !("text" in block || "citationsContent" in block) || "a text or citations block must have valid fields")
)

export const Response = Schema.Struct({
  output: Schema.Struct({
    message: Schema.Struct({
      content: Schema.Array(Schema.Union(CitationsBlock, TextBlock, OtherBlock)).pipe(Schema.maxItems(limits.maxClaims))
    })
  })
})
export type Response = typeof Response.Type

const decoder = vendorDecoder(Response, [["output", "message", "content", "*", "citationsContent", "citations", "*"]])

/** Decode a parsed Converse response (what the SDK's `ConverseCommand` returns, or its wire JSON). */
export const decodeResponse = decoder.decode
/** Decode Converse response JSON text: size limit, strict JSON, citation total, then the Schema. */
export const decodeResponseJson = decoder.decodeJson

/** Map one citation onto the claim being built; structural problems go to `issues`. */
const mapCitation = (manifest: Manifest, c: BedrockCitation, path: ReadonlyArray<string | number>, draft: Draft, issues: Array<Issue>) => {
  const quote = (c.sourceContent ?? []).map((s) => s.text).join("")
  const location = c.location
  const byIndex = (documentIndex: number) => {
    const resolved = resolveNumber(manifest, documentIndex + 1)
    if (Either.isLeft(resolved)) issues.push({ path: [...path, "location", "documentIndex"], message: resolved.left })
    return resolved
  }
  const orderedEnd = (start: number, end: number, key: string, exclusiveOnly: boolean) => {
    if (end > start || (!exclusiveOnly && end === start)) return true
    issues.push({ path: [...path, "location", key, "end"], message: `must be greater than start${exclusiveOnly ? "" : " (or equal, for one)"}` })
    return false
  }
  if (location === undefined) {
    addUnresolved(draft, format, c.title ?? c.source ?? "", "no-document")
    return
  }
  if ("web" in location) {
    const url = location.web.url ?? ""
    const resolved = resolveDocument(manifest, format, { urls: [url] })
    if (quote.trim() === "") addDocument(draft, format, url, resolved)
    else addQuote(draft, format, url, resolved, { quote })
    return
  }
  if ("searchResultLocation" in location) {
    addUnresolved(draft, format, c.title ?? c.source ?? "search result", "search-result")
    return
  }
  const range = "documentChar" in location ? location.documentChar : "documentPage" in location ? location.documentPage : location.documentChunk
  const byNumber = byIndex(range.documentIndex)
  if (Either.isLeft(byNumber)) return
  const resolved = Either.right(byNumber.right)
  const document = `document ${range.documentIndex}`
  if (quote.trim() === "") {
    // No cited text came back: nothing to check but the document.
    addDocument(draft, format, document, resolved)
    return
  }
  if ("documentChar" in location) {
    if (orderedEnd(range.start, range.end, "documentChar", true)) {
      addQuote(draft, format, document, resolved, { quote, chars: { start: range.start, end: range.end } })
    }
  } else if ("documentPage" in location) {
    if (range.start < 1) issues.push({ path: [...path, "location", "documentPage", "start"], message: "pages are 1-based" })
    else if (orderedEnd(range.start, range.end, "documentPage", false)) {
      addQuote(draft, format, document, resolved, { quote, page: { start: range.start, end: Math.max(range.end, range.start + 1) } })
    }
  } else if (orderedEnd(range.start, range.end, "documentChunk", false)) {
    addQuote(draft, format, document, resolved, { quote, blocks: { start: range.start, end: Math.max(range.end, range.start + 1) } })
  }
}

/**
 * The response as an answer bound to this run's manifest (named by the caller): `documentIndex` i
 * is manifest source i + 1.
 */
export const toAnswer = (
  response: Response,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> => {
  const checked = checkManifest(manifest, [options.manifestDigest])
  if (Either.isLeft(checked)) return Either.left(checked.left)
  const issues: Array<Issue> = []
  const claims: Array<BoundClaim> = []
  const uncited: Array<UncitedText> = []
  response.output.message.content.forEach((block, b) => {
    if ("citationsContent" in block) {
      const path = ["output", "message", "content", b, "citationsContent"]
      const text = (block.citationsContent.content ?? []).map((c) => c.text).join("")
      const draft = emptyDraft()
      ;(block.citationsContent.citations ?? []).forEach((c, j) => mapCitation(manifest, c, [...path, "citations", j], draft, issues))
      const all = sentences(text)
      const last = all.pop()
      if (last === undefined) {
        issues.push({ path: [...path, "content"], message: "a citations block must have generated text" })
        return
      }
      for (const s of all) uncited.push({ text: s, line: null })
      if (draft.citations.length + draft.documents.length + draft.unresolved.length === 0) uncited.push({ text: last, line: null })
      else claims.push(toClaim(`block-${b}`, last, draft))
    } else if ("text" in block && typeof block.text === "string") {
      for (const s of sentences(block.text)) uncited.push({ text: s, line: null })
    }
  })
  return finish(issues, checked.right, claims, uncited)
}

/** Decode Converse response JSON text and bind it to this run's manifest (named by the caller). */
export const fromJson = (
  text: string,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> =>
  Either.flatMap(decodeResponseJson(text), (response) => toAnswer(response, manifest, options))
