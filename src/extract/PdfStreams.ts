/**
 * How many bytes a PDF's streams decode to, counted before pdf.js decodes any
 * of them. pdf.js inflates a stream into one growing buffer (ArrayBuffers,
 * outside any V8 heap limit): a 1 MiB file whose content stream is 1 GiB of
 * spaces under `/FlateDecode` takes gigabytes. Here each stream is decoded
 * through its filter chain by counting decoders that keep nothing (only an
 * intermediate stage's output, itself within the budget), and the total over
 * all streams is checked against `decodedLimit` as it grows: the count stops
 * at the limit, so the check itself never holds more than the limit.
 *
 * Filters counted: FlateDecode, LZWDecode, RunLengthDecode, ASCIIHexDecode,
 * ASCII85Decode (and their abbreviations). A chain stops at any other filter
 * (the image codecs DCT, JPX, JBIG2, CCITTFax, which text extraction does not
 * decode; a hostile one is bounded by the extraction process's memory
 * limit). Every stream counts, images included, whatever its dictionary
 * says: a dictionary can claim anything. A filter given by reference
 * (`/Filter 7 0 R`) is looked up in the file; where the chain cannot be read,
 * a stream that starts with a zlib header counts as FlateDecode.
 *
 * A stream's data runs as pdf.js reads it: `/Length` bytes when `endstream`
 * follows them, else to the first `endstream`; the decoders stop at their own
 * end markers.
 */
import * as zlib from "node:zlib"

const MiB = 1024 * 1024

/** A PDF may decode to this many times its own size ... */
export const decodedRatio = 32
/** ... but always to 32 MiB (a small file with large pages) ... */
export const decodedFloor = 32 * MiB
/** ... and never past 256 MiB. */
export const decodedCeiling = 256 * MiB

/** The most bytes the streams of a PDF of `byteLength` bytes may decode to, in total. */
export const decodedLimit = (byteLength: number): number =>
  Math.min(decodedCeiling, Math.max(decodedFloor, decodedRatio * byteLength))

type Filter = "flate" | "lzw" | "runLength" | "asciiHex" | "ascii85"

const filterNames: Record<string, Filter> = {
  FlateDecode: "flate",
  Fl: "flate",
  LZWDecode: "lzw",
  LZW: "lzw",
  RunLengthDecode: "runLength",
  RL: "runLength",
  ASCIIHexDecode: "asciiHex",
  AHx: "asciiHex",
  ASCII85Decode: "ascii85",
  A85: "ascii85"
}

/** The budget ran out: the PDF decodes to more than the limit. */
class OverBudget {}

/** Counts decoded bytes against the shared budget; keeps them only for an intermediate stage. */
class Sink {
  readonly parts: Array<Uint8Array> = []
  constructor(readonly budget: { left: number }, readonly keep: boolean) {}
  push(bytes: Uint8Array) {
    if (bytes.byteLength === 0) return
    this.budget.left -= bytes.byteLength
    if (this.budget.left < 0) throw new OverBudget()
    if (this.keep) this.parts.push(bytes)
  }
  bytes() {
    return Buffer.concat(this.parts)
  }
}

const flate = (input: Uint8Array, sink: Sink): Promise<void> =>
  new Promise((resolve, reject) => {
    // Z_SYNC_FLUSH: a truncated stream counts what it decodes to, as pdf.js reads it; bytes after the end are ignored.
    const inflate = zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH, chunkSize: 256 * 1024 })
    inflate.on("data", (chunk: Buffer) => {
      try {
        sink.push(chunk)
      } catch (error) {
        inflate.destroy()
        reject(error)
      }
    })
    inflate.on("end", () => resolve())
    inflate.on("error", () => resolve()) // a corrupt stream counts what it gave before the error
    inflate.end(input)
  })

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)

const asciiHex = (input: Uint8Array, sink: Sink) => {
  const out: Array<number> = []
  let half = -1
  for (const c of input) {
    if (c === 0x3e) break // '>'
    if (!isHex(c)) continue
    const value = Number.parseInt(String.fromCharCode(c), 16)
    if (half < 0) half = value
    else {
      out.push(half * 16 + value)
      half = -1
    }
  }
  if (half >= 0) out.push(half * 16)
  sink.push(Uint8Array.from(out))
}

