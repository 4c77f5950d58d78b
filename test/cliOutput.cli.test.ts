import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"
import { fixturePath, tempDirectory } from "./support.js"

const bin = fixturePath("..", "bin", "run-pipeline.js")

/**
 * Runs the CLI as a shell pipeline, `run-pipeline … | cat`: stdout is a real pipe (the kind a script
 * reads from), which is asynchronous in Node, so a process that exits with output still queued loses
 * everything past the pipe's buffer. The exit code is the CLI's own.
 */
const cliThroughCat = (args: ReadonlyArray<string>) =>
  Effect.async<{ readonly code: number | null; readonly stdout: string }>((resume) => {
    const script = `"${process.execPath}" "${bin}" "$@" 2>/dev/null | cat; exit "\${PIPESTATUS[0]}"`
    const child = spawn("bash", ["-c", script, "run-pipeline", ...args], { stdio: ["ignore", "pipe", "ignore"] })
    let stdout = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout })))
  })

describe("run-pipeline output through a pipe", () => {
  it.scoped("a rejection larger than the pipe's buffer arrives whole, with exit code 1", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const runDirectory = path.join(work, "run")
      yield* Effect.promise(() => fsp.mkdir(runDirectory))
      const source = "https://reports.example.com/a.txt" as SourceUrl
      const record = makeCaptureRecord({
        source,
        text: "Net sales for Q3 2026 were 4,210 units.\n",
        accessedAt: "2026-11-30T09:00:00.000Z" as Rfc3339Utc,
        contentType: "text/plain"
      })
      yield* Effect.flatMap(CaptureStore.makeFileSystem({ directory: runDirectory }), (store) => store.write(record))
      const labels = Array.from({ length: 40 }, (_, i) => `fact_${i}`)
      const config = path.join(work, "pipeline.json")
      const report = path.join(work, "report.json")
      const facts = labels.map((label) => ({
        state: "cited", label, source, captureSha256: record.sha256, snippet: "x".repeat(1_900)
      }))
      yield* Effect.promise(() => fsp.writeFile(config, JSON.stringify({ sources: [source], labels })))
      yield* Effect.promise(() => fsp.writeFile(report, JSON.stringify({ facts })))
      const ran = yield* cliThroughCat(["verify", "--config", config, "--run-dir", runDirectory, "--report", report, "--format", "json"])
      assert.strictEqual(ran.code, 1)
      assert.isAbove(ran.stdout.length, 80_000, "more than a pipe buffer (64 KiB) of output")
      const parsed = JSON.parse(ran.stdout) as { readonly error: { readonly failures: ReadonlyArray<unknown> } }
      assert.strictEqual(parsed.error.failures.length, 40)
    }), 60_000)
})
