/**
 * Signed captures through the program: `run-pipeline capture` with `capture.signing.keyFile` writes
 * an attestation beside each record, and `run-pipeline verify` under `verify.signatures: "require"`
 * (trusted keys named by file, beside pipeline.json) accepts the run, then refuses it once a capture
 * is unsigned, tampered with, signed by an untrusted key, cut short or given another record's
 * envelope. A bad key file stops the capture before the run exists. No private key text is output.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { generateKeyPairSync } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { SourceUrl } from "../src/Domain.js"
import { keyIdOf } from "../src/evidence/Signatures.js"
import { RenderedResult } from "../src/render/Rendering.js"
import { cliInProcess } from "./cliInProcess.js"
import { testServer } from "./httpServer.js"
import { tempDirectory } from "./support.js"

const bodies: Record<string, string> = {
  "/sales.txt": "Net sales for Q3 2026 were 4,210 units.\n",
  "/stock.txt": "Inventory at the end of Q3 2026 was 1,180 units.\n"
}

const keyPair = (directory: string, name: string) =>
  Effect.promise(async () => {
    const pair = generateKeyPairSync("ed25519")
    const privateFile = path.join(directory, `${name}.pem`)
    const privatePem = pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string
    await fsp.writeFile(privateFile, privatePem)
    await fsp.writeFile(path.join(directory, `${name}.pub.pem`), pair.publicKey.export({ type: "spki", format: "pem" }))
    return { keyid: keyIdOf(pair.publicKey), secret: privatePem.split("\n")[1]! }
  })

const setup = Effect.gen(function*() {
  const server = yield* testServer((request, response) => {
    const body = bodies[request.url ?? ""]
    response.writeHead(body === undefined ? 404 : 200, { "content-type": "text/plain; charset=utf-8" })
    response.end(body ?? "not found")
  })
  const sources = [server.url("/sales.txt"), server.url("/stock.txt")]
  const work = yield* tempDirectory
  const key = yield* keyPair(work, "signing")
  const base = { sources, labels: ["sales", "stock"] }
  const write = (name: string, value: unknown) =>
    Effect.as(Effect.promise(() => fsp.writeFile(path.join(work, name), JSON.stringify(value))), path.join(work, name))
  const captureConfig = yield* write("capture.json", { ...base, capture: { signing: { keyFile: "signing.pem" } } })
  const verifyConfig = (signatures: "check" | "require", trusted: Record<string, string>) =>
    write(`verify-${signatures}.json`, { ...base, verify: { maxFacts: 10, mode: "reject", signatures, trustedKeys: trusted } })
  return { sources, work, key, captureConfig, verifyConfig, write }
})

/** Captures both sources into a new run with the capture config; returns the run and a report citing both. */
const capturedRun = (s: Effect.Effect.Success<typeof setup>, name: string, config = s.captureConfig) =>
  Effect.gen(function*() {
    const run = path.join(s.work, name)
    const captured = yield* cliInProcess(["capture", "--config", config, "--run-dir", run, "--allow-loopback-http"])
    assert.strictEqual(captured.code, 0, captured.stderr)
    assert.notInclude(captured.stdout + captured.stderr, s.key.secret.slice(0, 24))
    const store = yield* CaptureStore.makeFileSystem({ directory: run })
    const facts = []
    for (const [label, source, snippet] of [["sales", s.sources[0]!, "4,210 units"], ["stock", s.sources[1]!, "1,180 units"]] as const) {
      const record = yield* Effect.orDie(store.read(source as SourceUrl))
      facts.push({ state: "cited", label, source, captureSha256: record.sha256, snippet })
    }
    const report = yield* s.write(`${name}-report.json`, { facts })
    return { run, report }
  })

const attestationFile = (run: string, source: string) => path.join(run, CaptureStore.attestationFileName(source))

const replace = (file: string, text: string) =>
  Effect.promise(async () => {
    await fsp.rm(file, { force: true })
    await fsp.writeFile(file, text)
  })

