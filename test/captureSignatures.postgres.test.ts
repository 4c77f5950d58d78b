/**
 * Capture attestations in PostgreSQL (migration 4, `citegate_attestations`), on a throwaway cluster:
 * the capture role signs captures through a loopback server into the database, the verifier role
 * reads them back and the Gate accepts the run under `verify.signatures: "require"`; the database
 * refuses to edit or remove an attestation (the owner included), a second attestation of a capture,
 * one for a capture that does not exist, and one from the verifier role; an unsigned capture in the
 * database is refused under `require`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, type Scope } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { beforeAll } from "vitest"
import * as Capture from "../src/capture/Capture.js"
import type { CaptureRef, SourceUrl } from "../src/Domain.js"
import { CaptureExists, CaptureWriteFailed, ReportRejected } from "../src/Errors.js"
import * as CaptureAttestation from "../src/evidence/CaptureAttestation.js"
import * as Signatures from "../src/evidence/Signatures.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as PostgresStore from "../src/store/Postgres.js"
import * as Gate from "../src/verify/Gate.js"
import { testServer } from "./httpServer.js"
import type { Cluster } from "./support/postgresCluster.js"
import { migratedDatabase, skipPostgres } from "./support/postgresDatabase.js"

const pg = migratedDatabase("attestations", { worker: [PostgresStore.captureRole], auditor: [PostgresStore.verifierRole] })
let cluster: Cluster
let database = ""
let runs = 0
const newRun = () => `signed-${++runs}`

beforeAll(() => {
  if (skipPostgres) return
  ;({ cluster, database } = pg.current)
  assert.deepStrictEqual(pg.current.migrations, [
    "1_citegate_store",
    "2_citegate_reviews",
    "3_citegate_replicas",
    "4_citegate_service_reviews",
    "5_citegate_attestations"
  ])
})

const build = <A, I>(tag: Context.Tag<I, A>, layer: Layer.Layer<I, unknown>): Effect.Effect<A, unknown, Scope.Scope> =>
  Effect.map(Layer.build(layer), (context) => Context.get(context, tag))

const client = (user: string) => PostgresStore.layerClient({ url: cluster.url(database, user), maxConnections: 2 })
const storeAs = (user: string, run: string, create = false) =>
  build(CaptureStore.CaptureStore, PostgresStore.layer({ run, create }).pipe(Layer.provide(client(user))))

const freshKey = () => {
  const pair = generateKeyPairSync("ed25519")
  const keyid = Signatures.keyIdOf(pair.publicKey)
  return {
    signing: { keyid, privateKey: pair.privateKey } satisfies Signatures.SigningKey,
    trusted: { keyid, publicKey: pair.publicKey } satisfies Signatures.PublicKey
  }
}

const bodies: Record<string, string> = {
  "/sales.txt": "Net sales for Q3 2026 were 4,210 units.\n",
  "/stock.txt": "Inventory at the end of Q3 2026 was 1,180 units.\n"
}

const setup = Effect.gen(function*() {
  const server = yield* testServer((request, response) => {
    const body = bodies[request.url ?? ""]
    response.writeHead(body === undefined ? 404 : 200, { "content-type": "text/plain; charset=utf-8" })
    response.end(body ?? "not found")
  })
  return [server.url("/sales.txt"), server.url("/stock.txt")] as const
})

/** Captures the sources into a new run as the capture role; the second one unsigned when asked. */
const captureRun = (sources: ReadonlyArray<string>, key: Signatures.SigningKey, unsignedLast = false) =>
  Effect.gen(function*() {
    const run = newRun()
    const store = yield* storeAs("worker", run, true)
    const refs: Array<CaptureRef> = []
    for (const [i, source] of sources.entries()) {
      const signingKey = unsignedLast && i === sources.length - 1 ? undefined : key
      const capture = yield* build(
        Capture.Capture,
        Capture.layer({ approved: sources, allowLoopbackHttp: true, timeoutMs: 5_000, signingKey }).pipe(
          Layer.provide(Layer.succeed(CaptureStore.CaptureStore, store))
        )
      )
      refs.push(yield* capture.capture(source))
    }
    return { run, refs, store }
  })

