/**
 * A `CaptureStore` in PostgreSQL, for capture on several workers and
 * verification in several services. One database holds many named runs; a
 * store is opened on one run.
 *
 * Same contract as the filesystem store: `write` is exclusive (`CaptureExists`,
 * the first record untouched) and atomic (one transaction: a writer killed
 * mid-write leaves nothing visible); `read` returns exactly the bytes written,
 * decoded through the one strict decoder every store uses. The database adds
 * what a directory cannot: the table is append-only by trigger, and capture
 * and verifier roles hold only INSERT and SELECT (src/store/PostgresMigrations.ts).
 *
 * `@effect/sql-pg` (with `@effect/sql` and the `pg` driver) is an optional peer
 * dependency of citegate: only applications that import `citegate/PostgresStore`
 * install it. Without it the module still loads, and using the store fails with
 * `StorePackageMissing`, naming the packages to install (src/store/PostgresPeers.ts).
 *
 * @since 0.1.0
 */
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { createHash } from "node:crypto"
import { CaptureStore, type CaptureStoreShape } from "./CaptureStore.js"
import {
  defaultMaxBodyBytes,
  defaultMaxRecordBytes,
  encodeRecordChunks,
  listLimit,
  maxAttestationBytes,
  type RecordWithBody
} from "./Format.js"
import { type CaptureRecord, captureFormat, type CaptureRecordV2, type Sha256Hex, type SourceUrl } from "../Domain.js"
import {
  CaptureExists,
  CaptureListTooLarge,
  type CaptureReadError,
  type CaptureWriteError,
  CaptureWriteFailed,
  type CorruptCapture,
  MissingCapture,
  RunExists,
  type StorePackageMissing,
  StoreUnavailable
} from "../Errors.js"
import { checkBody, checkWrittenBody, corrupt, decodeRecordText } from "../internal/recordDecode.js"
import { migrations, migrationsTable } from "./PostgresMigrations.js"
import { peers } from "./PostgresPeers.js"
import * as PostgresStamps from "./PostgresStamps.js"

export { captureRole, migrationsTable, reviewerRole, verifierRole } from "./PostgresMigrations.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface PostgresOptions {
  /** The run's name: 1 to 200 characters, well-formed, no control characters. */
  readonly run: string
  /**
   * Create the run (it must not exist yet: a run is never mixed with another's
   * captures), as `run-pipeline capture` does. Default: the run must exist.
   */
  readonly create?: boolean
  /** Largest record `read` fetches, in bytes (default 400 MiB, as on disk). */
  readonly maxRecordBytes?: number
  /** Largest body `read` and `readBody` fetch, in bytes (default 64 MiB, as on disk). */
  readonly maxBodyBytes?: number
}

const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** The SQLSTATE of a failed statement (the driver's error is the SqlError's cause). */
const sqlState = (error: SqlError): string | undefined => {
  const cause = error.cause
  return typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined
}

/** The driver's message (the SqlError's own is generic); never the connection string. */
const sqlDetail = (error: SqlError): string =>
  error.cause instanceof Error && error.cause.message !== "" ? error.cause.message : error.message

const runProblem = (run: string): string | undefined => {
  if (run.length === 0 || run.length > 200) return "a run name has 1 to 200 characters"
  if (!run.isWellFormed()) return "a run name must be well-formed Unicode"
  if (/[\u0000-\u001f\u007f]/u.test(run)) return "a run name has no control characters"
  return undefined
}

const unavailable = (run: string) => (error: SqlError) => {
  const state = sqlState(error)
  const detail = state === "42P01"
    ? "the database has no citegate tables: run the migration first (run-pipeline store-init, or PostgresStore.migrate)"
    : state === "42501"
    ? `permission denied: ${sqlDetail(error)}`
    : sqlDetail(error)
  return new StoreUnavailable({ run, detail })
}

interface CaptureRow {
  readonly record: string | null
  readonly size: number
  readonly record_sha256: string
  readonly actual_sha256: string
  readonly sha256: string
}


