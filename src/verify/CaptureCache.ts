/**
 * Verified captures kept in memory between verifications (the service's
 * `server.cacheBytes`). A capture enters the cache only after its first full
 * check: read through the store (strict decode, record checks, a v2 body
 * checked against its digest) and its text rehashed to the digest the record
 * states. Later verifications of the same (store, run, source) take it from
 * memory: no read, no hash. A failure is never cached, and neither is a
 * capture whose text does not hash to its digest. The report's own digest is
 * still compared with the capture's on every verification (step 2, Digests).
 *
 * Keys come from the store contract: `CaptureStoreShape.identity` names the
 * backend, location and run (a store without one is never cached), and
 * `CaptureStoreShape.stamp`, when the store has it, is taken before each use
 * and before each read: a capture whose stamp changed (the filesystem store:
 * its record file replaced, rewritten, resized or chmodded) is read and
 * checked again. What this does and does not detect is in
 * docs/threat-model.md ("Verified-capture cache").
 *
 * Concurrent misses of one capture (a cold cache under load) share one read:
 * one load in flight per (key, stamp), its outcome given to the loads waiting
 * for it and to no later one.
 *
 * Bounded by bytes, least recently used first out. A run's manifest can be
 * kept in the same budget once the run is finished (`manifest`).
 *
 * @since 0.3.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { CaptureRecord, SourceUrl } from "../Domain.js"
import type { CaptureReadError } from "../Errors.js"
import type { Manifest } from "../Manifest.js"
import type { CaptureStoreShape } from "../store/CaptureStore.js"
import * as Offsets from "../anchor/Offsets.js"
import * as CaptureIndex from "./CaptureIndex.js"

/** A capture as read and rehashed once: its record and the SHA-256 of its text. */
export interface VerifiedCapture {
  readonly record: CaptureRecord
  readonly textSha256: string
  /**
   * Its search index, built on first use, when the capture is kept in a cache with room for the
   * index too (CaptureIndex.ts); absent otherwise, and the search is linear.
   *
   * @since 0.4.0
   */
  readonly index?: CaptureIndex.CaptureIndex | undefined
  /**
   * Code-point and UTF-8 counts every few KiB of its text (anchor/Offsets.ts), made when the capture
   * is kept in a cache, so each verified span's offsets cost a short scan instead of one from the
   * start of the text; absent otherwise.
   *
   * @since 0.5.0
   */
  readonly checkpoints?: Offsets.Checkpoints | undefined
}

/**
 * @since 0.3.0
 * @category models
 */
export interface CaptureCacheStats {
  readonly maxBytes: number
  readonly bytes: number
  readonly entries: number
  readonly hits: number
  readonly misses: number
  readonly evictions: number
  /** Loads that waited for the same capture's read already in flight (a cold cache under concurrency) instead of reading it again. */
  readonly merged: number
}

/**
 * @since 0.3.0
 * @category models
 */
export interface CaptureCacheShape {
  /**
   * The capture of `source` in `store`: from memory when it was verified before and its stamp is
   * unchanged, else `read` (which reads and rehashes it), kept when it succeeds and its text hashes
   * to its digest.
   */
  readonly load: (
    store: CaptureStoreShape,
    source: SourceUrl,
    read: Effect.Effect<VerifiedCapture, CaptureReadError>
  ) => Effect.Effect<VerifiedCapture, CaptureReadError>
  /**
   * The capture of `source` in `store` when it is kept under exactly `stamp` (taken just now with
   * the store's `stamp` or `stamps`), counted as a hit, without an effect; `undefined` otherwise,
   * and `load` decides (it reads, or waits for a read in flight). A hit of the common case costs no
   * fiber work: a verification of many cached captures takes them all in one step. With `count`
   * false, a look only: neither counted nor touched (a caller that may still give up on the capture,
   * and then count it through another path, calls again with `count` true once it takes it).
   *
   * @since 0.5.0
   */
  readonly cached: (store: CaptureStoreShape, source: SourceUrl, stamp: string, count?: boolean) => VerifiedCapture | undefined
  /**
   * A finished run's manifest under `key`: from memory, else `make`, kept when `keep` says the
   * manifest is final (the caller knows whether the run can still change).
   */
  readonly manifest: <E, R>(
    key: string,
    make: Effect.Effect<Manifest, E, R>,
    keep: (manifest: Manifest) => boolean
  ) => Effect.Effect<Manifest, E, R>
  readonly stats: Effect.Effect<CaptureCacheStats>
}

