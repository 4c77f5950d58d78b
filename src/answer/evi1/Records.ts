/**
 * The EVI1 document model: what the parser produces and the binder and serializer read.
 * Records only: no logic, no imports of other parts.
 *
 * @since 0.1.0
 */

/** Body text, kept exactly (line breaks included). */
export interface TextSegment {
  readonly _tag: "Text"
  readonly text: string
}

/** A citation group and its claim id: `[1][2]{c1}`. */
export interface CiteSegment {
  readonly _tag: "Cite"
  readonly sources: ReadonlyArray<number>
  readonly claimId: string
  /** 1-based line of the marker. */
  readonly line: number
}

export type Segment = TextSegment | CiteSegment

/** One evidence line `cX|n|"quote"` (quote unescaped). */
export interface Evidence {
  readonly claimId: string
  readonly source: number
  readonly quote: string
  readonly line: number
}

export interface Appendix {
  /** The digest of a `MANIFEST` line, when present. */
  readonly manifest: string | undefined
  readonly evidence: ReadonlyArray<Evidence>
  /** What follows `END_EVI1` (a line break, blank lines): kept so that serializing is exact. */
  readonly trailing: string
}

/** A structurally valid EVI1 text: the body as segments, and the appendix if there is one. */
export interface Document {
  readonly body: ReadonlyArray<Segment>
  readonly appendix: Appendix | undefined
}
