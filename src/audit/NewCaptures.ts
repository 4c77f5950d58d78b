/**
 * Audit steps 2 and 3, the new run: each distinct source read once (for the
 * digest the new Verifier is asked about), then every excerpt searched
 * exactly by the new Verifier, inside the old heading path or page first,
 * then anywhere.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { CaptureRecord, SourceUrl } from "../Domain.js"
import type { CaptureReadError, VerificationTimeout } from "../Errors.js"
import type { CaptureStoreShape } from "../store/CaptureStore.js"
import type * as Verifier from "../verify/Verifier.js"
import type { Item } from "./Baseline.js"
import type { Location } from "./Records.js"

/** Each source's new capture, or why it could not be read. */
export type NewRecords = ReadonlyMap<string, Either.Either<CaptureRecord, CaptureReadError>>

/** Each distinct source of the items read once from the new run. */
export const readNewRun = (newStore: CaptureStoreShape, items: ReadonlyArray<Item>): Effect.Effect<NewRecords> =>
  Effect.gen(function*() {
    const newRecords = new Map<string, Either.Either<CaptureRecord, CaptureReadError>>()
    for (const item of items) {
      if (!newRecords.has(item.source)) {
        newRecords.set(item.source, yield* Effect.either(newStore.read(item.source as SourceUrl)))
      }
    }
    return newRecords
  })

/**
 * Exact search in the new captures, by item index (items whose new capture was read): inside the old
 * heading path / page first; an item that fails only its anchor there is searched again anywhere.
 */
export const searchNewRun = (
  newVerifier: Verifier.VerifierShape,
  items: ReadonlyArray<Item>,
  newRecords: NewRecords,
  oldLocations: ReadonlyArray<Location>
): Effect.Effect<ReadonlyMap<number, Verifier.CitationResult>, VerificationTimeout> =>
  Effect.gen(function*() {
    const searchable = items.flatMap((item, i) => {
      const record = newRecords.get(item.source)!
      return Either.isRight(record) ? [i] : []
    })
    const inputOf = (i: number, anchored: boolean): Verifier.CitationInput => {
      const item = items[i]!
      const record = Either.getOrThrow(newRecords.get(item.source)!)
      const where = oldLocations[i]!
      return {
        source: item.source,
        captureSha256: record.sha256,
        snippet: item.snippet,
        ...(anchored ? { page: where.page, heading: where.heading } : {})
      }
    }
    const first = yield* newVerifier.checkCitations(searchable.map((i) => inputOf(i, true)))
    const results = new Map<number, Verifier.CitationResult>()
    const retry: Array<number> = []
    searchable.forEach((i, k) => {
      const result = first.results[k]!
      if (Either.isLeft(result) && result.left.some((e) => e._tag === "AnchorMismatch")) retry.push(i)
      else results.set(i, result)
    })
    if (retry.length > 0) {
      const second = yield* newVerifier.checkCitations(retry.map((i) => inputOf(i, false)))
      retry.forEach((i, k) => results.set(i, second.results[k]!))
    }
    return results
  })
