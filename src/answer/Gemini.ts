/**
 * Google Gemini `generateContent` responses with grounding (`groundingMetadata`), as answers.
 *
 * The first candidate is the answer. Each `groundingSupports[i]` becomes one claim (id
 * `support-<i>`) whose text is its segment of the response: `segment.startIndex`/`endIndex` are
 * UTF-8 BYTE offsets (start inclusive, end exclusive) into the text of part `segment.partIndex`,
 * converted to string positions here (a byte offset taken as a string index slices the wrong text
 * as soon as the part holds an accent, CJK or emoji). Proto3 JSON omits zero values, so an absent
 * `partIndex` or `startIndex` is 0. An offset past the part, inside a character's bytes, or a
 * `segment.text` that differs from those bytes is an `InvalidAnswer` (the claim text would be
 * wrong). Text outside every segment is uncited text. `confidenceScores` are not read (empty since
 * Gemini 2.5, and no evidence either way).
 *
 * The support's `groundingChunkIndices` name its citations:
 * - `retrievedContext` with `text`: quote-level. The text is searched verbatim in the capture
 *   (`SnippetAbsent`); Gemini returns no offsets into the source, so no span is checked. The
 *   document is the manifest source whose URL equals `uri` exactly, or whose declared document id
 *   equals `uri` or `documentName`.
 * - `retrievedContext` without text: document-level (policy `answers.citations`).
 * - `retrievedContext.pageNumber` (File Search, Gemini API only; the SDK says "page number, if
 *   applicable", without its base) and `ragChunk.pageSpan` (Vertex RAG, 1-based, inclusive) are NOT
 *   read: they number the pages of the file the caller uploaded to the provider's store, which
 *   citegate cannot tie to the capture's pages, and the issue asks for no page anchor here. Read as a
 *   `page` range they would fail quotes on a numbering citegate cannot check; the quote itself is
 *   searched in the whole capture.
 * - `web`: document-level, and its `uri` is in practice a grounding redirect
 *   (`vertexaisearch.cloud.google.com/grounding-api-redirect/…`), which never resolves:
 *   `UnresolvableSource`. A web URI equal to an approved source resolves (document-level).
 * - any other chunk (maps, image): `UnresolvableSource` (`no-document`).
 * A chunk index outside `groundingChunks` is an `InvalidAnswer`.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type InvalidAnswer, type Issue, type StaleManifest } from "../Errors.js"
import type { Manifest } from "../Manifest.js"
import { checkManifest } from "./Answer.js"
import {
  addDocument,
  addUnresolved,
  addQuote,
  type Draft,
  draftSize,
  emptyDraft,
  finish,
  Index,
  isGroundingRedirect,
  resolveDocument,
  toClaim,
  uncitedOutside,
  utf8Offsets,
  vendorDecoder
} from "./Provider.js"
import { type BoundAnswer, type BoundClaim, limits, type UncitedText } from "./Records.js"

const format = "gemini" as const

// Exact optional fields (absent, never undefined, in JSON): no union with undefined to try, which halves the decoding time.
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })
const Opt = optional(Schema.String)

export const GroundingChunk = Schema.Struct({
  web: optional(Schema.Struct({ uri: Opt, title: Opt, domain: Opt })),
  retrievedContext: optional(Schema.Struct({ uri: Opt, title: Opt, text: Opt, documentName: Opt }))
})
export type GroundingChunk = typeof GroundingChunk.Type

export const GroundingSupport = Schema.Struct({
  segment: Schema.Struct({
    partIndex: optional(Index),
    startIndex: optional(Index),
    endIndex: Index,
    text: Opt
  }),
  groundingChunkIndices: Schema.Array(Index).pipe(Schema.maxItems(limits.maxCitationsPerClaim))
})
export type GroundingSupport = typeof GroundingSupport.Type

export const Candidate = Schema.Struct({
  content: optional(Schema.Struct({
    parts: optional(Schema.Array(Schema.Struct({ text: Opt, thought: optional(Schema.Boolean) })))
  })),
  groundingMetadata: optional(Schema.Struct({
    groundingChunks: optional(Schema.Array(GroundingChunk)),
    groundingSupports: optional(Schema.Array(GroundingSupport).pipe(Schema.maxItems(limits.maxClaims)))
  }))
})

export const Response = Schema.Struct({
  candidates: Schema.NonEmptyArray(Candidate)
})
export type Response = typeof Response.Type

const decoder = vendorDecoder(Response, [["candidates", "*", "groundingMetadata", "groundingSupports", "*", "groundingChunkIndices", "*"]])

/** Decode a parsed `generateContent` response (the SDK's `GenerateContentResponse` as JSON, or the wire JSON). */
export const decodeResponse = decoder.decode
/** Decode response JSON text: size limit, strict JSON, citation total, then the Schema. */
export const decodeResponseJson = decoder.decodeJson

