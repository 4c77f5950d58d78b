/** Hostile and odd requests to the service: each must end promptly with a typed answer, never hang. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { sources, startService, tokens, call, waitForRun } from "./serverSupport.js"

/** The raw body of an SSE response, or `timedOut` when it has not ended within `ms`. */
const sseWithin = (base: string, pathAndQuery: string, headers: Record<string, string>, ms: number) =>
  Effect.promise(async () => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), ms)
    try {
      const response = await fetch(base + pathAndQuery, { headers, signal: controller.signal })
      return { status: response.status, text: await response.text(), timedOut: false }
    } catch {
      return { status: 0, text: "", timedOut: true }
    } finally {
      clearTimeout(timer)
    }
  })

describe("adversarial: run events", () => {
  it.scopedLive("a follower resuming at or past `done` of a finished run gets an ended stream, not a hang", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt")] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      const id: string = started.json.id
      const all = yield* waitForRun(service, id)
      const doneId = Number(/id: (\d+)\nevent: done/.exec(all)![1])
      const auth = { authorization: `Bearer ${tokens.admin}` }
      // What an EventSource sends when it reconnects after reading `done`.
      const atDone = yield* sseWithin(service.base, `/v1/runs/${id}/events`, { ...auth, "last-event-id": String(doneId) }, 3_000)
      assert.deepStrictEqual(atDone, { status: 200, text: "", timedOut: false })
      const past = yield* sseWithin(service.base, `/v1/runs/${id}/events`, { ...auth, "last-event-id": "999999999" }, 3_000)
      assert.deepStrictEqual(past, { status: 200, text: "", timedOut: false })
      // One before `done` still gets `done`.
      const before = yield* sseWithin(service.base, `/v1/runs/${id}/events`, { ...auth, "last-event-id": String(doneId - 1) }, 3_000)
      assert.strictEqual(before.timedOut, false)
      assert.match(before.text, new RegExp(`^id: ${doneId}\\nevent: done\\n`))
    }))
})

describe("adversarial: stream resume without a token", () => {
  it.scopedLive("GET /v1/stream/answer/{id} without a token is 401 whether or not the stream exists (no id oracle)", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt")] })
      const unknown = yield* call(service, "/v1/stream/answer/00000000-0000-4000-8000-000000000000")
      assert.strictEqual(unknown.status, 401)
      assert.strictEqual(unknown.json._tag, "Unauthorized")
      const badToken = yield* call(service, "/v1/stream/answer/00000000-0000-4000-8000-000000000000", { token: "not-a-token" })
      assert.deepStrictEqual([badToken.status, badToken.json._tag, badToken.json.reason], [401, "Unauthorized", "unknown-token"])
      // With a valid token an unknown id is still 404 StreamGone.
      const known = yield* call(service, "/v1/stream/answer/00000000-0000-4000-8000-000000000000", { token: tokens.admin })
      assert.deepStrictEqual([known.status, known.json._tag], [404, "StreamGone"])
    }))
})
