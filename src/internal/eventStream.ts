/**
 * The AWS event stream encoding (`application/vnd.amazon.eventstream`, what Bedrock's
 * ConverseStream sends): bytes to messages, bounded and checked as they arrive.
 *
 * A message is a 12-byte prelude (total length, headers length: big-endian uint32; the prelude's
 * CRC32), its headers, its payload and the CRC32 of everything before it. Each header is a name
 * (1-byte length, UTF-8), a type byte and a value (booleans, integers, byte arrays and strings with
 * a 2-byte length, timestamps, UUIDs). Both checksums are verified; a length that cannot hold the
 * message, a header running past its section, an unknown header type or a name repeated in one
 * message is malformed. A message longer than `maxMessageBytes` is refused as soon as its prelude
 * arrives, before anything of it is buffered.
 *
 * Linear: bytes are copied once into the message they complete (plus the remainder of a chunk).
 */

import * as zlib from "node:zlib"

/** One decoded message: its headers (booleans, numbers, strings; byte arrays, timestamps and UUIDs as bytes) and its payload. */
export interface Message {
  readonly headers: ReadonlyMap<string, boolean | number | string | Uint8Array>
  readonly payload: Uint8Array
}

/** Why bytes are not a message: `malformed` (its detail says where) or `too-large` (`size` from the prelude). */
export class FrameError {
  constructor(readonly kind: "malformed" | "too-large", readonly detail: string, readonly size: number = 0) {}
}

const table = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