const mapChunk = (manifest: Manifest, chunk: GroundingChunk, draft: Draft) => {
  const rc = chunk.retrievedContext
  if (rc !== undefined) {
    const document = rc.uri ?? rc.documentName ?? rc.title ?? ""
    const resolved = resolveDocument(manifest, format, {
      urls: rc.uri === undefined ? [] : [rc.uri],
      ids: [rc.uri, rc.documentName].filter((x): x is string => x !== undefined)
    })
    if (rc.text !== undefined && rc.text.trim() !== "") addQuote(draft, format, document, resolved, { quote: rc.text })
    else addDocument(draft, format, document, resolved)
    return
  }
  const uri = chunk.web?.uri
  if (uri !== undefined) {
    // A redirect never resolves, whatever the manifest holds (checked first, explicitly).
    if (isGroundingRedirect(uri)) {
      addUnresolved(draft, format, uri, "redirect-url")
    } else addDocument(draft, format, uri, resolveDocument(manifest, format, { urls: [uri] }))
    return
  }
  const document = chunk.web?.title ?? ""
  addUnresolved(draft, format, document, "no-document")
}

/** The response as an answer bound to this run's manifest (named by the caller). */
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
  const candidate = response.candidates[0]
  // Thought parts are the model's reasoning, not the answer; their positions still count for partIndex.
  const parts = (candidate.content?.parts ?? []).map((p) => (p.thought === true ? undefined : p.text))
  const chunks = candidate.groundingMetadata?.groundingChunks ?? []
  const byteMaps = new Map<number, ReturnType<typeof utf8Offsets>>()
  const covered = parts.map(() => [] as Array<{ start: number; end: number }>)
  ;(candidate.groundingMetadata?.groundingSupports ?? []).forEach((support, i) => {
    const path = ["candidates", 0, "groundingMetadata", "groundingSupports", i]
    const seg = support.segment
    const partIndex = seg.partIndex ?? 0
    const text = parts[partIndex]
    if (text === undefined) {
      issues.push({ path: [...path, "segment", "partIndex"], message: `names part ${partIndex}, which is not a text part of the answer` })
      return
    }
    let bytes = byteMaps.get(partIndex)
    if (bytes === undefined) byteMaps.set(partIndex, bytes = utf8Offsets(text))
    const startByte = seg.startIndex ?? 0
    const start = bytes.toUtf16(startByte)
    const end = bytes.toUtf16(seg.endIndex)
    if (start === undefined || end === undefined || end <= start) {
      issues.push({
        path: [...path, "segment"],
        message: `bytes ${startByte}–${seg.endIndex} are not a range of whole characters of part ${partIndex} ` +
          `(${bytes.byteLength} UTF-8 bytes; start inclusive, end exclusive)`
      })
      return
    }
    const claimText = text.slice(start, end)
    if (seg.text !== undefined && seg.text !== claimText) {
      issues.push({
        path: [...path, "segment", "text"],
        message: `is not the text at UTF-8 bytes ${startByte}–${seg.endIndex} of part ${partIndex} (${JSON.stringify(claimText.slice(0, 80))})`
      })
      return
    }
    if (claimText.trim() === "") {
      issues.push({ path: [...path, "segment"], message: "a supported segment must hold text" })
      return
    }
    const draft = emptyDraft()
    support.groundingChunkIndices.forEach((k, j) => {
      const chunk = chunks[k]
      if (chunk === undefined) {
        issues.push({ path: [...path, "groundingChunkIndices", j], message: `names chunk ${k}; the response has ${chunks.length}` })
      } else mapChunk(manifest, chunk, draft)
    })
    // A support naming no chunk cites nothing: its text stays uncited text.
    if (draftSize(draft) === 0) return
    covered[partIndex]!.push({ start, end })
    claims.push(toClaim(`support-${i}`, claimText.trim(), draft))
  })
  parts.forEach((text, p) => {
    if (text !== undefined) uncitedOutside(text, covered[p]!, uncited)
  })
  return finish(issues, checked.right, claims, uncited)
}

/** Decode response JSON text and bind it to this run's manifest (named by the caller). */
export const fromJson = (
  text: string,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> =>
  Either.flatMap(decodeResponseJson(text), (response) => toAnswer(response, manifest, options))
