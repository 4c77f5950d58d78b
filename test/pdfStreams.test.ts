/**
 * The count of what a PDF's streams decode to (`PdfStreams.ts`), per filter
 * and against the tricks a hostile file can play on a scan: filters given by
 * reference, an image dictionary on a content stream, `endstream` inside the
 * compressed data, chains of filters. Each bomb decodes to far more than its
 * size; the check must say so without holding what it decodes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as zlib from "node:zlib"
import { decodedCeiling, decodedFloor, decodedLimit, decodedRatio, withinDecodedLimit } from "../src/extract/PdfStreams.js"

const MiB = 1024 * 1024
const spaces = (n: number) => Buffer.alloc(n, 0x20)

/** A file with one object holding one stream: dictionary text, then the data as given. */
const file = (dictionary: string, data: Buffer, extra = "") =>
  Buffer.concat([
    Buffer.from(`%PDF-1.7\n${extra}4 0 obj\n${dictionary}\nstream\n`, "latin1"),
    data,
    Buffer.from("\nendstream\nendobj\n%%EOF\n", "latin1")
  ])

const within = (body: Buffer, limit: number) => Effect.promise(() => withinDecodedLimit(body, limit))

describe("PdfStreams: decoded bytes are counted before pdf.js decodes them", () => {
  it("the limit: 32 times the file, at least 32 MiB, at most 256 MiB", () => {
    assert.deepStrictEqual([decodedRatio, decodedFloor, decodedCeiling], [32, 32 * MiB, 256 * MiB])
    assert.strictEqual(decodedLimit(1000), 32 * MiB)
    assert.strictEqual(decodedLimit(2 * MiB), 64 * MiB)
    assert.strictEqual(decodedLimit(64 * MiB), 256 * MiB)
  })

  it.effect("FlateDecode: 8 MiB of spaces (8 KiB deflated) passes a 8 MiB limit by its first bytes, fits a larger one", () =>
    Effect.gen(function*() {
      const data = zlib.deflateSync(spaces(8 * MiB), { level: 9 })
      const body = file(`<< /Length ${data.length} /Filter /FlateDecode >>`, data)
      assert.isFalse(yield* within(body, 8 * MiB - 1))
      assert.isTrue(yield* within(body, 8 * MiB))
      // The abbreviation pdf.js accepts too.
      assert.isFalse(yield* within(file(`<< /Length ${data.length} /Filter /Fl >>`, data), MiB))
    }))

  it.effect("every stream counts toward one total", () =>
    Effect.gen(function*() {
      const data = zlib.deflateSync(spaces(MiB))
      const one = file(`<< /Length ${data.length} /Filter /FlateDecode >>`, data)
      const body = Buffer.concat([one, one.subarray(9), one.subarray(9)]) // three streams of 1 MiB each
      assert.isTrue(yield* within(body, 3 * MiB))
      assert.isFalse(yield* within(body, 3 * MiB - 1))
    }))

  it.effect("a dictionary cannot hide a stream: /Subtype /Image, a filter by reference, a filter array", () =>
    Effect.gen(function*() {
      const data = zlib.deflateSync(spaces(4 * MiB))
      const image = file(`<< /Type /XObject /Subtype /Image /Length ${data.length} /Filter /FlateDecode >>`, data)
      assert.isFalse(yield* within(image, MiB))
      const referenced = file(`<< /Length ${data.length} /Filter 9 0 R >>`, data, "9 0 obj\n/FlateDecode\nendobj\n")
      assert.isFalse(yield* within(referenced, MiB))
      const array = file(`<< /Length ${data.length} /Filter [/FlateDecode] >>`, data)
      assert.isFalse(yield* within(array, MiB))
      // A filter that cannot be read (a reference to nothing): a zlib header still counts as FlateDecode.
      const unknown = file(`<< /Length ${data.length} /Filter 77 0 R >>`, data)
      assert.isFalse(yield* within(unknown, MiB))
    }))

  it.effect("`endstream` inside the compressed data does not end the count early", () =>
    Effect.gen(function*() {
      // Stored blocks carry bytes as they are: the word appears in the deflated data.
      const data = zlib.deflateSync(Buffer.concat([Buffer.from("endstream\n"), spaces(4 * MiB)]), { level: 0 })
      assert.isTrue(data.includes("endstream"))
      assert.isFalse(yield* within(file(`<< /Length ${data.length} /Filter /FlateDecode >>`, data), MiB))
      // The same with a length given by reference: the count runs to where the data ends.
      const indirect = file(`<< /Length 8 0 R /Filter /FlateDecode >>`, data, `8 0 obj\n${data.length}\nendobj\n`)
      assert.isFalse(yield* within(indirect, MiB))
    }))

  it.effect("chains: ASCIIHex then Flate, ASCII85 then Flate; RunLength; each stage counted", () =>
    Effect.gen(function*() {
      const deflated = zlib.deflateSync(spaces(4 * MiB))
      const hex = Buffer.from(deflated.toString("hex") + ">", "latin1")
      assert.isFalse(yield* within(file(`<< /Filter [/ASCIIHexDecode /FlateDecode] >>`, hex), 2 * MiB))
      assert.isTrue(yield* within(file(`<< /Filter [/AHx /Fl] >>`, hex), 5 * MiB))
      const a85 = Buffer.from(ascii85(deflated), "latin1")
      assert.isFalse(yield* within(file(`<< /Filter [/ASCII85Decode /FlateDecode] >>`, a85), 2 * MiB))
      assert.isTrue(yield* within(file(`<< /Filter [/A85 /FlateDecode] >>`, a85), 5 * MiB))
      // RunLength: two bytes for 128 copies of one; 20,000 pairs are 2.4 MiB.
      const runs = Buffer.concat([Buffer.from(new Array(20_000).fill([129, 0x20]).flat()), Buffer.from([128])])
      assert.isFalse(yield* within(file(`<< /Filter /RunLengthDecode >>`, runs), 2 * MiB))
      assert.isTrue(yield* within(file(`<< /Filter /RL >>`, runs), 2_560_000))
    }))

  it.effect("LZWDecode: a run of one byte, coded as pdf.js reads it, is counted", () =>
    Effect.gen(function*() {
      const data = lzwEncode(spaces(512 * 1024))
      assert.isBelow(data.length, 32 * 1024)
      assert.isFalse(yield* within(file(`<< /Filter /LZWDecode >>`, data), 256 * 1024))
      assert.isTrue(yield* within(file(`<< /Filter /LZW >>`, data), 512 * 1024 + 1))
    }))

  it.effect("image codecs end the chain (text extraction does not decode them): counted up to there", () =>
    Effect.gen(function*() {
      const data = zlib.deflateSync(spaces(MiB))
      assert.isFalse(yield* within(file(`<< /Filter [/FlateDecode /DCTDecode] >>`, data), MiB - 1))
      assert.isTrue(yield* within(file(`<< /Filter [/DCTDecode /FlateDecode] >>`, data), 1))
    }))
})

