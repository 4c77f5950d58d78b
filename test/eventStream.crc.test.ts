/**
 * The event stream's CRC32: zlib's where Node has it, the table otherwise. Both must be the IEEE
 * CRC32 the encoding uses, over any sub-range of a buffer.
 */
import { assert, describe, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import * as EventStream from "../src/internal/eventStream.js"

describe("event stream CRC32", () => {
  it("the check value of \"123456789\" is 0xCBF43926, by both implementations", () => {
    const bytes = new TextEncoder().encode("123456789")
    assert.strictEqual(EventStream.crc32(bytes), 0xcbf43926)
    assert.strictEqual(EventStream.crc32Table(bytes), 0xcbf43926)
  })

  it("zlib's and the table's agree on random buffers and their sub-ranges, the empty range included", () => {
    for (let round = 0; round < 50; round++) {
      const bytes = randomBytes(1 + (round * 97) % 4096)
      const from = (round * 13) % bytes.length
      const to = from + ((round * 31) % (bytes.length - from + 1))
      assert.strictEqual(EventStream.crc32(bytes, from, to), EventStream.crc32Table(bytes, from, to))
      assert.strictEqual(EventStream.crc32(bytes), EventStream.crc32Table(bytes))
    }
    assert.strictEqual(EventStream.crc32(new Uint8Array(0)), 0)
  })
})
