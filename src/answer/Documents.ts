/**
 * The documents hand-off: the run's capture texts, in manifest order, in the
 * form a drafting model takes them, each output naming the manifest digest the
 * answer must be bound to.
 *
 * - `documents` (`citegate.documents/1`): JSON, per source its number, URL,
 *   capture digest, text and anchors (PDF pages, heading paths), for drafters
 *   writing `citegate.answer/1` (citations by number, `page`, `heading`).
 * - `anthropic` (`citegate.anthropic-documents/1`): Anthropic Messages
 *   `document` blocks, plain-text source, citations enabled; `document_index`
 *   i is manifest source i + 1 (what `Anthropic.toAnswer` expects).
 * - `bedrock` (`citegate.bedrock-documents/1`): Bedrock Converse `document`
 *   content blocks (`format: "txt"`, `source.text`), citations enabled, in the
 *   same order.
 * - `evi1`: the EVI1 prompt (`Evi1.prompt`) followed by the numbered documents,
 *   each text between fence lines longer than any backtick run in it, so no
 *   text can close its fence.
 *
 * Every text is the capture record's `text`, exactly: the text the Verifier
 * searches, so a quote copied from the hand-off verifies. A source without a
 * usable capture keeps its place (so indices stay manifest numbers) with a
 * short notice instead of a text; citing it fails when the answer is bound.
 *
 * Bounded: the texts together may hold at most `limits.maxChars` UTF-16 code
 * units; the reading stops at the source that passes it (`DocumentsTooLarge`).
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { PipelineConfig } from "../Config.js"
import { type CaptureRecord, Sha256Hex } from "../Domain.js"
import { DocumentsTooLarge } from "../Errors.js"
import * as Manifest from "../Manifest.js"
import { prompt as evi1Rules } from "./Evi1.js"

/** Limits of one hand-off (documented in docs/answers.md). */
export const limits = {
  /** UTF-16 code units of capture text in one hand-off, all sources together (8 Mi). */
  maxChars: 8 * 1024 * 1024
} as const

export const formats = ["documents", "anthropic", "bedrock", "evi1"] as const
export type Format = (typeof formats)[number]

/** A captured source of the hand-off: its manifest entry and the record's text and anchors. */
export interface Captured {
  readonly status: "captured"
  readonly number: number
  readonly source: string
  readonly captureSha256: Sha256Hex
  readonly contentType: string
  readonly text: string
  readonly pages: ReadonlyArray<{ readonly number: number; readonly start: number; readonly end: number }>
  readonly headings: ReadonlyArray<{ readonly path: ReadonlyArray<string>; readonly start: number; readonly end: number }>
}

/** A source of the manifest without a usable capture: kept in its place, never with a text. */
export interface Missing {
  readonly status: "missing"
  readonly number: number
  readonly source: string
  readonly reason: string
}

/** The run's manifest and, in its order, every source's text or why it has none. */
export interface HandOff {
  readonly manifest: Manifest.Manifest
  readonly sources: ReadonlyArray<Captured | Missing>
}

/**
 * The hand-off of this run for the configuration's sources: the manifest and
 * the texts, each capture read once through `CaptureStore.read`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = Effect.fn("Documents.make")(function*(
  config: Pick<PipelineConfig, "sources" | "labels">,
  options: { readonly maxChars?: number | undefined } = {}
) {
  const maxChars = options.maxChars ?? limits.maxChars
  const records = new Map<number, CaptureRecord>()
  let chars = 0
  const manifest = yield* Manifest.makeVisiting(config, (record, number): Either.Either<void, DocumentsTooLarge> => {
    chars += record.text.length
    if (chars > maxChars) return Either.left(new DocumentsTooLarge({ maxChars, chars, number, source: record.source }))
    records.set(number, record)
    return Either.void
  })
  return fromRecords(manifest, records)
})

/** The hand-off from a manifest and the records its captured sources were read from (by manifest number). */
export const fromRecords = (manifest: Manifest.Manifest, records: ReadonlyMap<number, CaptureRecord>): HandOff => ({
  manifest,
  sources: manifest.sources.map((entry): Captured | Missing => {
    const record = records.get(entry.number)
    if (entry.status === "missing" || record === undefined) {
      return { status: "missing", number: entry.number, source: entry.source, reason: entry.status === "missing" ? entry.reason._tag : "MissingCapture" }
    }
    const v2 = record.format === "citegate.capture/2"
    return {
      status: "captured",
      number: entry.number,
      source: entry.source,
      captureSha256: entry.captureSha256,
      contentType: entry.contentType,
      text: record.text,
      pages: v2 ? (record.pages ?? []).map(({ end, number, start }) => ({ number, start, end })) : [],
      headings: v2 ? (record.headings ?? []).map(({ end, path, start }) => ({ path, start, end })) : []
    }
  })
})

