/**
 * Capture stamps taken ahead: a replica over PostgreSQL (server/PostgresRuns.ts) stamps a run's
 * likely captures in the same query that looks the run up, so that a warm verification sends one
 * statement instead of two (the run look-up, then the stamps of the captures it cites).
 *
 * Three parts, all internal (no public API):
 * - which sources to stamp ahead (`Ahead`, one per client a replica attaches it to): those the
 *   run's store last had to stamp by its own query, at most `maxAhead` per run. A hint only.
 * - the stamps themselves (`taken`), a fiber-local value: the run look-up of a request sets it, and
 *   the run's store takes it at its next `stamps` (then it is gone), only when it is for the same
 *   run over the same client, covers every source asked, and is at most `freshMs` old; in any other
 *   case the store queries as before. So a stamp is always taken before its use, by a query that
 *   began after the request that uses it arrived (requests of one run arriving together share one
 *   such query: internal/NextFlight.ts): what the verified-capture cache sees is unchanged
 *   (docs/threat-model.md, "Verified-capture cache").
 * - for a warm verification answered at once after the look-up (server/VerifyLane.ts), the same
 *   stamps lent for one synchronous call (`lending`) to the store's `stampsNow`, under the same
 *   conditions, and taken once.
 *
 * The stamp expression is this module's (`stampColumn`), so both queries give the same text; the
 * store's `stamps` and `stampsNow` are made here too (`stampsOf`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
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

/** Stamps lent to a synchronous verification for the length of one call (`lending`), then gone. */
let lent: Taken | undefined

/**
 * `f` run with `got` (the current request's stamps taken ahead) lent to the stores' `stampsNow`:
 * for a warm verification answered at once after the run's look-up, without another statement.
 * Synchronous, so no other request can see them; cleared when `f` returns or throws.
 */
export const lending = <A>(got: Taken | undefined, f: () => A): A => {
  lent = got
  try {
    return f()
  } finally {
    lent = undefined
  }
}

/** The stamps lent now (`lending`), taken once: a second `stampsNow` in the same call finds none. */
export const takeLent = (): Taken | undefined => {
  const got = lent
  lent = undefined
  return got
}

interface StampRow {
  readonly source: string
  readonly stamp: string
}

/**
 * The `stamps` and `stampsNow` of a store on `run` (store/Postgres.ts). A stamp is a capture row's
 * version and its body row's: an UPDATE (the append-only trigger disabled, by a superuser), a
 * DELETE and re-INSERT, or a table dropped and made again all give the row a new `xmin` (the
 * inserting transaction), `ctid` (its place) or `tableoid`; VACUUM FULL moves rows (a new ctid:
 * read again, harmlessly). One query for all the sources a verification cites.
 */
export const stampsOf = (sql: SqlClient.SqlClient, run: string) => {
  const query = (list: ReadonlyArray<SourceUrl>): Effect.Effect<ReadonlyMap<SourceUrl, string>> =>
    sql<StampRow>`
      SELECT c.source, ${sql.literal(stampColumn)} AS stamp
      FROM citegate_captures c LEFT JOIN citegate_bodies b ON b.sha256 = c.body_sha256
      WHERE c.run = ${run} AND c.source = ANY(${list})`.pipe(
      Effect.map((rows) => new Map(rows.map((row) => [row.source as SourceUrl, row.stamp]))),
      // Nothing stamped: every capture is read (and the read says what is wrong).
      Effect.orElseSucceed(() => new Map<SourceUrl, string>())
    )
  // A replica's client (attach): the stamps its run look-up took for this request,
  // taken once and only when they cover every source; else a query, and these sources are stamped
  // ahead from the next look-up on.
  const ahead = aheadOf(sql)
  const subsetOf = (found: ReadonlyMap<SourceUrl, string>, list: ReadonlyArray<SourceUrl>) => {
    const subset = new Map<SourceUrl, string>()
    for (const source of list) {
      const stamp = found.get(source)
      if (stamp !== undefined) subset.set(source, stamp)
    }
    return subset
  }
  const stamps = (sources: Iterable<SourceUrl>): Effect.Effect<ReadonlyMap<SourceUrl, string>> => {
    const list = Array.from(sources)
    if (list.length === 0) return Effect.succeed(new Map())
    if (ahead === undefined) return query(list)
    return Effect.flatMap(FiberRef.getAndSet(taken, undefined), (got) => {
      const found = usable(got, sql, run, list, Date.now())
      if (found === undefined) {
        ahead.remember(run, list)
        return query(list)
      }
      return Effect.succeed(subsetOf(found, list))
    })
  }
  // Only the stamps lent by the request's own look-up (lending), under the same
  // conditions; none (so the caller takes the general path, which queries) in any other case.
  const stampsNow = ahead === undefined ? undefined : (sources: Iterable<SourceUrl>): ReadonlyMap<SourceUrl, string> => {
    const list = Array.from(sources)
    const found = usable(takeLent(), sql, run, list, Date.now())
    return found === undefined ? new Map() : subsetOf(found, list)
  }
  return { stamps, stampsNow }
}
