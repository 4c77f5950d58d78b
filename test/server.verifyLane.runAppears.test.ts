/**
 * A run that appears while a report for it is still uploading (another replica's capture, a copy,
 * a restore) is looked up when the body has arrived: the lane and the general path answer alike.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as net from "node:net"
import * as path from "node:path"
import { salesRecord, tempDirectory, writeRecords } from "./support.js"
import { startSalesService } from "./support/salesService.js"

const token = "run-appears-admin-token-0123456789"
const body = JSON.stringify({ facts: [] })
const head = (runId: string) =>
  `POST /v1/verify/report?run=${runId} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\n` +
  `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`

describe("a run that appears during the upload of a report for it", () => {
  for (const verifyLane of [true, false]) {
    it.live(`is found once the body has arrived (lane ${verifyLane ? "on" : "off"})`, () =>
      Effect.gen(function*() {
        const work = yield* tempDirectory
        const runRoot = path.join(work, "runs")
        yield* Effect.promise(() => fsp.mkdir(runRoot, { recursive: true }))
        const port = yield* startSalesService({ work, runRoot, verifyLane, token })
        const socket = net.connect(port, "127.0.0.1")
        let answer = ""
        socket.on("data", (chunk: Buffer) => answer += chunk.toString("latin1"))
        const closed = new Promise<void>((done) => socket.once("close", () => done()))
        yield* Effect.promise(() => new Promise((connected) => socket.once("connect", connected)))
        // The head and the first bytes of the body: the run is not there yet.
        socket.write(head("r2") + body.slice(0, 3))
        yield* Effect.sleep("300 millis")
        yield* Effect.promise(() => fsp.mkdir(path.join(runRoot, "r2")))
        yield* writeRecords(path.join(runRoot, "r2"), [salesRecord])
        // Written, not ended: a half-closed socket is closed by the server before it answers.
        socket.write(body.slice(3))
        yield* Effect.promise(() => closed)
        expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
      }).pipe(Effect.scoped), 60_000)
  }
})
