/**
 * A capture worker in its own process, for test/postgres.test.ts. Opens the
 * PostgreSQL store on a run, says `ready`, waits for a line on stdin, then:
 * - `write`: writes its record and prints `written` or the error's tag;
 * - `hold`: writes its record inside a transaction, prints `held` and waits,
 *   never committing, until it is killed.
 *
 *   node --import tsx test/postgresWriterChild.ts URL RUN write|hold INDEX
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { once } from "node:events"
import { CaptureStore } from "../src/store/CaptureStore.js"
import * as PostgresStore from "../src/store/Postgres.js"
import { childRecord } from "./support/postgresRecords.js"

const [url, run, mode, index] = process.argv.slice(2) as [string, string, "write" | "hold", string]

const client = PostgresStore.layerClient({ url, run, maxConnections: 1 })
const program = Effect.gen(function*() {
  const store = yield* CaptureStore
  const sql = yield* SqlClient.SqlClient
  process.stdout.write("ready\n")
  yield* Effect.promise(() => once(process.stdin, "data"))
  const record = childRecord(index)
  if (mode === "hold") {
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* store.write(record)
      process.stdout.write("held\n")
      return yield* Effect.never
    }))
  }
  const outcome = yield* Effect.either(store.write(record))
  process.stdout.write(outcome._tag === "Right" ? "written\n" : `${outcome.left._tag}\n`)
}).pipe(Effect.provide(PostgresStore.layer({ run }).pipe(Layer.provideMerge(client))))

Effect.runPromise(program).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(3)
  }
)