// ---------------------------------------------------------------------------
// Output records (their Schemas are what /openapi.json shows)
// ---------------------------------------------------------------------------

const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** What stands in for the text of a source without a usable capture. */
export const missingNotice = (reason: string) =>
  `This source has no usable capture in this run (${reason}). Do not cite it.`

const Range = Schema.Struct({ start: Schema.NonNegativeInt, end: Schema.NonNegativeInt })

export const DocumentEntry = Schema.Union(
  Schema.Struct({
    number: Schema.Int,
    source: Schema.String,
    status: Schema.Literal("captured"),
    captureSha256: Sha256Hex,
    contentType: Schema.String,
    text: Schema.String,
    /** PDF pages: UTF-16 code units of `text`, end exclusive. */
    pages: Schema.Array(Schema.Struct({ number: Schema.Int, ...Range.fields }).annotations(strict)),
    /** Heading sections: the path (outermost first, as a report's or answer's `heading`) and its range of `text`. */
    headings: Schema.Array(Schema.Struct({ path: Schema.Array(Schema.String), ...Range.fields }).annotations(strict))
  }).annotations({ ...strict, identifier: "DocumentCaptured" }),
  Schema.Struct({
    number: Schema.Int,
    source: Schema.String,
    status: Schema.Literal("missing"),
    reason: Schema.String
  }).annotations({ ...strict, identifier: "DocumentMissing" })
)

/** `citegate.documents/1`: the texts and anchors, for `citegate.answer/1` drafters. */
export const DocumentsOutput = Schema.Struct({
  format: Schema.Literal("citegate.documents/1"),
  manifest: Sha256Hex,
  documents: Schema.Array(DocumentEntry)
}).annotations({ ...strict, identifier: "DocumentsOutput" })

/** An Anthropic Messages `document` block with a plain-text source and citations enabled. */
export const AnthropicDocument = Schema.Struct({
  type: Schema.Literal("document"),
  source: Schema.Struct({ type: Schema.Literal("text"), media_type: Schema.Literal("text/plain"), data: Schema.String }).annotations(strict),
  title: Schema.String,
  citations: Schema.Struct({ enabled: Schema.Literal(true) }).annotations(strict)
}).annotations({ ...strict, identifier: "AnthropicDocument" })

/** `citegate.anthropic-documents/1`: put `documents` (in order) into the user message's content. */
export const AnthropicOutput = Schema.Struct({
  format: Schema.Literal("citegate.anthropic-documents/1"),
  manifest: Sha256Hex,
  documents: Schema.Array(AnthropicDocument)
}).annotations({ ...strict, identifier: "AnthropicDocumentsOutput" })

/** A Bedrock Converse content block holding a `document` (text source, citations enabled). */
export const BedrockDocument = Schema.Struct({
  document: Schema.Struct({
    format: Schema.Literal("txt"),
    name: Schema.String,
    source: Schema.Struct({ text: Schema.String }).annotations(strict),
    citations: Schema.Struct({ enabled: Schema.Literal(true) }).annotations(strict)
  }).annotations(strict)
}).annotations({ ...strict, identifier: "BedrockDocument" })

/** `citegate.bedrock-documents/1`: put `documents` (in order) into the user message's `content`. */
export const BedrockOutput = Schema.Struct({
  format: Schema.Literal("citegate.bedrock-documents/1"),
  manifest: Sha256Hex,
  documents: Schema.Array(BedrockDocument)
}).annotations({ ...strict, identifier: "BedrockDocumentsOutput" })

/** `citegate.evi1-prompt/1`: the EVI1 prompt with its documents, as the service returns it. */
export const Evi1Output = Schema.Struct({
  format: Schema.Literal("citegate.evi1-prompt/1"),
  manifest: Sha256Hex,
  prompt: Schema.String
}).annotations({ ...strict, identifier: "Evi1PromptOutput" })

/** Any hand-off, as JSON. */
export const Output = Schema.Union(DocumentsOutput, AnthropicOutput, BedrockOutput, Evi1Output)
export type Output = typeof Output.Type