/** ASCII85 of bytes, `~>` at the end (the `z` shortcut for zero groups). */
function ascii85(bytes: Buffer): string {
  let out = ""
  for (let i = 0; i < bytes.length; i += 4) {
    const chunk = [0, 1, 2, 3].map((k) => bytes[i + k] ?? 0)
    const n = ((chunk[0]! << 24) | (chunk[1]! << 16) | (chunk[2]! << 8) | chunk[3]!) >>> 0
    const count = Math.min(4, bytes.length - i)
    if (n === 0 && count === 4) {
      out += "z"
      continue
    }
    const digits: Array<string> = []
    let v = n
    for (let k = 0; k < 5; k++) {
      digits.unshift(String.fromCharCode((v % 85) + 33))
      v = Math.floor(v / 85)
    }
    out += digits.slice(0, count + 1).join("")
  }
  return out + "~>"
}

/** LZW as PDF writes it (EarlyChange 1, 9-12-bit codes, a clear code when the table is full, an end code). */
function lzwEncode(input: Buffer): Buffer {
  const out: Array<number> = []
  let buffer = 0
  let bits = 0
  let width = 9
  const put = (code: number) => {
    buffer = (buffer << width) | code
    bits += width
    while (bits >= 8) {
      out.push((buffer >>> (bits - 8)) & 255)
      bits -= 8
    }
    buffer &= (1 << bits) - 1
  }
  let table = new Map<string, number>()
  let next = 258
  put(256)
  let w = ""
  for (const byte of input) {
    const c = String.fromCharCode(byte)
    const wc = w + c
    if (w === "" || table.has(wc) || wc.length === 1) {
      w = wc
      continue
    }
    put(w.length === 1 ? w.charCodeAt(0) : table.get(w)!)
    table.set(wc, next++)
    if (next + 1 > 1 << width && width < 12) width++
    if (next >= 4094) {
      put(256)
      table = new Map()
      next = 258
      width = 9
    }
    w = c
  }
  if (w !== "") put(w.length === 1 ? w.charCodeAt(0) : table.get(w)!)
  put(257)
  if (bits > 0) out.push((buffer << (8 - bits)) & 255)
  return Buffer.from(out)
}
