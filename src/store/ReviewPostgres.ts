/**
 * The review log in PostgreSQL (`citegate_reviews`, migration 2): one row per decision, its `seq`
 * the table's identity (increasing in append order; not consecutive within a run), append-only by
 * trigger (UPDATE, DELETE and TRUNCATE are refused, the owner's included), written by the
 * `citegate_reviewer` role with INSERT and read back strictly, as the filesystem log is.
 *
 * @since 0.3.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { DecisionLogCorrupt, DecisionLogFull, DecisionWriteFailed, type StorePackageMissing, StoreUnavailable } from "../Errors.js"
import { decodeJson } from "../internal/decode.js"
import { decisionLimits, ReviewDecision } from "../review/Records.js"
import { layerClient, type ConnectionOptions } from "./Postgres.js"
import { peers } from "./PostgresPeers.js"
import { type LoggedDecision, ReviewLog, type ReviewLogShape } from "./ReviewLog.js"

export interface Options {
  /** The run's name (it must exist in the database). */
  readonly run: string
  /** Most decisions the run's log takes (default `decisionLimits.perRun`). */
  readonly maxDecisions?: number
}

const decode = decodeJson(ReviewDecision)

const detailOf = (error: SqlError): string => {
  const cause = error.cause
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""
  const text = cause instanceof Error && cause.message !== "" ? cause.message : error.message
  return code === "42P01" ? "the database has no review log: run the migration first (run-pipeline store-init)" : text
}

interface Row {
  readonly seq: string | number
  readonly record: string
}

export const make = (options: Options) =>
  Effect.gen(function*() {
    const loaded = yield* peers
    const sql = yield* loaded.SqlClient.SqlClient
    const run = options.run
    const limit = options.maxDecisions ?? decisionLimits.perRun
    const rows = yield* sql`SELECT run FROM citegate_runs WHERE run = ${run}`.pipe(
      Effect.mapError((error) => new StoreUnavailable({ run, detail: detailOf(error) }))
    )
    if (rows.length === 0) return yield* new StoreUnavailable({ run, detail: "no such run in this database" })

    const corrupt = (entry: string, detail: string) => new DecisionLogCorrupt({ run, entry, detail })

    const list: ReviewLogShape["list"] = sql<Row>`
      SELECT seq, record FROM citegate_reviews WHERE run = ${run} ORDER BY seq LIMIT ${limit + 1}`.pipe(
      Effect.mapError((error) => corrupt("citegate_reviews", detailOf(error))),
      Effect.flatMap((found) => {
        if (found.length > limit) return Effect.fail(corrupt("citegate_reviews", `holds more than ${limit} decisions of this run`))
        return Effect.forEach(found, (row) =>
          Either.match(decode(row.record), {
            onLeft: (invalid) =>
              Effect.fail(corrupt(`seq ${row.seq}`, invalid.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "))),
            onRight: (record) => Effect.succeed<LoggedDecision>({ seq: Number(row.seq), record })
          }))
      })
    )

    // One statement: the count and the insert see one snapshot. Two racing appends can pass the
    // limit by one each at most; the limit bounds what a reader loads, not an exact quota.
    const append: ReviewLogShape["append"] = (decision) =>
      sql<{ readonly seq: string | number }>`
        INSERT INTO citegate_reviews (run, record)
        SELECT ${run}, ${JSON.stringify(decision)}
        WHERE (SELECT count(*) FROM citegate_reviews WHERE run = ${run}) < ${limit}
        RETURNING seq`.pipe(
        Effect.mapError((error) => new DecisionWriteFailed({ run, detail: detailOf(error) })),
        Effect.flatMap((inserted) =>
          inserted[0] === undefined ? Effect.fail(new DecisionLogFull({ run, limit })) : Effect.succeed(Number(inserted[0].seq))
        )
      )

    return { run, append, list } satisfies ReviewLogShape
  })

/**
 * The review log of one run as a layer, over the `SqlClient` you provide.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<ReviewLog, StoreUnavailable | StorePackageMissing, SqlClient.SqlClient> =>
  Layer.effect(ReviewLog, make(options))

/**
 * The review log of one run with its own client.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerUrl = (options: Options & ConnectionOptions): Layer.Layer<ReviewLog, StoreUnavailable | StorePackageMissing> =>
  layer(options).pipe(Layer.provide(layerClient({ ...options })))
