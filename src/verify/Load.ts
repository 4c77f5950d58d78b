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
import { yieldToTimers } from "./Search.js"
import { exported, perItem, spanAttributes } from "../internal/Spans.js"
import { type ReadAheadFor, readAheadOf, type ReadNow, readNowOf } from "../internal/readNow.js"
import { syncReadLimit } from "../internal/safeRead.js"
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

/**
 * A capture read for this verification alone (not from the cache). A class, not an object literal:
 * V8 may allocate a literal's objects straight into the old generation once enough of them have
 * outlived a young-generation collection (allocation-site pretenuring). These die with the
 * verification, and from the old generation each would keep its young record and text alive through
 * the collections until the next full one, which then copy and promote them (docs/performance.md).
 */
class ReadCapture implements LoadedCapture {
  constructor(readonly record: CaptureRecord, readonly textSha256: string) {}
}

const readCapture = (store: CaptureStoreShape, source: SourceUrl): Effect.Effect<LoadedCapture, CaptureReadError> =>
  Effect.map(store.read(source), (record: CaptureRecord) => new ReadCapture(record, sha256Of(record.text)))

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
 * (measured: docs/performance.md). With a cache, the captures kept under their current stamps are
 * taken in one step (`CaptureCacheShape.cached`, no effect per capture); only the others are loaded.
 */
export const loadCaptures = (
  store: CaptureStoreShape,
  sources: ReadonlySet<SourceUrl>,
  cache: Option.Option<CaptureCacheShape> = Option.none()
): Effect.Effect<Map<SourceUrl, Loaded>> =>
  Effect.flatMap(Effect.zip(stampsOnce(store, sources, cache), exported), ([stamps, spans]) => {
    // Without a cache or spans, a store with a synchronous read (small records on disk) is read
    // without an effect per capture.
    const now = Option.isNone(cache) && !spans ? readNowOf(store.read) : undefined
    if (now !== undefined) return readAllNow(now, sources, readAheadOf(store.read))
    // The loads take their stamps from the bulk call too (one query, not one per capture).
    const stamped: CaptureStoreShape = stamps === undefined || store.stamps === undefined
      ? store
      : { ...store, stamp: (source) => Effect.succeed(stamps(source)) }
    const loaded = new Map<SourceUrl, Loaded>()
    const toLoad: Array<SourceUrl> = []
    // With spans exported, every capture goes through `load` and gets its own span.
    const kept = Option.isSome(cache) && stamps !== undefined && !spans ? cache.value : undefined
    for (const source of sources) {
      const stamp = kept === undefined ? undefined : stamps!(source)
      const hit = stamp === undefined ? undefined : kept!.cached(store, source, stamp)
      if (hit === undefined) toLoad.push(source)
      else loaded.set(source, Either.right(hit))
    }
    if (toLoad.length === 0) return Effect.succeed(loaded)
    return Effect.map(
      Effect.forEach(toLoad, (source) => Effect.map(loadCapture(stamped, source, cache, spans), (capture) => [source, capture] as const)),
      (entries) => {
        for (const [source, capture] of entries) loaded.set(source, capture)
        // In the order the sources were named, as without a cache.
        return loaded.size === toLoad.length ? loaded : new Map([...sources].map((source) => [source, loaded.get(source)!] as const))
      }
    )
  })

const loadedOf = (read: Either.Either<CaptureRecord, CaptureReadError>): Loaded =>
  Either.isLeft(read) ? Either.left(read.left) : Either.right(new ReadCapture(read.right, sha256Of(read.right.text)))

/** Text read synchronously between yields to the timers, so that the deadline can fire during a long run of reads. */
const syncTextBetweenYields = 8 * 1024 * 1024

/** A record whose read has started (a large record, a v2 record's body) and is not yet joined. */
interface Arriving {
  readonly source: SourceUrl
  readonly read: Effect.Effect<CaptureRecord, CaptureReadError>
}

/**
 * `loadCaptures` without a cache, through the store's synchronous read: in the sources' order, with
 * an effect only for a capture that is not read at once (a large record, a v2 record's body), and a
 * yield to the timers after every `syncTextBetweenYields` code units read (those of records read by
 * an effect included). Such an effect is run only once the next one is in hand: the store has
 * already started a large record's read (internal/readNow.ts), so its bytes arrive while the one
 * before it is decoded and hashed. At most two are in flight. With `ahead`, the store may read the
 * records ahead on another thread (internal/readAhead.ts), ended whatever way this ends.
 */
