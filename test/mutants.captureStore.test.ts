/**
 * The filesystem store, pinned where its mutants survived: the serialisation
 * in pieces (chunk cuts, surrogate pairs, the v2 head), the staging of pieces
 * into write(2) calls, the crash-safe write's steps under faults and
 * interruption, the exact errors of `read`, `readBody` and v2 `write`, and
 * `inspect` / `sweep` over a run directory holding every kind of entry.
 * Expected values are written out here (JSON by hand, digests with node:crypto),
 * never computed with the store's own helpers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { createHash } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { captureFormatV2, type CaptureRecordV1, type CaptureRecordV2, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { CaptureExists, CaptureWriteFailed, CorruptCapture, InvalidRunDirectory, MissingCapture } from "../src/Errors.js"
import * as StrictJson from "../src/internal/strictJson.js"
import { expectedRecordName, failureOf } from "./mutants.support.js"
import { accessedAt, snapshotDirectory, tempDirectory } from "./support.js"

const sha = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex")
const bodyName = (bytes: Uint8Array) => `${sha(bytes)}.body`

const SRC = "https://r.test/a" as SourceUrl

const v1 = (text: string, contentType = "text/plain", source: SourceUrl = SRC): CaptureRecordV1 =>
  makeCaptureRecord({ source, text, accessedAt, contentType })

/** The head of a v1 record's JSON, written out in the canonical key order. */
const v1Head = (text: string, contentType = "text/plain", source: string = SRC) =>
  `{"format":"citegate.capture/1","source":${JSON.stringify(source)},"sha256":"${sha(text)}",` +
  `"accessedAt":"${accessedAt}","contentType":${JSON.stringify(contentType)},` +
  `"byteLength":${Buffer.byteLength(text, "utf8")},"text":"`
const tail = "\"}\n"

const chunks = (text: string, size?: number) => Array.from(CaptureStore.encodeRecordChunks(v1(text), size))

/** A v2 record of `text` extracted from `body`, its keys deliberately out of the canonical order. */
const v2 = (
  source: string,
  text: string,
  body: Uint8Array,
  anchors: Partial<Pick<CaptureRecordV2, "pages" | "headings">> = {}
): CaptureRecordV2 => ({
  text,
  ...anchors,
  body: { contentType: "text/html", byteLength: body.byteLength, sha256: sha(body) as CaptureRecordV2["sha256"] },
  extraction: "html/1",
  accessedAt,
  sha256: sha(text) as CaptureRecordV2["sha256"],
  source: source as SourceUrl,
  format: captureFormatV2
})

/** File calls in order, with byte counts for writes; `pause` holds the first write until released. */
const recordingIo = (overrides: Partial<CaptureStore.FileIo> = {}) => {
  const calls: Array<string> = []
  const base = { ...CaptureStore.nodeIo, ...overrides }
  const io: CaptureStore.FileIo = {
    create: (file, mode) => {
      calls.push(`create ${mode.toString(8)} ${path.basename(file).startsWith(".partial-") ? "partial" : path.basename(file)}`)
      return base.create(file, mode)
    },
    write: (fd, bytes) => {
      calls.push(`write ${bytes.byteLength}`)
      return base.write(fd, bytes)
    },
    fsync: (fd) => {
      calls.push("fsync")
      return base.fsync(fd)
    },
    close: (fd) => {
      calls.push("close")
      return base.close(fd)
    },
    link: (existing, name) => {
      calls.push(`link ${path.basename(name)}`)
      return base.link(existing, name)
    },
    unlink: (file) => {
      calls.push(`unlink ${path.basename(file).startsWith(".partial-") ? "partial" : path.basename(file)}`)
      return base.unlink(file)
    }
  }
  return { io, calls }
}

const names = (directory: string) => Effect.promise(async () => (await fsp.readdir(directory)).sort())
const readText = (file: string) => Effect.promise(() => fsp.readFile(file, "utf8"))

