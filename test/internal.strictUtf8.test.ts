/**
 * internal/strictUtf8.ts: the ASCII shortcut gives exactly what the strict `TextDecoder` gives, and
 * refuses exactly what it refuses, on views at any offset of any buffer.
 */
import { assert, describe, it } from "@effect/vitest"
import { decodeStrictUtf8, externalFrom } from "../src/internal/strictUtf8.js"
import { random } from "./searchSupport.js"

const reference = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The outcome as a comparable value: the text, or that it threw a TypeError. */
const outcome = (decode: (bytes: Uint8Array) => string, bytes: Uint8Array): string | { readonly threw: string } => {
  try {
    return decode(bytes)
  } catch (error) {
    return { threw: error instanceof TypeError ? "TypeError" : String(error) }
  }
}

const same = (bytes: Uint8Array, what: string) =>
  assert.deepStrictEqual(outcome(decodeStrictUtf8, bytes), outcome((b) => reference.decode(b), bytes), what)

describe("strict UTF-8 decoding", () => {
  it("ASCII, non-ASCII, a byte order mark and nothing: the decoder's text", () => {
    for (const text of ["", "plain ASCII, with \"quotes\" and \\ backslashes\n\t\u0000\u007f", "café – Zürich 😀", "\ufeffa byte order mark is kept"]) {
      const bytes = Buffer.from(text, "utf8")
      assert.strictEqual(decodeStrictUtf8(bytes), text)
      same(bytes, JSON.stringify(text))
    }
  })

  it("bytes that are not UTF-8 throw a TypeError, as the decoder does", () => {
    const bad = [[0xff], [0x61, 0x80], [0xc3], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x61, 0x62, 0xfe]]
    for (const bytes of bad) {
      assert.throws(() => decodeStrictUtf8(Uint8Array.from(bytes)), TypeError)
      same(Uint8Array.from(bytes), JSON.stringify(bytes))
    }
  })

  it("a view at an offset of a larger buffer, plain Uint8Array or Buffer: only its own bytes", () => {
    const whole = Buffer.from("\u00e9prefix plain middle suffix\u00e9", "utf8")
    const start = whole.indexOf("plain")
    const end = whole.indexOf(" suffix")
    assert.strictEqual(decodeStrictUtf8(whole.subarray(start, end)), "plain middle")
    assert.strictEqual(decodeStrictUtf8(new Uint8Array(whole.buffer, whole.byteOffset + start, end - start)), "plain middle")
    // The non-ASCII bytes around it are not read, and a view over them still decodes through the decoder.
    assert.strictEqual(decodeStrictUtf8(whole.subarray(0, start)), "\u00e9prefix ")
  })

  it("ASCII just under and at the length past which the decoder takes over, and a non-ASCII byte at either end", () => {
    for (const length of [externalFrom - 1, externalFrom, externalFrom + 1]) {
      const bytes = Buffer.alloc(length, 0x61)
      same(bytes, `${length} ASCII bytes`)
      assert.strictEqual(decodeStrictUtf8(bytes).length, length)
      for (const at of [0, length - 1]) {
        const bad = Buffer.from(bytes)
        bad[at] = 0xff
        assert.throws(() => decodeStrictUtf8(bad), TypeError)
      }
    }
  })

  it("seeded byte strings, mostly ASCII, long and short: the same outcome", () => {
    const next = random(7)
    for (let n = 0; n < 2_000; n++) {
      const length = next() % 3 === 0 ? next() % 5_000 : next() % 40
      const bytes = new Uint8Array(length)
      const highEvery = 1 + (next() % 400)
      for (let i = 0; i < length; i++) bytes[i] = next() % highEvery === 0 ? 0x80 + (next() % 0x80) : next() % 0x80
      const offset = next() % 4
      const padded = new Uint8Array(length + offset + 3)
      padded.set(bytes, offset)
      same(padded.subarray(offset, offset + length), `case ${n}`)
    }
  })
})