/**
 * What names one database for the cache (`CaptureStoreShape.identity`): the cluster's system
 * identifier (random at initdb, shared by its physical replicas, which hold the same rows) and the
 * database's oid. Asked once per client (a pool connects to one database); `undefined` when the
 * role may not ask (then nothing from this client is cached).
 */
const databaseIdentities = new WeakMap<object, string | null>()

const databaseIdentity = (sql: SqlClient.SqlClient): Effect.Effect<string | undefined> => {
  const known = databaseIdentities.get(sql)
  if (known !== undefined) return Effect.succeed(known ?? undefined)
  return sql<{ system: string | null; database: string | null }>`
    SELECT (SELECT system_identifier FROM pg_control_system())::text AS system,
           (SELECT oid FROM pg_database WHERE datname = current_database())::text AS database`.pipe(
    Effect.map((rows) => {
      const row = rows[0]
      const identity = row === undefined || row.system === null || row.database === null ? null : `${row.system}:${row.database}`
      databaseIdentities.set(sql, identity)
      return identity ?? undefined
    }),
    // Refused (a role without the right to read the control data): never cached, asked no more.
    // Any other failure: not cached this time, asked again by the next store.
    Effect.catchAll((error) => {
      if (sqlState(error) === "42501") databaseIdentities.set(sql, null)
      return Effect.succeed(undefined)
    })
  )
}

/** A row of a bounded read: the value's size, and the value itself only when within the limit. */
interface BoundedRow<A> {
  readonly size: number
  readonly value: A | null
}

/**
 * The one row of a bounded read (`SELECT octet_length(x) AS size, CASE WHEN octet_length(x) <= max
 * THEN x END AS value`, so a value past the limit never leaves the server): `undefined` without a
 * row, `CorruptCapture` `too-large` past the limit, `unreadable` when the query fails. `name` is what
 * errors call it, `what` the value ("the body"), `where` the place a failure is in.
 */
const boundedValue = <A>(
  query: Effect.Effect<ReadonlyArray<BoundedRow<A>>, SqlError>,
  name: string,
  what: string,
  where: string,
  maxBytes: number
): Effect.Effect<A | undefined, CorruptCapture> =>
  query.pipe(
    Effect.mapError((error) => corrupt(name, "unreadable", `${where}: ${sqlDetail(error)}`)),
    Effect.flatMap((rows): Either.Either<A | undefined, CorruptCapture> => {
      const row = rows[0]
      if (row === undefined) return Either.right(undefined)
      return row.value === null
        ? Either.left(corrupt(name, "too-large", `${what} is ${row.size} bytes, over the limit of ${maxBytes}`))
        : Either.right(row.value)
    })
  )

/** A capture row as its record: present, within the size limit, its bytes and digests as the row says. */
const rowRecord = (source: SourceUrl, row: CaptureRow | undefined, maxRecordBytes: number): Either.Either<CaptureRecord, CaptureReadError> => {
  if (row === undefined) return Either.left(new MissingCapture({ source }))
  if (row.record === null) {
    return Either.left(corrupt(source, "too-large", `the record is ${row.size} bytes, over the limit of ${maxRecordBytes}`))
  }
  if (row.actual_sha256 !== row.record_sha256) {
    return Either.left(corrupt(
      source,
      "record-digest-mismatch",
      `the record's bytes hash to ${row.actual_sha256}, the row says ${row.record_sha256}`
    ))
  }
  return Either.flatMap(
    decodeRecordText(source, source, row.record),
    (record) =>
      record.sha256 === row.sha256 ? Either.right(record) : Either.left(corrupt(
        source,
        "record-digest-mismatch",
        `the record names the capture digest ${record.sha256}, the row ${row.sha256}`
      ))
  )
}