describe("CaptureStore: the serialisation in pieces", () => {
  it("cuts the text every `chunkCodeUnits` code units, head on the first piece and tail on the last", () => {
    const head = v1Head("abcdefghij")
    assert.deepStrictEqual(chunks("abcdefghij", 4), [head + "abcd", "efgh", "ij" + tail])
  })

  it("a text of exactly one piece is one piece (no empty last piece)", () => {
    assert.deepStrictEqual(chunks("abcd", 4), [v1Head("abcd") + "abcd" + tail])
    assert.deepStrictEqual(chunks("abcde", 4), [v1Head("abcde") + "abcd", "e" + tail])
  })

  it("a piece size below 2 is 2 (a surrogate pair always fits)", () => {
    for (const size of [0, 1, 2]) {
      assert.deepStrictEqual(chunks("abcde", size), [v1Head("abcde") + "ab", "cd", "e" + tail])
    }
    assert.deepStrictEqual(chunks("😀😀", 1), [v1Head("😀😀") + "😀", "😀" + tail])
  })

  it("never cuts between the halves of a surrogate pair; other code units are cut anywhere", () => {
    assert.deepStrictEqual(chunks("abc😀def", 4), [v1Head("abc😀def") + "abc", "😀de", "f" + tail])
    // U+10FFFF (high half 0xDBFF) and U+10000 (high half 0xD800): the ends of the high-surrogate range.
    assert.deepStrictEqual(chunks("ab\udbff\udfffcd", 3), [v1Head("ab\udbff\udfffcd") + "ab", "\udbff\udfffc", "d" + tail])
    assert.deepStrictEqual(chunks("ab\ud800\udc00cd", 3), [v1Head("ab\ud800\udc00cd") + "ab", "\ud800\udc00c", "d" + tail])
    // U+D7FF is no surrogate; a low half at the cut ends a complete pair.
    assert.deepStrictEqual(chunks("ab\ud7ffcd", 3), [v1Head("ab\ud7ffcd") + "ab\ud7ff", "cd" + tail])
    assert.deepStrictEqual(chunks("a\ud800\udc00bc", 3), [v1Head("a\ud800\udc00bc") + "a\ud800\udc00", "bc" + tail])
  })

  it("each piece is escaped as JSON string content", () => {
    assert.deepStrictEqual(chunks("a\"b\u0001c", 2), [v1Head("a\"b\u0001c") + "a\\\"", "b\\u0001", "c" + tail])
  })

  it("the default piece is 16 Ki code units", () => {
    assert.strictEqual(CaptureStore.encodeChunkCodeUnits, 16_384)
    const text = "x".repeat(40_000)
    assert.deepStrictEqual(
      Array.from(CaptureStore.encodeRecordChunks(v1(text))),
      [v1Head(text) + "x".repeat(16_384), "x".repeat(16_384), "x".repeat(40_000 - 32_768) + tail]
    )
  })

  it("a v2 record: canonical key order, only the known fields of body, pages and headings", () => {
    const body = Buffer.from("<h1>T</h1><p>one two</p>")
    const text = "T\n\none two"
    const record = v2(SRC, text, body, {
      pages: [{ end: 3, start: 0, number: 1 }, { end: 10, start: 3, number: 2 }],
      headings: [{ end: 10, start: 0, path: ["T"], text: "T", level: 1 }]
    })
    const expected = `{"format":"citegate.capture/2","source":"${SRC}","sha256":"${sha(text)}","accessedAt":"${accessedAt}",` +
      `"extraction":"html/1","body":{"sha256":"${sha(body)}","byteLength":${body.byteLength},"contentType":"text/html"},` +
      `"pages":[{"number":1,"start":0,"end":3},{"number":2,"start":3,"end":10}],` +
      `"headings":[{"level":1,"text":"T","path":["T"],"start":0,"end":10}],"text":"T\\n\\none two"}\n`
    assert.strictEqual(CaptureStore.encodeRecord(record), expected)
    const bare = v2(SRC, text, body)
    assert.strictEqual(
      CaptureStore.encodeRecord(bare),
      `{"format":"citegate.capture/2","source":"${SRC}","sha256":"${sha(text)}","accessedAt":"${accessedAt}",` +
        `"extraction":"html/1","body":{"sha256":"${sha(body)}","byteLength":${body.byteLength},"contentType":"text/html"},` +
        `"text":"T\\n\\none two"}\n`
    )
  })
})

