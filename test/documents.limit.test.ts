/**
 * The hand-off limit at the edges: a run whose two captures hold 9 Mi characters together (each
 * within the capture cap) is refused by `sources --format …` (DocumentsTooLarge, exit 1, nothing
 * on stdout) and by `GET /v1/runs/{id}/documents` (422), while its manifest is still listed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { cli } from "./cliProcess.js"
import { testServer } from "./httpServer.js"
import { call, startService, tokens } from "./serverSupport.js"

const half = "Net sales reached 4,210 units in the third quarter.\n".repeat(Math.ceil(4.5 * 1024 * 1024 / 52))

describe("the documents hand-off past its limit", () => {
  it.scopedLive("CLI: DocumentsTooLarge on stderr, exit 1, nothing on stdout; service: 422 with the same error", () =>
    Effect.gen(function*() {
      const server = yield* testServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
        res.end(half)
      })
      const sources = [server.url("/a.txt"), server.url("/b.txt")]
      const service = yield* startService({ sources })
      // A run captured by the CLI under the service's run root is readable there by its name.
      const runDir = path.join(service.runRoot, "big")
      yield* Effect.promise(() => fsp.mkdir(service.runRoot, { recursive: true }))
      const captured = yield* cli(["capture", "--config", service.configFile, "--run-dir", runDir, "--allow-loopback-http"])
      assert.strictEqual(captured.code, 0, captured.stderr)
      const refused = yield* cli(["sources", "--config", service.configFile, "--run-dir", runDir, "--format", "anthropic"])
      assert.strictEqual(refused.code, 1)
      assert.strictEqual(refused.stdout, "")
      assert.match(refused.stderr, new RegExp(`^DocumentsTooLarge: The run's capture texts pass the hand-off limit of 8388608 characters at source 2 \\(${sources[1]!.replace(/[.]/g, "\\.")}\\): ${2 * half.length} characters so far`))
      const manifest = yield* cli(["sources", "--config", service.configFile, "--run-dir", runDir, "--format", "json"])
      assert.strictEqual(manifest.code, 0, manifest.stderr)
      const response = yield* call(service, "/v1/runs/big/documents?format=evi1", { token: tokens.admin })
      assert.strictEqual(response.status, 422)
      assert.deepStrictEqual(response.json, { _tag: "DocumentsTooLarge", maxChars: 8388608, chars: 2 * half.length, number: 2, source: sources[1] })
    }), { timeout: 120_000 })
})
