/**
 * OpenAI responses with annotations, as answers: the Responses API (`openai`: `output[].content[]`
 * of type `output_text` with `annotations`) and Chat Completions (`openai-chat`:
 * `choices[0].message.annotations`).
 *
 * Every OpenAI citation is DOCUMENT-LEVEL: it names a URL or a file, never the passage it relies
 * on, so nothing can be verified at quote level. Under `answers.citations: "quote"` (the default)
 * each is a `CoarseCitation`; under `"document"` it is accepted and labelled "document-level: no
 * quote verified". The claim's own text is never searched in the source.
 *
 * - `url_citation {url, start_index, end_index}`: the URL must equal a manifest source exactly
 *   (web search results carry `?utm_source=openai`, so they resolve only when the operator approved
 *   that exact URL); otherwise `NotApproved`.
 * - `file_citation {file_id, index}`, `container_file_citation {file_id, start_index, end_index}`:
 *   the file id must be a declared document id (`answers.documentIds`); otherwise
 *   `UnresolvableSource` (`undeclared-document-id`).
 * - `file_path` annotations link generated files and cite nothing: skipped. Any other annotation
 *   type is an `InvalidAnswer`.
 *
 * `start_index`/`end_index`/`index` point into the model's own output text; OpenAI does not state
 * the unit. citegate reads them as code points (the API counts Python string indices) and uses them
 * only to attach the citation to the sentence of the text that holds its start: an index past the
 * text is an `InvalidAnswer`. Sentences without an annotation are uncited text.
 *
 * @since 0.4.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { InvalidAnswer, Issue, StaleManifest } from "../Errors.js"
import type { Manifest } from "../Manifest.js"
import { checkManifest, offsets } from "./Answer.js"
import { addDocument, claimsAtPositions, type Draft, finish, Index, type ProviderFormat, resolveDocument, vendorDecoder } from "./Provider.js"
import { type BoundAnswer, type BoundClaim, limits, type UncitedText } from "./Records.js"

export const UrlCitation = Schema.Struct({
  type: Schema.Literal("url_citation"),
  url: Schema.String,
  title: Schema.optional(Schema.String),
  start_index: Index,
  end_index: Index
})

export const FileCitation = Schema.Struct({
  type: Schema.Literal("file_citation"),
  file_id: Schema.String,
  filename: Schema.optional(Schema.String),
  index: Index
})

export const ContainerFileCitation = Schema.Struct({
  type: Schema.Literal("container_file_citation"),
  file_id: Schema.String,
  container_id: Schema.optional(Schema.String),
  filename: Schema.optional(Schema.String),
  start_index: Index,
  end_index: Index
})

export const FilePath = Schema.Struct({ type: Schema.Literal("file_path"), file_id: Schema.String, index: Index })

export const Annotation = Schema.Union(UrlCitation, FileCitation, ContainerFileCitation, FilePath)
export type Annotation = typeof Annotation.Type

export const OutputText = Schema.Struct({
  type: Schema.Literal("output_text"),
  text: Schema.String,
  annotations: Schema.Array(Annotation).pipe(Schema.maxItems(limits.maxCitations))
})

const notType = (type: string) =>
  Schema.Struct({ type: Schema.String.pipe(Schema.filter((t) => t !== type || `an ${type} item must have valid fields`)) })

export const MessageItem = Schema.Struct({
  type: Schema.Literal("message"),
  content: Schema.Array(Schema.Union(OutputText, notType("output_text")))
})

export const Response = Schema.Struct({
  output: Schema.Array(Schema.Union(MessageItem, notType("message"))).pipe(Schema.maxItems(limits.maxClaims))
})
export type Response = typeof Response.Type

export const ChatResponse = Schema.Struct({
  choices: Schema.NonEmptyArray(Schema.Struct({
    message: Schema.Struct({
      content: Schema.NullOr(Schema.String),
      annotations: Schema.optional(Schema.Array(Schema.Struct({
        type: Schema.Literal("url_citation"),
        url_citation: Schema.Struct({ url: Schema.String, title: Schema.optional(Schema.String), start_index: Index, end_index: Index })
      })).pipe(Schema.maxItems(limits.maxCitations)))
    })
  }))
})
export type ChatResponse = typeof ChatResponse.Type

const responses = vendorDecoder(Response, [["output", "*", "content", "*", "annotations", "*"]])
const chat = vendorDecoder(ChatResponse, [["choices", "*", "message", "annotations", "*"]])

/** Decode a parsed Responses API response (the SDK's `Response`, or the wire JSON). */
export const decodeResponse = responses.decode
export const decodeResponseJson = responses.decodeJson
/** Decode a parsed Chat Completions response (the SDK's `ChatCompletion`, or the wire JSON). */
export const decodeChatResponse = chat.decode
export const decodeChatResponseJson = chat.decodeJson