/** A run's signed attestations (migration 5): written once, read back bounded. */
const attestationsOf = (sql: SqlClient.SqlClient, run: string) => {
  const writeAttestation = (source: SourceUrl, envelope: string): Effect.Effect<void, CaptureWriteError> =>
    Buffer.byteLength(envelope, "utf8") > maxAttestationBytes
      ? Effect.fail(new CaptureWriteFailed({ source, detail: `the attestation is over ${maxAttestationBytes} bytes` }))
      : sql`INSERT INTO citegate_attestations (run, source, envelope) VALUES (${run}, ${source}, ${envelope})`.pipe(
        Effect.asVoid,
        Effect.mapError((error): CaptureWriteError => {
          const state = sqlState(error)
          if (state === "23505") return new CaptureExists({ source })
          const detail = state === "23503" ? `no capture of ${source} in the run ${JSON.stringify(run)}` : sqlDetail(error)
          return new CaptureWriteFailed({ source, detail })
        })
      )

  const readAttestation = (source: SourceUrl): Effect.Effect<string | undefined, CaptureReadError> =>
    boundedValue(
      sql<BoundedRow<string>>`
        SELECT octet_length(envelope) AS size, CASE WHEN octet_length(envelope) <= ${maxAttestationBytes} THEN envelope END AS value
        FROM citegate_attestations WHERE run = ${run} AND source = ${source}`,
      source,
      "the attestation",
      "the attestation in the database",
      maxAttestationBytes
    )

  return { writeAttestation, readAttestation }
}

/**
 * The run's sources, sorted: at most `limit` + 1 rows fetched (the primary key's index, no record read);
 * only past the limit is the run counted, for the error.
 */
const listOf = (sql: SqlClient.SqlClient, run: string) =>
(
  options?: { readonly limit?: number }
): Effect.Effect<ReadonlyArray<SourceUrl>, CaptureListTooLarge | StoreUnavailable> => {
  const limit = listLimit(options?.limit)
  return sql<{ readonly source: string }>`
    SELECT source FROM citegate_captures WHERE run = ${run} ORDER BY source COLLATE "C" LIMIT ${limit + 1}`.pipe(
    Effect.flatMap((rows) =>
      rows.length <= limit
        ? Effect.succeed(rows.map((row) => row.source as SourceUrl).sort())
        : Effect.flatMap(
          sql<{ readonly count: string }>`SELECT count(*)::text AS count FROM citegate_captures WHERE run = ${run}`,
          ([row]) => new CaptureListTooLarge({ run, captures: Number(row?.count ?? rows.length), limit })
        )
    ),
    Effect.catchTag("SqlError", (error) => Effect.fail(unavailable(run)(error)))
  )
}

/** The run's row: created (`RunExists` if it is there already) or found (else `StoreUnavailable`). */
const openRun = (sql: SqlClient.SqlClient, run: string, create: boolean): Effect.Effect<void, StoreUnavailable | RunExists> =>
  create
    ? sql`INSERT INTO citegate_runs (run) VALUES (${run})`.pipe(
      Effect.mapError((error) => sqlState(error) === "23505" ? new RunExists({ run }) : unavailable(run)(error)),
      Effect.asVoid
    )
    : Effect.flatMap(Effect.mapError(sql`SELECT run FROM citegate_runs WHERE run = ${run}`, unavailable(run)), (rows) =>
      rows.length === 0 ? Effect.fail(new StoreUnavailable({ run, detail: "no such run in this database" })) : Effect.void)


