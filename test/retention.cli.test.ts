/**
 * Retained stream memory in `run-pipeline serve` as a separate process: many streamed answers of
 * ~1 Mi characters each (the review's 1,000, scaled to 60), under a V8 heap of 56 MiB so that what the
 * server keeps decides whether it lives (resident memory alone hides 60 MiB in heap slack). With the
 * total bound (`server.streamRetainedBytes`, 4 MiB here) the server keeps a few MiB of events whatever
 * the number of streams and answers every one; with the bound lifted to 1 GiB (every stream keeping its
 * 1 MiB of events, as before the bound existed) the same load exhausts the heap.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { tokenDigest } from "../src/server/Auth.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { testServer } from "./httpServer.js"
import { startServe } from "./serveProcess.js"
import { salesText } from "./serverSupport.js"
import { tempDirectory } from "./support.js"

const TOKEN = "citegate-retention-process-token"
const auth = { authorization: `Bearer ${TOKEN}` }
const MiB = 1024 * 1024

/** ~1 Mi characters of plain answer as 32 NDJSON lines of 32 Ki characters (under the 64 KiB line limit). */
const bigAnswer = (n: number) =>
  Array.from({ length: 32 }, (_, i) => `${JSON.stringify({ type: "delta", text: `${String(n).padStart(4, "0")}${"w".repeat(32 * 1024 - 6)}${i === 31 ? ".\n" : " \n"}` })}\n`).join("")

const measured = (streamRetainedBytes: number, streams: number, nodeOptions: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const source = yield* testServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      response.end(salesText)
    })
    const work = yield* tempDirectory
    const file = path.join(work, "pipeline.json")
    yield* Effect.promise(() =>
      fsp.writeFile(file, JSON.stringify({
        sources: [source.url("/q3-sales.txt")],
        labels: ["q3_net_sales"],
        server: { tokens: [{ sha256: tokenDigest(TOKEN), runs: "*", capture: true }], streamRetainedBytes }
      }))
    )
    const served = yield* startServe(
      ["--config", file, "--listen", "127.0.0.1:0", "--run-root", path.join(work, "runs"), "--allow-loopback-http"],
      "http",
      nodeOptions
    )
    const runId = yield* Effect.promise(async () => {
      const started = await (await fetch(`${served.base}/v1/runs`, { method: "POST", headers: auth })).json() as any
      await (await fetch(`${served.base}/v1/runs/${started.id}/events`, { headers: auth })).text()
      return started.id as string
    })
    const before = served.memory().rss
    const t0 = performance.now()
    let answered = 0
    for (let n = 0; n < streams && served.alive(); n++) {
      const text = yield* Effect.promise(() =>
        fetch(`${served.base}/v1/stream/answer?run=${runId}`, { method: "POST", headers: auth, body: bigAnswer(n) }).then((r) => r.text(), () => "")
      )
      const last = text.trim().split("\n").at(-1)
      if (last !== undefined && last !== "" && AnswerStream.decodeEvent(last).type === "done") answered++
    }
    const ms = Math.round(performance.now() - t0)
    yield* Effect.sleep(200)
    const alive = served.alive()
    const peak = alive ? Math.round(served.memory().peak / MiB) : null
    return { answered, alive, ms, beforeMiB: Math.round(before / MiB), peakMiB: peak }
  })

describe("serve: retained stream memory is bounded in total", () => {
  it.scopedLive("60 streams of ~1 Mi characters under a 56 MiB heap: bounded, all answered and alive; unbounded, the heap runs out", () =>
    Effect.gen(function*() {
      const heap = ["--max-old-space-size=56"]
      const bounded = yield* measured(4 * MiB, 60, heap)
      const unbounded = yield* measured(1024 * MiB, 60, heap)
      console.log(`60 streams x ~1 Mi chars, 56 MiB heap: 4 MiB bound ${JSON.stringify(bounded)}; 1 GiB bound ${JSON.stringify(unbounded)}`)
      assert.deepStrictEqual([bounded.answered, bounded.alive], [60, true])
      assert.isFalse(unbounded.alive, "without the bound the events of every stream are kept")
    }), 240_000)
})
