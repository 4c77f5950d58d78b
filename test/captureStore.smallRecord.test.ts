/**
 * A record whose text is one piece is written from one buffer of its exact size
 * (`Format.encodeSmallRecordBytes`) rather than through the joined piece. These
 * pin that it is byte for byte the canonical serialisation (`encodeRecord`, the
 * general path) on hostile and seeded texts, v1 and v2, that it declines
 * exactly past one piece, and that the store writes those bytes in one write.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { encodeSmallRecordBytes } from "../src/store/Format.js"
import { captureFormatV2, type CaptureRecord, type CaptureRecordV2, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { accessedAt, tempDirectory } from "./support.js"

const sha = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex")

/** A v1 record built by hand: the encoder is tested on texts no valid record holds (lone surrogates) too. */
const v1 = (text: string, source = "https://r.test/a"): CaptureRecord => ({
  format: "citegate.capture/1",
  source: source as SourceUrl,
  sha256: sha(text) as CaptureRecordV2["sha256"],
  accessedAt,
  contentType: "text/plain; charset=utf-8",
  byteLength: Buffer.byteLength(text, "utf8"),
  text
} as CaptureRecord)

/** A valid v1 record (for the store, which reads it back). */
const valid = (text: string, source: string): CaptureRecord =>
  makeCaptureRecord({ source: source as SourceUrl, text, accessedAt, contentType: "text/plain; charset=utf-8" })

const v2 = (text: string): CaptureRecordV2 => {
  const body = Buffer.from(`<p>${text}</p>`)
  return {
    format: captureFormatV2,
    source: "https://r.test/page" as SourceUrl,
    sha256: sha(text) as CaptureRecordV2["sha256"],
    accessedAt,
    extraction: "html/1",
    body: { sha256: sha(body) as CaptureRecordV2["sha256"], byteLength: body.byteLength, contentType: "text/html" },
    pages: [{ number: 1, start: 0, end: text.length }],
    headings: [{ level: 1, text: "T\u00e9", path: ["T\u00e9"], start: 0, end: Math.min(2, text.length) }],
    hidden: [[0, Math.min(1, text.length), "aria-hidden"]],
    text
  } as unknown as CaptureRecordV2
}

/** A seeded text of `length` code units drawn from ASCII, escapes, multi-byte, pairs and lone surrogates. */
const seeded = (seed: number, length: number) => {
  const alphabet = ["a", " ", "\"", "\\", "\n", "\t", "\u0001", "\u001f", "\u007f", "\u00e9", "\u2028", "\uffff", "\ud83d\ude00", "\ud800", "\udc00", "</"]
  let x = seed
  let text = ""
  while (text.length < length) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    text += alphabet[x % alphabet.length]
  }
  return text.slice(0, length)
}

const canonical = (record: CaptureRecord) => Buffer.from(CaptureStore.encodeRecord(record), "utf8")

describe("encodeSmallRecordBytes", () => {
  it("is the canonical serialisation, byte for byte, on hostile texts", () => {
    const texts = [
      "",
      "plain",
      "\"quoted\" and \\back\\slashed",
      "\u0000\u0001\b\f\n\r\t\u001f\u007f",
      "\u2028\u2029 line separators",
      "caf\u00e9 \u4e2d\u6587 \ud83d\ude00",
      "lone \ud800 high, lone \udc00 low, reversed \udc00\ud800",
      "ends with a high surrogate \ud83d",
      "a".repeat(CaptureStore.encodeChunkCodeUnits),
      "\u0001".repeat(CaptureStore.encodeChunkCodeUnits),
      "\u00e9".repeat(CaptureStore.encodeChunkCodeUnits - 1) + "\ud83d"
    ]
    for (const text of texts) {
      for (const record of [v1(text), v2(text)]) {
        const bytes = encodeSmallRecordBytes(record)
        assert.isDefined(bytes, JSON.stringify(text.slice(0, 40)))
        assert.isTrue(bytes!.equals(canonical(record)), JSON.stringify(text.slice(0, 40)))
      }
    }
  })

  it("is the canonical serialisation on seeded texts of every size up to one piece", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const length = seed <= 200 ? seed : (seed * 7919) % (CaptureStore.encodeChunkCodeUnits + 1)
      const record = seed % 3 === 0 ? v2(seeded(seed, length)) : v1(seeded(seed, length), `https://r.test/s${seed}?q=%C3%A9`)
      assert.isTrue(encodeSmallRecordBytes(record)!.equals(canonical(record)), `seed ${seed}`)
    }
  })

  it("declines a text longer than one piece (the pieces are written instead)", () => {
    assert.isUndefined(encodeSmallRecordBytes(v1("a".repeat(CaptureStore.encodeChunkCodeUnits + 1))))
    assert.isUndefined(encodeSmallRecordBytes(v1("abcd"), 3))
    assert.isTrue(encodeSmallRecordBytes(v1("abc"), 3)!.equals(canonical(v1("abc"))))
  })

  it.scoped("the store writes a one-piece record in one write, and a longer one as its pieces, both canonical", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const writes: Array<number> = []
      const io: CaptureStore.FileIo = {
        ...CaptureStore.nodeIo,
        write: (fd, bytes) => {
          writes.push(bytes.byteLength)
          return CaptureStore.nodeIo.write(fd, bytes)
        }
      }
      const store = yield* CaptureStore.makeFileSystem({ directory, io })
      const small = valid(seeded(7, 16 * 1024).replace(/[\ud800-\udfff]/g, "x"), "https://r.test/small")
      yield* store.write(small)
      assert.deepStrictEqual(writes, [canonical(small).byteLength])
      const large = valid(seeded(8, 3 * CaptureStore.encodeChunkCodeUnits + 5).replace(/[\ud800-\udfff]/g, "x"), "https://r.test/large")
      yield* store.write(large)
      for (const record of [small, large]) {
        const onDisk = yield* Effect.promise(() => fsp.readFile(path.join(directory, CaptureStore.recordFileName(record.source))))
        assert.isTrue(onDisk.equals(canonical(record)))
        assert.deepStrictEqual(yield* store.read(record.source), record)
      }
    }))
})
