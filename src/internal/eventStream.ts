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

/** `bytes[from, to)` spells exactly the ASCII `word`. */
const spells = (bytes: Uint8Array, from: number, to: number, word: string): boolean => {
  if (to - from !== word.length) return false
  for (let i = 0; i < word.length; i++) if (bytes[from + i] !== word.charCodeAt(i)) return false
  return true
}

/**
 * The string headers a reader acts on (`:message-type`, `:event-type`, `:exception-type`,
 * `:error-code`, `:error-message`), read into fixed fields; undefined when absent or not a string.
 */
export interface Known {
  messageType: string | undefined
  eventType: string | undefined
  exceptionType: string | undefined
  errorCode: string | undefined
  errorMessage: string | undefined
}

export const emptyKnown = (): Known => ({ messageType: undefined, eventType: undefined, exceptionType: undefined, errorCode: undefined, errorMessage: undefined })

/** The known names, by their bit in a message's "seen" mask. `:content-type` is known so its repetition is found without a set. */
const knownNames = [":message-type", ":event-type", ":exception-type", ":error-code", ":error-message", ":content-type"] as const
const knownFields: ReadonlyArray<keyof Known | undefined> = ["messageType", "eventType", "exceptionType", "errorCode", "errorMessage", undefined]

/**
 * Values read as the same strings every message (the message and event types Bedrock sends): the
 * bytes are compared in place and the one string is returned, instead of a new one per message.
 */
const interned = [
  "event", "exception", "error", "application/json",
  "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"
]

const knownIndex = (bytes: Uint8Array, from: number, to: number): number => {
  for (let k = 0; k < knownNames.length; k++) if (spells(bytes, from, to, knownNames[k]!)) return k
  return -1
}

/** A header's string value: an interned one when the bytes spell it, else `text` (which throws on invalid UTF-8). */
const valueText = (bytes: Uint8Array, from: number, to: number): string => {
  for (let k = 0; k < interned.length; k++) if (spells(bytes, from, to, interned[k]!)) return interned[k]!
  return text(bytes, from, to)
}