describe("CaptureStore: limits", () => {
  it("the default caps: 400 MiB of record (a 64 MiB body escapes to at most 6 times its size), 64 MiB of body", () => {
    assert.strictEqual(CaptureStore.defaultMaxRecordBytes, 419_430_400)
    assert.strictEqual(CaptureStore.defaultMaxBodyBytes, 67_108_864)
    assert.strictEqual(CaptureStore.partialPrefix, ".partial-")
    assert.strictEqual(CaptureStore.bodyFileName("ab"), "ab.body")
  })
})

describe("CaptureStore: write(2) calls", () => {
  it.scoped("a small record: create read-only, one write, fsync, close, link, unlink", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { calls, io } = recordingIo()
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const record = v1("small")
      yield* store.write(record)
      const name = expectedRecordName(SRC)
      const json = v1Head("small") + "small" + tail
      assert.deepStrictEqual(calls, [
        "create 444 partial",
        `write ${Buffer.byteLength(json)}`,
        "fsync",
        "close",
        `link ${name}`,
        "unlink partial"
      ])
      assert.deepStrictEqual(yield* names(directory), [name])
      assert.strictEqual(yield* readText(path.join(directory, name)), json)
    }))

  it.scoped("pieces are gathered into 1 MiB writes: a buffer filled exactly is written whole", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { calls, io } = recordingIo()
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      // 70 full pieces of 16384 and 5 code units; the content type pads the head to exactly 16384 bytes.
      const text = "a".repeat(16_384 * 70 + 5)
      const contentType = "x".repeat(16_384 - v1Head(text, "").length)
      assert.strictEqual(Buffer.byteLength(v1Head(text, contentType)), 16_384)
      yield* store.write(v1(text, contentType))
      // First buffer: head + 63 pieces = 1 MiB exactly; then the other 7 pieces, the last one 5 + 3 bytes.
      assert.deepStrictEqual(calls.filter((c) => c.startsWith("write")), ["write 1048576", `write ${7 * 16_384 + 5 + 3}`])
      const json = v1Head(text, contentType) + text + tail
      assert.strictEqual(yield* readText(path.join(directory, expectedRecordName(SRC))), json)
    }))

  it.scoped("a piece larger than the buffer is written on its own, and never after an empty flush", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { calls, io } = recordingIo()
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      // A v2 head past 1 MiB (a long heading) and a text of two pieces.
      const text = "t".repeat(20_000)
      const body = Buffer.from("b".repeat(64))
      const record = v2(SRC, text, body, { headings: [{ level: 1, text: "h".repeat(1_200_000), path: [], start: 0, end: 4 }] })
      yield* store.write(record, body)
      const json = `{"format":"citegate.capture/2","source":"${SRC}","sha256":"${sha(text)}","accessedAt":"${accessedAt}",` +
        `"extraction":"html/1","body":{"sha256":"${sha(body)}","byteLength":64,"contentType":"text/html"},` +
        `"headings":[{"level":1,"text":"${"h".repeat(1_200_000)}","path":[],"start":0,"end":4}],"text":"${text}"}\n`
      const first = json.length - (20_000 - 16_384) - 3
      assert.deepStrictEqual(calls.filter((c) => c.startsWith("write")), [
        "write 64",
        `write ${first}`,
        `write ${20_000 - 16_384 + 3}`
      ])
      assert.strictEqual(yield* readText(path.join(directory, expectedRecordName(SRC))), json)
    }))
})

