/**
 * TLS in the capture stage, against a real https server on 127.0.0.1 whose
 * certificates are made for each run with the openssl command line (a test CA,
 * leaves signed by it for IP 127.0.0.1, for citegate.test and for another
 * name): verification cannot be switched off by the environment, a private CA
 * is trusted only through `caFile` / `ca`, and the host name is checked
 * through the address-pinned connector.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as Undici from "@effect/platform-node/Undici"
import * as Capture from "../src/capture/Capture.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Dispatcher from "../src/capture/Dispatcher.js"
import { CertificateRejected, InvalidCaFile, NotApproved } from "../src/Errors.js"
import { fixturePath, snapshotDirectory, tempDirectory } from "./support.js"
import { body, httpsServer, makePki } from "./support/tlsPki.js"

/** Test-mode capture of one source into a fresh run directory; the result and the directory's files. */
const captureOnce = (source: string, extra: Partial<Capture.CaptureOptions> = {}) =>
  Effect.gen(function*() {
    const directory = yield* tempDirectory
    const context = yield* Layer.build(
      Capture.layer({ approved: [source], allowLoopbackHttp: true, timeoutMs: 5_000, ...extra }).pipe(
        Layer.provide(CaptureStore.layerFileSystem({ directory }))
      )
    ).pipe(Effect.orDie)
    const result = yield* Effect.either(Context.get(context, Capture.Capture).capture(source))
    return { result, files: yield* snapshotDirectory(directory) }
  })

const failure = <A, E>(result: Either.Either<A, E>): E => {
  if (Either.isRight(result)) throw new Error("expected a failure, got a capture")
  return result.left
}

describe("Capture over TLS", () => {
  it.scopedLive("a private CA trusted through caFile (or ca) is accepted", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const server = yield* httpsServer(pki.leaf.ip)
      const source = `https://127.0.0.1:${server.port}/q3.txt`
      for (const trust of [{ caFile: pki.caFile }, { ca: pki.ca }]) {
        const { files, result } = yield* captureOnce(source, trust)
        assert.isTrue(Either.isRight(result), String(Either.isLeft(result) && result.left.message))
        if (Either.isRight(result)) assert.strictEqual(result.right.byteLength, Buffer.byteLength(body))
        assert.strictEqual(files.length, 1)
      }
      assert.strictEqual(server.requests, 2)
    }))

  it.scopedLive("CertificateRejected: without the CA, a CA-signed or self-signed leaf is refused before any request", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      for (const [credentials, code] of [
        [pki.leaf.ip, "UNABLE_TO_VERIFY_LEAF_SIGNATURE"],
        [pki.selfSigned, "DEPTH_ZERO_SELF_SIGNED_CERT"]
      ] as const) {
        const server = yield* httpsServer(credentials)
        const source = `https://127.0.0.1:${server.port}/q3.txt`
        const { files, result } = yield* captureOnce(source)
        const error = failure(result)
        assert.instanceOf(error, CertificateRejected)
        assert.strictEqual(error.source, source)
        assert.strictEqual(error.host, "127.0.0.1")
        assert.strictEqual(error.code, code)
        assert.isNotEmpty(error.detail)
        assert.deepStrictEqual(files, [])
        assert.strictEqual(server.connections, 1)
        assert.strictEqual(server.requests, 0)
      }
    }))

  it.scopedLive("CertificateRejected: a certificate for another name, even from the trusted CA", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const server = yield* httpsServer(pki.leaf.otherName)
      const source = `https://127.0.0.1:${server.port}/q3.txt`
      const { files, result } = yield* captureOnce(source, { caFile: pki.caFile })
      const error = failure(result)
      assert.instanceOf(error, CertificateRejected)
      assert.strictEqual(error.code, "ERR_TLS_CERT_ALTNAME_INVALID")
      assert.match(error.detail, /127\.0\.0\.1/)
      assert.deepStrictEqual(files, [])
      assert.strictEqual(server.requests, 0)
    }))

  it.scopedLive("the pinned connector sends the host name as SNI and checks the certificate against it", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      // Fault injection for DNS only: citegate.test answers 127.0.0.1 (reachable in test mode). The socket goes to
      // the checked address while TLS speaks to the name.
      const resolver: Dispatcher.Resolver = async (hostname) =>
        hostname === "citegate.test" ? [{ address: "127.0.0.1", family: 4 }] : []
      const agent = yield* Dispatcher.make({ allowLoopbackHttp: true, resolver, ca: [pki.ca] })
      const get = (port: number) =>
        Effect.tryPromise(() =>
          Undici.request(`https://citegate.test:${port}/q3.txt`, { dispatcher: agent }).then((r) => r.body.text())
        ).pipe(Effect.either)

      const right = yield* httpsServer(pki.leaf.name)
      const ok = yield* get(right.port)
      assert.deepStrictEqual(ok, Either.right(body))
      assert.deepStrictEqual(right.servernames, ["citegate.test"])

      const wrong = yield* httpsServer(pki.leaf.otherName)
      const refused = yield* get(wrong.port)
      assert.isTrue(Either.isLeft(refused))
      const cause = Either.isLeft(refused) ? refused.left.cause : undefined
      assert.instanceOf(cause, Dispatcher.CertificateRefusedError)
      assert.strictEqual(cause.host, "citegate.test")
      assert.strictEqual(cause.code, "ERR_TLS_CERT_ALTNAME_INVALID")
      assert.strictEqual(wrong.requests, 0)
    }))

  it.scopedLive("test mode reaches only the literal host 127.0.0.1 over https too: a name is never resolved", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const server = yield* httpsServer(pki.leaf.name)
      const calls: Array<string> = []
      const resolver: Dispatcher.Resolver = async (hostname) => {
        calls.push(hostname)
        return [{ address: "127.0.0.1", family: 4 }]
      }
      for (const source of [`https://citegate.test:${server.port}/q3.txt`, `https://localhost:${server.port}/q3.txt`]) {
        const { files, result } = yield* captureOnce(source, { resolver, caFile: pki.caFile })
        const error = failure(result)
        assert.instanceOf(error, NotApproved, source)
        assert.strictEqual(error.reason, "host-not-allowed")
        assert.deepStrictEqual(files, [])
      }
      assert.deepStrictEqual(calls, [])
      assert.strictEqual(server.connections, 0)
    }))
})

