/**
 * Failures of provider-native citations (Bedrock, Gemini, OpenAI, Cohere): a citation that names a
 * whole document where a quote is required, and a citation whose document cannot be tied to an
 * approved source. Both are per-citation failures (members of `CitationError`): retracted in drop
 * mode, rejecting the answer in reject mode.
 *
 * @since 0.4.0
 */
import * as Schema from "effect/Schema"
import { TaggedError } from "./TaggedError.js"

/**
 * The citation names a document but no passage of it (OpenAI, Cohere, Gemini web results, a
 * retrieved chunk without text): no quote can be checked. Under `answers.citations: "quote"` (the
 * default) it is this failure; it is never upgraded by searching the claim's own text in the source.
 */
export class CoarseCitation extends TaggedError<CoarseCitation>()("CoarseCitation", {
  /** The answer format (`openai`, `cohere`, …). */
  format: Schema.String,
  /** What the provider named: a URL, a file or document id. */
  document: Schema.String,
  /** The approved source it resolved to (exact URL or declared document id). */
  source: Schema.String
}) {
  override get message() {
    return `The ${this.format} citation of ${JSON.stringify(this.document)} (${this.source}) names a whole document, not a quote: ` +
      'nothing in it can be verified, and answers.citations is "quote" (set it to "document" to accept document-level citations, labelled as such)'
  }
}

/**
 * Why a provider's document cannot be tied to an approved source:
 * - `redirect-url`: a Gemini grounding redirect URL (it names no page, only a redirect service);
 * - `undeclared-document-id`: an id (file id, document id) no manifest entry declares;
 * - `no-capture`: the approved source it names has no usable capture in this run;
 * - `tool-output`: a Cohere tool result, not a document;
 * - `search-result`: a Bedrock search-result location (search results are not part of the hand-off);
 * - `no-document`: the citation names no document at all.
 */
export const UnresolvableReason = Schema.Literal(
  "redirect-url",
  "undeclared-document-id",
  "no-capture",
  "tool-output",
  "search-result",
  "no-document"
)
export type UnresolvableReason = typeof UnresolvableReason.Type

/** The citation's document cannot be mapped to an approved source (exact URL or declared document id only). */
export class UnresolvableSource extends TaggedError<UnresolvableSource>()("UnresolvableSource", {
  format: Schema.String,
  document: Schema.String,
  reason: UnresolvableReason
}) {
  override get message() {
    const why: Record<UnresolvableReason, string> = {
      "redirect-url": "it is a grounding redirect URL, which never names an approved source",
      "undeclared-document-id": "no manifest entry declares this document id (answers.documentIds in pipeline.json)",
      "no-capture": "its approved source has no usable capture in this run",
      "tool-output": "it is a tool result, not a document",
      "search-result": "it points into a search result, which is not part of the documents hand-off",
      "no-document": "the citation names no document"
    }
    return `The ${this.format} citation of ${JSON.stringify(this.document.slice(0, 300))} cannot be tied to an approved source: ${why[this.reason]}`
  }
}

/** The provider citation failures (also members of `CitationError`). */
export const ProviderCitationError = Schema.Union(CoarseCitation, UnresolvableSource)
export type ProviderCitationError = typeof ProviderCitationError.Type
