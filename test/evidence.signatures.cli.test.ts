/**
 * `run-pipeline export --sign-key` and `run-pipeline verify-signature`, end to end through the
 * program: a signed WARC and a signed annotation document verify with the public key alone; a
 * changed file, another key, a bad key file or an envelope name that exists each end with their
 * exit code and typed error, and nothing of the private key ever reaches the output.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, generateKeyPairSync } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { cliInProcess } from "./cliInProcess.js"
import { cited, fixturePath, inventoryRecord, runDirectoryWith, salesRecord, tempDirectory } from "./support.js"

const keyPair = (directory: string, name: string) =>
  Effect.promise(async () => {
    const pair = generateKeyPairSync("ed25519")
    const privateFile = path.join(directory, `${name}.pem`)
    const publicFile = path.join(directory, `${name}.pub.pem`)
    const privatePem = pair.privateKey.export({ type: "pkcs8", format: "pem" }) as string
    await fsp.writeFile(privateFile, privatePem)
    await fsp.writeFile(publicFile, pair.publicKey.export({ type: "spki", format: "pem" }))
    return { privateFile, publicFile, secret: privatePem.split("\n")[1]! }
  })

const setup = Effect.gen(function*() {
  const runDir = yield* runDirectoryWith([salesRecord, inventoryRecord])
  const work = yield* tempDirectory
  const key = yield* keyPair(work, "signing")
  return { runDir, work, key }
})

const exists = (file: string) => Effect.promise(() => fsp.lstat(file).then(() => true, () => false))
const sha256 = (file: string) => Effect.promise(async () => createHash("sha256").update(await fsp.readFile(file)).digest("hex"))

describe("export --sign-key, verify-signature", () => {
  it.scoped("a signed WARC verifies with the public key; a changed byte or another key does not", () =>
    Effect.gen(function*() {
      const { runDir, work, key } = yield* setup
      const out = path.join(work, "run.warc")
      const exported = yield* cliInProcess(["export", "--format", "warc", "--run-dir", runDir, "--out", out, "--sign-key", key.privateFile])
      assert.strictEqual(exported.code, 0, exported.stderr)
      const envelopeFile = `${out}.dsse.json`
      const envelope = JSON.parse(yield* Effect.promise(() => fsp.readFile(envelopeFile, "utf8")))
      const statement = JSON.parse(Buffer.from(envelope.payload, "base64").toString("utf8"))
      assert.deepStrictEqual(statement.subject, [{ name: "run.warc", digest: { sha256: yield* sha256(out) } }])
      assert.deepInclude(statement.predicate, { format: "warc", items: 2 })
      assert.include(exported.stderr, `signed by key ${envelope.signatures[0].keyid}`)
      assert.notInclude(exported.stdout + exported.stderr, key.secret.slice(0, 24))

      const verifyArgs = ["verify-signature", "--file", out, "--envelope", envelopeFile]
      const ok = yield* cliInProcess([...verifyArgs, "--public-key", key.publicFile])
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.match(ok.stdout, /^verified: run\.warc \(sha256 [0-9a-f]{64}\), warc export of 2 item\(s\) by citegate\/.+, signed by key [0-9a-f]{64}\n$/)

      const other = yield* keyPair(work, "other")
      const unknown = yield* cliInProcess([...verifyArgs, "--public-key", other.publicFile])
      assert.strictEqual(unknown.code, 1)
      assert.match(unknown.stderr, /^UnknownSigningKey: /)
      // Rotation: the old key beside a new one still verifies.
      const rotated = yield* cliInProcess([...verifyArgs, "--public-key", other.publicFile, "--public-key", key.publicFile])
      assert.strictEqual(rotated.code, 0, rotated.stderr)

      yield* Effect.promise(async () => {
        await fsp.chmod(out, 0o644)
        const bytes = await fsp.readFile(out)
        bytes[bytes.length - 5] = bytes[bytes.length - 5]! ^ 0x20
        await fsp.writeFile(out, bytes)
      })
      const changed = yield* cliInProcess([...verifyArgs, "--public-key", key.publicFile])
      assert.strictEqual(changed.code, 1)
      assert.match(changed.stderr, /^SubjectMismatch: /)

      const usage = yield* cliInProcess([...verifyArgs, "--public-key", key.privateFile])
      assert.strictEqual(usage.code, 2)
      assert.match(usage.stderr, /^SigningKeyInvalid: /)
      assert.notInclude(usage.stderr, key.secret.slice(0, 24))
      const none = yield* cliInProcess(verifyArgs)
      assert.strictEqual(none.code, 2)
    }))

  it.scoped("a signed annotation document names its own bytes and count", () =>
    Effect.gen(function*() {
      const { runDir, work, key } = yield* setup
      const report = path.join(work, "report.json")
      yield* Effect.promise(() =>
        fsp.writeFile(report, JSON.stringify({ facts: [cited("q3_net_sales", salesRecord, "Net sales for Q3 2026 were 4,210 units")] }))
      )
      const out = path.join(work, "citations.jsonld")
      const envelopeFile = path.join(work, "citations.sig.json")
      const exported = yield* cliInProcess([
        "export", "--format", "annotations", "--config", fixturePath("pipeline.json"), "--run-dir", runDir, "--report", report,
        "--out", out, "--sign-key", key.privateFile, "--signature-out", envelopeFile
      ])
      assert.strictEqual(exported.code, 0, exported.stderr)
      const ok = yield* cliInProcess(["verify-signature", "--file", out, "--envelope", envelopeFile, "--public-key", key.publicFile])
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.include(ok.stdout, `verified: citations.jsonld (sha256 ${yield* sha256(out)}), annotations export of 1 item(s)`)
    }))

  it.scoped("a bad key or an envelope name that exists stops the export before anything is written", () =>
    Effect.gen(function*() {
      const { runDir, work, key } = yield* setup
      const out = path.join(work, "run.warc")
      const junk = path.join(work, "junk.pem")
      yield* Effect.promise(() => fsp.writeFile(junk, `not a key ${key.secret}`))
      const bad = yield* cliInProcess(["export", "--format", "warc", "--run-dir", runDir, "--out", out, "--sign-key", junk])
      assert.strictEqual(bad.code, 2)
      assert.match(bad.stderr, /^SigningKeyInvalid: The key file .*junk\.pem cannot be used: not a PEM PKCS#8 private key\n$/)
      assert.notInclude(bad.stderr, key.secret.slice(0, 24))
      assert.isFalse(yield* exists(out))

      yield* Effect.promise(() => fsp.writeFile(`${out}.dsse.json`, "an earlier envelope"))
      const taken = yield* cliInProcess(["export", "--format", "warc", "--run-dir", runDir, "--out", out, "--sign-key", key.privateFile])
      assert.strictEqual(taken.code, 2)
      assert.include(taken.stderr, "exists")
      assert.isFalse(yield* exists(out))
      assert.strictEqual(yield* Effect.promise(() => fsp.readFile(`${out}.dsse.json`, "utf8")), "an earlier envelope")

      const noKey = yield* cliInProcess(["export", "--format", "warc", "--run-dir", runDir, "--out", out, "--signature-out", path.join(work, "e.json")])
      assert.strictEqual(noKey.code, 2)
      const sameName = yield* cliInProcess(["export", "--format", "warc", "--run-dir", runDir, "--out", out, "--sign-key", key.privateFile, "--signature-out", out])
      assert.strictEqual(sameName.code, 2)
      const overKey = yield* cliInProcess(["export", "--format", "warc", "--run-dir", runDir, "--out", out, "--sign-key", key.privateFile, "--signature-out", key.privateFile])
      assert.strictEqual(overKey.code, 2)
      assert.isTrue((yield* Effect.promise(() => fsp.readFile(key.privateFile, "utf8"))).includes("PRIVATE KEY"))
      assert.isFalse(yield* exists(out))
    }))
})
