/**
 * Cohere v2 Chat responses with citations (`message.citations`), as answers.
 *
 * Cohere citations are DOCUMENT-LEVEL. A citation's `start`/`end`/`text` locate a span of the
 * RESPONSE (code points, end exclusive), not of the source; its `sources[]` name documents, and a
 * document source's `document` object echoes back the fields the caller supplied with that
 * document (including any `snippet`). citegate decides not to read such a snippet as a quote: it is
 * the caller's own input returned whole, not a passage the model picked, so "verifying" it would
 * prove nothing about the claim. Each document source therefore is a document-level citation
 * (policy `answers.citations`: `CoarseCitation` under "quote", labelled under "document").
 *
 * A document resolves by its `id` as a declared document id (`answers.documentIds`; the ids the
 * caller gave its documents), or by a `url` field of its `document` equal to a manifest source
 * exactly. A tool source is `UnresolvableSource` (`tool-output`); a citation without sources names
 * no document (`no-document`).
 *
 * The answer's text items are the claims' text: each citation attaches to the sentence of its text
 * item (`content_index`, default 0) that holds its `start`; `text` must equal the response's code
 * points `start`…`end` of that item (otherwise `InvalidAnswer`: wrong offsets). Citations of the
 * model's plan or thinking (`type` PLAN, THINKING_CONTENT) are not part of the answer.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type InvalidAnswer, type Issue, type StaleManifest } from "../Errors.js"
import type { Manifest } from "../Manifest.js"
import { checkManifest, offsets } from "./Answer.js"
import { addDocument, addUnresolved, claimsAtPositions, type Draft, finish, Index, resolveDocument, vendorDecoder } from "./Provider.js"
import { type BoundAnswer, type BoundClaim, limits, type UncitedText } from "./Records.js"

const format = "cohere" as const

export const DocumentSource = Schema.Struct({
  type: Schema.Literal("document"),
  id: Schema.optional(Schema.String),
  document: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export const ToolSource = Schema.Struct({ type: Schema.Literal("tool"), id: Schema.optional(Schema.String) })

export const CohereCitation = Schema.Struct({
  start: Index,
  end: Index,
  text: Schema.String,
  sources: Schema.optional(Schema.Array(Schema.Union(DocumentSource, ToolSource)).pipe(Schema.maxItems(limits.maxCitationsPerClaim))),
  type: Schema.optional(Schema.String),
  /** Wire name; the SDK hands it back as `contentIndex`. */
  content_index: Schema.optional(Index),
  contentIndex: Schema.optional(Index)
})
export type CohereCitation = typeof CohereCitation.Type

const TextItem = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const OtherItem = Schema.Struct({ type: Schema.String.pipe(Schema.filter((t) => t !== "text" || "a text item must have text")) })

export const Response = Schema.Struct({
  message: Schema.Struct({
    content: Schema.optional(Schema.Array(Schema.Union(TextItem, OtherItem)).pipe(Schema.maxItems(limits.maxClaims))),
    citations: Schema.optional(Schema.Array(CohereCitation).pipe(Schema.maxItems(limits.maxCitations)))
  })
})
export type Response = typeof Response.Type

const decoder = vendorDecoder(Response, [["message", "citations", "*", "sources", "*"]])

/** Decode a parsed v2 Chat response (the SDK's `V2ChatResponse`, or the wire JSON). */
export const decodeResponse = decoder.decode
export const decodeResponseJson = decoder.decodeJson

const addSource = (manifest: Manifest, source: typeof DocumentSource.Type | typeof ToolSource.Type, draft: Draft) => {
  if (source.type === "tool") {
    const document = source.id ?? "tool"
    addUnresolved(draft, format, document, "tool-output")
    return
  }
  const url = source.document?.["url"]
  const docId = source.document?.["id"]
  const ids = [source.id, typeof docId === "string" ? docId : undefined].filter((x): x is string => x !== undefined)
  const urls = typeof url === "string" ? [url] : []
  const document = ids[0] ?? urls[0] ?? ""
  addDocument(draft, format, document, resolveDocument(manifest, format, { urls, ids }))
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
  const content = response.message.content ?? []
  const texts = content.map((item) => (item.type === "text" && "text" in item ? (item as typeof TextItem.Type).text : undefined))
  const attached = texts.map(() => [] as Array<{ at: number; add: (draft: Draft) => void }>)
  const maps = new Map<number, ReturnType<typeof offsets>>()
  ;(response.message.citations ?? []).forEach((c, j) => {
    if (c.type !== undefined && c.type !== "TEXT_CONTENT") return
    const path = ["message", "citations", j]
    const item = c.content_index ?? c.contentIndex ?? 0
    const text = texts[item]
    if (text === undefined) {
      issues.push({ path: [...path, "content_index"], message: `names content item ${item}, which is not a text item` })
      return
    }
    let o = maps.get(item)
    if (o === undefined) maps.set(item, o = offsets(text))
    const start = o.toUtf16(c.start)
    const end = o.toUtf16(c.end)
    if (start === undefined || end === undefined || end <= start || text.slice(start, end) !== c.text) {
      issues.push({
        path: [...path, "text"],
        message: `is not the response text at code points ${c.start}–${c.end} (end exclusive) of content item ${item}`
      })
      return
    }
    const sources = c.sources ?? []
    attached[item]!.push({
      at: start,
      add: (draft) => {
        if (sources.length === 0) {
          addUnresolved(draft, format, c.text, "no-document")
        }
        for (const s of sources) addSource(manifest, s, draft)
      }
    })
  })
  texts.forEach((text, i) => {
    if (text !== undefined) claimsAtPositions(`content-${i}`, text, attached[i]!, claims, uncited)
  })
  return finish(issues, checked.right, claims, uncited)
}

/** Decode v2 Chat response JSON text and bind it to this run's manifest (named by the caller). */
export const fromJson = (
  text: string,
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined }
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> =>
  Either.flatMap(decodeResponseJson(text), (response) => toAnswer(response, manifest, options))