describe("Capture over TLS: the CA file", () => {
  it.scopedLive("InvalidCaFile: missing, a directory, a private key, garbage, a broken block, too large", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const file = (name: string, content: string | Buffer) =>
        Effect.as(Effect.promise(() => fsp.writeFile(path.join(pki.directory, name), content)), path.join(pki.directory, name))
      const key = yield* Effect.promise(() => fsp.readFile(path.join(pki.directory, "ca.key"), "utf8"))
      const cases: ReadonlyArray<readonly [string, RegExp]> = [
        [path.join(pki.directory, "absent.pem"), /no such file/],
        [pki.directory, /not a regular file/],
        [yield* file("key.pem", pki.ca + key), /PRIVATE KEY block/],
        [yield* file("garbage.pem", "not a certificate\n"), /no PEM certificate/],
        [yield* file("broken.pem", pki.ca.replace("-----END CERTIFICATE-----", "")), /malformed PEM block/],
        [yield* file("bad.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), /not a valid X\.509/],
        [yield* file("huge.pem", Buffer.alloc(1024 * 1024 + 1, 0x41)), /exceeds the 1048576 byte limit/]
      ]
      for (const [caFile, detail] of cases) {
        const directory = yield* tempDirectory
        const error = yield* Layer.build(
          Capture.layer({ approved: ["https://127.0.0.1/x"], allowLoopbackHttp: true, caFile }).pipe(
            Layer.provide(CaptureStore.layerFileSystem({ directory }))
          )
        ).pipe(Effect.flip)
        assert.instanceOf(error, InvalidCaFile, caFile)
        assert.strictEqual(error.path, caFile)
        assert.match(error.detail, detail)
      }
      const direct = yield* Layer.build(
        Capture.layer({ approved: ["https://127.0.0.1/x"], ca: key }).pipe(
          Layer.provide(CaptureStore.layerFileSystem({ directory: pki.directory }))
        )
      ).pipe(Effect.flip)
      assert.instanceOf(direct, InvalidCaFile)
      assert.isNull(direct.path)
    }))
})

// ---------------------------------------------------------------------------
// The CLI in a child process, with the environment trying to weaken TLS
// ---------------------------------------------------------------------------

const bin = fixturePath("..", "bin", "run-pipeline.js")

const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

describe("run-pipeline capture over TLS", () => {
  it.scopedLive("NODE_TLS_REJECT_UNAUTHORIZED=0 (and NODE_EXTRA_CA_CERTS) in the environment do not weaken verification", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const server = yield* httpsServer(pki.leaf.ip)
      const source = `https://127.0.0.1:${server.port}/q3.txt`
      const work = yield* tempDirectory
      const config = path.join(work, "pipeline.json")
      yield* Effect.promise(() => fsp.writeFile(config, JSON.stringify({ sources: [source], labels: ["q3"] })))
      for (const env of [{ NODE_TLS_REJECT_UNAUTHORIZED: "0" }, { NODE_EXTRA_CA_CERTS: pki.caFile }]) {
        const runDir = path.join(work, `run-${Object.keys(env)[0]}`)
        const ran = yield* cli(["capture", "--config", config, "--run-dir", runDir, "--allow-loopback-http"], env)
        assert.strictEqual(ran.code, 1, ran.stderr)
        assert.match(ran.stderr, /FAILED .*CertificateRejected: TLS certificate rejected/)
        assert.match(ran.stdout, /CertificateRejected.*code=UNABLE_TO_VERIFY_LEAF_SIGNATURE/)
        assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(runDir)), [])
      }
      assert.strictEqual(server.requests, 0)
    }))

  it.scopedLive("capture.caFile, relative to pipeline.json, is trusted; an invalid one is exit 2 before the run directory exists", () =>
    Effect.gen(function*() {
      const pki = yield* makePki
      const server = yield* httpsServer(pki.leaf.ip)
      const source = `https://127.0.0.1:${server.port}/q3.txt`
      const config = path.join(pki.directory, "pipeline.json")
      const write = (caFile: string) =>
        Effect.promise(() => fsp.writeFile(config, JSON.stringify({ sources: [source], labels: ["q3"], capture: { caFile } })))
      const work = yield* tempDirectory
      yield* write("ca.pem")
      const ok = yield* cli(["capture", "--config", config, "--run-dir", path.join(work, "ok"), "--allow-loopback-http"], {})
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.match(ok.stdout, /1 of 1 sources captured/)

      yield* write("ca.key")
      const runDir = path.join(work, "bad")
      const bad = yield* cli(["capture", "--config", config, "--run-dir", runDir, "--allow-loopback-http"], {})
      assert.strictEqual(bad.code, 2, bad.stderr)
      assert.match(bad.stderr, /InvalidCaFile: The CA file .*ca\.key cannot be used: holds a PRIVATE KEY block/)
      yield* Effect.promise(() => fsp.access(runDir).then(() => assert.fail("run directory created"), () => undefined))
      assert.strictEqual(server.requests, 1)
    }))
})
