/**
 * `server.verifyThreads` through the real CLI (`bin/run-pipeline.js serve`, the bundle): the
 * threads start from the bundled entry point, answer with the same bytes as a service without
 * threads, and end with the process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { tokenDigest } from "../src/server/Auth.js"
import { startServe } from "./serveProcess.js"
import { SALES, salesRecord, tempDirectory, writeRecords } from "./support.js"

const TOKEN = "citegate-threads-cli-token"

const report = JSON.stringify({
  facts: [{ state: "cited", label: "q3_net_sales", source: SALES, captureSha256: salesRecord.sha256, snippet: "Net sales for Q3 2026 were 4,210 units" }]
})

describe("serve with server.verifyThreads", () => {
  it.scopedLive("starts its threads from the bundle and answers as without them", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const runRoot = path.join(work, "runs")
      yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r1"), { recursive: true }))
      yield* writeRecords(path.join(runRoot, "r1"), [salesRecord])
      const serveWith = (name: string, server: Record<string, unknown>) =>
        Effect.gen(function*() {
          const file = path.join(work, name)
          const config = { sources: [SALES], labels: ["q3_net_sales"], server: { tokens: [{ sha256: tokenDigest(TOKEN), runs: "*", capture: false }], ...server } }
          yield* Effect.promise(() => fsp.writeFile(file, JSON.stringify(config)))
          return yield* startServe(["--config", file, "--listen", "127.0.0.1:0", "--run-root", runRoot])
        })
      const off = yield* serveWith("off.json", {})
      const on = yield* serveWith("on.json", { verifyThreads: 2 })
      assert.deepStrictEqual(on.logs().find((line) => line.message === "verification threads ready")?.annotations, { threads: 2 })
      assert.isUndefined(off.logs().find((line) => line.message === "verification threads ready"))
      const post = (base: string) =>
        Effect.promise(async () => {
          const response = await fetch(`${base}/v1/verify/report?run=r1`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: report })
          return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
        })
      const expected = yield* post(off.base)
      assert.strictEqual(JSON.parse(expected.body).report.outcome, "grounded")
      // Each thread's first (its cache filled) and warm answers.
      for (let i = 0; i < 4; i++) assert.deepStrictEqual(yield* post(on.base), expected)
      // Two threads beside the main one: the process has two more than the one without.
      const threadCount = (pid: number) => Effect.promise(() => fsp.readdir(`/proc/${pid}/task`).then((tasks) => tasks.length))
      assert.strictEqual((yield* threadCount(on.pid)) - (yield* threadCount(off.pid)), 2)
    }), 60_000)
})
