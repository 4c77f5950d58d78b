/**
 * How `run-pipeline` ends: SIGINT and SIGTERM during a capture exit 130 and 143
 * with one line on stderr, the source server sees its socket closed, and no
 * record is left under a final name; a defect exits 70. Runs the compiled CLI
 * (`npm run build`) as a separate process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CliExit from "../src/cli/Exit.js"
import { testServer, waitUntil } from "./httpServer.js"
import { fixturePath, tempDirectory } from "./support.js"

const bin = fixturePath("..", "bin", "run-pipeline.js")

describe("run-pipeline: signals during a capture", () => {
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    it.scopedLive(`${signal} exits ${code} with one line on stderr, closes the socket and keeps no partial record`, () =>
      Effect.gen(function*() {
        // A source that drips a byte every 50 ms and never ends.
        const server = yield* testServer((_req, res, state) => {
          res.writeHead(200, { "content-type": "text/plain" })
          const timer = setInterval(() => {
            res.write("x")
            state.bytesWritten++
          }, 50)
          res.on("close", () => clearInterval(timer))
        })
        const work = yield* tempDirectory
        const config = path.join(work, "pipeline.json")
        const source = server.url("/drip.txt")
        yield* Effect.promise(() =>
          fsp.writeFile(config, JSON.stringify({ sources: [source], labels: ["x"], capture: { timeoutMs: 600_000 } }))
        )
        const runDir = path.join(work, "run")
        const child = spawn(process.execPath, [bin, "capture", "--config", config, "--run-dir", runDir, "--allow-loopback-http"], {
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stderr = ""
        let stdout = ""
        child.stdout.on("data", (d) => (stdout += d))
        child.stderr.on("data", (d) => (stderr += d))
        const closed = Effect.async<number | null>((resume) => {
          if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
          child.on("close", (exitCode) => resume(Effect.succeed(exitCode)))
        })
        yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))

        // Mid-body: the request arrived and bytes are flowing.
        yield* waitUntil(() => server.bytesWritten >= 3, "the capture is reading the body", 15_000)
        child.kill(signal)
        const exitCode = yield* closed
        assert.strictEqual(exitCode, code, stderr)
        const lines = stderr.trimEnd().split("\n")
        assert.strictEqual(lines.at(-1), `run-pipeline: interrupted by ${signal}; open connections closed, no partial capture kept`)
        assert.notMatch(stderr, /internal error/)
        assert.notMatch(stdout, /sources captured/)
        yield* waitUntil(() => server.connections >= 1 && server.closed === server.connections, "the socket is closed")
        // The run directory was created, and holds nothing: no record, no temporary file.
        assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(runDir)), [])
      }))
  }
})

describe("run-pipeline: exit codes", () => {
  it("a signal decides the code, 128 + its number, whatever the program's exit", () => {
    for (const exit of [Exit.succeed(0), Exit.interrupt(0 as never), Exit.die(new Error("boom"))]) {
      assert.strictEqual(CliExit.outcome(exit as Exit.Exit<number>, "SIGINT").code, 130)
      assert.strictEqual(CliExit.outcome(exit as Exit.Exit<number>, "SIGTERM").code, 143)
    }
  })

  it("the command's own code passes through; a defect or a stray interruption is 70 with its cause on stderr", () => {
    for (const code of [0, 1, 2]) assert.deepStrictEqual(CliExit.outcome(Exit.succeed(code), undefined), { code, message: undefined })
    const died = CliExit.outcome(Exit.failCause(Cause.die(new Error("boom"))), undefined)
    assert.strictEqual(died.code, 70)
    assert.match(died.message ?? "", /^run-pipeline: internal error: .*boom/)
    assert.strictEqual(CliExit.outcome(Exit.interrupt(0 as never), undefined).code, 70)
  })
})