const configOf = (sources: ReadonlyArray<string>, trusted: Signatures.PublicKey) => ({
  sources,
  labels: ["sales", "stock"],
  verify: {
    maxFacts: 10,
    mode: "reject",
    signatures: "require",
    trustedKeys: { [trusted.keyid]: trusted.publicKey.export({ type: "spki", format: "pem" }).toString() }
  }
})

const reportOf = (refs: ReadonlyArray<CaptureRef>) =>
  JSON.stringify({
    facts: [
      { state: "cited", label: "sales", source: refs[0]!.source, captureSha256: refs[0]!.sha256, snippet: "4,210 units" },
      { state: "cited", label: "stock", source: refs[1]!.source, captureSha256: refs[1]!.sha256, snippet: "1,180 units" }
    ]
  })

/** The Gate over the run as the verifier role. */
const verifyAs = (run: string, config: unknown, report: string) =>
  Effect.gen(function*() {
    const store = yield* storeAs("auditor", run)
    return yield* Effect.flatMap(Gate.Gate, (gate) => Effect.either(gate.checkJsonWithCaptures(report))).pipe(
      Effect.provide(Gate.layerWithStore(config).pipe(Layer.orDie, Layer.provide(Layer.succeed(CaptureStore.CaptureStore, store))))
    )
  })

describe.skipIf(skipPostgres)("capture attestations in PostgreSQL", () => {
  it.scopedLive("signed by the capture role, read by the verifier role: require accepts; the table is append-only", () =>
    Effect.gen(function*() {
      const sources = yield* setup
      const key = freshKey()
      const { refs, run, store } = yield* captureRun(sources, key.signing)
      const outcome = yield* verifyAs(run, configOf(sources, key.trusted), reportOf(refs))
      assert.isTrue(Either.isRight(outcome), String(Either.isLeft(outcome) && outcome.left))

      const reader = yield* storeAs("auditor", run)
      const envelope = yield* reader.readAttestation!(sources[0] as SourceUrl)
      assert.isString(envelope)
      const record = yield* reader.read(sources[0] as SourceUrl)
      assert.deepStrictEqual(CaptureAttestation.check(record, envelope, [key.trusted]), Either.right(key.trusted.keyid))

      for (const statement of [
        `UPDATE citegate_attestations SET envelope = envelope || ' '`,
        `DELETE FROM citegate_attestations`,
        `TRUNCATE citegate_attestations`
      ]) {
        assert.throws(() => cluster.psql(database, statement), /append-only/, statement)
      }
      // A second attestation of the same capture, even a valid one: CaptureExists; the first is kept.
      const again = yield* Effect.flip(store.writeAttestation!(sources[0] as SourceUrl, CaptureAttestation.sign(record, freshKey().signing)))
      assert.instanceOf(again, CaptureExists)
      assert.strictEqual(yield* reader.readAttestation!(sources[0] as SourceUrl), envelope)
      // No capture of that source in the run: the foreign key refuses it.
      const orphan = yield* Effect.flip(store.writeAttestation!("http://127.0.0.1:1/none.txt" as SourceUrl, envelope!))
      assert.instanceOf(orphan, CaptureWriteFailed)
      assert.include(orphan.message, "no capture of http://127.0.0.1:1/none.txt")
      // The verifier role reads, never writes.
      const readOnly = yield* Effect.flip(reader.writeAttestation!(sources[1] as SourceUrl, envelope!))
      assert.instanceOf(readOnly, CaptureWriteFailed)
      assert.include(readOnly.message, "permission denied")
      assert.strictEqual(cluster.psql(database, `SELECT count(*) FROM citegate_attestations WHERE run = '${run}'`).trim(), "2")
    }))

  it.scopedLive("an unsigned capture in the database is refused under require (UnsignedCapture)", () =>
    Effect.gen(function*() {
      const sources = yield* setup
      const key = freshKey()
      const { refs, run } = yield* captureRun(sources, key.signing, true)
      const outcome = yield* verifyAs(run, configOf(sources, key.trusted), reportOf(refs))
      if (Either.isRight(outcome)) return assert.fail("the unsigned run was accepted")
      assert.instanceOf(outcome.left, ReportRejected)
      assert.deepStrictEqual(outcome.left.failures.map((f) => [f.index, f.error._tag]), [[1, "UnsignedCapture"]])
    }))
})
