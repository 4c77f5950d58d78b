/** The streaming route mounted in `run-pipeline serve`'s server: a run captured over HTTP, an answer streamed against it. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { call, sources, startService, tokens, waitForRun } from "./serverSupport.js"

const line = (text: string) => `${JSON.stringify({ type: "delta", text })}\n`

describe("POST /v1/stream/answer in the service", () => {
  it.scopedLive("streams an answer against a run the service captured; tokens and runs as for every endpoint", () =>
    Effect.gen(function*() {
      const { server } = yield* sources
      const service = yield* startService({ sources: [server.url("/q3-sales.txt"), server.url("/q3-inventory.txt")] })
      const started = yield* call(service, "/v1/runs", { method: "POST", token: tokens.admin })
      assert.strictEqual(started.status, 202, started.text)
      const id = started.json.id as string
      yield* waitForRun(service, id)
      const info = yield* call(service, `/v1/runs/${id}`, { token: tokens.admin })
      const digest = info.json.manifest.digest as string
      const answer = [
        "Net sales for Q3 2026 were 4,210 units.[1]{c1} Inventory was 1,120 units.[2]{c2} Returns were 9%.[1]{c3}",
        "EVI1",
        `MANIFEST ${digest}`,
        "c1|1|\"Net sales for Q3 2026 were 4,210 units\"",
        "c2|2|\"Inventory at the end of Q3 2026 was 1,120 units\"",
        "c3|1|\"Returns were 9% of units sold\"",
        "END_EVI1",
        ""
      ].join("\n")
      const body = answer.match(/[^]{1,17}/g)!.map(line).join("")
      const streamed = yield* call(service, `/v1/stream/answer?run=${id}`, { token: tokens.admin, body })
      assert.strictEqual(streamed.status, 200, streamed.text)
      assert.match(streamed.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
      const events = streamed.text.trim().split("\n").map(AnswerStream.decodeEvent)
      assert.deepStrictEqual(events.map((e) => e.id), events.map((_, i) => i + 1))
      const done = events.at(-1)!
      assert.strictEqual(done.type === "done" && done.state, "grounded")
      assert.deepStrictEqual(
        events.filter((e) => e.type === "citation" || e.type === "retraction").map((e) => [e.type, "footnote" in e && e.footnote]),
        [["citation", 1], ["citation", 2], ["retraction", 3]]
      )

      // The reader token lists no run: 403 for this one (and for one that does not exist).
      const refused = yield* call(service, `/v1/stream/answer?run=${id}`, { token: tokens.reader, body })
      assert.deepStrictEqual([refused.status, refused.json], [403, { _tag: "Forbidden", action: "read-run", runId: id }])
      const none = yield* call(service, `/v1/stream/answer?run=${id}`, { body })
      assert.strictEqual(none.status, 401)
      const unknown = yield* call(service, "/v1/stream/answer?run=no-such-run", { token: tokens.admin, body })
      assert.deepStrictEqual([unknown.status, unknown.json], [404, { _tag: "RunNotFound", runId: "no-such-run" }])

      // A follower resumes after id 2 with the stream id the POST returned.
      const streamId = streamed.headers.get("citegate-stream-id")!
      const resumed = yield* call(service, `/v1/stream/answer/${streamId}`, { token: tokens.admin, headers: { "last-event-id": "2" } })
      assert.deepStrictEqual(resumed.text.trim().split("\n").map((t) => AnswerStream.decodeEvent(t).id), events.slice(2).map((e) => e.id))

      // A client that vanishes mid-stream ends its stream on the server: a follower then gets what was
      // sent and the end of the response (no done), instead of waiting for a producer that is gone.
      const vanished = yield* Effect.promise(() =>
        new Promise<string>((resolve, reject) => {
          const url = new URL(`${service.base}/v1/stream/answer?run=${id}`)
          const request = http.request({
            host: "127.0.0.1",
            port: Number(url.port),
            method: "POST",
            path: `${url.pathname}${url.search}`,
            headers: { authorization: `Bearer ${tokens.admin}` },
            agent: false
          })
          request.on("error", () => {})
          request.on("response", (response) => {
            response.on("error", () => {})
            response.once("data", () => {
              resolve(String(response.headers["citegate-stream-id"]))
              request.destroy()
            })
          })
          request.on("timeout", () => reject(new Error("no response")))
          request.write(line("Net sales for Q3 2026 were 4,210 units.[1]{c1}\n"))
        })
      )
      const followed = yield* call(service, `/v1/stream/answer/${vanished}`, { token: tokens.admin }).pipe(
        Effect.timeoutFail({ duration: 5_000, onTimeout: () => new Error("the stream of a vanished client is still open") })
      )
      assert.strictEqual(followed.status, 200)
      assert.deepStrictEqual(followed.text.trim().split("\n").map((t) => AnswerStream.decodeEvent(t).type), ["delta"])
    }))
})
