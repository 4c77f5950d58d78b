/**
 * The answer formats through the command line, in process: `verify-answer --format-in
 * bedrock-stream` reads a ConverseStream body (AWS event stream messages, encoded by the SDK's codec)
 * from a file, and `audit --format-in` takes every format the dispatcher knows (`answerFormats`, the
 * one list): a provider answer verified against the old run audits against a new one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { answerFormats } from "../src/answer/Formats.js"
import * as Config from "../src/Config.js"
import * as Manifest from "../src/Manifest.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { cliInProcess } from "./cliInProcess.js"
import { bedrockFixtures } from "./providerFixtures.js"
import { configJson, records } from "./providerSupport.js"
import { bodyOf, corrupt, encodeEvent, streamOf } from "./support/eventStream.js"
import { tempDirectory, writeRecords } from "./support.js"

/** Two runs of the same captures (old and new), a config under the quote policy, the manifest digest. */
const setup = Effect.gen(function*() {
  const work = yield* tempDirectory
  const oldRun = path.join(work, "runs", "old")
  const newRun = path.join(work, "runs", "new")
  for (const dir of [oldRun, newRun]) {
    yield* Effect.promise(() => fsp.mkdir(dir, { recursive: true }))
    yield* writeRecords(dir, records)
  }
  const json = configJson("quote")
  const configFile = path.join(work, "pipeline.json")
  yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(json)))
  const config = yield* Config.decode(json)
  const manifest = yield* Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: oldRun })))
  const write = (name: string, bytes: string | Uint8Array) =>
    Effect.promise(async () => {
      const file = path.join(work, name)
      await fsp.writeFile(file, bytes)
      return file
    })
  return { oldRun, newRun, configFile, digest: manifest.digest, write }
})

describe("answer formats on the command line", () => {
  it.scoped("verify-answer --format-in bedrock-stream: a recorded stream grounds, a damaged one is ProviderEventInvalid", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const verify = (file: string) =>
        cliInProcess([
          "verify-answer", "--answer", file, "--format-in", "bedrock-stream", "--config", s.configFile, "--run-dir", s.oldRun,
          "--manifest-digest", s.digest, "--format", "json"
        ])
      const grounded = yield* verify(yield* s.write("grounded.bin", bodyOf(streamOf(bedrockFixtures.grounded))))
      assert.strictEqual(grounded.code, 0, grounded.stderr)
      const answer = JSON.parse(grounded.stdout).answer
      assert.deepStrictEqual([answer.summary.citationsVerified, answer.claims[0].id], [2, "block-1"])
      const events = streamOf(bedrockFixtures.grounded).map(encodeEvent)
      events[2] = corrupt(events[2]!)
      const damaged = yield* verify(yield* s.write("damaged.bin", Buffer.concat(events)))
      assert.strictEqual(damaged.code, 1, damaged.stderr)
      const error = JSON.parse(damaged.stdout).error
      assert.deepStrictEqual([error._tag, error.format, error.event], ["ProviderEventInvalid", "bedrock-converse-stream", 3])
    }))

  it.scoped("audit --format-in takes every dispatcher format: bedrock and bedrock-stream answers audit as stable", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const audit = (format: string, file: string) =>
        cliInProcess([
          "audit", "--answer", file, "--format-in", format, "--manifest-digest", s.digest, "--config", s.configFile,
          "--run-dir", s.oldRun, "--against", s.newRun, "--mode", "drop", "--format", "json"
        ])
      const files = {
        bedrock: yield* s.write("bedrock.json", JSON.stringify(bedrockFixtures.grounded)),
        "bedrock-stream": yield* s.write("bedrock.bin", bodyOf(streamOf(bedrockFixtures.grounded)))
      }
      for (const [format, file] of Object.entries(files)) {
        const ran = yield* audit(format, file)
        assert.strictEqual(ran.code, 0, `${format}: ${ran.stderr}`)
        const result = JSON.parse(ran.stdout)
        assert.deepStrictEqual([result.outcome, result.summary.citations, result.summary.unchanged], ["stable", 2, 2], format)
      }
      // Every format of the dispatcher is an accepted choice (a refused choice is a usage error, exit 2).
      for (const format of answerFormats) {
        const ran = yield* audit(format, yield* s.write(`empty-${format}`, "{}"))
        assert.notMatch(ran.stderr, /format-in/, format)
      }
    }))
})
