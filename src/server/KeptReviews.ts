/**
 * The recorded human review a verified report is shown with (`humanReview`), read from the run's
 * review log once and kept while the log does not change, not read again on every verification
 * (a `stat` of the run directory, a `readdir` of its `reviews/` and every decision file per request).
 *
 * Kept only for a run whose Runs service can stamp its log (`Runs.reviewStamp`): the filesystem's
 * `reviews/` directory, or, for replicas over PostgreSQL, the versions of the run's decision rows,
 * taken by `Runs.get` in the same query as the run (PostgresRuns.ts). The stamp is taken before the
 * log is read, so an append that lands during the read changes the stamp and the next request reads
 * again. Every append links a new name into `reviews/`, which changes the directory's modification
 * and change times; a stamp whose times are less than `settleMs` old is not trusted (file system
 * times are coarse: two appends within one clock tick can leave the same time), so a log that has
 * just changed is read again until it has been still for `settleMs`. A PostgreSQL stamp has no clock
 * in it (`changedAt` undefined) and is kept from the first read. A failed read (an unreadable or
 * corrupt log) is never kept. What this cannot see: docs/threat-model.md, "Kept review logs".
 *
 * Bounded: at most `maxDecisions` decisions kept over all runs (least recently used run first
 * out); a log holding more than that is read per request.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import type { DecisionReadError, RunNotFound } from "../Errors.js"
import { type LoggedDecision, ReviewLog } from "../store/ReviewLog.js"
import { type RunView, Runs } from "./Runs.js"

/**
 * @since 0.4.0
 * @category models
 */
export interface KeptReviewsStats {
  /** Logs read (each a list of the run's log). */
  readonly reads: number
  /** Requests answered from a kept log. */
  readonly hits: number
  readonly entries: number
  readonly decisions: number
}

/**
 * @since 0.4.0
 * @category models
 */
export interface KeptReviewsShape {
  /** Every decision of the run's log, in append order: the kept ones while the log is unchanged. */
  readonly list: (run: RunView) => Effect.Effect<ReadonlyArray<LoggedDecision>, DecisionReadError | RunNotFound>
  /** `list` when it would answer from a kept log (counted as a hit), without an effect; `undefined` otherwise (nothing counted). */
  readonly listKept: (run: RunView) => ReadonlyArray<LoggedDecision> | undefined
  readonly stats: Effect.Effect<KeptReviewsStats>
}

/** Decisions kept at most over all runs (each at most a few kilobytes). */
export const maxDecisions = 8192

/** How long a log must have been still before a read of it is kept (ms). */
export const settleMs = 2_000

interface Kept {
  readonly stamp: string
  readonly decisions: ReadonlyArray<LoggedDecision>
}

/**
 * @since 0.4.0
 * @category constructors
 */
export const make = (options: { readonly maxDecisions?: number; readonly settleMs?: number } = {}) =>
  Effect.gen(function*() {
    const runs = yield* Runs
    const bound = Math.max(0, options.maxDecisions ?? maxDecisions)
    const settle = options.settleMs ?? settleMs
    // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
    const entries = new Map<string, Kept>()
    const counts = { reads: 0, hits: 0, decisions: 0 }

    const drop = (key: string) => {
      const kept = entries.get(key)
      if (kept === undefined) return
      entries.delete(key)
      counts.decisions -= kept.decisions.length
    }

    const keep = (key: string, kept: Kept) => {
      drop(key)
      if (kept.decisions.length > bound) return
      entries.set(key, kept)
      counts.decisions += kept.decisions.length
      for (const old of entries.keys()) {
        if (counts.decisions <= bound) break
        drop(old)
      }
    }

    const read = (run: RunView) =>
      Effect.suspend(() => {
        counts.reads++
        return Effect.flatMap(ReviewLog, (log) => log.list).pipe(Effect.provide(runs.reviews(run)))
      })

    // The kept decisions of a log whose stamp is unchanged, counted as a hit.
    const hit = (key: string, stamp: string) => {
      const found = entries.get(key)
      if (found === undefined || found.stamp !== stamp) return undefined
      counts.hits++
      entries.delete(key)
      entries.set(key, found)
      return found.decisions
    }

    const listKept: KeptReviewsShape["listKept"] = (run) => {
      const stamped = runs.reviewStamp?.(run)
      return stamped === undefined ? undefined : hit(`${run.id}\u0000${run.directory}`, stamped.stamp)
    }

    const list: KeptReviewsShape["list"] = (run) =>
      Effect.suspend(() => {
        const stamped = runs.reviewStamp?.(run)
        if (stamped === undefined) return read(run)
        const key = `${run.id}\u0000${run.directory}`
        const found = hit(key, stamped.stamp)
        if (found !== undefined) return Effect.succeed(found)
        // Settled: the log's last change is older than `settle` (or it has none yet).
        const settled = stamped.changedAt === undefined || Date.now() - stamped.changedAt >= settle
        return read(run).pipe(
          Effect.tap((decisions) => Effect.sync(() => settled ? keep(key, { stamp: stamped.stamp, decisions }) : drop(key)))
        )
      })

    return {
      list,
      listKept,
      stats: Effect.sync((): KeptReviewsStats => ({ ...counts, entries: entries.size }))
    } satisfies KeptReviewsShape
  })