describe("capture with capture.signing, verify with verify.signatures", () => {
  it.scopedLive("signed captures verify under require; each broken attestation is refused with its tag", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { run, report } = yield* capturedRun(s, "run")
      for (const source of s.sources) {
        const envelope = JSON.parse(yield* Effect.promise(() => fsp.readFile(attestationFile(run, source), "utf8")))
        assert.strictEqual(envelope.signatures[0].keyid, s.key.keyid)
      }
      const require = yield* s.verifyConfig("require", { [s.key.keyid]: "signing.pub.pem" })
      const verify = (runDir: string) => cliInProcess(["verify", "--config", require, "--run-dir", runDir, "--report", report])
      const ok = yield* verify(run)
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.match(ok.stderr, /^verify: GROUNDED/)

      const sales = attestationFile(run, s.sources[0]!)
      const stock = attestationFile(run, s.sources[1]!)
      const original = yield* Effect.promise(() => fsp.readFile(stock, "utf8"))
      const envelope = JSON.parse(original)
      const tampered = (() => {
        const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString())
        statement.subject[0].digest.sha256 = "0".repeat(64)
        return JSON.stringify({ ...envelope, payload: Buffer.from(JSON.stringify(statement)).toString("base64") })
      })()
      const cases: Array<[string, string | undefined, string]> = [
        ["tampered payload", tampered, "SignatureInvalid"],
        ["wrong key id", JSON.stringify({ ...envelope, signatures: [{ ...envelope.signatures[0], keyid: "a".repeat(64) }] }), "UnknownSigningKey"],
        ["truncated base64", JSON.stringify({ ...envelope, payload: envelope.payload.slice(0, -5) }), "SignatureInvalid"],
        ["replayed", yield* Effect.promise(() => fsp.readFile(sales, "utf8")), "SignatureInvalid"],
        ["removed", undefined, "UnsignedCapture"]
      ]
      for (const [what, text, tag] of cases) {
        if (text === undefined) yield* Effect.promise(() => fsp.rm(stock))
        else yield* replace(stock, text)
        const refused = yield* verify(run)
        assert.strictEqual(refused.code, 1, what)
        assert.match(refused.stderr, /^verify: REJECTED \(ReportRejected\)/, what)
        assert.include(refused.stdout, tag, what)
        yield* replace(stock, original)
      }
      const back = yield* verify(run)
      assert.strictEqual(back.code, 0, back.stderr)
    }))

  it.scopedLive("check: an unsigned run passes and the problem is shown beside the result; rotation with two trusted keys", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const unsigned = yield* capturedRun(s, "unsigned", yield* s.write("plain.json", { sources: s.sources, labels: ["sales", "stock"] }))
      const check = yield* s.verifyConfig("check", { [s.key.keyid]: "signing.pub.pem" })
      const checked = yield* cliInProcess(["verify", "--config", check, "--run-dir", unsigned.run, "--report", unsigned.report])
      assert.strictEqual(checked.code, 0, checked.stderr)
      assert.include(checked.stdout, "UnsignedCapture")
      assert.include(checked.stdout, s.sources[1]!)
      assert.include(checked.stdout, "Capture signatures (verify.signatures: check)")
      const args = ["verify", "--config", check, "--run-dir", unsigned.run, "--report", unsigned.report, "--format"]
      const asJson = yield* cliInProcess([...args, "json"])
      assert.strictEqual(asJson.code, 0, asJson.stderr)
      const result = Schema.decodeUnknownSync(RenderedResult)(JSON.parse(asJson.stdout), { onExcessProperty: "error" })
      assert.strictEqual(result.status, "verified")
      assert.deepStrictEqual(
        result.status === "verified" ? result.signatureNotes?.map((n) => [n._tag, n.source]) : [],
        s.sources.map((source) => ["UnsignedCapture", source])
      )
      const asHtml = yield* cliInProcess([...args, "html"])
      assert.match(asHtml.stdout, /<section class="signature-notes" id="signature-notes">[\s\S]*data-tag="UnsignedCapture"[\s\S]*<\/section>\n<\/body>/)
      const asMarkdown = yield* cliInProcess([...args, "markdown"])
      assert.include(asMarkdown.stdout, "## Capture signatures (verify.signatures: check)")

      // A second key: captures by the old and by the new key verify while both are trusted.
      const next = yield* keyPair(s.work, "next")
      const signedOld = yield* capturedRun(s, "old")
      const nextConfig = yield* s.write("capture-next.json", { sources: s.sources, labels: ["sales", "stock"], capture: { signing: { keyFile: "next.pem" } } })
      const signedNew = yield* capturedRun(s, "new", nextConfig)
      const both = yield* s.verifyConfig("require", { [s.key.keyid]: "signing.pub.pem", [next.keyid]: "next.pub.pem" })
      for (const { run, report } of [signedOld, signedNew]) {
        const ok = yield* cliInProcess(["verify", "--config", both, "--run-dir", run, "--report", report])
        assert.strictEqual(ok.code, 0, ok.stderr)
      }
      const onlyNext = yield* s.write("only-next.json", {
        sources: s.sources, labels: ["sales", "stock"], verify: { maxFacts: 10, mode: "reject", signatures: "require", trustedKeys: { [next.keyid]: "next.pub.pem" } }
      })
      const old = yield* cliInProcess(["verify", "--config", onlyNext, "--run-dir", signedOld.run, "--report", signedOld.report])
      assert.strictEqual(old.code, 1)
      assert.include(old.stdout, "UnknownSigningKey")
    }))

  it.scopedLive("doctor counts the attestations beside their records, flags one whose record is gone, and --fix never removes one", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { run } = yield* capturedRun(s, "run")
      const healthy = yield* cliInProcess(["doctor", "--run-dir", run])
      assert.strictEqual(healthy.code, 0, healthy.stdout)
      assert.strictEqual(healthy.stdout, "2 records verify, 0 leftovers, 0 corrupt records, 2 attestations (0 corrupt)\n")
      // The record of one source removed (a store writer's doing): its attestation is left without a record.
      const record = path.join(run, CaptureStore.recordFileName(s.sources[1]!))
      yield* Effect.promise(() => fsp.rm(record))
      const orphan = CaptureStore.attestationFileName(s.sources[1]!)
      for (const args of [["doctor", "--run-dir", run], ["doctor", "--run-dir", run, "--fix"]]) {
        const found = yield* cliInProcess(args)
        assert.strictEqual(found.code, 1, found.stdout)
        assert.include(found.stdout, `CORRUPT   ${orphan}: attestation: no record ${CaptureStore.recordFileName(s.sources[1]!)} beside it`)
        assert.include(found.stdout, "1 records verify, 0 leftovers")
        assert.include(found.stdout, "2 attestations (1 corrupt)")
        assert.notInclude(found.stdout, "other ")
      }
      assert.isTrue(yield* Effect.promise(() => fsp.lstat(path.join(run, orphan)).then(() => true, () => false)))
    }))

  it.scopedLive("a bad signing key or a mislabelled trusted key is a usage error before anything is written", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* Effect.promise(() => fsp.writeFile(path.join(s.work, "junk.pem"), `junk ${s.key.secret}`))
      const junk = yield* s.write("junk.json", { sources: s.sources, labels: ["sales"], capture: { signing: { keyFile: "junk.pem" } } })
      const run = path.join(s.work, "never")
      const bad = yield* cliInProcess(["capture", "--config", junk, "--run-dir", run, "--allow-loopback-http"])
      assert.strictEqual(bad.code, 2)
      assert.match(bad.stderr, /^SigningKeyInvalid: /)
      assert.notInclude(bad.stderr, s.key.secret.slice(0, 24))
      assert.isFalse(yield* Effect.promise(() => fsp.lstat(run).then(() => true, () => false)))

      const { run: good, report } = yield* capturedRun(s, "good")
      const other = yield* keyPair(s.work, "other")
      const mislabelled = yield* s.verifyConfig("require", { [s.key.keyid]: "other.pub.pem" })
      const refused = yield* cliInProcess(["verify", "--config", mislabelled, "--run-dir", good, "--report", report])
      assert.strictEqual(refused.code, 2)
      assert.include(refused.stderr, `it holds the key with id ${other.keyid}`)
    }))
})
