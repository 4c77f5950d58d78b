/**
 * The filesystem store's read of a record: a small record is opened, checked, read and closed in
 * one synchronous step (src/store/Filesystem.ts `recordNow`), a record past `syncReadLimit` bytes
 * asynchronously. Pinned here: the file calls per small record (one open, one fstat, one read, one
 * close, on the record file and nothing else), each distinct capture opened once per verification,
 * and that both sizes give the same record or the same error, word for word, for `read` and
 * `readWithBody`, over valid, corrupt and hostile records (truncated, an extra key, another source,
 * a wrong length, invalid UTF-8, a v2 body missing or not matching, over the size limit). A wrong
 * digest is read as stored and refused by the verification. Files are written by hand where a
 * record is corrupt; the store's write path writes the valid ones.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import { createHash } from "node:crypto"
import fsDefault from "node:fs"
import * as fsp from "node:fs/promises"
import { syncBuiltinESMExports } from "node:module"
import * as path from "node:path"
import { captureFormatV2, type CaptureRecordV2, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { CorruptCapture } from "../src/Errors.js"
import { syncReadLimit } from "../src/internal/safeRead.js"
import * as CaptureStore from "../src/store/CaptureStore.js"
import * as Gate from "../src/verify/Gate.js"
import { expectedRecordName } from "./mutants.support.js"
import { accessedAt, tempDirectory } from "./support.js"
import { isRecordFile } from "./support/countOpens.js"
import { random } from "./support/seeded.js"

const sha = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex")

type Call = "open" | "fstat" | "read" | "close"

/** The synchronous file calls made on record files (by descriptor), in order, while in scope. */
const recordFileCalls = Effect.acquireRelease(
  Effect.sync(() => {
    const calls: Array<{ readonly call: Call; readonly file: string }> = []
    const open = new Map<number, string>()
    const original = {
      openSync: fsDefault.openSync,
      fstatSync: fsDefault.fstatSync,
      readSync: fsDefault.readSync,
      closeSync: fsDefault.closeSync
    }
    const call = <F extends (...args: Array<any>) => any>(name: Call, f: F) =>
      ((fd: number, ...rest: Array<unknown>) => {
        const file = open.get(fd)
        if (file !== undefined) calls.push({ call: name, file })
        if (name === "close") open.delete(fd)
        return f(fd, ...rest)
      }) as unknown as F
    fsDefault.openSync = ((file: fsDefault.PathLike, ...rest: Array<unknown>) => {
      const fd = (original.openSync as (...args: Array<unknown>) => number)(file, ...rest)
      if (isRecordFile(String(file))) {
        open.set(fd, path.basename(String(file)))
        calls.push({ call: "open", file: path.basename(String(file)) })
      }
      return fd
    }) as typeof fsDefault.openSync
    fsDefault.fstatSync = call("fstat", original.fstatSync)
    fsDefault.readSync = call("read", original.readSync)
    fsDefault.closeSync = call("close", original.closeSync)
    syncBuiltinESMExports()
    return { calls, original }
  }),
  ({ original }) =>
    Effect.sync(() => {
      Object.assign(fsDefault, original)
      syncBuiltinESMExports()
    })
)

const source = (i: number) => `https://steps.example.com/source-${i}.txt` as SourceUrl

/** Seeded prose of about `bytes` bytes. */
const prose = (seed: number, bytes: number) => {
  const words = ["net", "sales", "rose", "4,210", "units", "in", "Q3", "é", "文", "😀", "the", "north"]
  const next = random(seed)
  let text = ""
  while (text.length < bytes) text += `${words[next() % words.length]} `
  return text.slice(0, bytes)
}

const v1 = (i: number, bytes: number) =>
  makeCaptureRecord({ source: source(i), text: prose(i, bytes), accessedAt, contentType: "text/plain" })

const v2Of = (i: number, text: string, body: Uint8Array): CaptureRecordV2 => ({
  format: captureFormatV2,
  source: source(i),
  sha256: sha(text) as CaptureRecordV2["sha256"],
  accessedAt,
  extraction: "html/1",
  body: { sha256: sha(body) as CaptureRecordV2["sha256"], byteLength: body.byteLength, contentType: "text/html" },
  headings: [],
  text
})

/** Writes `text` as the record file of `source(i)`, replacing any. */
const writeRaw = (directory: string, i: number, text: string | Uint8Array) =>
  Effect.promise(async () => {
    const file = path.join(directory, expectedRecordName(source(i)))
    await fsp.rm(file, { force: true })
    await fsp.writeFile(file, text)
  })

