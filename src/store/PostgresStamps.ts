/**
 * Capture stamps taken ahead: a replica over PostgreSQL (server/PostgresRuns.ts) stamps a run's
 * likely captures in the same query that looks the run up, so that a warm verification sends one
 * statement instead of two (the run look-up, then the stamps of the captures it cites).
 *
 * Two parts, both internal (no public API):
 * - which sources to stamp ahead (`Ahead`, one per client a replica attaches it to): those the
 *   run's store last had to stamp by its own query, at most `maxAhead` per run. A hint only.
 * - the stamps themselves (`taken`), a fiber-local value: the run look-up of a request sets it, and
 *   the run's store takes it at its next `stamps` (then it is gone), only when it is for the same
 *   run over the same client, covers every source asked, and is at most `freshMs` old; in any other
 *   case the store queries as before. So a stamp is always taken by the request that uses it, before
 *   the use, and never shared between requests: what the verified-capture cache sees is unchanged
 *   (docs/threat-model.md, "Verified-capture cache").
 *
 * The stamp expression is this module's (`stampColumn`), so both queries give the same text.
 */
import * as FiberRef from "effect/FiberRef"
import type { SourceUrl } from "../Domain.js"

/**
 * A capture row's version and its body row's (store/Postgres.ts `stamps` says what changes them),
 * over `citegate_captures c LEFT JOIN citegate_bodies b ON b.sha256 = c.body_sha256`.
 */
export const stampColumn = "concat_ws(':', c.tableoid, c.xmin, c.ctid, b.tableoid, b.xmin, b.ctid)"

/** Sources stamped ahead per run at most (each an index probe and about 60 bytes of answer). */
export const maxAhead = 128

/** Runs whose sources are remembered at most per client. */
export const maxRuns = 1024

/** How old stamps taken ahead may be when used (ms): a request's look-up and its verification are close. */
export const freshMs = 1_000

/** Stamps taken by the current request's run look-up. */
export interface Taken {
  /** The client they were taken over (a store over another client never uses them). */
  readonly client: object
  readonly run: string
  /** The sources asked: a source asked and absent from `stamps` has no row. */
  readonly asked: ReadonlySet<string>
  readonly stamps: ReadonlyMap<SourceUrl, string>
  /** `Date.now()` when the look-up's answer arrived. */
  readonly at: number
}

/** The stamps the current fiber's last run look-up took ahead, until a store takes them. */
export const taken: FiberRef.FiberRef<Taken | undefined> = FiberRef.unsafeMake<Taken | undefined>(undefined)

/** Which sources to stamp ahead, per run. */
export interface Ahead {
  /** The sources to stamp when `run` is looked up (empty: none yet). */
  readonly wanted: (run: string) => ReadonlyArray<string>
  /** The store had to stamp `sources` itself: stamp them ahead from now on (with those before, within `maxAhead`). */
  readonly remember: (run: string, sources: ReadonlyArray<string>) => void
}

const aheads = new WeakMap<object, Ahead>()

const none: ReadonlyArray<string> = []

const makeAhead = (): Ahead => {
  // A Map iterates in insertion order: the run remembered longest ago goes first.
  const runs = new Map<string, ReadonlyArray<string>>()
  return {
    wanted: (run) => runs.get(run) ?? none,
    remember: (run, sources) => {
      const before = runs.get(run) ?? none
      const union = new Set(before)
      for (const source of sources) union.add(source)
      if (union.size === before.length) return
      // Past the bound, the last asked alone (when it fits), else nothing: the store stamps itself.
      const next = union.size <= maxAhead ? [...union] : sources.length <= maxAhead ? [...new Set(sources)] : none
      runs.delete(run)
      runs.set(run, next)
      if (runs.size > maxRuns) runs.delete(runs.keys().next().value!)
    }
  }
}

/** Stamps ahead for stores over `client` (a replica's): made once per client. */
export const attach = (client: object): Ahead => {
  let ahead = aheads.get(client)
  if (ahead === undefined) {
    ahead = makeAhead()
    aheads.set(client, ahead)
  }
  return ahead
}

/** The `Ahead` attached to `client`, if a replica attached one. */
export const aheadOf = (client: object): Ahead | undefined => aheads.get(client)

/**
 * The stamps of `sources` from `got` when it may serve them: same client and run, every source
 * asked, fresh. `undefined` otherwise (the store queries).
 */
export const usable = (
  got: Taken | undefined,
  client: object,
  run: string,
  sources: ReadonlyArray<SourceUrl>,
  now: number
): ReadonlyMap<SourceUrl, string> | undefined => {
  if (got === undefined || got.client !== client || got.run !== run) return undefined
  if (now - got.at > freshMs || now < got.at) return undefined
  for (const source of sources) if (!got.asked.has(source)) return undefined
  return got.stamps
}