/**
 * @since 0.3.0
 * @category tags
 */
export class CaptureCache extends Context.Tag("citegate/CaptureCache")<CaptureCache, CaptureCacheShape>() {}

/**
 * @since 0.3.0
 * @category models
 */
export interface CaptureCacheOptions {
  /**
   * Bytes of capture text, search indexes, span-offset checkpoints and manifests kept at most (text
   * estimated as UTF-16: 2 per code unit; an index, once built, about 4.9 per code unit; checkpoints
   * 12 bytes per 2,048 code units); 0 turns the cache off.
   */
  readonly maxBytes: number
}

type Entry =
  // `bytes` grows once, when the capture's index is built.
  | { readonly _tag: "capture"; bytes: number; readonly stamp: string; readonly value: VerifiedCapture }
  | { readonly _tag: "manifest"; readonly bytes: number; readonly value: Manifest }

/** What an entry holds in memory, over-estimated: 2 bytes per code unit of text, plus the record's other fields. */
const captureBytes = (record: CaptureRecord): number =>
  2 * record.text.length + 2 * JSON.stringify({ ...record, text: "" }).length + 256

const manifestBytes = (manifest: Manifest): number => 2 * JSON.stringify(manifest).length + 256

/** Entries least recently used first, bounded by bytes: the bookkeeping behind `make`. */
const makeEntries = (maxBytes: number) => {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, Entry>()
  const counts = { bytes: 0, evictions: 0 }

  const drop = (key: string) => {
    const entry = entries.get(key)
    if (entry === undefined) return
    entries.delete(key)
    counts.bytes -= entry.bytes
  }

  /** Least recently used first out until the budget holds, never `keep` (the entry just used). */
  const evict = (keep: string) => {
    for (const [oldest] of entries) {
      if (counts.bytes <= maxBytes) break
      if (oldest === keep) continue
      drop(oldest)
      counts.evictions++
    }
  }

  const remember = (key: string, entry: Entry) => {
    drop(key)
    // Larger than the whole budget: never kept (it would evict everything and then itself).
    if (entry.bytes > maxBytes) return
    entries.set(key, entry)
    counts.bytes += entry.bytes
    evict(key)
  }

  /** An index built for the entry under `key`: counted from now on, if the entry is still the one kept. */
  const grow = (key: string, value: VerifiedCapture, extra: number) => {
    const entry = entries.get(key)
    if (entry === undefined || entry._tag !== "capture" || entry.value !== value) return
    entry.bytes += extra
    counts.bytes += extra
    evict(key)
  }

  /**
   * The capture as kept: with its span-offset checkpoints, and with a lazy index when text and index
   * fit the budget together and the capture is not too long to index; the index is counted once built.
   */
  const keepCapture = (key: string, stamp: string, capture: VerifiedCapture): VerifiedCapture => {
    const checkpoints = Offsets.checkpoints(capture.record.text)
    const size = captureBytes(capture.record) + checkpoints.bytes
    const units = capture.record.text.length
    let value: VerifiedCapture = { record: capture.record, textSha256: capture.textSha256, checkpoints }
    if (units <= CaptureIndex.maxIndexedUnits && size + CaptureIndex.indexBytes(units) <= maxBytes) {
      const withIndex: VerifiedCapture = {
        record: capture.record,
        textSha256: capture.textSha256,
        checkpoints,
        index: CaptureIndex.lazy(capture.record.text, (extra) => grow(key, withIndex, extra))
      }
      value = withIndex
    }
    remember(key, { _tag: "capture", bytes: size, stamp, value })
    return value
  }

  const touch = (key: string, entry: Entry) => {
    entries.delete(key)
    entries.set(key, entry)
  }

  return { entries, counts, drop, remember, keepCapture, touch }
}

