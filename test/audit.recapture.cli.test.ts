import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import type { SourceUrl } from "../src/Domain.js"
import { cli } from "./cliProcess.js"
import { testServer } from "./httpServer.js"
import { snapshotDirectory, tempDirectory } from "./support.js"

const policyV1 = "# Travel policy\n\n## Limits\n\nThe daily limit is 30 euros per person.\n"
const policyV2 = "# Travel policy\n\n## Limits\n\nThe daily limit is 20 euros per person.\n"
const notesV1 = "Meeting notes, first revision.\n"
const notesV2 = `Meeting notes, second revision, much longer: ${"and more ".repeat(30)}\n`

/** A loopback server whose documents change when `revision` is set to 2; counts requests per path. */
const revisedServer = Effect.gen(function*() {
  const state = { revision: 1 as 1 | 2 }
  const server = yield* testServer((request, response) => {
    const body = request.url === "/policy.md"
      ? (state.revision === 1 ? policyV1 : policyV2)
      : request.url === "/notes.txt"
      ? (state.revision === 1 ? notesV1 : notesV2)
      : "never captured before\n"
    const type = request.url === "/policy.md" ? "text/markdown; charset=utf-8" : "text/plain; charset=utf-8"
    response.writeHead(200, { "content-type": type })
    response.end(body)
  })
  const requested = (p: string) => server.requests.filter((r) => r.url === p).length
  return { state, server, requested }
})

const readText = (directory: string, source: string) =>
  Effect.gen(function*() {
    const store = yield* CaptureStore.makeFileSystem({ directory })
    return (yield* store.read(source as SourceUrl)).text
  }).pipe(Effect.orDie)

/** An old run captured from revision 1 with `capture`, and a config approving one more source it never captured. */
const setup = (capture: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const s = yield* revisedServer
    const work = yield* tempDirectory
    const policy = s.server.url("/policy.md")
    const notes = s.server.url("/notes.txt")
    const later = s.server.url("/later.txt")
    const budgets = { contentTypes: ["text/plain", "text/markdown"], ...capture }
    const oldConfig = path.join(work, "old.json")
    const config = path.join(work, "pipeline.json")
    yield* Effect.promise(() => fsp.writeFile(oldConfig, JSON.stringify({ sources: [policy, notes], labels: ["limit"], capture: budgets })))
    yield* Effect.promise(() =>
      fsp.writeFile(config, JSON.stringify({ sources: [later, policy, notes], labels: ["limit"], capture: budgets }))
    )
    const oldRun = path.join(work, "old")
    const captured = yield* cli(["capture", "--config", oldConfig, "--run-dir", oldRun, "--allow-loopback-http"])
    assert.strictEqual(captured.code, 0, captured.stderr)
    s.state.revision = 2
    return { ...s, work, config, oldRun, policy, notes, later }
  })