const ascii85 = (input: Uint8Array, sink: Sink) => {
  const out: Array<number> = []
  const group: Array<number> = []
  for (const c of input) {
    if (c === 0x7e) break // '~'
    if (c === 0x7a && group.length === 0) {
      out.push(0, 0, 0, 0) // 'z'
      continue
    }
    if (c < 0x21 || c > 0x75) continue
    group.push(c - 0x21)
    if (group.length === 5) {
      const n = group.reduce((a, d) => a * 85 + d, 0)
      out.push((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255)
      group.length = 0
    }
  }
  if (group.length > 1) out.push(...new Array(group.length - 1).fill(0))
  sink.push(Uint8Array.from(out))
}

const runLength = (input: Uint8Array, sink: Sink) => {
  let i = 0
  const chunk = 64 * 1024
  let out: Array<number> = []
  while (i < input.length) {
    const n = input[i++]!
    if (n === 128) break
    if (n < 128) {
      for (let k = 0; k <= n && i < input.length; k++) out.push(input[i++]!)
    } else if (i < input.length) {
      const byte = input[i++]!
      for (let k = 0; k < 257 - n; k++) out.push(byte)
    }
    if (out.length >= chunk) {
      sink.push(Uint8Array.from(out))
      out = []
    }
  }
  sink.push(Uint8Array.from(out))
}

/** LZW as pdf.js decodes it (9–12-bit codes, clear 256, end 257), with the given EarlyChange. */
const lzw = (input: Uint8Array, sink: Sink, earlyChange: 0 | 1) => {
  const prefix = new Int32Array(4096)
  const suffix = new Uint8Array(4096)
  const length = new Int32Array(4096)
  for (let i = 0; i < 256; i++) {
    prefix[i] = -1
    suffix[i] = i
    length[i] = 1
  }
  let next = 258
  let width = 9
  let previous = -1
  let bits = 0
  let buffer = 0
  let at = 0
  let out = new Uint8Array(64 * 1024)
  let used = 0
  const emit = (code: number) => {
    const n = length[code]!
    if (used + n > out.length) {
      sink.push(out.subarray(0, used))
      out = new Uint8Array(Math.max(64 * 1024, n))
      used = 0
    }
    for (let c = code, k = n - 1; k >= 0; k--, c = prefix[c]!) out[used + k] = suffix[c]!
    used += n
  }
  const first = (code: number) => {
    let c = code
    while (prefix[c]! >= 0) c = prefix[c]!
    return suffix[c]!
  }
  for (;;) {
    while (bits < width) {
      if (at >= input.length) {
        sink.push(out.subarray(0, used))
        return
      }
      buffer = ((buffer << 8) | input[at++]!) >>> 0
      bits += 8
    }
    const code = (buffer >>> (bits - width)) & ((1 << width) - 1)
    bits -= width
    if (code === 256) {
      next = 258
      width = 9
      previous = -1
      continue
    }
    if (code === 257) break
    if (previous >= 0 && next < 4096) {
      if (code > next) break // corrupt
      prefix[next] = previous
      suffix[next] = code === next ? first(previous) : first(code)
      length[next] = length[previous]! + 1
      next++
    } else if (code >= 258) break
    emit(code)
    previous = code
    if (next + earlyChange >= (1 << width) && width < 12) width++
  }
  sink.push(out.subarray(0, used))
}

const decode = async (filter: Filter, input: Uint8Array, sink: Sink): Promise<void> => {
  switch (filter) {
    case "flate":
      return flate(input, sink)
    case "asciiHex":
      return asciiHex(input, sink)
    case "ascii85":
      return ascii85(input, sink)
    case "runLength":
      return runLength(input, sink)
    case "lzw": {
      // The dictionary's EarlyChange could be misread: the larger count of both readings is charged.
      const count = (earlyChange: 0 | 1) => {
        const probe = new Sink({ left: sink.budget.left }, false)
        lzw(input, probe, earlyChange)
        return sink.budget.left - probe.budget.left
      }
      const zero = count(0)
      if (sink.keep) return lzw(input, sink, 1)
      sink.budget.left -= Math.max(zero, count(1))
    }
  }
}

/** The file as Latin-1 text: one character per byte, for the keyword and dictionary scans. */
const latin1 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")

/** The value after `/Key` at the top of a dictionary's text: a name, an array of names, a number, or a reference. */
const entry = (dictionary: string, key: string): string | undefined => {
  const match = new RegExp(`/${key}(?![A-Za-z0-9])\\s*(\\[[^\\]]*\\]|/[^\\s/\\[\\]<>()]+|\\d+\\s+\\d+\\s+R|\\d+)`).exec(dictionary)
  return match?.[1]
}

/** An indirect object's value (the last definition, as an incremental update would have it). */
const lookup = (text: string, reference: string): string | undefined => {
  const [number, generation] = reference.split(/\s+/)
  const pattern = new RegExp(`(?:^|[^0-9])${number}\\s+${generation}\\s+obj\\s*(\\[[^\\]]*\\]|/[^\\s/\\[\\]<>()]+|\\d+)`, "g")
  let value: string | undefined
  for (const match of text.matchAll(pattern)) value = match[1]
  return value
}

const resolve = (text: string, value: string | undefined) =>
  value !== undefined && /R$/.test(value) ? lookup(text, value) : value

/** The filter chain, or undefined where it cannot be read; stops at the first filter not counted here. */
const chainOf = (value: string | undefined): Array<Filter> | undefined => {
  if (value === undefined) return undefined
  const names = [...value.matchAll(/\/([^\s/\[\]<>()]+)/g)].map((m) => m[1]!)
  const chain: Array<Filter> = []
  for (const name of names) {
    const filter = filterNames[name]
    if (filter === undefined) break
    chain.push(filter)
  }
  return chain
}

const hasZlibHeader = (bytes: Uint8Array, at: number) =>
  at + 1 < bytes.length && (bytes[at]! & 0x0f) === 8 && ((bytes[at]! << 8) | bytes[at + 1]!) % 31 === 0

/**
 * Whether the streams of `body` decode to at most `limit` bytes in total. Stops counting as soon
 * as they pass it.
 */
export const withinDecodedLimit = async (body: Uint8Array, limit: number): Promise<boolean> => {
  const text = latin1(body)
  const budget = { left: limit }
  const keyword = /(?<![A-Za-z])stream[ \t]*(?:\r\n|\r|\n)/g
  try {
    for (const match of text.matchAll(keyword)) {
      const start = match.index + match[0].length
      // The dictionary: from its object's `obj` keyword to `stream`.
      const open = text.lastIndexOf("obj", match.index)
      const dictionary = text.slice(open < 0 ? Math.max(0, match.index - 4096) : open, match.index)
      const length = Number(resolve(text, entry(dictionary, "Length")))
      const declaredEnd = Number.isInteger(length) && length >= 0 ? start + length : -1
      const end = declaredEnd >= 0 && /^\s*endstream/.test(text.slice(declaredEnd, declaredEnd + 32))
        ? declaredEnd
        : (() => {
          const found = text.indexOf("endstream", start)
          return found < 0 ? body.length : found
        })()
      const filter = resolve(text, entry(dictionary, "Filter"))
      const chain = chainOf(filter) ?? (hasZlibHeader(body, start) ? ["flate" as const] : [])
      let input = body.subarray(start, end)
      for (let stage = 0; stage < chain.length; stage++) {
        const last = stage === chain.length - 1
        const sink = new Sink(budget, !last)
        await decode(chain[stage]!, input, sink)
        // An intermediate stage's bytes count too: pdf.js holds every stage's buffer.
        if (!last) input = sink.bytes()
      }
    }
  } catch (error) {
    if (error instanceof OverBudget) return false
    throw error
  }
  return true
}