/**
 * A cache of `options.maxBytes`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: CaptureCacheOptions): CaptureCacheShape => {
  const maxBytes = Math.max(0, options.maxBytes)
  const { counts, drop, entries, keepCapture, remember, touch } = makeEntries(maxBytes)
  let hits = 0
  let misses = 0
  let merged = 0
  // One read in flight per (key, stamp): concurrent misses of the same capture wait for it. Its
  // outcome goes to those waiters only (a failure is never kept); the entry leaves when it settles.
  const inflight = new Map<string, Deferred.Deferred<Exit.Exit<VerifiedCapture, CaptureReadError>>>()

  const keyOf = (identity: string, source: SourceUrl) => `capture\u0000${identity}\u0000${source}`

  const cached: CaptureCacheShape["cached"] = (store, source, stamp, count = true) => {
    if (maxBytes === 0 || store.identity === undefined) return undefined
    const key = keyOf(store.identity, source)
    const entry = entries.get(key)
    if (entry === undefined || entry._tag !== "capture" || entry.stamp !== stamp) return undefined
    if (count) {
      hits++
      touch(key, entry)
    }
    return entry.value
  }

  const load: CaptureCacheShape["load"] = (store, source, read) => {
    const identity = store.identity
    if (maxBytes === 0 || identity === undefined) return read
    const key = keyOf(identity, source)
    const stamped = store.stamp === undefined ? Effect.succeed<string | undefined>("") : store.stamp(source)
    return Effect.flatMap(stamped, (stamp) => {
      // Nothing to stamp (the record is not there, or not a plain file): read, which says why; keep nothing.
      if (stamp === undefined) {
        drop(key)
        return read
      }
      const entry = entries.get(key)
      if (entry !== undefined && entry._tag === "capture" && entry.stamp === stamp) {
        hits++
        touch(key, entry)
        return Effect.succeed(entry.value)
      }
      const flight = `${key}\u0000${stamp}`
      const pending = inflight.get(flight)
      if (pending !== undefined) {
        merged++
        // The reader was interrupted (its request went away): load again, as the first reader or a waiter.
        return Effect.flatMap(Deferred.await(pending), (exit) =>
          Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? load(store, source, read) : exit)
      }
      misses++
      const done = Deferred.unsafeMake<Exit.Exit<VerifiedCapture, CaptureReadError>>(FiberId.none)
      inflight.set(flight, done)
      return Effect.map(read, (capture) => {
        // Only a capture whose text hashes to its stated digest (a passing first check).
        if (capture.textSha256 !== capture.record.sha256) {
          drop(key)
          return capture
        }
        return keepCapture(key, stamp, capture)
      }).pipe(Effect.onExit((exit) =>
        Effect.sync(() => {
          if (inflight.get(flight) === done) inflight.delete(flight)
          Deferred.unsafeDone(done, Effect.succeed(exit))
        })
      ))
    })
  }

  const manifest: CaptureCacheShape["manifest"] = (key, makeManifest, keep) =>
    Effect.suspend(() => {
      const full = `manifest\u0000${key}`
      const entry = maxBytes === 0 ? undefined : entries.get(full)
      if (entry !== undefined && entry._tag === "manifest") {
        hits++
        touch(full, entry)
        return Effect.succeed(entry.value)
      }
      if (maxBytes > 0) misses++
      return Effect.tap(makeManifest, (value) =>
        Effect.sync(() => {
          if (maxBytes > 0 && keep(value)) remember(full, { _tag: "manifest", bytes: manifestBytes(value), value })
        }))
    })

  return CaptureCache.of({
    load,
    cached,
    manifest,
    stats: Effect.sync(() => ({ maxBytes, bytes: counts.bytes, entries: entries.size, hits, misses, evictions: counts.evictions, merged }))
  })
}

/**
 * Runs `effect` with the cache when there is one (`Effect.serviceOption(CaptureCache)`), else as it is.
 *
 * @since 0.3.0
 * @category combinators
 */
export const provideOption = (cache: Option.Option<CaptureCacheShape>) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, CaptureCache>> =>
  Option.isSome(cache)
    ? Effect.provideService(effect, CaptureCache, cache.value)
    : effect as Effect.Effect<A, E, Exclude<R, CaptureCache>>

/**
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: CaptureCacheOptions): Layer.Layer<CaptureCache> => Layer.sync(CaptureCache, () => make(options))
