/**
 * The fixture store of the verified-capture cache's tests (test/captureCache.test.ts,
 * test/captureCacheConcurrent.test.ts, test/postgresCache.test.ts): plain-text records of one
 * sentence repeated, citations of them, a Verifier over a store with the cache as the service
 * provides it, and a store wrapper that counts reads and bulk stamps.
 */
import { Effect, Layer, Option } from "effect"
import type * as Config from "../../src/Config.js"
import { type CaptureRecord, makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../../src/Domain.js"
import * as CaptureStore from "../../src/store/CaptureStore.js"
import * as CaptureCache from "../../src/verify/CaptureCache.js"
import * as Policy from "../../src/verify/Policy.js"
import * as Verifier from "../../src/verify/Verifier.js"

export const accessedAt = "2026-11-30T00:00:00.000Z" as Rfc3339Utc

/** The text of source `i`: one sentence repeated (40 times by default, about 2.3 KB). */
export const textOf = (i: number, repeat = 40) => `Source ${i}: net sales rose 4% to 1,180 units in Q3 2026. `.repeat(repeat)

/** Sources named `https://HOST/PREFIX${i}.txt` (each test file its own, so no two share a cache entry by accident). */
export const fixtureSources = (host: string, prefix = "source-") => {
  const sourceOf = (i: number) => `https://${host}/${prefix}${i}.txt` as SourceUrl
  /** Source `i`'s plain-text record, with `text` (default `textOf(i)`). */
  const recordOf = (i: number, text: string = textOf(i)) =>
    makeCaptureRecord({ source: sourceOf(i), text, accessedAt, contentType: "text/plain" })
  return { sourceOf, recordOf }
}

/** A citation of 32 characters of the record's text, naming `sha256` (default: the record's own digest). */
export const citationOf = (record: CaptureRecord, sha256: string = record.sha256) =>
  ({ source: record.source, captureSha256: sha256, snippet: record.text.slice(8, 40) }) as Verifier.CitationInput

/** A Verifier over `store` for `sources`, with `cache` when given (as the service provides it). */
export const verifierFor = (
  store: CaptureStore.CaptureStoreShape,
  sources: ReadonlyArray<SourceUrl>,
  cache?: CaptureCache.CaptureCacheShape
) =>
  Verifier.make.pipe(
    Effect.provide(Layer.merge(
      Layer.succeed(CaptureStore.CaptureStore, store),
      Policy.layer({ sources, labels: ["fact_0"] } as unknown as Config.PipelineConfig)
    )),
    CaptureCache.provideOption(Option.fromNullable(cache))
  )

/**
 * A store that counts its reads and bulk stamps (a fault-injection wrapper: same identity, stamp and
 * stamps, so the cache sees the same store); `tamper` alters each record read.
 */
export const counting = (store: CaptureStore.CaptureStoreShape, tamper?: (record: CaptureRecord) => CaptureRecord) => {
  const reads: Array<string> = []
  let stamps = 0
  const wrapped: CaptureStore.CaptureStoreShape = {
    ...store,
    read: (source) =>
      Effect.suspend(() => {
        reads.push(source)
        return tamper === undefined ? store.read(source) : Effect.map(store.read(source), tamper)
      }),
    stamps: store.stamps === undefined ? undefined : (sources) => Effect.suspend(() => (stamps++, store.stamps!(sources)))
  }
  return { store: wrapped, reads, stamps: () => stamps }
}