/**
 * A store on one run, over the `SqlClient` in context (a PostgreSQL client).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.fn("PostgresStore.make")(function*(options: PostgresOptions) {
  const loaded = yield* peers
  const sql = yield* loaded.SqlClient.SqlClient
  const run = options.run
  const maxRecordBytes = options.maxRecordBytes ?? defaultMaxRecordBytes
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes
  const problem = runProblem(run)
  if (problem !== undefined) return yield* new StoreUnavailable({ run, detail: problem })

  yield* openRun(sql, run, options.create === true)

  const write = (record: CaptureRecord, body?: Uint8Array): Effect.Effect<void, CaptureWriteError> =>
    Effect.suspend(() => {
      if (record.format !== captureFormat) {
        const checked = checkWrittenBody(record, body)
        if (Either.isLeft(checked)) return Effect.fail(checked.left)
      }
      let bytes: Buffer
      try {
        bytes = Buffer.concat(Array.from(encodeRecordChunks(record), (piece) => Buffer.from(piece, "utf8")))
      } catch (error) {
        return Effect.fail(new CaptureWriteFailed({ source: String(record.source), detail: String(error) }))
      }
      const bodySha256 = record.format === captureFormat ? null : record.body.sha256
      const insertRecord = sql`INSERT INTO citegate_captures (run, source, record, record_sha256, sha256, body_sha256)
            VALUES (${run}, ${record.source}, ${bytes}, ${sha256Hex(bytes)}, ${record.sha256}, ${bodySha256})`
      // One transaction: the row (and its body, first) appear complete at commit, or not at all. A body
      // already stored under its digest (another source sent the same bytes) is kept; read checks it.
      // A v1 record is one statement, its own transaction (or the caller's): one round trip.
      const insert = bodySha256 === null || body === undefined ? insertRecord : sql.withTransaction(
        sql`INSERT INTO citegate_bodies (sha256, bytes) VALUES (${bodySha256}, ${Buffer.from(body.buffer, body.byteOffset, body.byteLength)})
            ON CONFLICT (sha256) DO NOTHING`.pipe(Effect.zipRight(insertRecord))
      )
      return insert.pipe(
        Effect.asVoid,
        Effect.mapError((error): CaptureWriteError => {
          const state = sqlState(error)
          if (state === "23505") return new CaptureExists({ source: record.source })
          const detail = state === "23503" ? `the run ${JSON.stringify(run)} does not exist` : sqlDetail(error)
          return new CaptureWriteFailed({ source: record.source, detail })
        })
      )
    })

  // The record comes as text, converted from its bytes by the server, which refuses invalid UTF-8 (as
  // the strict decoder would); bytea would travel as hex, twice its size, and cost more to parse than
  // the rest of the read. The digest of the stored bytes is computed beside it, in the same snapshot.
  const readWithBody = (source: SourceUrl): Effect.Effect<RecordWithBody, CaptureReadError> =>
    sql<CaptureRow>`
      SELECT octet_length(record) AS size, record_sha256, sha256, encode(sha256(record), 'hex') AS actual_sha256,
             CASE WHEN octet_length(record) <= ${maxRecordBytes} THEN convert_from(record, 'UTF8') END AS record
      FROM citegate_captures WHERE run = ${run} AND source = ${source}`.pipe(
      Effect.mapError((error) =>
        sqlState(error) === "22021"
          ? corrupt(source, "invalid-utf8", "the record is not valid UTF-8")
          : corrupt(source, "unreadable", `the database: ${sqlDetail(error)}`)
      ),
      Effect.flatMap((rows) => rowRecord(source, rows[0], maxRecordBytes)),
      Effect.flatMap((record) => record.format === captureFormat ? Effect.succeed({ record, body: undefined }) : withBody(source, record))
    )

  const read = (source: SourceUrl): Effect.Effect<CaptureRecord, CaptureReadError> =>
    Effect.map(readWithBody(source), (read) => read.record)

  /** The stored body with this digest, within the size limit; `name` is what errors call it. */
  const fetchBody = (name: string, sha256: string): Effect.Effect<Uint8Array | undefined, CorruptCapture> =>
    boundedValue(
      sql<BoundedRow<Uint8Array>>`
        SELECT octet_length(bytes) AS size, CASE WHEN octet_length(bytes) <= ${maxBodyBytes} THEN bytes END AS value
        FROM citegate_bodies WHERE sha256 = ${sha256}`,
      name,
      "the body",
      "the database",
      maxBodyBytes
    )

  /** A v2 record is returned only with its body stored and matching (as on disk). */
  const withBody = (source: SourceUrl, record: CaptureRecordV2): Effect.Effect<RecordWithBody, CorruptCapture> =>
    Effect.flatMap(fetchBody(source, record.body.sha256), (body) =>
      body === undefined
        ? Either.left(corrupt(source, "body-missing", `no body ${record.body.sha256} is stored`))
        : Either.map(checkBody(source, record, body), (checked) => ({ record: checked, body })))

  const readBody = (sha256: Sha256Hex): Effect.Effect<Uint8Array, CaptureReadError> => {
    const name = `body ${sha256}`
    return Effect.flatMap(fetchBody(name, sha256), (body): Effect.Effect<Uint8Array, CaptureReadError> => {
      if (body === undefined) return Effect.fail(new MissingCapture({ source: name }))
      const actual = sha256Hex(body)
      return actual === sha256
        ? Effect.succeed(body)
        : Effect.fail(corrupt(name, "body-mismatch", `the stored body hashes to ${actual}`))
    })
  }

  const { stamps, stampsNow } = PostgresStamps.stampsOf(sql, run)
  const stamp = (source: SourceUrl): Effect.Effect<string | undefined> => Effect.map(stamps([source]), (found) => found.get(source))

  const database = yield* databaseIdentity(sql)
  const identity = database === undefined ? undefined : `postgres:${database}:${JSON.stringify(run)}`
  const list = listOf(sql, run)
  return CaptureStore.of({ read, write, readBody, readWithBody, list, identity, stamp, stamps, stampsNow, ...attestationsOf(sql, run) }) satisfies CaptureStoreShape
})

