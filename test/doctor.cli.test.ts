/**
 * `run-pipeline doctor --run-dir R [--fix]`, run as a separate process: exit 0
 * clean, 1 leftovers (or records that do not verify) found, 0 after --fix
 * removed the leftovers, 2 usage.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import {
  INVENTORY,
  inventoryRecord,
  recordPath,
  runDirectoryWith,
  SALES,
  salesRecord,
  snapshotDirectory,
  tempDirectory
} from "./support.js"
import { cli } from "./cliProcess.js"

/**
 * The two states a killed writer leaves (see storeCrash.test.ts): the partial
 * temporary file of a write that never linked, and the temporary name of a
 * write that linked its record and died before the unlink.
 */
const leaveLeftovers = (directory: string) =>
  Effect.promise(async () => {
    const encoded = Buffer.from(CaptureStore.encodeRecord(inventoryRecord))
    await fsp.writeFile(path.join(directory, ".partial-3f1c2a40-0000-4000-8000-000000000001"), encoded.subarray(0, 100), {
      mode: 0o444
    })
    await fsp.link(recordPath(directory, SALES), path.join(directory, ".partial-3f1c2a40-0000-4000-8000-000000000002"))
  })

describe("run-pipeline doctor", () => {
  it.scoped("a clean run directory: exit 0, every record verifies", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const ran = yield* cli(["doctor", "--run-dir", directory])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stdout, "2 records verify, 0 leftovers, 0 corrupt records\n")
    }))

  it.scoped("leftovers: reported with exit 1 and left alone; --fix removes only them, exit 0; then clean", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord])
      yield* leaveLeftovers(directory)
      const records = (yield* snapshotDirectory(directory)).filter((e) => !e.name.startsWith("."))
      const before = yield* snapshotDirectory(directory)

      const recordBytes = (yield* Effect.promise(() => fsp.stat(recordPath(directory, SALES)))).size
      const found = yield* cli(["doctor", "--run-dir", directory])
      assert.strictEqual(found.code, 1, found.stderr)
      const salesName = CaptureStore.recordFileName(SALES)
      assert.deepStrictEqual(found.stdout.split("\n"), [
        "LEFTOVER  .partial-3f1c2a40-0000-4000-8000-000000000001 (100 bytes): an interrupted write; no record was made from it",
        `LEFTOVER  .partial-3f1c2a40-0000-4000-8000-000000000002 (${recordBytes} bytes): a second link of ${salesName}, whose write finished; the record is intact`,
        "1 records verify, 2 leftovers, 0 corrupt records",
        ""
      ])
      assert.deepStrictEqual(yield* snapshotDirectory(directory), before)

      const fixed = yield* cli(["doctor", "--run-dir", directory, "--fix"])
      assert.strictEqual(fixed.code, 0, fixed.stderr)
      assert.match(fixed.stdout, /^removed {3}\.partial-3f1c2a40-0000-4000-8000-000000000001 /m)
      assert.match(fixed.stdout, /^removed {3}\.partial-3f1c2a40-0000-4000-8000-000000000002 /m)
      assert.match(fixed.stdout, /1 records verify, 2 leftovers \(2 removed\), 0 corrupt records\n$/)
      const after = yield* snapshotDirectory(directory)
      assert.deepStrictEqual(after.map((e) => [e.name, e.bytes, e.mode]), records.map((e) => [e.name, e.bytes, e.mode]))

      const again = yield* cli(["doctor", "--run-dir", directory])
      assert.strictEqual(again.code, 0)
      assert.strictEqual(again.stdout, "1 records verify, 0 leftovers, 0 corrupt records\n")
    }))

  it.scoped("a record that does not verify is reported, never removed: exit 1 even with --fix", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const file = recordPath(directory, INVENTORY)
      const original = yield* Effect.promise(() => fsp.readFile(file, "utf8"))
      yield* Effect.promise(async () => {
        await fsp.chmod(file, 0o644)
        await fsp.writeFile(file, original.replace("1,180", "9,180"))
        await fsp.chmod(file, 0o444)
        await fsp.writeFile(path.join(directory, "notes.txt"), "operator notes\n")
      })
      const before = yield* snapshotDirectory(directory)
      const ran = yield* cli(["doctor", "--run-dir", directory, "--fix"])
      assert.strictEqual(ran.code, 1)
      const name = CaptureStore.recordFileName(INVENTORY)
      assert.match(ran.stdout, new RegExp(`^CORRUPT   ${name}: digest-mismatch: the text hashes to [0-9a-f]{64}, the record says ${inventoryRecord.sha256} \\(left alone\\)$`, "m"))
      assert.match(ran.stdout, /^other {5}notes\.txt: not written by citegate, left alone$/m)
      assert.match(ran.stdout, /1 records verify, 0 leftovers \(0 removed\), 1 corrupt records\n$/)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), before)
    }))

  it.scoped("a hard-linked snapshot (cp -al) of a run verifies as the run does", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([salesRecord, inventoryRecord])
      const parent = yield* tempDirectory
      const snapshot = path.join(parent, "snapshot")
      execFileSync("cp", ["-al", directory, snapshot])
      const ran = yield* cli(["doctor", "--run-dir", snapshot])
      assert.strictEqual(ran.code, 0, ran.stdout + ran.stderr)
      assert.strictEqual(ran.stdout, "2 records verify, 0 leftovers, 0 corrupt records\n")
    }))

  it.scoped("usage: exit 2 without --run-dir or for a missing run directory", () =>
    Effect.gen(function*() {
      const parent = yield* tempDirectory
      const noOption = yield* cli(["doctor"])
      assert.strictEqual(noOption.code, 2)
      const missing = yield* cli(["doctor", "--run-dir", path.join(parent, "nope")])
      assert.strictEqual(missing.code, 2)
      assert.match(missing.stderr, /InvalidRunDirectory/)
      assert.strictEqual(missing.stdout, "")
    }))
})
