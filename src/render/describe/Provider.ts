/**
 * How the provider citation failures read in every rendering (title, fields, fix), beside
 * `Describe.citationError`'s other tags.
 *
 * @since 0.4.0
 */
import type { CoarseCitation, UnresolvableSource } from "../../errors/Provider.js"

interface Description {
  readonly title: string
  readonly fields: ReadonlyArray<readonly [name: string, value: string]>
  readonly fix: string
}

export const coarseCitation = (e: CoarseCitation): Description => ({
  title: "Document-level citation: no quote to verify",
  fields: [["format", e.format], ["document", e.document], ["source", e.source]],
  fix: 'The provider named a whole document, not a passage: nothing was verified. Use a quote-level format (Anthropic, Bedrock, ' +
    'Gemini retrieved text), or set answers.citations to "document" to accept such citations labelled "document-level: no quote verified".'
})

const unresolvableFix: Record<UnresolvableSource["reason"], string> = {
  "redirect-url": "A grounding redirect URL never names an approved source: ground on retrieved documents (retrievedContext) instead of web search.",
  "undeclared-document-id": "Declare the id for its source in pipeline.json (answers.documentIds), then rebuild the manifest.",
  "no-capture": "Capture the source again, or drop the claim.",
  "tool-output": "Cite a document of the hand-off, not a tool result.",
  "search-result": "Pass the run's documents (sources --format bedrock) rather than search results.",
  "no-document": "The citation must name a document of the hand-off."
}

export const unresolvableSource = (e: UnresolvableSource): Description => ({
  title: "Cited document is not an approved source",
  fields: [["format", e.format], ["document", e.document], ["reason", e.reason]],
  fix: unresolvableFix[e.reason]
})
