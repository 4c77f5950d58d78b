/** Capture runs over HTTP: start, status and manifest, SSE progress read by a real EventSource, resume. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { EventSource } from "eventsource"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { cli } from "./cliProcess.js"
import { call, heldEachSource, salesDigest, type Service, sources, startService, tokens, waitForRun } from "./serverSupport.js"

interface Received {
  readonly id: string
  readonly type: string
  readonly data: any
}

/** Reads a run's events with the `eventsource` package until `done` or `stopAfter` events; `lastEventId` resumes. */
const readEvents = (service: Service, runId: string, options: { lastEventId?: string; stopAfter?: number } = {}) =>
  Effect.async<{ events: Array<Received>; lastEventId: string }>((resume) => {
    const events: Array<Received> = []
    const source = new EventSource(`${service.base}/v1/runs/${runId}/events`, {
      fetch: (input, init) =>
        fetch(input, {
          ...init,
          headers: {
            ...init.headers,
            authorization: `Bearer ${tokens.admin}`,
            ...(options.lastEventId === undefined ? {} : { "last-event-id": options.lastEventId })
          }
        })
    })
    let finished = false
    const finish = () => {
      finished = true
      source.close()
      resume(Effect.succeed({ events, lastEventId: source.readyState === 2 ? events.at(-1)?.id ?? "" : "" }))
    }
    for (const type of ["started", "captured", "failed", "done", "aborted", "missing"]) {
      source.addEventListener(type, (event) => {
        if (finished) return
        events.push({ id: event.lastEventId, type: event.type, data: JSON.parse(event.data) })
        if (type === "done" || events.length === options.stopAfter) finish()
      })
    }
    source.onerror = (error) => {
      source.close()
      resume(Effect.die(new Error(`EventSource error: ${String(error.message)}`)))
    }
    return Effect.sync(() => source.close())
  })

const setup = Effect.gen(function*() {
  const { server } = yield* sources
  const sales = server.url("/q3-sales.txt")
  const missing = server.url("/q4-outlook.txt")
  const service = yield* startService({ sources: [sales, missing] })
  return { service, sales, missing }
})