/** CRC32 (IEEE) byte by byte, from the table: where Node has no native one (before 20.15). */
export const crc32Table = (bytes: Uint8Array, from = 0, to = bytes.length): number => {
  let c = 0xffffffff
  for (let i = from; i < to; i++) c = table[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

// zlib's CRC32 is the same function, about 25 times faster than the table on this code's messages.
const native: ((data: Uint8Array) => number) | undefined = typeof zlib.crc32 === "function" ? zlib.crc32 : undefined

/** CRC32 (IEEE), as the encoding uses it. */
export const crc32 = (bytes: Uint8Array, from = 0, to = bytes.length): number =>
  native === undefined ? crc32Table(bytes, from, to) : native(bytes.subarray(from, to))

const preludeBytes = 12
const minMessageBytes = 16
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Bytes of the fixed-size header values, by type (booleans carry none). */
const fixedSizes: ReadonlyArray<number> = [0, 0, 1, 2, 4, 8]

/**
 * `bytes[from, to)` as text: ASCII (every header name and value Bedrock sends) read here, anything
 * else by the fatal UTF-8 decoder, which throws on invalid UTF-8. ASCII is UTF-8 decoded to the same
 * code points, so both give the same string; a native call and a copy per header cost more than the loop.
 */
const text = (bytes: Uint8Array, from: number, to: number): string => {
  if (to - from <= 64) {
    let out = ""
    for (let i = from; i < to; i++) {
      const b = bytes[i]!
      if (b >= 0x80) return utf8.decode(bytes.subarray(from, to))
      out += String.fromCharCode(b)
    }
    return out
  }
  return utf8.decode(bytes.subarray(from, to))
}

const decodeHeaders = (view: DataView, bytes: Uint8Array, from: number, to: number): Map<string, boolean | number | string | Uint8Array> | FrameError => {
  const headers = new Map<string, boolean | number | string | Uint8Array>()
  let at = from
  const need = (n: number) => at + n <= to
  while (at < to) {
    const nameLength = bytes[at++]!
    if (nameLength === 0 || !need(nameLength + 1)) return new FrameError("malformed", "a header name runs past the headers")
    let name: string
    try {
      name = text(bytes, at, at + nameLength)
    } catch {
      return new FrameError("malformed", "a header name is not UTF-8")
    }
    at += nameLength
    if (headers.has(name)) return new FrameError("malformed", `header ${JSON.stringify(name)} is repeated`)
    const type = bytes[at++]!
    let value: boolean | number | string | Uint8Array
    const fixed = fixedSizes[type]
    if (type <= 1) value = type === 0
    else if (fixed !== undefined) {
      if (!need(fixed)) return new FrameError("malformed", `header ${JSON.stringify(name)} runs past the headers`)
      value = type === 2 ? view.getInt8(at) : type === 3 ? view.getInt16(at) : type === 4 ? view.getInt32(at) : Number(view.getBigInt64(at))
      at += fixed
    } else if (type === 6 || type === 7) {
      if (!need(2)) return new FrameError("malformed", `header ${JSON.stringify(name)} runs past the headers`)
      const length = view.getUint16(at)
      at += 2
      if (!need(length)) return new FrameError("malformed", `header ${JSON.stringify(name)} runs past the headers`)
      if (type === 6) value = bytes.slice(at, at + length)
      else {
        try {
          value = text(bytes, at, at + length)
        } catch {
          return new FrameError("malformed", `header ${JSON.stringify(name)} is not UTF-8`)
        }
      }
      at += length
    } else if (type === 8 || type === 9) {
      const length = type === 8 ? 8 : 16
      if (!need(length)) return new FrameError("malformed", `header ${JSON.stringify(name)} runs past the headers`)
      value = bytes.slice(at, at + length)
      at += length
    } else return new FrameError("malformed", `header ${JSON.stringify(name)} has the unknown type ${type}`)
    headers.set(name, value)
  }
  return headers
}

/** One whole message (exactly `bytes`): checksums, then headers. */
const decodeMessage = (bytes: Uint8Array): Message | FrameError => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const headersLength = view.getUint32(4)
  if (view.getUint32(8) !== crc32(bytes, 0, 8)) return new FrameError("malformed", "the prelude's checksum does not match")
  if (view.getUint32(bytes.length - 4) !== crc32(bytes, 0, bytes.length - 4)) return new FrameError("malformed", "the message's checksum does not match")
  if (preludeBytes + headersLength > bytes.length - 4) return new FrameError("malformed", "the headers are longer than the message")
  const headers = decodeHeaders(view, bytes, preludeBytes, preludeBytes + headersLength)
  if (headers instanceof FrameError) return headers
  return { headers, payload: bytes.subarray(preludeBytes + headersLength, bytes.length - 4) }
}

/**
 * Bytes in, whole messages out. `push` returns the messages a chunk completes and, when a message
 * is refused, the error after them (final: nothing after it is read); `pending` says how many
 * bytes of a message were cut off at the end.
 */
export class Decoder {
  private parts: Array<Uint8Array> = []
  private held = 0
  /** Messages decoded so far. */
  messages = 0
  /** Bytes read so far. */
  bytes = 0

  constructor(private readonly maxMessageBytes: number) {}

  /** Bytes of a message begun but not complete. */
  get pending(): number {
    return this.held
  }

  /** The total length in the prelude, once 4 bytes are held. */
  private totalLength(): number | undefined {
    if (this.held < 4) return undefined
    const first = this.parts[0]!
    // Big-endian uint32, read in place when the first part holds it (nearly always).
    if (first.length >= 4) return ((first[0]! << 24) | (first[1]! << 16) | (first[2]! << 8) | first[3]!) >>> 0
    const head = new Uint8Array(4)
    let n = 0
    for (const part of this.parts) {
      for (let i = 0; i < part.length && n < 4; i++) head[n++] = part[i]!
      if (n === 4) break
    }
    return new DataView(head.buffer).getUint32(0)
  }

  push(chunk: Uint8Array): { readonly messages: Array<Message>; readonly error?: FrameError } {
    this.bytes += chunk.length
    if (chunk.length > 0) {
      // A copy: the caller may reuse its buffer.
      this.parts.push(chunk.slice())
      this.held += chunk.length
    }
    const out: Array<Message> = []
    for (;;) {
      const total = this.totalLength()
      if (total === undefined) return { messages: out }
      if (total > this.maxMessageBytes) return { messages: out, error: new FrameError("too-large", `a message of ${total} bytes`, total) }
      if (total < minMessageBytes) {
        return { messages: out, error: new FrameError("malformed", `a message length of ${total} bytes (at least ${minMessageBytes})`) }
      }
      if (this.held < total) return { messages: out }
      const all = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)
      const message = decodeMessage(all.subarray(0, total))
      if (message instanceof FrameError) return { messages: out, error: message }
      this.messages++
      out.push(message)
      this.parts = all.length > total ? [all.subarray(total)] : []
      this.held -= total
    }
  }
}