describe("CaptureStore: faults during a write", () => {
  const failing = (step: string) => Object.assign(new Error(`E${step.toUpperCase()}: ${step} failed`), { code: `E${step.toUpperCase()}` })

  it.scoped("a failing write closes the file once, removes it, and names the source", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { calls, io } = recordingIo({ write: () => Promise.reject(failing("io")) })
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const error = yield* failureOf(store.write(v1("x")))
      assert.instanceOf(error, CaptureWriteFailed)
      assert.deepStrictEqual(error, new CaptureWriteFailed({ source: SRC, detail: "EIO: io failed" }))
      assert.deepStrictEqual(calls, ["create 444 partial", `write ${Buffer.byteLength(v1Head("x") + "x" + tail)}`, "close", "unlink partial"])
      assert.deepStrictEqual(yield* names(directory), [])
    }))

  it.scoped("a failing fsync: closed once, nothing linked, nothing left", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { calls, io } = recordingIo({ fsync: () => Promise.reject(failing("fsync")) })
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const error = yield* failureOf(store.write(v1("x")))
      assert.instanceOf(error, CaptureWriteFailed)
      assert.deepStrictEqual(error, new CaptureWriteFailed({ source: SRC, detail: "EFSYNC: fsync failed" }))
      assert.deepStrictEqual(calls.filter((c) => !c.startsWith("write")), ["create 444 partial", "fsync", "close", "unlink partial"])
      assert.deepStrictEqual(yield* names(directory), [])
    }))

  it.scoped("a failing close after fsync is not retried, and nothing is linked", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      let fd = -1
      const { calls, io } = recordingIo({
        close: (descriptor) => {
          fd = descriptor
          return Promise.reject(failing("close"))
        }
      })
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const error = yield* failureOf(store.write(v1("x")))
      yield* Effect.promise(() => CaptureStore.nodeIo.close(fd))
      assert.instanceOf(error, CaptureWriteFailed)
      assert.deepStrictEqual(error, new CaptureWriteFailed({ source: SRC, detail: "ECLOSE: close failed" }))
      assert.deepStrictEqual(calls.filter((c) => !c.startsWith("write")), ["create 444 partial", "fsync", "close", "unlink partial"])
      assert.deepStrictEqual(yield* names(directory), [])
    }))

  it.scoped("a link failing with anything but EEXIST is CaptureWriteFailed, not CaptureExists", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { calls, io } = recordingIo({ link: () => Promise.reject(failing("perm")) })
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const error = yield* failureOf(store.write(v1("x")))
      assert.instanceOf(error, CaptureWriteFailed)
      assert.deepStrictEqual(error, new CaptureWriteFailed({ source: SRC, detail: "EPERM: perm failed" }))
      assert.deepStrictEqual(calls.slice(-2), [`link ${expectedRecordName(SRC)}`, "unlink partial"])
      assert.deepStrictEqual(yield* names(directory), [])
      // An error without a code is not EEXIST either.
      const { io: plain } = recordingIo({ link: () => Promise.reject(new Error("no code")) })
      const other = yield* CaptureStore.makeFileSystem({ directory, io: plain })
      const second = yield* failureOf(other.write(v1("x")))
      assert.deepStrictEqual(second, new CaptureWriteFailed({ source: SRC, detail: "no code" }))
    }))

  it.scoped("a temporary file that cannot be removed does not fail a written record", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { io } = recordingIo({ unlink: () => Promise.reject(failing("busy")) })
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      yield* store.write(v1("x"))
      const listed = yield* names(directory)
      assert.strictEqual(listed.length, 2)
      assert.strictEqual(listed[1], expectedRecordName(SRC))
      assert.isTrue(listed[0]!.startsWith(".partial-"))
    }))

  /** Holds the first write until released; `started` resolves when it begins. */
  const pausedIo = Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let first = true
    const recorded = recordingIo({
      write: async (fd, bytes) => {
        if (first) {
          first = false
          Deferred.unsafeDone(started, Effect.void)
          await gate
        }
        return CaptureStore.nodeIo.write(fd, bytes)
      }
    })
    return { ...recorded, started, release: () => release() }
  })

  it.scopedLive("interrupted between two buffers: no further write, no fsync, no link, nothing left", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { calls, io, release, started } = yield* pausedIo
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const text = "a".repeat(16_384 * 70)
      const fiber = yield* Effect.fork(store.write(v1(text)))
      yield* Deferred.await(started)
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      // Let the interruption reach the write (it aborts before it waits for the file to be removed).
      yield* Effect.sleep("50 millis")
      release()
      yield* Fiber.join(interrupting)
      assert.deepStrictEqual(yield* names(directory), [])
      // The first buffer: the head and 63 pieces (one more would pass 1 MiB).
      assert.deepStrictEqual(calls, ["create 444 partial", `write ${v1Head(text).length + 63 * 16_384}`, "close", "unlink partial"])
    }))

  it.scopedLive("interrupted during the only write: closed, never linked, nothing left", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const { calls, io, release, started } = yield* pausedIo
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const fiber = yield* Effect.fork(store.write(v1("x")))
      yield* Deferred.await(started)
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* Effect.sleep("50 millis")
      release()
      yield* Fiber.join(interrupting)
      assert.deepStrictEqual(yield* names(directory), [])
      assert.deepStrictEqual(calls.filter((c) => !c.startsWith("write")), ["create 444 partial", "fsync", "close", "unlink partial"])
    }))
})

