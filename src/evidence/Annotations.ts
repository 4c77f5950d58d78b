/**
 * W3C Web Annotations (https://www.w3.org/TR/annotation-model/, JSON-LD with the context
 * `http://www.w3.org/ns/anno.jsonld`) of a verified report's or answer's citations: one annotation per
 * verified citation, whose body is the claim (a TextualBody) and whose target is the source with the
 * selectors the Verifier computed from the capture text (src/anchor/Selectors.ts):
 *
 * - TextQuoteSelector: `exact` is the capture text at the span, `prefix` / `suffix` up to 32 code
 *   points around it;
 * - TextPositionSelector: Unicode code points of the capture text, end exclusive: the model counts
 *   characters, not UTF-16 code units or bytes, so a reader in any language finds the same span.
 *
 * The selectors describe the capture text (the extraction, identified by its SHA-256, which a WARC
 * export carries as a `conversion` record), and `state` names when the source was captured. Only
 * verified citations become annotations: a retracted one was never evidence.
 *
 * @since 0.3.0
 */
import type { VerifiedAnswer } from "../answer/Records.js"
import type { Evidence, TextPositionSelector, TextQuoteSelector } from "../Domain.js"
import { isVerifiedCitation } from "../Domain.js"
import { AnnotationSelectorMissing } from "../Errors.js"
import type { VerifiedReport } from "../verify/VerifiedReport.js"
import { uuidOf } from "../internal/uuid.js"

/** The W3C Web Annotation context. */
export const annoContext = "http://www.w3.org/ns/anno.jsonld"

/** citegate's terms beside the W3C ones (URNs: they name, they do not resolve). */
export const citegateContext = {
  captureSha256: { "@id": "urn:citegate:vocab:captureSha256" },
  citation: { "@id": "urn:citegate:vocab:citation" }
} as const

export interface Annotation {
  readonly id: string
  readonly type: "Annotation"
  readonly motivation: "commenting"
  /** Where the citation is in the report (`facts[3]`) or answer (`claims[0].citations[1]`). */
  readonly citation: string
  readonly body: { readonly type: "TextualBody"; readonly value: string; readonly format: "text/plain" }
  readonly target: {
    readonly type: "SpecificResource"
    readonly source: string
    readonly state: { readonly type: "TimeState"; readonly sourceDate: string }
    readonly selector: readonly [TextQuoteSelector, TextPositionSelector]
    readonly captureSha256: string
  }
}

export interface AnnotationCollection {
  readonly "@context": readonly [typeof annoContext, typeof citegateContext]
  readonly id: string
  readonly type: "AnnotationCollection"
  readonly label: string
  readonly total: number
  readonly first: { readonly id: string; readonly type: "AnnotationPage"; readonly items: ReadonlyArray<Annotation> }
}

interface Cited {
  readonly citation: string
  readonly claim: string
  readonly source: string
  readonly captureSha256: string
  readonly evidence: Evidence
}

const annotation = (cited: Cited): Annotation | AnnotationSelectorMissing => {
  const { evidence } = cited
  if (evidence.selector === undefined) {
    return new AnnotationSelectorMissing({ source: cited.source, citation: cited.citation })
  }
  const [quote, position] = evidence.selector
  return {
    id: uuidOf(`annotation ${cited.citation} ${cited.source} ${cited.captureSha256} ${position.start} ${position.end} ${cited.claim}`),
    type: "Annotation",
    motivation: "commenting",
    citation: cited.citation,
    body: { type: "TextualBody", value: cited.claim, format: "text/plain" },
    target: {
      type: "SpecificResource",
      source: cited.source,
      state: { type: "TimeState", sourceDate: evidence.accessedAt },
      selector: [
        { type: "TextQuoteSelector", exact: quote.exact, prefix: quote.prefix, suffix: quote.suffix },
        { type: "TextPositionSelector", start: position.start, end: position.end }
      ],
      captureSha256: cited.captureSha256
    }
  }
}

const collection = (label: string, citations: ReadonlyArray<Cited>): AnnotationCollection | AnnotationSelectorMissing => {
  const items: Array<Annotation> = []
  for (const cited of citations) {
    const item = annotation(cited)
    if (item instanceof AnnotationSelectorMissing) return item
    items.push(item)
  }
  const id = uuidOf(`collection ${label} ${items.map((item) => item.id).join(" ")}`)
  return {
    "@context": [annoContext, citegateContext],
    id,
    type: "AnnotationCollection",
    label,
    total: items.length,
    first: { id: uuidOf(`page 1 ${id}`), type: "AnnotationPage", items }
  }
}

/**
 * The annotations of a verified report: one per verified fact (its label is the claim).
 *
 * @since 0.3.0
 * @category constructors
 */
export const fromReport = (report: VerifiedReport): AnnotationCollection | AnnotationSelectorMissing =>
  collection(
    "citegate verified report",
    report.facts.filter(isVerifiedCitation).map((entry) => ({
      citation: `facts[${entry.index}]`,
      claim: entry.fact.label,
      source: entry.fact.source,
      captureSha256: entry.fact.captureSha256,
      evidence: entry.evidence
    }))
  )

/**
 * The annotations of a verified answer: one per verified citation of each grounded claim.
 *
 * @since 0.3.0
 * @category constructors
 */
export const fromAnswer = (answer: VerifiedAnswer): AnnotationCollection | AnnotationSelectorMissing =>
  collection(
    "citegate verified answer",
    answer.claims.flatMap((claim) =>
      claim.citations.map((c) => ({
        citation: `claims[${claim.index}].citations[${c.index}]`,
        claim: claim.text,
        source: c.citation.source,
        captureSha256: c.citation.captureSha256,
        evidence: c.evidence
      }))
    )
  )

/** The JSON-LD text (JSON escapes every control character; nothing from a source is interpreted). */
export const render = (annotations: AnnotationCollection): string => JSON.stringify(annotations, null, 2) + "\n"
