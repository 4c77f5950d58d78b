/**
 * Verification step 1, load: which citations name an approved source, and
 * each distinct approved capture read and rehashed once, however many
 * citations name it. Reads only through `CaptureStore.read`; with a
 * `CaptureCache` (the service's), a capture verified by an earlier
 * verification of the same store is taken from memory instead.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { type CaptureRecord, sha256Of, type SourceUrl, urlProblem } from "../Domain.js"
import { type CaptureReadError, type CaptureSignatureError, NotApproved } from "../Errors.js"
import { exported, perItem, spanAttributes } from "../internal/Spans.js"
import type { CaptureStoreShape } from "../store/CaptureStore.js"
import type { CaptureCacheShape, VerifiedCapture } from "./CaptureCache.js"
import type { Checkpoints } from "../anchor/Offsets.js"
import type { CaptureIndex } from "./CaptureIndex.js"
import type { PolicyShape } from "./Policy.js"
import type { CitationInput, Failures } from "./Records.js"

/** A capture as read once for this verification, with its text rehashed once. */
export type LoadedCapture = VerifiedCapture

/** A capture as loaded, or why it could not be read (or, under `verify.signatures: "require"`, trusted). */
export type Loaded = Either.Either<LoadedCapture, CaptureReadError | CaptureSignatureError>

const notApproved = (source: string): NotApproved => {
  const problem = urlProblem(source)
  return problem === undefined
    ? new NotApproved({ source, reason: "not-in-approved-set", detail: "not in the approved source set" })
    : new NotApproved({ source, reason: problem.reason, detail: `URL ${problem.detail}` })
}

/** The distinct approved sources the citations name; every other citation fails `NotApproved`. */
export const approve = (
  policy: PolicyShape,
  citations: ReadonlyArray<CitationInput>,
  failures: Failures
): ReadonlySet<SourceUrl> => {
  const approved = new Set<SourceUrl>()
  citations.forEach((citation, i) => {
    if (policy.sources.has(citation.source as SourceUrl)) approved.add(citation.source as SourceUrl)
    else failures[i]!.push(notApproved(citation.source))
  })
  return approved
}

const readCapture = (store: CaptureStoreShape, source: SourceUrl): Effect.Effect<LoadedCapture, CaptureReadError> =>
  Effect.map(store.read(source), (record: CaptureRecord) => ({ record, textSha256: sha256Of(record.text) }))

const loadCapture = (
  store: CaptureStoreShape,
  source: SourceUrl,
  cache: Option.Option<CaptureCacheShape>,
  spans: boolean
): Effect.Effect<Loaded> =>
  (Option.isSome(cache) ? cache.value.load(store, source, readCapture(store, source)) : readCapture(store, source)).pipe(
    // A span per capture only when spans are exported (internal/Spans.ts `exported`).
    perItem(spans, "Verifier.read", { [spanAttributes.source]: source }),
    Effect.either
  )

/**
 * Each distinct capture read and rehashed once. One after the other: the work is CPU-bound
 * (decode, hash), small reads are synchronous, and a fiber per capture costs more than it saves
 * (measured: docs/performance.md).
 */
export const loadCaptures = (
  store: CaptureStoreShape,
  sources: ReadonlySet<SourceUrl>,
  cache: Option.Option<CaptureCacheShape> = Option.none()
): Effect.Effect<Map<SourceUrl, Loaded>> =>
  Effect.flatMap(Effect.zip(stampedOnce(store, sources, cache), exported), ([stamped, spans]) =>
    Effect.map(
      Effect.forEach(sources, (source) => Effect.map(loadCapture(stamped, source, cache, spans), (capture) => [source, capture] as const)),
      (entries) => new Map(entries)
    ))

/**
 * With a cache and a store that stamps in bulk (`CaptureStoreShape.stamps`): every source stamped in
 * one call before the loads, which then take their stamps from it (one query, not one per capture).
 */
const stampedOnce = (
  store: CaptureStoreShape,
  sources: ReadonlySet<SourceUrl>,
  cache: Option.Option<CaptureCacheShape>
): Effect.Effect<CaptureStoreShape> =>
  Option.isNone(cache) || store.stamps === undefined || store.identity === undefined || sources.size === 0
    ? Effect.succeed(store)
    : Effect.map(store.stamps(sources), (found): CaptureStoreShape => ({
      ...store,
      stamp: (source) => Effect.succeed(found.get(source))
    }))

/** The search index of a loaded capture, when it has one (a cached capture). */
export const indexOf = (captures: ReadonlyMap<SourceUrl, Loaded>, source: SourceUrl): CaptureIndex | undefined => {
  const loaded = captures.get(source)
  return loaded !== undefined && Either.isRight(loaded) ? loaded.right.index : undefined
}

/** The span-offset checkpoints of a loaded capture, when it has them (a cached capture). */
export const checkpointsOf = (captures: ReadonlyMap<SourceUrl, Loaded>, source: SourceUrl): Checkpoints | undefined => {
  const loaded = captures.get(source)
  return loaded !== undefined && Either.isRight(loaded) ? loaded.right.checkpoints : undefined
}
