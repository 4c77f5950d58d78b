/**
 * The event stream's header names and string values: ASCII is read without the UTF-8 decoder,
 * anything else goes through the fatal one. Both must give what the fatal UTF-8 decoder gives, and
 * refuse what it refuses, at every length (the in-place read stops at 64 bytes).
 */
import { assert, describe, it } from "@effect/vitest"
import * as zlib from "node:zlib"
import * as EventStream from "../src/internal/eventStream.js"

/** One message with the given headers (string values, type 7) and payload, both CRC32s right. */
const message = (headers: ReadonlyArray<readonly [Uint8Array, Uint8Array]>, payload = Buffer.from("{}")): Uint8Array => {
  const encoded = Buffer.concat(headers.map(([name, value]) => {
    const h = Buffer.alloc(1 + name.length + 1 + 2 + value.length)
    h.writeUInt8(name.length, 0)
    Buffer.from(name).copy(h, 1)
    h.writeUInt8(7, 1 + name.length)
    h.writeUInt16BE(value.length, 2 + name.length)
    Buffer.from(value).copy(h, 4 + name.length)
    return h
  }))
  const prelude = Buffer.alloc(12)
  prelude.writeUInt32BE(12 + encoded.length + payload.length + 4, 0)
  prelude.writeUInt32BE(encoded.length, 4)
  prelude.writeUInt32BE(zlib.crc32(prelude.subarray(0, 8)), 8)
  const head = Buffer.concat([prelude, encoded, payload])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(zlib.crc32(head), 0)
  return new Uint8Array(Buffer.concat([head, crc]))
}

const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const utf8 = (text: string) => new TextEncoder().encode(text)
const decodeOne = (bytes: Uint8Array) => new EventStream.Decoder(1 << 20).push(bytes)

describe("event stream headers", () => {
  it("ASCII, accented, CJK and emoji names and values, at lengths around the in-place read's 64 bytes", () => {
    const pieces = ["a", ":event-type", "é", "文", "😀", "\u007f", "\u0080", "\u0000"]
    for (const piece of pieces) {
      for (const length of [1, 2, 31, 63, 64, 65, 66, 200]) {
        let text = ""
        while (utf8(text + piece).length <= length) text += piece
        if (text === "") continue
        const name = utf8(text).subarray(0, 255)
        const value = utf8(text)
        const { messages, error } = decodeOne(message([[name, value]]))
        assert.isUndefined(error, `${JSON.stringify(piece)} × ${length}`)
        assert.strictEqual(messages.length, 1)
        assert.deepStrictEqual([...messages[0]!.headers], [[fatal.decode(name), text]])
      }
    }
  })

  it("a name or value that is not UTF-8 is malformed, wherever the bad byte sits, short or long", () => {
    const bad = [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf]]
    for (const seq of bad) {
      for (const [before, after] of [[0, 0], [10, 3], [62, 0], [63, 5], [100, 0]] as const) {
        const bytes = new Uint8Array([...utf8("x".repeat(before)), ...seq, ...utf8("y".repeat(after))])
        assert.throws(() => fatal.decode(bytes))
        const asName = decodeOne(message([[bytes.subarray(0, 255), utf8("v")]]))
        assert.strictEqual(asName.error?.detail, "a header name is not UTF-8", `name ${seq} at ${before}`)
        const asValue = decodeOne(message([[utf8("n"), bytes]]))
        assert.strictEqual(asValue.error?.detail, "header \"n\" is not UTF-8", `value ${seq} at ${before}`)
      }
    }
  })

  it("a name repeated in one message is malformed, also when its second spelling is the same UTF-8", () => {
    const name = utf8("é-type")
    const { error } = decodeOne(message([[name, utf8("a")], [new Uint8Array(name), utf8("b")]]))
    assert.strictEqual(error?.detail, "header \"é-type\" is repeated")
  })

  it("messages split across chunks at every byte give the same headers and payloads", () => {
    const one = message([[utf8(":event-type"), utf8("contentBlockDelta")], [utf8("ü"), utf8("文字")]], Buffer.from("{\"a\":1}"))
    const two = new Uint8Array([...one, ...one])
    for (let cut = 0; cut <= two.length; cut++) {
      const decoder = new EventStream.Decoder(1 << 20)
      const first = decoder.push(two.subarray(0, cut))
      const second = decoder.push(two.subarray(cut))
      const all = [...first.messages, ...second.messages]
      assert.strictEqual(all.length, 2, `cut at ${cut}`)
      assert.strictEqual(decoder.pending, 0)
      for (const m of all) {
        assert.deepStrictEqual([...m.headers], [[":event-type", "contentBlockDelta"], ["ü", "文字"]])
        assert.strictEqual(Buffer.from(m.payload).toString(), "{\"a\":1}")
      }
    }
  })
})
