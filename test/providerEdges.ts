/**
 * The edges the provider tests drive: a run directory with the provider sources and a config file
 * under an `answers.citations` policy; `run-pipeline verify-answer --format-in <format>` as a
 * spawned process on the built CLI; the service on 127.0.0.1 over that run root
 * (`POST /v1/verify/answer?format=…` and `POST /v1/stream/answer?format=…`).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect, Exit, Layer, Scope } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import type { CitationsPolicy } from "../src/answer/Records.js"
import * as Config from "../src/Config.js"
import * as Manifest from "../src/Manifest.js"
import * as AnswerStream from "../src/server/AnswerStream.js"
import { tokenDigest } from "../src/server/Auth.js"
import * as Server from "../src/server/Server.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { cli } from "./cliProcess.js"
import { configJson, records } from "./providerSupport.js"
import { tempDirectory, writeRecords } from "./support.js"

/** Text and bytes are written as they are; anything else as its JSON. */
const content = (value: unknown): string | Uint8Array => (typeof value === "string" || value instanceof Uint8Array ? value : JSON.stringify(value))

/** A run directory with the provider sources, a config file under the policy, and the manifest digest. */
export const setup = (policy: CitationsPolicy) =>
  Effect.gen(function*() {
    const work = yield* tempDirectory
    const runDir = path.join(work, "runs", "run-1")
    yield* Effect.promise(() => fsp.mkdir(runDir, { recursive: true }))
    yield* writeRecords(runDir, records)
    const json = configJson(policy)
    const configFile = path.join(work, "pipeline.json")
    yield* Effect.promise(() => fsp.writeFile(configFile, JSON.stringify(json)))
    const config = yield* Config.decode(json)
    const manifest = yield* Manifest.make(config).pipe(Effect.provide(CaptureStore.layerFileSystem({ directory: runDir })))
    const write = (name: string, value: unknown) =>
      Effect.promise(async () => {
        const file = path.join(work, name)
        await fsp.writeFile(file, content(value))
        return file
      })
    return { work, runDir, configFile, config, manifest, write }
  })

export type Setup = Effect.Effect.Success<ReturnType<typeof setup>>

export const verifyCli = (s: Setup, format: string, file: string) =>
  cli([
    "verify-answer", "--answer", file, "--format-in", format, "--config", s.configFile, "--run-dir", s.runDir,
    "--manifest-digest", s.manifest.digest, "--mode", "drop", "--format", "json"
  ])

const token = "provider-test-token-0123456789abcdef"

/**
 * The service on 127.0.0.1 over the setup's run root, its configuration the setup's with `extra`
 * (top-level keys, e.g. `verify`) and a reader token for every run: its port and that token.
 */
export const listen = (s: Setup, extra: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const config = yield* Config.decode({
      ...configJson(s.config.answers?.citations),
      ...extra,
      server: { tokens: [{ sha256: tokenDigest(token), runs: "*", capture: false, name: "reader" }] }
    })
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(
      Server.layer({ config, configFile: s.configFile, runRoot: path.join(s.work, "runs"), allowLoopbackHttp: true, host: "127.0.0.1", port: 0 }),
      scope
    )
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    return { port: address._tag === "TcpAddress" ? address.port : 0, token }
  })

/** The service on 127.0.0.1 over the setup's run root: its answer route and its stream route. */
export const service = (s: Setup) =>
  Effect.gen(function*() {
    const { port } = yield* listen(s)
    const send = (route: "verify" | "stream", format: string, body: unknown) =>
      fetch(`http://127.0.0.1:${port}/v1/${route}/answer?run=run-1&format=${format}&mode=drop&manifest=${s.manifest.digest}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": body instanceof Uint8Array ? "application/vnd.amazon.eventstream" : "application/json"
        },
        body: content(body)
      })
    return {
      /** `POST /v1/verify/answer?format=…`: the status and the JSON rendering. */
      verify: (format: string, body: unknown) =>
        Effect.promise(async () => {
          const response = await send("verify", format, body)
          return { status: response.status, json: (await response.json()) as any }
        }),
      /** `POST /v1/stream/answer?format=…`: the status and every event (strictly decoded). */
      stream: (format: string, body: unknown) =>
        Effect.promise(async () => {
          const response = await send("stream", format, body)
          const text = await response.text()
          const lines = text.split("\n").filter((l) => l !== "")
          return { status: response.status, events: response.status === 200 ? lines.map(AnswerStream.decodeEvent) : [], text }
        })
    }
  })