/** One annotation, as the position it attaches at and how it adds to the claim; undefined when it cites nothing. */
const attach = (
  manifest: Manifest,
  format: ProviderFormat,
  a: Annotation,
  toUtf16: (cp: number) => number | undefined,
  path: ReadonlyArray<string | number>,
  issues: Array<Issue>
): { readonly at: number; readonly add: (draft: Draft) => void } | undefined => {
  if (a.type === "file_path") return undefined
  const start = a.type === "file_citation" ? a.index : a.start_index
  if (a.type !== "file_citation" && a.end_index < a.start_index) {
    issues.push({ path: [...path, "end_index"], message: "must not be less than start_index" })
    return undefined
  }
  const end = a.type === "file_citation" ? a.index : a.end_index
  const at = toUtf16(start)
  if (at === undefined || toUtf16(end) === undefined) {
    issues.push({ path: [...path, a.type === "file_citation" ? "index" : "end_index"], message: "points past the output text (code points)" })
    return undefined
  }
  const document = a.type === "url_citation" ? a.url : a.file_id
  const resolved = a.type === "url_citation"
    ? resolveDocument(manifest, format, { urls: [a.url] })
    : resolveDocument(manifest, format, { ids: [a.file_id] })
  return { at, add: (draft) => addDocument(draft, format, document, resolved) }
}

const bind = (
  manifest: Manifest,
  options: { readonly manifestDigest?: string | undefined },
  texts: ReadonlyArray<{ readonly id: string; readonly path: ReadonlyArray<string | number>; readonly text: string; readonly annotations: ReadonlyArray<Annotation> }>,
  format: ProviderFormat
): Either.Either<BoundAnswer, InvalidAnswer | StaleManifest> => {
  const checked = checkManifest(manifest, [options.manifestDigest])
  if (Either.isLeft(checked)) return Either.left(checked.left)
  const issues: Array<Issue> = []
  const claims: Array<BoundClaim> = []
  const uncited: Array<UncitedText> = []
  for (const t of texts) {
    const o = offsets(t.text)
    const attached = t.annotations.flatMap((a, j) => attach(manifest, format, a, o.toUtf16, [...t.path, "annotations", j], issues) ?? [])
    claimsAtPositions(t.id, t.text, attached, claims, uncited)
  }
  return finish(issues, checked.right, claims, uncited)
}

/** A Responses API response as an answer bound to this run's manifest (named by the caller). */
export const toAnswer = (response: Response, manifest: Manifest, options: { readonly manifestDigest?: string | undefined }) =>
  bind(
    manifest,
    options,
    response.output.flatMap((item, i) =>
      item.type === "message" && "content" in item
        ? (item.content as ReadonlyArray<{ readonly type: string }>).flatMap((c, j) =>
          c.type === "output_text" && "annotations" in c
            ? [{ id: `output-${i}-${j}`, path: ["output", i, "content", j], text: (c as typeof OutputText.Type).text, annotations: (c as typeof OutputText.Type).annotations }]
            : []
        )
        : []
    ),
    "openai"
  )

/** A Chat Completions response (its first choice) as an answer bound to this run's manifest. */
export const chatToAnswer = (response: ChatResponse, manifest: Manifest, options: { readonly manifestDigest?: string | undefined }) => {
  const message = response.choices[0].message
  return bind(
    manifest,
    options,
    [{
      id: "message",
      path: ["choices", 0, "message"],
      text: message.content ?? "",
      annotations: (message.annotations ?? []).map((a) => ({ type: "url_citation" as const, ...a.url_citation }))
    }],
    "openai-chat"
  )
}

/** Decode Responses API JSON text and bind it to this run's manifest (named by the caller). */
export const fromJson = (text: string, manifest: Manifest, options: { readonly manifestDigest?: string | undefined }) =>
  Either.flatMap(decodeResponseJson(text), (response) => toAnswer(response, manifest, options))

/** Decode Chat Completions JSON text and bind it to this run's manifest (named by the caller). */
export const chatFromJson = (text: string, manifest: Manifest, options: { readonly manifestDigest?: string | undefined }) =>
  Either.flatMap(decodeChatResponseJson(text), (response) => chatToAnswer(response, manifest, options))