/**
 * The store on one run as a layer, over the `SqlClient` you provide (a
 * `PgClient` layer, shared with the rest of your application).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: PostgresOptions
): Layer.Layer<CaptureStore, StoreUnavailable | RunExists | StorePackageMissing, SqlClient.SqlClient> =>
  Layer.effect(CaptureStore, make(options))

/**
 * @since 0.1.0
 * @category models
 */
export interface ConnectionOptions {
  /** `postgres://user[:password]@host[:port]/database` (a Redacted keeps it out of logs). */
  readonly url: string | Redacted.Redacted
  /** Pool size (default 10). */
  readonly maxConnections?: number
}

/**
 * A PostgreSQL client for the store: connects once to check the URL; the
 * connection error carries no credentials.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  options: ConnectionOptions & { readonly run?: string }
): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, StoreUnavailable | StorePackageMissing> =>
  Layer.unwrapEffect(Effect.map(peers, ({ PgClient }) =>
    PgClient.layer({
      url: typeof options.url === "string" ? Redacted.make(options.url) : options.url,
      maxConnections: options.maxConnections,
      applicationName: "citegate"
    }).pipe(Layer.mapError((error) => new StoreUnavailable({ run: options.run ?? "", detail: sqlDetail(error) })))))

/**
 * The store on one run with its own client, for applications that have no
 * `SqlClient` of their own.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerUrl = (
  options: PostgresOptions & ConnectionOptions
): Layer.Layer<CaptureStore, StoreUnavailable | RunExists | StorePackageMissing> =>
  layer(options).pipe(Layer.provide(layerClient(options)))

/**
 * Creates or upgrades citegate's tables, trigger and roles; returns the
 * migrations it ran (none when the schema is current). Run it as the
 * database owner, with the right to create roles, never as a worker.
 *
 * @since 0.1.0
 * @category migration
 */
export const migrate: Effect.Effect<
  ReadonlyArray<readonly [id: number, name: string]>,
  Migrator.MigrationError | SqlError | StorePackageMissing,
  SqlClient.SqlClient
> = Effect.flatMap(peers, ({ Migrator }) =>
  Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: migrationsTable }).pipe(
    // The migrator turns a failed migration into a defect; it is an expected failure here (no right to create roles, say).
    Effect.catchAllDefect((defect) => defect instanceof Migrator.MigrationError ? Effect.fail(defect) : Effect.die(defect))
  ))

/**
 * A failure of the database as `StoreUnavailable` for `run` (empty: no run),
 * with the driver's message and never the connection string.
 *
 * @since 0.1.0
 * @category errors
 */
export const storeUnavailable = (run: string, error: SqlError | Migrator.MigrationError): StoreUnavailable => {
  if (error._tag === "SqlError") return unavailable(run)(error)
  const cause = error.cause
  const inner = typeof cause === "object" && cause !== null && "_tag" in cause && cause._tag === "SqlError"
    ? `: ${sqlDetail(cause as SqlError)}`
    : ""
  return new StoreUnavailable({ run, detail: `${error.message}${inner}` })
}
