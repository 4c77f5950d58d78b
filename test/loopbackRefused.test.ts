/**
 * Test mode is opt-in: an https source on 127.0.0.1, whose certificate the capture would trust (the
 * test CA given as `ca` / `caFile`), is refused without `allowLoopbackHttp` (`--allow-loopback-http`)
 * before any connection: `AddressRejected`, and the server never sees a connection. With test mode
 * it is captured, so the refusal is the address policy's, not a TLS failure.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { AddressRejected } from "../src/Errors.js"
import { cliInProcess } from "./cliInProcess.js"
import { tempDirectory } from "./support.js"
import { httpsServer, makePki } from "./support/tlsPki.js"

const captureOnce = (source: string, options: Partial<Capture.CaptureOptions>) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const context = yield* Layer.build(
      Capture.layer({ approved: [source], timeoutMs: 5_000, ...options }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    ).pipe(Effect.orDie)
    return yield* Effect.either(Context.get(context, Capture.Capture).capture(source))
  })

describe("https on 127.0.0.1 without test mode", () => {
  it.scopedLive("the library: AddressRejected, no connection; with allowLoopbackHttp the same source is captured", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const server = yield* httpsServer(pki.leaf.ip)
      const source = `https://127.0.0.1:${server.port}/q3.txt`
      for (const options of [{}, { allowLoopbackHttp: false }]) {
        const refused = yield* captureOnce(source, { ...options, ca: pki.ca })
        assert.isTrue(Either.isLeft(refused))
        if (Either.isRight(refused)) return
        assert.instanceOf(refused.left, AddressRejected)
        assert.strictEqual(server.connections, 0)
      }
      const captured = yield* captureOnce(source, { allowLoopbackHttp: true, ca: pki.ca })
      assert.isTrue(Either.isRight(captured), JSON.stringify(captured))
      assert.strictEqual(server.connections, 1)
    }))

  it.scopedLive("the CLI: capture without --allow-loopback-http fails the source with AddressRejected, no connection", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const server = yield* httpsServer(pki.leaf.ip)
      const work = yield* tempDirectory
      const source = `https://127.0.0.1:${server.port}/q3.txt`
      const config = path.join(work, "pipeline.json")
      yield* Effect.promise(() =>
        fsp.writeFile(config, JSON.stringify({ sources: [source], labels: ["x"], capture: { caFile: pki.caFile } }))
      )
      const ran = yield* cliInProcess(["capture", "--config", config, "--run-dir", path.join(work, "run"), "--format", "json"])
      assert.strictEqual(ran.code, 1, ran.stderr)
      const results = JSON.parse(ran.stdout) as { results: ReadonlyArray<{ status: string; error?: { _tag: string } }> }
      assert.deepStrictEqual(results.results.map((r) => [r.status, r.error?._tag]), [["failed", "AddressRejected"]])
      assert.strictEqual(server.connections, 0)
    }))
})