describe("CaptureStore: exact errors of read, readBody and v2 write", () => {
  it.scoped("the record file: a symlink, a directory, too large", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const file = path.join(directory, expectedRecordName(SRC))
      const store = yield* CaptureStore.makeFileSystem({ directory, maxRecordBytes: 100 })
      yield* Effect.promise(() => fsp.symlink("elsewhere", file))
      assert.deepStrictEqual(yield* failureOf(store.read(SRC)), new CorruptCapture({ source: SRC, reason: "symlink", detail: "the record file: the file is a symbolic link" }))
      yield* Effect.promise(async () => {
        await fsp.rm(file)
        await fsp.mkdir(file)
      })
      assert.deepStrictEqual(yield* failureOf(store.read(SRC)), new CorruptCapture({ source: SRC, reason: "not-a-regular-file", detail: "the record file: not a regular file" }))
      yield* Effect.promise(async () => {
        await fsp.rmdir(file)
        await fsp.writeFile(file, "z".repeat(101))
      })
      assert.deepStrictEqual(yield* failureOf(store.read(SRC)), new CorruptCapture({ source: SRC, reason: "too-large", detail: "the record file: 101 bytes exceeds the 100 byte limit" }))
      const missing = yield* failureOf(store.read("https://r.test/none" as SourceUrl))
      assert.deepStrictEqual(missing, new MissingCapture({ source: "https://r.test/none" }))
    }))

  it.scoped("a v2 record's body: missing, a symlink, over the body limit, exactly at it", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const body = Buffer.from("0123456789")
      const record = v2(SRC, "text", body)
      const store = yield* CaptureStore.makeFileSystem({ directory, maxBodyBytes: 10 })
      yield* store.write(record, body)
      assert.deepStrictEqual(yield* store.read(SRC), record)
      const bodyFile = path.join(directory, bodyName(body))
      assert.strictEqual((yield* Effect.promise(() => fsp.stat(bodyFile))).mode & 0o777, 0o444)
      const tight = yield* CaptureStore.makeFileSystem({ directory, maxBodyBytes: 9 })
      assert.deepStrictEqual(
        yield* failureOf(tight.read(SRC)),
        new CorruptCapture({ source: SRC, reason: "too-large", detail: `the body file ${bodyName(body)}: 10 bytes exceeds the 9 byte limit` })
      )
      assert.deepStrictEqual(
        yield* failureOf(tight.readBody(sha(body) as CaptureRecordV2["sha256"])),
        new CorruptCapture({ source: `body ${sha(body)}`, reason: "too-large", detail: "the body file: 10 bytes exceeds the 9 byte limit" })
      )
      yield* Effect.promise(async () => {
        await fsp.rm(bodyFile)
        await fsp.symlink("elsewhere", bodyFile)
      })
      assert.deepStrictEqual(
        yield* failureOf(store.read(SRC)),
        new CorruptCapture({ source: SRC, reason: "symlink", detail: `the body file ${bodyName(body)}: the file is a symbolic link` })
      )
      yield* Effect.promise(() => fsp.rm(bodyFile))
      assert.deepStrictEqual(
        yield* failureOf(store.read(SRC)),
        new CorruptCapture({ source: SRC, reason: "body-missing", detail: `the body file ${bodyName(body)}: no such file` })
      )
      assert.deepStrictEqual(
        yield* failureOf(store.readBody(sha(body) as CaptureRecordV2["sha256"])),
        new MissingCapture({ source: `body ${sha(body)}` })
      )
    }))

  it.scoped("readBody: the bytes when they hash to the name, else body-mismatch with the actual digest", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const body = Buffer.from("0123456789")
      const store = yield* CaptureStore.makeFileSystem({ directory })
      yield* store.write(v2(SRC, "text", body), body)
      const digest = sha(body) as CaptureRecordV2["sha256"]
      assert.deepStrictEqual(Buffer.from(yield* store.readBody(digest)), body)
      yield* Effect.promise(async () => {
        await fsp.rm(path.join(directory, bodyName(body)))
        await fsp.writeFile(path.join(directory, bodyName(body)), "9876543210")
      })
      assert.deepStrictEqual(
        yield* failureOf(store.readBody(digest)),
        new CorruptCapture({ source: `body ${digest}`, reason: "body-mismatch", detail: `the stored body hashes to ${sha("9876543210")}` })
      )
    }))

  it.scoped("v2 write: the body is required at its declared length; a body already stored is kept", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const body = Buffer.from("0123456789")
      const record = v2(SRC, "text", body)
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const detail = "a v2 record is written with the body it describes"
      assert.deepStrictEqual(yield* failureOf(store.write(record)), new CaptureWriteFailed({ source: SRC, detail }))
      assert.deepStrictEqual(yield* failureOf(store.write(record, body.subarray(1))), new CaptureWriteFailed({ source: SRC, detail }))
      assert.deepStrictEqual(yield* names(directory), [])
      // A body planted under the digest first is not replaced; the record is still written, and reads as a mismatch.
      yield* Effect.promise(() => fsp.writeFile(path.join(directory, bodyName(body)), "9876543210"))
      yield* store.write(record, body)
      assert.deepStrictEqual(yield* names(directory), [bodyName(body), expectedRecordName(SRC)].sort())
      assert.strictEqual(yield* readText(path.join(directory, bodyName(body))), "9876543210")
      const error = yield* failureOf(store.read(SRC))
      assert.deepStrictEqual([error._tag, (error as CorruptCapture).reason], ["CorruptCapture", "body-mismatch"])
      // A second record of the same source: its body is stored, the record is CaptureExists.
      const other = Buffer.from("abcdefghij")
      const again = yield* failureOf(store.write(v2(SRC, "text", other), other))
      assert.deepStrictEqual(again, new CaptureExists({ source: SRC }))
      assert.deepStrictEqual(yield* names(directory), [bodyName(body), bodyName(other), expectedRecordName(SRC)].sort())
    }))

  it.scoped("a relative run directory is resolved", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(CaptureStore.makeFileSystem({ directory: "no-such-run-directory" }))
      assert.instanceOf(error, InvalidRunDirectory)
      assert.strictEqual(error.path, path.resolve("no-such-run-directory"))
      const inspectError = yield* failureOf(CaptureStore.inspect({ directory: "no-such-run-directory" }))
      assert.instanceOf(inspectError, InvalidRunDirectory)
      assert.strictEqual(inspectError.path, path.resolve("no-such-run-directory"))
    }))
})