const readAllNow = (
  storeReadNow: ReadNow,
  sources: ReadonlySet<SourceUrl>,
  aheadFor?: ReadAheadFor
): Effect.Effect<Map<SourceUrl, Loaded>> => {
  // Set when the walk starts: the batch read ahead, if the store starts one, and its reader.
  let readNow = storeReadNow
  const loaded = new Map<SourceUrl, Loaded>()
  const iterator = sources.values()
  let joined = false
  // Code units read since the last yield to the timers, joined records' included.
  let read = 0
  // A record refused late (read whole, then not decoded) cost up to a whole read of its size.
  const count = (done: Loaded) => void (read += Either.isRight(done) ? done.right.record.text.length : syncReadLimit)
  const join = ({ read: reading, source }: Arriving): Effect.Effect<void> =>
    Effect.map(Effect.either(reading), (done) => {
      joined = true
      const capture = loadedOf(done)
      loaded.set(source, capture)
      count(capture)
    })
  // A record joined late was set after the ones read at once behind it: the map in the sources' order again.
  const inOrder = () => joined ? new Map([...sources].map((source) => [source, loaded.get(source)!] as const)) : loaded
  const next = (ahead: Arriving | undefined): Effect.Effect<Map<SourceUrl, Loaded>> => {
    if (read >= syncTextBetweenYields) {
      read = 0
      return Effect.flatMap(yieldToTimers, () => next(ahead))
    }
    for (let item = iterator.next(); item.done !== true; item = iterator.next()) {
      const source = item.value
      const now = readNow(source)
      if (!Either.isEither(now)) {
        const started: Arriving = { source, read: now }
        return ahead === undefined ? next(started) : Effect.flatMap(join(ahead), () => next(started))
      }
      const capture = loadedOf(now)
      loaded.set(source, capture)
      count(capture)
      if (read >= syncTextBetweenYields) return next(ahead)
    }
    return ahead === undefined ? Effect.sync(inOrder) : Effect.map(join(ahead), inOrder)
  }
  return Effect.suspend(() => {
    const ahead = aheadFor?.([...sources])
    if (ahead === undefined) return next(undefined)
    readNow = ahead.readNow
    return Effect.ensuring(next(undefined), Effect.sync(ahead.end))
  })
}

/**
 * With a cache, each source's stamp as `CaptureCacheShape.load` would take it, asked once before
 * the loads: from the store's `stamps` in one call (one query or one `lstat` each, not an effect
 * per capture); `""` for every source of a store with no stamps (its captures are immutable by
 * contract). `undefined` without a cache, or for a store that stamps only one source at a time.
 */
const stampsOnce = (
  store: CaptureStoreShape,
  sources: ReadonlySet<SourceUrl>,
  cache: Option.Option<CaptureCacheShape>
): Effect.Effect<((source: SourceUrl) => string | undefined) | undefined> => {
  if (Option.isNone(cache) || store.identity === undefined || sources.size === 0) return Effect.succeed(undefined)
  if (store.stamps !== undefined) return Effect.map(store.stamps(sources), (found) => (source: SourceUrl) => found.get(source))
  return Effect.succeed(store.stamp === undefined ? () => "" : undefined)
}

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

/** Captures `loadWarm` found; `take` counts them as the cache's hits once the caller answers with them. */
export interface WarmLoad {
  readonly loaded: Map<SourceUrl, Loaded>
  readonly take: () => void
}

/**
 * `loadCaptures` without an effect, when every source is warm: each one's stamp taken now (the
 * store's `stampsNow`: an `lstat` of each record file, taken after the request arrived) and its
 * capture kept under exactly that stamp, with its index built. `undefined` when any is not (no
 * cache, a store without synchronous stamps, nothing to stamp, a miss, a changed stamp, an index
 * not built): the caller then takes the general path, which stamps and loads again. Nothing is counted as a hit (nor touched) until
 * `take`: a caller that gives up takes the general path, which counts each capture itself, once.
 */
export const loadWarm = (
  store: CaptureStoreShape,
  sources: ReadonlySet<SourceUrl>,
  cache: Option.Option<CaptureCacheShape>
): WarmLoad | undefined => {
  if (Option.isNone(cache) || store.identity === undefined || store.stampsNow === undefined || sources.size === 0) return undefined
  const stamps = store.stampsNow(sources)
  if (stamps.size !== sources.size) return undefined
  const loaded = new Map<SourceUrl, Loaded>()
  for (const source of sources) {
    const hit = cache.value.cached(store, source, stamps.get(source)!, false)
    if (hit === undefined || hit.index?.ready() === undefined) return undefined
    loaded.set(source, Either.right(hit))
  }
  const take = () => {
    for (const source of sources) cache.value.cached(store, source, stamps.get(source)!)
  }
  return { loaded, take }
}

/** `answer` over the captures `loadWarm` found, which are counted as the cache's hits only when it answers. */
export const answeredWarm = <A>(warm: WarmLoad | undefined, answer: (loaded: Map<SourceUrl, Loaded>) => A | undefined): A | undefined => {
  const answered = warm === undefined ? undefined : answer(warm.loaded)
  if (answered !== undefined) warm!.take()
  return answered
}