/** Decode a hand-off (e.g. the service's response) strictly. */
export const decodeOutput = Schema.decodeUnknownSync(Output, { errors: "all", onExcessProperty: "error" })

// ---------------------------------------------------------------------------
// Renderings
// ---------------------------------------------------------------------------

/** Most characters of an Anthropic document title: citegate's own bound (the URL is cut past it; the number always stays). */
export const maxTitleChars = 500

const titleOf = (entry: Captured | Missing) => {
  const title = `[${entry.number}] ${entry.source}${entry.status === "missing" ? " (not available)" : ""}`
  return title.length <= maxTitleChars ? title : `${title.slice(0, maxTitleChars - 1)}…`
}

const textOf = (entry: Captured | Missing) => entry.status === "captured" ? entry.text : missingNotice(entry.reason)

export const toDocuments = (handOff: HandOff): typeof DocumentsOutput.Type => ({
  format: "citegate.documents/1",
  manifest: handOff.manifest.digest,
  documents: handOff.sources
})

export const toAnthropic = (handOff: HandOff): typeof AnthropicOutput.Type => ({
  format: "citegate.anthropic-documents/1",
  manifest: handOff.manifest.digest,
  documents: handOff.sources.map((entry) => ({
    type: "document",
    source: { type: "text", media_type: "text/plain", data: textOf(entry) },
    title: titleOf(entry),
    citations: { enabled: true }
  }))
})

export const toBedrock = (handOff: HandOff): typeof BedrockOutput.Type => ({
  format: "citegate.bedrock-documents/1",
  manifest: handOff.manifest.digest,
  documents: handOff.sources.map((entry) => ({
    document: {
      format: "txt",
      // Converse names allow letters, digits, single spaces, hyphens, parentheses and brackets (1-200 characters):
      // a neutral name; the URL stays out of it.
      name: `Source ${entry.number}`,
      source: { text: textOf(entry) },
      citations: { enabled: true }
    }
  }))
})

/** The longest run of backticks in `text`. */
const longestBacktickRun = (text: string): number => {
  let longest = 0
  let run = 0
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 96) longest = Math.max(longest, ++run)
    else run = 0
  }
  return longest
}

/** A text between fence lines it cannot close: the fence is longer than any backtick run inside. */
export const fenced = (text: string): string => {
  const fence = "`".repeat(Math.max(3, longestBacktickRun(text) + 1))
  return `${fence}text\n${text}\n${fence}`
}

/**
 * The EVI1 prompt with its documents: the manifest digest (for the harness's
 * `MANIFEST` line or `--manifest-digest`), the protocol's rules, then each
 * source's text, exact, in a fence it cannot close.
 */
export const toEvi1 = (handOff: HandOff): string => {
  const documents = handOff.sources.map((entry) =>
    entry.status === "captured"
      ? `### Document [${entry.number}]\n\n${fenced(entry.text)}`
      : `### Document [${entry.number}]\n\n${missingNotice(entry.reason)}`
  )
  return [
    `citegate manifest ${handOff.manifest.digest}`,
    "",
    evi1Rules(handOff.manifest),
    "## Documents",
    "",
    "Each document's text lies between its fence lines (the fence lines are not part of it). Copy quotes from " +
    "there exactly; the fences and these headings are never part of a quote.",
    "",
    documents.join("\n\n"),
    ""
  ].join("\n")
}

export const toEvi1Output = (handOff: HandOff): typeof Evi1Output.Type => ({
  format: "citegate.evi1-prompt/1",
  manifest: handOff.manifest.digest,
  prompt: toEvi1(handOff)
})

/** The hand-off in `format` as a JSON value (the service's response; the CLI prints `evi1` as plain text). */
export const toOutput = (format: Format, handOff: HandOff): Output => {
  switch (format) {
    case "documents":
      return toDocuments(handOff)
    case "anthropic":
      return toAnthropic(handOff)
    case "bedrock":
      return toBedrock(handOff)
    case "evi1":
      return toEvi1Output(handOff)
  }
}

/** The hand-off as the CLI prints it: JSON (indented) for the block formats, the prompt text for `evi1`. */
export const render = (format: Format, handOff: HandOff): string =>
  format === "evi1" ? toEvi1(handOff) : JSON.stringify(toOutput(format, handOff), null, 2) + "\n"