describe("CaptureStore: inspect and sweep", () => {
  const SALES = "https://r.test/sales" as SourceUrl
  const PAGE = "https://r.test/page" as SourceUrl

  /** A run directory with one entry of every kind; returns the expected inspection. */
  const populate = (directory: string) =>
    Effect.gen(function*() {
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const at = (name: string) => path.join(directory, name)
      const write = (name: string, data: string | Uint8Array) => Effect.promise(() => fsp.writeFile(at(name), data))
      const hex = "ab".repeat(32)

      // Good records: a v1 and a v2 with its body.
      const sales = v1("Net sales were 4,210.", "text/plain", SALES)
      yield* store.write(sales)
      const pageBody = Buffer.from("<p>page</p>")
      yield* store.write(v2(PAGE, "page", pageBody), pageBody)

      // Leftovers: one unlinked, one a second link of the sales record.
      yield* write(".partial-3f1c2a40-0000-4000-8000-000000000001", "half a rec")
      yield* Effect.promise(() => fsp.chmod(at(".partial-3f1c2a40-0000-4000-8000-000000000001"), 0o444))
      yield* Effect.promise(() => fsp.link(at(expectedRecordName(SALES)), at(".partial-3f1c2a40-0000-4000-8000-000000000002")))
      const salesBytes = Buffer.byteLength(CaptureStore.encodeRecord(sales))

      const problems: Array<CaptureStore.RecordProblem> = []
      const problem = (source: string, reason: CaptureStore.RecordProblem["reason"], detail: string) =>
        problems.push({ name: expectedRecordName(source), reason, detail })

      // Not JSON.
      yield* write(expectedRecordName("https://r.test/json"), "{")
      const parsed = StrictJson.parse("{")
      problem("https://r.test/json", "invalid-json", parsed._tag === "Left" ? parsed.issue.message : "")
      // A legacy record.
      yield* write(expectedRecordName("https://r.test/legacy"), JSON.stringify({ source: "https://r.test/legacy", text: "x", sha256: sha("x") }))
      problem("https://r.test/legacy", "legacy", "a record without a format field (pre-v1)")
      // A valid record under another source's name.
      yield* write(expectedRecordName("https://r.test/moved"), CaptureStore.encodeRecord(v1("moved", "text/plain", SALES)))
      problem("https://r.test/moved", "name-mismatch", `a capture of ${SALES}, stored under another source's name`)
      // Its text altered, same length.
      const altered = CaptureStore.encodeRecord(v1("4,210", "text/plain", "https://r.test/altered" as SourceUrl)).replace("4,210", "9,210")
      yield* write(expectedRecordName("https://r.test/altered"), altered)
      problem("https://r.test/altered", "digest-mismatch", `the text hashes to ${sha("9,210")}, the record says ${sha("4,210")}`)
      // A symlink and a directory under record names.
      yield* Effect.promise(() => fsp.symlink("elsewhere", at(expectedRecordName("https://r.test/link"))))
      problem("https://r.test/link", "symlink", "the file is a symbolic link")
      yield* Effect.promise(() => fsp.mkdir(at(expectedRecordName("https://r.test/dir"))))
      problem("https://r.test/dir", "not-a-regular-file", "not a regular file")
      // v2 records: body missing, body altered (same length), body a symlink.
      const gone = Buffer.from("gone")
      yield* write(expectedRecordName("https://r.test/gone"), CaptureStore.encodeRecord(v2("https://r.test/gone", "g", gone)))
      problem("https://r.test/gone", "body-missing", `the body file ${bodyName(gone)}: no such file`)
      const original = Buffer.from("original")
      yield* write(expectedRecordName("https://r.test/changed"), CaptureStore.encodeRecord(v2("https://r.test/changed", "c", original)))
      yield* write(bodyName(original), "ORIGINAL")
      problem("https://r.test/changed", "body-mismatch", `the stored body hashes to ${sha("ORIGINAL")}, the record says ${sha(original)}`)
      const linked = Buffer.from("linked")
      yield* write(expectedRecordName("https://r.test/linkbody"), CaptureStore.encodeRecord(v2("https://r.test/linkbody", "l", linked)))
      yield* Effect.promise(() => fsp.symlink("somewhere/else", at(bodyName(linked))))
      problem("https://r.test/linkbody", "symlink", `the body file ${bodyName(linked)}: the file is a symbolic link`)
      // An orphan body (its record never written).
      const orphan = Buffer.from("orphan")
      yield* write(bodyName(orphan), orphan)

      // Entries citegate did not write, some close to its names.
      const others = [
        "notes.txt",
        `${hex.toUpperCase()}.json`,
        `x${hex}.json`,
        `${hex}.json.bak`,
        `${hex.slice(1)}.json`,
        `${hex}a.json`,
        `x${hex}.body`,
        `${hex}.body.old`,
        `${hex.slice(1)}.body`,
        ".partial-dir",
        // Not citegate's leftovers: another name after the prefix, or a writable file under a UUID name.
        ".partial-thesis-draft.docx",
        ".partial-3f1c2a40-0000-4000-8000-00000000000A",
        ".partial-3f1c2a40-0000-4000-8000-000000000003"
      ]
      for (const name of others) {
        if (name === ".partial-dir") yield* Effect.promise(() => fsp.mkdir(at(name)))
        else yield* write(name, "")
        if (name === ".partial-thesis-draft.docx") yield* Effect.promise(() => fsp.chmod(at(name), 0o444))
      }

      const bodies: Array<CaptureStore.BodyEntry> = [
        { name: bodyName(pageBody), bytes: pageBody.byteLength, referenced: true, problem: null },
        { name: bodyName(original), bytes: 8, referenced: true, problem: `the body hashes to ${sha("ORIGINAL")}` },
        { name: bodyName(linked), bytes: "somewhere/else".length, referenced: true, problem: "symlink: the file is a symbolic link" },
        { name: bodyName(orphan), bytes: orphan.byteLength, referenced: false, problem: null }
      ]
      const byName = <A extends { readonly name: string }>(entries: Array<A>) =>
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      const expected: CaptureStore.RunInspection = {
        directory,
        records: 2,
        leftovers: [
          { name: ".partial-3f1c2a40-0000-4000-8000-000000000001", bytes: 10, linkedTo: null },
          { name: ".partial-3f1c2a40-0000-4000-8000-000000000002", bytes: salesBytes, linkedTo: expectedRecordName(SALES) }
        ],
        problems: byName(problems),
        bodies: byName(bodies),
        attestations: [],
        others: [...others].sort()
      }
      return expected
    })

  it.scoped("inspect lists every entry by kind, in name order, and changes nothing", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const expected = yield* populate(directory)
      const before = yield* snapshotDirectory(directory)
      const inspection = yield* CaptureStore.inspect({ directory })
      assert.deepStrictEqual(inspection, expected)
      assert.deepStrictEqual(yield* snapshotDirectory(directory), before)
    }))

  it.scoped("inspect with a record limit: a larger record is too-large", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const store = yield* CaptureStore.makeFileSystem({ directory })
      const record = v1("x".repeat(100), "text/plain", SALES)
      yield* store.write(record)
      const size = Buffer.byteLength(CaptureStore.encodeRecord(record))
      const tight = yield* CaptureStore.inspect({ directory, maxRecordBytes: size - 1 })
      assert.deepStrictEqual(tight.problems, [
        { name: expectedRecordName(SALES), reason: "too-large", detail: `${size} bytes exceeds the ${size - 1} byte limit` }
      ])
      assert.strictEqual(tight.records, 0)
      const exact = yield* CaptureStore.inspect({ directory, maxRecordBytes: size })
      assert.deepStrictEqual([exact.records, exact.problems], [1, []])
    }))

  it.scoped("sweep removes the leftovers and nothing else; a record linked to a leftover stays", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const expected = yield* populate(directory)
      const before = yield* snapshotDirectory(directory)
      const result = yield* CaptureStore.sweep({ directory })
      assert.deepStrictEqual(result, { ...expected, removed: [".partial-3f1c2a40-0000-4000-8000-000000000001", ".partial-3f1c2a40-0000-4000-8000-000000000002"], failed: [] })
      const after = yield* snapshotDirectory(directory)
      assert.deepStrictEqual(after, before.filter((e) => e.name !== ".partial-3f1c2a40-0000-4000-8000-000000000001" && e.name !== ".partial-3f1c2a40-0000-4000-8000-000000000002"))
      const again = yield* CaptureStore.inspect({ directory })
      assert.deepStrictEqual(again, { ...expected, leftovers: [] })
    }))
})