describe("POST /v1/runs, GET /v1/runs/{id}, GET /v1/runs/{id}/events", () => {
  it.scopedLive("starts a capture run in a new directory named by a generated id, and reports each source", () =>
    Effect.gen(function*() {
      const { missing, sales, service } = yield* setup
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.capture })
      assert.strictEqual(started.status, 202, started.text)
      const id: string = started.json.id
      assert.match(id, /^\d{8}T\d{6}Z-[0-9a-f]{12}$/)
      assert.strictEqual(started.json.status, "running")
      const stat = yield* Effect.promise(() => fsp.stat(path.join(service.runRoot, id)))
      assert.isTrue(stat.isDirectory())

      const { events } = yield* readEvents(service, id)
      assert.deepStrictEqual(events.map((e) => e.id), events.map((_, i) => String(i + 1)))
      assert.strictEqual(events[0]!.type, "started")
      assert.deepStrictEqual(events[0]!.data, { _tag: "started", id: 1, runId: id, sources: 2 })
      const captured = events.find((e) => e.type === "captured")!
      assert.strictEqual(captured.data.source, sales)
      assert.strictEqual(captured.data.number, 1)
      assert.strictEqual(captured.data.captureSha256, salesDigest)
      const failed = events.find((e) => e.type === "failed")!
      assert.strictEqual(failed.data.source, missing)
      assert.strictEqual(failed.data.number, 2)
      // The typed capture error, every field, as the CLI's JSON shows it.
      assert.deepStrictEqual(failed.data.error, { _tag: "UnexpectedStatus", source: missing, status: 404 })
      assert.deepStrictEqual(events.at(-1)!.data, { _tag: "done", id: 4, status: "completed", captured: 1, failed: 1 })

      const info = yield* call(service, `/v1/runs/${id}`, { token: tokens.capture })
      assert.strictEqual(info.status, 200, info.text)
      assert.strictEqual(info.json.status, "completed")
      assert.strictEqual(info.json.manifest.format, "citegate.manifest/1")
      assert.deepStrictEqual(info.json.manifest.sources.map((s: any) => s.status), ["captured", "missing"])
      assert.strictEqual(info.json.manifest.sources[0].captureSha256, salesDigest)
      assert.match(info.json.manifest.digest, /^[0-9a-f]{64}$/)
    }))

  it.scopedLive("resumes after Last-Event-ID: a reconnecting EventSource gets only the later events", () =>
    Effect.gen(function*() {
      const { service } = yield* setup
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const id: string = started.json.id
      yield* waitForRun(service, id)
      const all = yield* readEvents(service, id)
      const first = yield* readEvents(service, id, { stopAfter: 2 })
      assert.deepStrictEqual(first.events.map((e) => e.id), ["1", "2"])
      const rest = yield* readEvents(service, id, { lastEventId: "2" })
      assert.deepStrictEqual(rest.events.map((e) => e.id), ["3", "4"])
      assert.deepStrictEqual(rest.events, all.events.slice(2))
      assert.strictEqual(rest.events.at(-1)!.type, "done")
      const none = yield* readEvents(service, id, { lastEventId: "3" })
      assert.deepStrictEqual(none.events.map((e) => e.type), ["done"])
    }))

  it.scopedLive("follows a live run: events arrive while the capture is still running", () =>
    Effect.gen(function*() {
      const { release, server } = yield* sources
      const held = server.url("/held.txt")
      const service = yield* startService({ sources: [server.url("/q3-sales.txt"), held] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const id: string = started.json.id
      const reading = yield* Effect.fork(readEvents(service, id))
      // The held source has not answered: the run is running and its status says so.
      yield* Effect.sleep("300 millis")
      const running = yield* call(service, `/v1/runs/${id}`, { token: tokens.admin })
      assert.strictEqual(running.json.status, "running")
      release()
      const { events } = yield* reading.await.pipe(Effect.flatten)
      assert.deepStrictEqual(events.map((e) => e.type).sort(), ["captured", "captured", "done", "started"])
      assert.strictEqual(events.at(-1)!.data.status, "completed")
    }))

  it.scopedLive("a run waiting for a capture slot reads as queued, then running, then completed; its events start when it runs", () =>
    Effect.gen(function*() {
      // Its source holds each response until the test releases it: each run keeps the one slot in turn.
      const source = yield* heldEachSource
      const service = yield* startService({ sources: [source.url], server: { maxActiveRuns: 1 } })
      const first = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const second = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      assert.deepStrictEqual([first.status, first.json.status, second.status, second.json.status], [202, "running", 202, "queued"])
      const statuses = Effect.forEach([first.json.id, second.json.id], (id: string) =>
        Effect.map(call(service, `/v1/runs/${id}`, { token: tokens.admin }), (r) => r.json.status as string))
      const until = (wanted: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const deadline = Date.now() + 10_000
          for (;;) {
            const seen = yield* statuses
            if (seen.join() === wanted.join() || Date.now() > deadline) return seen
            yield* Effect.sleep("20 millis")
          }
        })
      yield* Effect.sleep("200 millis")
      assert.deepStrictEqual(yield* statuses, ["running", "queued"])
      // A queued run has no events yet: its follower waits for `started`.
      const reading = yield* Effect.fork(readEvents(service, second.json.id))
      yield* source.releaseNext
      assert.deepStrictEqual(yield* until(["completed", "running"]), ["completed", "running"])
      yield* source.releaseNext
      const { events } = yield* reading.await.pipe(Effect.flatten)
      assert.deepStrictEqual(events.map((e) => e.type), ["started", "captured", "done"])
      assert.deepStrictEqual(yield* statuses, ["completed", "completed"])
      // Its manifest, read while it was queued (every source missing), was not kept as final.
      const manifest = (yield* call(service, `/v1/runs/${second.json.id}`, { token: tokens.admin })).json.manifest
      assert.deepStrictEqual(manifest.sources.map((s: { status: string }) => s.status), ["captured"])
      // With the slot free again, a new run is running at once.
      const third = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      assert.strictEqual(third.json.status, "running")
      yield* source.releaseNext
    }))

  it.scopedLive("at shutdown a queued run ends at once, interrupted, having fetched nothing; the running one finishes within the grace period", () =>
    Effect.gen(function*() {
      const source = yield* heldEachSource
      const service = yield* startService({ sources: [source.url], server: { maxActiveRuns: 1, shutdownGraceMs: 10_000 } })
      const first = (yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })).json.id as string
      const second = (yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })).json.id as string
      const firstEvents = yield* Effect.fork(readEvents(service, first))
      const secondEvents = yield* Effect.fork(readEvents(service, second))
      yield* Effect.sleep("200 millis")
      const closing = yield* Effect.fork(service.close)
      // The queued run ends while the running one still holds its slot (its source has not answered).
      const queued = yield* secondEvents.await.pipe(Effect.flatten)
      assert.deepStrictEqual(queued.events.map((e) => [e.type, e.data.status, e.data.captured]), [["done", "interrupted", 0]])
      assert.strictEqual(source.requests(), 1)
      yield* source.releaseNext
      const running = yield* firstEvents.await.pipe(Effect.flatten)
      assert.deepStrictEqual(running.events.map((e) => e.type), ["started", "captured", "done"])
      assert.strictEqual(running.events.at(-1)!.data.status, "completed")
      yield* closing.await
      assert.strictEqual(source.requests(), 1)
    }))

  it.scopedLive("reads a run directory captured by the CLI: status stored, events from its manifest", () =>
    Effect.gen(function*() {
      const { missing, service } = yield* setup
      const runDir = path.join(service.runRoot, "cli-run")
      yield* Effect.promise(() => fsp.mkdir(service.runRoot, { recursive: true }))
      const ran = yield* cli(["capture", "--config", service.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 1, ran.stderr) // the second source answers 404
      const info = yield* call(service, "/v1/runs/cli-run", { token: tokens.admin })
      assert.strictEqual(info.status, 200, info.text)
      assert.strictEqual(info.json.status, "stored")
      const { events } = yield* readEvents(service, "cli-run")
      assert.deepStrictEqual(events.map((e) => e.type), ["captured", "missing", "done"])
      assert.strictEqual(events[1]!.data.source, missing)
      assert.strictEqual(events[1]!.data.reason._tag, "MissingCapture")
      assert.deepStrictEqual(events[2]!.data, { _tag: "done", id: 3, status: "stored", captured: 1, failed: 1 })
    }))

  it.scopedLive("an unknown id, or one that is not a run id (a path), is 404 RunNotFound and touches nothing", () =>
    Effect.gen(function*() {
      const { service } = yield* setup
      for (const id of ["20260101T000000Z-000000000000", "..", "%2E%2E", "a%2Fb", ".hidden", "x".repeat(65)]) {
        const response = yield* call(service, `/v1/runs/${id}`, { token: tokens.admin })
        assert.strictEqual(response.status, 404, `${id}: ${response.text}`)
        // `..` is resolved by the client itself (to another, unknown route); every id that reaches the handler is refused by it.
        if (id !== ".." && id !== "%2E%2E") assert.strictEqual(response.json?._tag, "RunNotFound", `${id}: ${response.text}`)
        const events = yield* call(service, `/v1/runs/${id}/events`, { token: tokens.admin })
        assert.strictEqual(events.status, 404, id)
      }
      // The run root itself is a directory, but not a run.
      const root = yield* call(service, `/v1/runs/runs`, { token: tokens.admin })
      assert.strictEqual(root.status, 404)
    }))

  it.scopedLive("a run root that cannot hold runs: readyz and POST /v1/runs answer 503 NotReady (run-root-unusable)", () =>
    Effect.gen(function*() {
      const { service } = yield* setup
      // A file where the run root should be: no run directory can be made under it.
      yield* Effect.promise(() => fsp.writeFile(service.runRoot, "not a directory"))
      const ready = yield* call(service, "/readyz")
      assert.strictEqual(ready.status, 503)
      assert.deepStrictEqual(ready.json, { _tag: "NotReady", reason: "run-root-unusable" })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      assert.strictEqual(started.status, 503, started.text)
      assert.deepStrictEqual(started.json, { _tag: "NotReady", reason: "run-root-unusable" })
    }))
})