const uint16 = (bytes: Uint8Array, at: number) => (bytes[at]! << 8) | bytes[at + 1]!
const int32 = (bytes: Uint8Array, at: number) => (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!
const uint32 = (bytes: Uint8Array, at: number) => int32(bytes, at) >>> 0

/** A fixed-size integer header's value (types 2 to 5). */
const integer = (bytes: Uint8Array, at: number, type: number): number =>
  type === 2 ? (bytes[at]! << 24) >> 24
  : type === 3 ? (uint16(bytes, at) << 16) >> 16
  : type === 4 ? int32(bytes, at)
  : Number(new DataView(bytes.buffer, bytes.byteOffset + at, 8).getBigInt64(0))

/**
 * The headers `bytes[from, to)`: checked (names and string values UTF-8, no name twice, every value
 * inside the section, known types), the known string headers read into `known`, and, when `all` is
 * given, every header set into it. Without `all` only the known headers' values are made: the
 * others are checked, not kept.
 */
const decodeHeaders = (
  bytes: Uint8Array,
  from: number,
  to: number,
  known: Known,
  all: Map<string, boolean | number | string | Uint8Array> | undefined
): FrameError | undefined => {
  let at = from
  let seen = 0
  let others: Set<string> | undefined
  const need = (n: number) => at + n <= to
  while (at < to) {
    const nameLength = bytes[at++]!
    if (nameLength === 0 || !need(nameLength + 1)) return new FrameError("malformed", "a header name runs past the headers")
    const k = knownIndex(bytes, at, at + nameLength)
    let name: string
    if (k >= 0) name = knownNames[k]!
    else {
      try {
        name = text(bytes, at, at + nameLength)
      } catch {
        return new FrameError("malformed", "a header name is not UTF-8")
      }
    }
    at += nameLength
    // A known name is found by its bytes, so no other name's string can equal it: one mask for them, a set for the rest.
    if (k >= 0 ? (seen & (1 << k)) !== 0 : (others ??= new Set()).has(name)) return new FrameError("malformed", `header ${JSON.stringify(name)} is repeated`)
    if (k >= 0) seen |= 1 << k
    else others!.add(name)
    const type = bytes[at++]!
    let value: boolean | number | string | Uint8Array | undefined
    const fixed = fixedSizes[type]
    if (type <= 1) value = type === 0
    else if (fixed !== undefined) {
      if (!need(fixed)) return new FrameError("malformed", `header ${JSON.stringify(name)} runs past the headers`)
      if (all !== undefined) value = integer(bytes, at, type)
      at += fixed
    } else if (type === 6 || type === 7) {
      if (!need(2)) return new FrameError("malformed", `header ${JSON.stringify(name)} runs past the headers`)
      const length = uint16(bytes, at)
      at += 2
      if (!need(length)) return new FrameError("malformed", `header ${JSON.stringify(name)} runs past the headers`)
      if (type === 6) {
        if (all !== undefined) value = bytes.slice(at, at + length)
      } else {
        try {
          value = k >= 0 || all !== undefined ? valueText(bytes, at, at + length) : text(bytes, at, at + length)
        } catch {
          return new FrameError("malformed", `header ${JSON.stringify(name)} is not UTF-8`)
        }
        const field = k >= 0 ? knownFields[k] : undefined
        if (field !== undefined) known[field] = value
      }
      at += length
    } else if (type === 8 || type === 9) {
      const length = type === 8 ? 8 : 16
      if (!need(length)) return new FrameError("malformed", `header ${JSON.stringify(name)} runs past the headers`)
      if (all !== undefined) value = bytes.slice(at, at + length)
      at += length
    } else return new FrameError("malformed", `header ${JSON.stringify(name)} has the unknown type ${type}`)
    all?.set(name, value!)
  }
  return undefined
}

/** Where a message's parts lie in the bytes it was read from, and its known headers. */
export interface Frame {
  readonly known: Known
  payloadFrom: number
  payloadTo: number
}

/**
 * The whole message `bytes[at, at + total)`: checksums, then headers (into `frame.known`, and every
 * one into `all` when given), and where its payload lies. Nothing is copied.
 */
const decodeMessage = (
  bytes: Uint8Array,
  at: number,
  total: number,
  frame: Frame,
  all: Map<string, boolean | number | string | Uint8Array> | undefined
): FrameError | undefined => {
  const headersLength = uint32(bytes, at + 4)
  if (uint32(bytes, at + 8) !== crc32Table(bytes, at, at + 8)) return new FrameError("malformed", "the prelude's checksum does not match")
  if (uint32(bytes, at + total - 4) !== crc32(bytes, at, at + total - 4)) return new FrameError("malformed", "the message's checksum does not match")
  if (preludeBytes + headersLength > total - 4) return new FrameError("malformed", "the headers are longer than the message")
  const known = frame.known
  known.messageType = known.eventType = known.exceptionType = known.errorCode = known.errorMessage = undefined
  const failed = decodeHeaders(bytes, at + preludeBytes, at + preludeBytes + headersLength, known, all)
  if (failed !== undefined) return failed
  frame.payloadFrom = at + preludeBytes + headersLength
  frame.payloadTo = at + total - 4
  return undefined
}

/** The length a message's prelude gives, refused past `maxMessageBytes` or below the least a message takes. */
const checkedLength = (total: number, maxMessageBytes: number): FrameError | undefined =>
  total > maxMessageBytes
    ? new FrameError("too-large", `a message of ${total} bytes`, total)
    : total < minMessageBytes
    ? new FrameError("malformed", `a message length of ${total} bytes (at least ${minMessageBytes})`)
    : undefined

/**
 * The message at `at` of a body held whole (`bytes` are not kept or copied): its length, with its
 * known headers and payload range in `frame`; 0 when the bytes end inside it; or why it is refused.
 * The same checks, in the same order, as `Decoder.push`; no header map is made.
 */
export const readMessage = (bytes: Uint8Array, at: number, maxMessageBytes: number, frame: Frame): number | FrameError => {
  if (bytes.length - at < 4) return 0
  const total = uint32(bytes, at)
  const refused = checkedLength(total, maxMessageBytes)
  if (refused !== undefined) return refused
  if (bytes.length - at < total) return 0
  return decodeMessage(bytes, at, total, frame, undefined) ?? total
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
      const refused = checkedLength(total, this.maxMessageBytes)
      if (refused !== undefined) return { messages: out, error: refused }
      if (this.held < total) return { messages: out }
      const all = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)
      const headers = new Map<string, boolean | number | string | Uint8Array>()
      const frame: Frame = { known: emptyKnown(), payloadFrom: 0, payloadTo: 0 }
      const failed = decodeMessage(all, 0, total, frame, headers)
      if (failed !== undefined) return { messages: out, error: failed }
      this.messages++
      out.push({ headers, payload: all.subarray(frame.payloadFrom, frame.payloadTo) })
      this.parts = all.length > total ? [all.subarray(total)] : []
      this.held -= total
    }
  }
}
