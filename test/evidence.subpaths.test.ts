/**
 * The exporters' subpath entries (`citegate/Warc`, `citegate/Annotations`, `citegate/Signatures`)
 * resolve in an application that installed the compiled package: real resolution through
 * package.json "exports" (no hook, no path into dist/), each entry usable on its own: a WARC export
 * of a run, its envelope signed and verified, an annotation document rendered.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { fixturePath, runDirectoryWith, salesRecord, tempDirectory } from "./support.js"

const root = fixturePath("..")

/** A fresh application whose node_modules holds the compiled citegate and links to every installed package. */
const application = (main: string) =>
  Effect.gen(function*() {
    const app = path.join(yield* tempDirectory, "app")
    const modules = path.join(app, "node_modules")
    yield* Effect.promise(async () => {
      const citegate = path.join(modules, "citegate")
      await fsp.mkdir(citegate, { recursive: true })
      await fsp.cp(path.join(root, "dist"), path.join(citegate, "dist"), {
        recursive: true,
        filter: (source) => !source.includes(`${path.sep}bundle`)
      })
      await fsp.copyFile(path.join(root, "package.json"), path.join(citegate, "package.json"))
      for (const entry of await fsp.readdir(path.join(root, "node_modules"))) {
        if (!entry.startsWith(".")) await fsp.symlink(path.join(root, "node_modules", entry), path.join(modules, entry))
      }
      await fsp.writeFile(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
      await fsp.writeFile(path.join(app, "main.js"), main)
    })
    return app
  })

const main = `
import * as Effect from "effect/Effect"
import { generateKeyPairSync } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Warc from "citegate/Warc"
import * as Annotations from "citegate/Annotations"
import * as Signatures from "citegate/Signatures"
import * as Errors from "citegate/Errors"

const [runDir, work] = process.argv.slice(2)
const out = path.join(work, "run.warc")
const pair = generateKeyPairSync("ed25519")
fs.writeFileSync(path.join(work, "k.pem"), pair.privateKey.export({ type: "pkcs8", format: "pem" }))
fs.writeFileSync(path.join(work, "k.pub"), pair.publicKey.export({ type: "spki", format: "pem" }))
const program = Effect.gen(function*() {
  const summary = yield* Warc.exportWarc({ directory: runDir, out })
  const key = yield* Signatures.loadSigningKey(path.join(work, "k.pem"))
  const trusted = yield* Signatures.loadPublicKey(path.join(work, "k.pub"))
  const statement = Signatures.statementOf({ name: "run.warc", sha256: summary.sha256, format: "warc", items: summary.captures })
  fs.writeFileSync(out + ".dsse.json", Signatures.renderEnvelope(Signatures.signStatement(statement, key)))
  const checked = yield* Signatures.verifyFile({ file: out, envelope: out + ".dsse.json", trusted: [trusted] })
  const replay = yield* Effect.flip(Signatures.verifyFile({ file: path.join(work, "k.pub"), envelope: out + ".dsse.json", trusted: [trusted] }))
  return {
    captures: summary.captures,
    verifiedKey: checked.keyid === key.keyid,
    replayTyped: replay instanceof Errors.SubjectMismatch,
    annoContext: Annotations.annoContext
  }
})
Effect.runPromise(program).then((r) => process.stdout.write(JSON.stringify(r)), (e) => { process.stderr.write(String(e)); process.exitCode = 1 })
`

describe("the exporters' subpath entries, from the compiled package", () => {
  it.scopedLive("citegate/Warc, citegate/Annotations and citegate/Signatures resolve and work", () =>
    Effect.gen(function*() {
      const runDir = yield* runDirectoryWith([salesRecord])
      const work = yield* tempDirectory
      const app = yield* application(main)
      const ran = yield* Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
        const child = spawn(process.execPath, ["main.js", runDir, work], { cwd: app })
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (d) => (stdout += d))
        child.stderr.on("data", (d) => (stderr += d))
        child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
        return Effect.sync(() => child.kill())
      })
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.deepStrictEqual(JSON.parse(ran.stdout), {
        captures: 1,
        verifiedKey: true,
        replayTyped: true,
        annoContext: "http://www.w3.org/ns/anno.jsonld"
      })
    }), 60_000)
})