/** What `read` and `readWithBody` give: the record (with the body's length), or the error. */
const outcomes = (store: CaptureStore.CaptureStoreShape, i: number) =>
  Effect.gen(function*() {
    const read = yield* Effect.either(store.read(source(i)))
    const withBody = yield* Effect.either(store.readWithBody!(source(i)))
    return {
      read: Either.isRight(read) ? { record: read.right } : { error: read.left },
      withBody: Either.isRight(withBody)
        ? { record: withBody.right.record, body: withBody.right.body !== undefined }
        : { error: withBody.left }
    }
  })

describe("filesystem store: reading a record", () => {
  it.scoped("a small record: one open, one fstat, one read, one close of its file; a verification opens each capture once", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      // No surrogate pair in these texts: the snippets below are cut anywhere.
      const records = Array.from({ length: 10 }, (_, i) =>
        makeCaptureRecord({ source: source(i), text: prose(i, 1_024).replaceAll("😀", ":)"), accessedAt, contentType: "text/plain" }))
      const store = yield* CaptureStore.makeFileSystem({ directory })
      for (const record of records) yield* store.write(record)
      const { calls } = yield* recordFileCalls
      assert.deepStrictEqual(yield* store.read(source(3)), records[3])
      const name = expectedRecordName(source(3))
      // The bytes in one read of exactly the size fstat gave (internal/safeRead.ts `wholeAtOnce`):
      // no read that returns nothing after it; nothing else touches the file.
      assert.deepStrictEqual(calls, [
        { call: "open", file: name },
        { call: "fstat", file: name },
        { call: "read", file: name },
        { call: "close", file: name }
      ])
      calls.length = 0
      assert.deepStrictEqual((yield* store.readWithBody!(source(3))).record, records[3])
      assert.deepStrictEqual(calls.map((c) => c.call), ["open", "fstat", "read", "close"])

      // 30 facts over the 10 captures, each named three times: each record file opened once.
      calls.length = 0
      const facts = Array.from({ length: 30 }, (_, f) => {
        const record = records[f % 10]!
        return { state: "cited", label: `fact_${f}`, source: record.source, captureSha256: record.sha256, snippet: record.text.slice(f, f + 40) }
      })
      const config = { sources: records.map((r) => r.source), labels: facts.map((f) => f.label), verify: { mode: "drop" } }
      const gate = Context.get(yield* Layer.build(Gate.layer({ runDirectory: directory, config })), Gate.Gate)
      const report = yield* gate.checkJson(JSON.stringify({ facts }))
      assert.strictEqual(report.facts.length, 30)
      const opened = calls.filter((c) => c.call === "open").map((c) => c.file)
      assert.strictEqual(opened.length, 10, opened.join("\n"))
      assert.strictEqual(new Set(opened).size, 10)
      assert.strictEqual(calls.filter((c) => c.call === "close").length, 10)
    }))

  it.scoped("a wrong digest is read as stored and refused by the verification (DigestMismatch, stored)", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const good = v1(1, 1_024)
      const forged = { ...good, sha256: sha("another text") as CaptureRecordV2["sha256"] }
      yield* writeRaw(directory, 1, `${JSON.stringify(forged)}\n`)
      const store = yield* CaptureStore.makeFileSystem({ directory })
      assert.deepStrictEqual(yield* store.read(source(1)), forged)
      const config = { sources: [good.source], labels: ["a"], verify: { mode: "drop" } }
      const gate = Context.get(yield* Layer.build(Gate.layer({ runDirectory: directory, config })), Gate.Gate)
      const fact = { state: "cited", label: "a", source: good.source, captureSha256: forged.sha256, snippet: good.text.slice(0, 30) }
      const report = yield* gate.checkJson(JSON.stringify({ facts: [fact] }))
      assert.strictEqual(report.facts.length, 0)
      assert.strictEqual(report.retractions.length, 1)
      const error = report.retractions[0]!.error
      assert.strictEqual(error._tag, "DigestMismatch")
      assert.deepStrictEqual(
        error._tag === "DigestMismatch" ? [error.kind, error.stored, error.computed] : [],
        ["stored", forged.sha256, good.sha256]
      )
    }))

  it.scoped("a small and a large record (past syncReadLimit) read alike: records and errors word for word", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const small = 2_000
      const large = syncReadLimit + 10_000
      // Each case writes record i (small) and record i + 100 (large) the same way.
      const cases: Array<{
        readonly name: string
        readonly write: (i: number, bytes: number) => Effect.Effect<void, unknown>
      }> = [
        { name: "valid v1", write: (i, bytes) => writeRaw(directory, i, `${JSON.stringify(v1(i, bytes))}\n`) },
        {
          name: "valid v2 with its body",
          write: (i, bytes) => {
            const text = prose(i, bytes)
            const body = Buffer.from(`<pre>${text}</pre>`)
            return Effect.flatMap(CaptureStore.makeFileSystem({ directory }), (store) => store.write(v2Of(i, text, body), body))
          }
        },
        {
          name: "v2 whose body is missing",
          write: (i, bytes) => {
            const text = prose(i, bytes)
            return writeRaw(directory, i, JSON.stringify(v2Of(i, text, Buffer.from(`missing ${text}`))))
          }
        },
        {
          name: "v2 whose body does not match",
          write: (i, bytes) => {
            const text = prose(i, bytes)
            const body = Buffer.from(`<p>${text}</p>`)
            const other = Buffer.from(`<q>${text}</q>`)
            return Effect.promise(async () => {
              await fsp.writeFile(path.join(directory, `${sha(body)}.body`), other)
              await fsp.writeFile(path.join(directory, expectedRecordName(source(i))), JSON.stringify(v2Of(i, text, body)))
            })
          }
        },
        { name: "truncated", write: (i, bytes) => writeRaw(directory, i, JSON.stringify(v1(i, bytes)).slice(0, -3)) },
        { name: "an extra key", write: (i, bytes) => writeRaw(directory, i, JSON.stringify({ ...v1(i, bytes), extra: 1 })) },
        { name: "another source's record", write: (i, bytes) => writeRaw(directory, i, JSON.stringify({ ...v1(i, bytes), source: source(999) })) },
        { name: "a wrong byte length", write: (i, bytes) => writeRaw(directory, i, JSON.stringify({ ...v1(i, bytes), byteLength: 1 })) },
        {
          name: "invalid UTF-8",
          write: (i, bytes) => {
            const text = Buffer.from(JSON.stringify(v1(i, bytes)))
            text[text.length - 10] = 0xff
            return writeRaw(directory, i, text)
          }
        },
        { name: "pre-v1", write: (i, bytes) => writeRaw(directory, i, JSON.stringify({ text: prose(i, bytes), sha256: sha("x") })) }
      ]
      const store = yield* CaptureStore.makeFileSystem({ directory })
      for (const [c, { name, write }] of cases.entries()) {
        yield* write(c, small)
        yield* write(c + 100, large)
        const [a, b] = [yield* outcomes(store, c), yield* outcomes(store, c + 100)]
        // The same outcome but for what depends on the record's own source and size.
        const normal = (o: unknown, i: number) =>
          JSON.parse(
            JSON.stringify(o).replaceAll(source(i), "SOURCE").replace(/"(text|sha256)":"[^"]*"/g, "\"$1\":\"…\"")
              .replace(/"byteLength":\d+/g, "\"byteLength\":0").replace(/[0-9a-f]{64}/g, "DIGEST")
              .replace(/\b\d+ bytes/g, "N bytes").replace(/position \d+/g, "position N").replace(/column \d+/g, "column N")
          ) as unknown
        assert.deepStrictEqual(normal(b, c + 100), normal(a, c), name)
        if (name.startsWith("valid")) {
          assert.isDefined(a.read.record, name)
          assert.deepStrictEqual(a.read.record, a.withBody.record, name)
          assert.deepStrictEqual(b.read.record, b.withBody.record, name)
          assert.strictEqual(b.read.record!.text.length > syncReadLimit, true)
        } else {
          assert.isDefined(a.read.error, name)
          assert.deepStrictEqual(a.read.error, a.withBody.error, name)
          assert.deepStrictEqual(b.read.error, b.withBody.error, name)
        }
      }
    }))

  it.scoped("the size limit holds on both paths", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const writer = yield* CaptureStore.makeFileSystem({ directory })
      yield* writer.write(v1(1, 1_000))
      yield* writer.write(v1(2, syncReadLimit + 1_000))
      const sizeOf = (i: number) => Effect.promise(() => fsp.stat(path.join(directory, expectedRecordName(source(i)))))
      const small = (yield* sizeOf(1)).size
      const large = (yield* sizeOf(2)).size
      for (const [i, size] of [[1, small], [2, large]] as const) {
        const tight = yield* CaptureStore.makeFileSystem({ directory, maxRecordBytes: size - 1 })
        const error = yield* Effect.flip(tight.read(source(i)))
        assert.deepStrictEqual(error, new CorruptCapture({
          source: source(i),
          reason: "too-large",
          detail: `the record file: ${size} bytes exceeds the ${size - 1} byte limit`
        }))
        const exact = yield* CaptureStore.makeFileSystem({ directory, maxRecordBytes: size })
        assert.strictEqual((yield* exact.read(source(i))).source, source(i))
      }
    }))
})
