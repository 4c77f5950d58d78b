/**
 * `doctor --fix` removes only citegate's own leftovers (`.partial-<uuid>`, read-only, regular), and
 * only in a run directory: a user's `.partial-thesis-draft.docx` survives, in a run or elsewhere.
 * Run in-process (test/cliInProcess.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { cliInProcess } from "./cliInProcess.js"
import { runDirectoryWith, salesRecord, tempDirectory } from "./support.js"

const draft = ".partial-thesis-draft.docx"
const leftover = ".partial-3f1c2a40-0000-4000-8000-0000000000aa"
const exists = (file: string) => Effect.promise(() => fsp.lstat(file).then(() => true, () => false))
const readOnlyFile = (file: string, data: string) =>
  Effect.promise(async () => {
    await fsp.writeFile(file, data)
    await fsp.chmod(file, 0o444)
  })

describe("doctor --fix and files it did not write", () => {
  it.scoped("a directory that is not a run: refused (exit 2), the user's .partial-* file kept", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      yield* readOnlyFile(path.join(directory, draft), "my thesis")
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, "notes.txt"), "notes"))
      const ran = yield* cliInProcess(["doctor", "--run-dir", directory, "--fix"])
      assert.strictEqual(ran.code, 2, ran.stdout + ran.stderr)
      assert.include(ran.stderr, "InvalidRunDirectory")
      assert.include(ran.stderr, "not a run directory")
      assert.isTrue(yield* exists(path.join(directory, draft)))
    }))

  it.scoped("in a run: citegate's leftover removed; the user's file and a writable UUID-named file left alone", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      const writable = ".partial-3f1c2a40-0000-4000-8000-0000000000bb"
      yield* readOnlyFile(path.join(directory, draft), "my thesis")
      yield* readOnlyFile(path.join(directory, leftover), "half a rec")
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, writable), "mine"))
      const ran = yield* cliInProcess(["doctor", "--run-dir", directory, "--fix"])
      assert.strictEqual(ran.code, 0, ran.stdout + ran.stderr)
      assert.include(ran.stdout, `removed   ${leftover} (10 bytes)`)
      assert.include(ran.stdout, `other     ${draft}: not written by citegate, left alone`)
      assert.include(ran.stdout, `other     ${writable}: not written by citegate, left alone`)
      assert.isFalse(yield* exists(path.join(directory, leftover)))
      assert.isTrue(yield* exists(path.join(directory, draft)))
      assert.isTrue(yield* exists(path.join(directory, writable)))
    }))

  it.scoped("a new run whose first write died holds only a leftover: it is a run, and swept", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      yield* readOnlyFile(path.join(directory, leftover), "half")
      const ran = yield* cliInProcess(["doctor", "--run-dir", directory, "--fix"])
      assert.strictEqual(ran.code, 0, ran.stdout + ran.stderr)
      assert.isFalse(yield* exists(path.join(directory, leftover)))
    }))
})
