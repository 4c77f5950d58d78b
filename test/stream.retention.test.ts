/**
 * Retained stream events (resuming `GET /v1/stream/answer/{id}`): an ended stream's events go when
 * `retainMs` passes, on a timer (not at the next request), and all streams together keep at most
 * `maxTotalBytes`; while live streams alone hold that much, a new stream is refused with 503
 * `StreamRetentionFull`. The route as a web handler over the real AnswerStream, Verifier and Auth.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { RunNotFound } from "../src/Errors.js"
import { Access, Auth, tokenDigest } from "../src/server/Auth.js"
import * as StreamRoute from "../src/server/StreamRoute.js"
import * as Verifier from "../src/verify/Verifier.js"
import { manifest, verifierLayer } from "./streamSupport.js"

const READER = "reader-token"
const auth = Auth.make([{ sha256: tokenDigest(READER), runs: ["run-1"], capture: false }])
const bearer = { authorization: `Bearer ${READER}` }
const line = (text: string) => `${JSON.stringify({ type: "delta", text })}\n`

const route = (retention: Partial<StreamRoute.Retention>) =>
  Effect.gen(function*() {
    const verifier = yield* Verifier.Verifier.pipe(Effect.provide(verifierLayer()))
    const m = yield* manifest
    const made = StreamRoute.make({
      authenticate: (headers, runId) => auth.authenticate(headers, Access.readRun(runId)),
      authenticateToken: (headers) => auth.authenticate(headers),
      run: (runId) => (runId === "run-1" ? Effect.succeed({ verifier, manifest: m }) : Effect.fail(new RunNotFound({ runId }))),
      retention
    })
    const handler = HttpApp.toWebHandler(made.router)
    const post = (body: string) =>
      Effect.promise(async () => {
        const response = await handler(new Request("http://citegate.invalid/v1/stream/answer?run=run-1", { method: "POST", headers: bearer, body }))
        return { status: response.status, id: response.headers.get(StreamRoute.streamIdHeader), text: await response.text() }
      })
    /** A POST whose body stays open until `end`: a live stream. */
    const open = (first: string) => {
      let controller!: ReadableStreamDefaultController<Uint8Array>
      const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) })
      controller.enqueue(new TextEncoder().encode(first))
      const response = handler(new Request("http://citegate.invalid/v1/stream/answer?run=run-1", {
        method: "POST",
        headers: bearer,
        body,
        duplex: "half"
      } as RequestInit))
      const reader = response.then((r) => r.body!.getReader())
      return {
        firstChunk: Effect.promise(() => reader.then((r) => r.read())),
        end: Effect.promise(async () => {
          controller.close()
          const r = await reader
          while (!(await r.read()).done) { /* to the end */ }
        })
      }
    }
    return { ...made, post, open }
  })

/** A plain answer of `chars` characters: one delta event of about that many bytes, then `done`. */
const plain = (chars: number) => line(`${"x".repeat(chars - 2)}.\n`)

describe("stream retention", () => {
  it.live("an ended stream's events are dropped when retainMs passes, with no other request", () =>
    Effect.gen(function*() {
      const s = yield* route({ retainMs: 150 })
      const first = yield* s.post(plain(1_000))
      assert.strictEqual(first.status, 200)
      assert.strictEqual(s.retainedStreams(), 1)
      assert.isAbove(s.retainedBytes(), 1_000)
      yield* Effect.sleep(400)
      // Nothing was asked of the route since: the timer alone dropped it.
      assert.deepStrictEqual([s.retainedStreams(), s.retainedBytes()], [0, 0])
    }))

  it.live("all streams together keep at most maxTotalBytes: the oldest ended streams go first", () =>
    Effect.gen(function*() {
      const maxTotalBytes = 64 * 1024
      const s = yield* route({ maxTotalBytes })
      const ids: Array<string> = []
      for (let i = 0; i < 20; i++) {
        const r = yield* s.post(plain(10_000))
        assert.strictEqual(r.status, 200)
        ids.push(r.id!)
        assert.isAtMost(s.retainedBytes(), maxTotalBytes, `after stream ${i + 1}`)
      }
      // Six streams of ~10 KB fit; the newest are kept, the oldest are gone.
      assert.strictEqual(s.retainedStreams(), 6)
      const resumed = yield* Effect.promise(() =>
        HttpApp.toWebHandler(s.router)(new Request(`http://citegate.invalid/v1/stream/answer/${ids[0]}`, { headers: bearer }))
      )
      assert.strictEqual(resumed.status, 404)
    }))

  it.live("live streams holding the budget: a new stream is 503 StreamRetentionFull until one ends", () =>
    Effect.gen(function*() {
      const maxTotalBytes = 16 * 1024
      const s = yield* route({ maxTotalBytes })
      // One live stream whose first delta (~20 KB) alone passes the budget: its newest event is kept.
      const live = s.open(line(`${"y".repeat(20_000)} `))
      yield* live.firstChunk
      assert.isAbove(s.retainedBytes(), maxTotalBytes)
      const refused = yield* s.post(plain(100))
      assert.strictEqual(refused.status, 503)
      assert.deepStrictEqual(JSON.parse(refused.text), { _tag: "StreamRetentionFull", retainedBytes: s.retainedBytes(), maxBytes: maxTotalBytes })
      yield* live.end
      // Ended, it is the first to go when a new stream needs the room.
      const accepted = yield* s.post(plain(100))
      assert.strictEqual(accepted.status, 200)
      assert.isAtMost(s.retainedBytes(), maxTotalBytes)
    }))
})
