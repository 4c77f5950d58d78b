/**
 * The search index a cached capture carries (internal/suffixArray.ts): built
 * once, on the first search that has room for it, then shared by every later
 * verification of that capture while it stays in the cache. Only the service's
 * verified-capture cache makes one; a one-off verification (the CLI) searches
 * linearly, because building costs about 200 ms per Mi code units against under
 * a millisecond for one linear scan, and the one-pass search already serves
 * many snippets at once (measured: docs/performance.md).
 *
 * @since 0.4.0
 */
import * as SuffixArray from "../internal/suffixArray.js"

/**
 * @since 0.4.0
 * @category models
 */
export interface CaptureIndex {
  /** The index, once built. */
  readonly ready: () => SuffixArray.SuffixIndex | undefined
  /** Builds it now (synchronously, linear in the text), once; later calls return the same index. */
  readonly build: () => SuffixArray.SuffixIndex
  /** Code units of the text it indexes: the build's cost. */
  readonly units: number
}

/**
 * Captures longer than this (in UTF-16 code units) are never indexed: one build blocks the event
 * loop for its duration (about 1.7 s at this size, measured), and the linear search of such a
 * capture is still bounded and sliced.
 */
export const maxIndexedUnits = 8 * 1024 * 1024

/** Bytes an index of `units` code units holds once built (4 per unit for the array, plus its range-minimum table). */
export const indexBytes = (units: number): number => SuffixArray.indexBytes(units)

/**
 * A lazy index of `text`: nothing is built until `build`; `onBuilt` is told its size once (the
 * cache counts it in its budget from then on).
 */
export const lazy = (text: string, onBuilt: (bytes: number) => void): CaptureIndex => {
  let index: SuffixArray.SuffixIndex | undefined
  return {
    units: text.length,
    ready: () => index,
    build: () => {
      if (index === undefined) {
        index = SuffixArray.build(text)
        onBuilt(index.bytes)
      }
      return index
    }
  }
}