describe("run-pipeline recapture", () => {
  it.scopedLive("captures the old run's approved sources again, from the changed revision, into a new run", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const before = yield* snapshotDirectory(s.oldRun)
      const newRun = path.join(s.work, "new")
      const ran = yield* cli(["recapture", "--from", s.oldRun, "--config", s.config, "--run-dir", newRun, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 0, ran.stderr)
      // The new run holds revision 2, the old one still revision 1, byte for byte untouched.
      assert.strictEqual(yield* readText(newRun, s.notes), notesV2)
      assert.include(yield* readText(newRun, s.policy), "20 euros")
      assert.include(yield* readText(s.oldRun, s.policy), "30 euros")
      assert.deepStrictEqual(yield* snapshotDirectory(s.oldRun), before)
      // The approved source the old run never captured is not fetched, and is said to be skipped.
      assert.strictEqual(s.requested("/later.txt"), 0)
      assert.include(ran.stderr, `recapture: skipped  ${s.later}: no record in the old run`)
      assert.include(ran.stderr, "2 source(s) to capture again, 1 skipped")
      assert.include(ran.stdout, "2 of 2 sources captured")
      const store = yield* CaptureStore.makeFileSystem({ directory: newRun })
      const missing = yield* Effect.flip(store.read(s.later as SourceUrl))
      assert.strictEqual(missing._tag, "MissingCapture")
      // The Markdown source goes through the same extraction as capture: a v2 record with headings.
      const policy = yield* Effect.orDie(store.read(s.policy as SourceUrl))
      assert.strictEqual(policy.format, "citegate.capture/2")
    }))

  it.scopedLive("a source whose old record was altered is captured again, with a warning naming why", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const file = path.join(s.oldRun, CaptureStore.recordFileName(s.notes))
      const record = JSON.parse(yield* Effect.promise(() => fsp.readFile(file, "utf8")))
      yield* Effect.promise(() => fsp.chmod(file, 0o644))
      yield* Effect.promise(() => fsp.writeFile(file, JSON.stringify({ ...record, text: record.text.replace("first", "fIrst") })))
      const newRun = path.join(s.work, "new")
      const ran = yield* cli(["recapture", "--from", s.oldRun, "--config", s.config, "--run-dir", newRun, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.include(ran.stderr, `recapture: WARNING  ${s.notes}: the old record is unusable (DigestMismatch); captured again`)
      assert.strictEqual(yield* readText(newRun, s.notes), notesV2)
    }))

  it.scopedLive("the capture budgets of the configuration hold: a revision over maxBytes fails (exit 1)", () =>
    Effect.gen(function*() {
      const s = yield* setup({ maxBytes: 120 })
      const newRun = path.join(s.work, "new")
      const ran = yield* cli(["recapture", "--from", s.oldRun, "--config", s.config, "--run-dir", newRun, "--allow-loopback-http"])
      assert.strictEqual(ran.code, 1, ran.stderr)
      assert.match(ran.stdout, /FAILED\s+\S+\/notes\.txt\s+TooLarge/)
      assert.include(ran.stdout, "1 of 2 sources captured")
    }))

  it.scopedLive("refuses the old run itself, a directory inside it (also through a symlink) and an existing directory: exit 2, nothing fetched", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const before = yield* snapshotDirectory(s.oldRun)
      const fetched = s.server.requests.length
      const attempt = (runDir: string) =>
        cli(["recapture", "--from", s.oldRun, "--config", s.config, "--run-dir", runDir, "--allow-loopback-http"])

      const same = yield* attempt(s.oldRun)
      assert.strictEqual(same.code, 2)
      assert.include(same.stderr, "RecaptureRefused")
      assert.include(same.stderr, "the new run directory is the old run")

      const dotted = yield* attempt(path.join(s.oldRun, "..", "old", "."))
      assert.strictEqual(dotted.code, 2)
      assert.include(dotted.stderr, "the new run directory is the old run")

      const inside = yield* attempt(path.join(s.oldRun, "next"))
      assert.strictEqual(inside.code, 2)
      assert.include(inside.stderr, "is inside the old run")

      const link = path.join(s.work, "link")
      yield* Effect.promise(() => fsp.symlink(s.oldRun, link))
      const throughLink = yield* attempt(path.join(link, "next"))
      assert.strictEqual(throughLink.code, 2)
      assert.include(throughLink.stderr, "is inside the old run")

      const existing = path.join(s.work, "existing")
      yield* Effect.promise(() => fsp.mkdir(existing))
      yield* Effect.promise(() => fsp.writeFile(path.join(existing, "keep.txt"), "x"))
      const taken = yield* attempt(existing)
      assert.strictEqual(taken.code, 2)
      assert.include(taken.stderr, "RunDirectoryExists")
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(existing)), ["keep.txt"])

      assert.strictEqual(s.server.requests.length, fetched)
      assert.deepStrictEqual(yield* snapshotDirectory(s.oldRun), before)
    }))

  it.scopedLive("an old run with no record of any approved source, or no old run at all: exit 2, no new run", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const other = path.join(s.work, "other.json")
      yield* Effect.promise(() => fsp.writeFile(other, JSON.stringify({ sources: [s.later], labels: ["limit"] })))
      const newRun = path.join(s.work, "new")
      const none = yield* cli(["recapture", "--from", s.oldRun, "--config", other, "--run-dir", newRun, "--allow-loopback-http"])
      assert.strictEqual(none.code, 2)
      assert.include(none.stderr, "RecaptureRefused")
      assert.include(none.stderr, "holds no record of any of the 1 approved source(s)")
      const absent = yield* cli([
        "recapture", "--from", path.join(s.work, "nowhere"), "--config", s.config, "--run-dir", newRun, "--allow-loopback-http"
      ])
      assert.strictEqual(absent.code, 2)
      assert.include(absent.stderr, "InvalidRunDirectory")
      yield* Effect.flip(Effect.tryPromise(() => fsp.access(newRun)))
    }))

  it.scopedLive("plain http sources need test mode, as for capture: exit 2 before the new run exists", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const newRun = path.join(s.work, "new")
      const ran = yield* cli(["recapture", "--from", s.oldRun, "--config", s.config, "--run-dir", newRun])
      assert.strictEqual(ran.code, 2)
      assert.include(ran.stderr, "TestModeRequired")
      yield* Effect.flip(Effect.tryPromise(() => fsp.access(newRun)))
    }))
})
