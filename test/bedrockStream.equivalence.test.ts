/**
 * The ConverseStream body reader's outcome for hundreds of hostile variations of one body, compared
 * with a golden file written by the reader before its per-message work was made cheaper (headers
 * read into fixed fields, CRC32 over the buffer in place, payloads decoded from the view). Each case
 * is a valid body with one change: a flipped byte (bad prelude or message CRC32, a changed length), a
 * cut, a header added, repeated, of another type, non-ASCII or invalid UTF-8, a payload that is not
 * UTF-8 or not strict JSON (repeated or forbidden keys, lone surrogates), a payload field of another
 * type, an exception or error message. Both CRC32s are recomputed where the change is not meant to
 * break them. The outcome is compared exactly: `decodeEventStream`'s response or typed failure, and
 * what the streaming route sees (the Decoder fed in 7-byte chunks, each message's headers and
 * payload, `messageMember` and `Accumulator.pushMember`). `UPDATE_GOLDEN=1` rewrites the file.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as zlib from "node:zlib"
import * as BedrockStream from "../src/answer/BedrockStream.js"
import * as EventStream from "../src/internal/eventStream.js"
import { assertGolden, digest, paths, REMOVE, replaced } from "./support/golden.js"

const goldenUrl = new URL("./bedrockStream.equivalence.golden.json", import.meta.url)

type Header = readonly [name: Uint8Array | string, type: number, value: Uint8Array | string]

const bytes = (x: Uint8Array | string) => (typeof x === "string" ? Buffer.from(x) : Buffer.from(x))

/** One message: headers (any type, raw bytes for fixed-size ones) and payload, both CRC32s right. */
const message = (headers: ReadonlyArray<Header>, payload: Uint8Array | string): Buffer => {
  const encoded = Buffer.concat(headers.map(([name, type, value]) => {
    const n = bytes(name)
    const v = bytes(value)
    // A type of 256 + t writes type t and the value's bytes as they are (no length): a cut header.
    const sized = type === 6 || type === 7
    const h = Buffer.alloc(1 + n.length + 1 + (sized ? 2 : 0) + v.length)
    h.writeUInt8(n.length, 0)
    n.copy(h, 1)
    h.writeUInt8(type & 0xff, 1 + n.length)
    if (sized) h.writeUInt16BE(v.length, 2 + n.length)
    v.copy(h, 2 + n.length + (sized ? 2 : 0))
    return h
  }))
  const body = bytes(payload)
  const prelude = Buffer.alloc(12)
  prelude.writeUInt32BE(12 + encoded.length + body.length + 4, 0)
  prelude.writeUInt32BE(encoded.length, 4)
  prelude.writeUInt32BE(zlib.crc32(prelude.subarray(0, 8)), 8)
  const head = Buffer.concat([prelude, encoded, body])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(zlib.crc32(head), 0)
  return Buffer.concat([head, crc])
}

const eventHeaders = (type: string): Array<Header> => [[":event-type", 7, type], [":content-type", 7, "application/json"], [":message-type", 7, "event"]]
const event = (type: string, payload: unknown) => ({ headers: eventHeaders(type), payload: JSON.stringify(payload) })

const citation = (i: number) => ({
  title: `doc ${i}`, sourceContent: [{ text: `quoted passage ${i} — é 文 😀` }], location: { documentChar: { documentIndex: i % 3, start: 10 * i, end: 10 * i + 20 } }
})
const base = [
  event("messageStart", { role: "assistant" }),
  event("contentBlockStart", { contentBlockIndex: 0, start: { toolUse: { toolUseId: "t", name: "n" } } }),
  event("contentBlockDelta", { contentBlockIndex: 0, delta: { toolUse: { input: "{}" } } }),
  event("contentBlockStop", { contentBlockIndex: 0 }),
  event("contentBlockDelta", { contentBlockIndex: 1, delta: { text: "First. The claim 🚲." } }),
  event("contentBlockDelta", { contentBlockIndex: 1, delta: { citation: citation(1) } }),
  event("contentBlockDelta", { contentBlockIndex: 1, delta: { citation: citation(2) } }),
  event("contentBlockStop", { contentBlockIndex: 1 }),
  event("contentBlockDelta", { contentBlockIndex: 2, delta: { text: "Plain text." } }),
  event("contentBlockStop", { contentBlockIndex: 2 }),
  event("messageStop", { stopReason: "end_turn" }),
  event("metadata", { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } })
]
type Spec = { readonly headers: ReadonlyArray<Header>; readonly payload: string | Uint8Array }
const body = (specs: ReadonlyArray<Spec>) => new Uint8Array(Buffer.concat(specs.map((s) => message(s.headers, s.payload))))

const replacements: ReadonlyArray<unknown> = [REMOVE, null, -1, 0, 1, 1.5, 2 ** 53, "", "x", "\ud800", [], {}, true]

const cases = (): Array<[string, Uint8Array]> => {
  const out: Array<[string, Uint8Array]> = [["valid", body(base)]]
  const withMessage = (e: number, spec: Spec) => body(base.map((s, i) => (i === e ? spec : s)))
  base.forEach((spec, e) => {
    const payload = JSON.parse(spec.payload) as unknown
    for (const path of paths(payload)) {
      replacements.forEach((by, r) => out.push([`message ${e} ${path.join(".")} := ${r}`, withMessage(e, { ...spec, payload: JSON.stringify(replaced(payload, path, by)) })]))
    }
    const p = spec.payload
    out.push([`message ${e} repeated key`, withMessage(e, { ...spec, payload: `{"x":1,"x":2,${p.slice(1)}` })])
    out.push([`message ${e} escaped repeated key`, withMessage(e, { ...spec, payload: `{"x":1,"\\u0078":2,${p.slice(1)}` })])
    out.push([`message ${e} __proto__`, withMessage(e, { ...spec, payload: `{"__proto__":{},${p.slice(1)}` })])
    out.push([`message ${e} lone surrogate escape`, withMessage(e, { ...spec, payload: `{"s":"\\ud800",${p.slice(1)}` })])
    out.push([`message ${e} not JSON`, withMessage(e, { ...spec, payload: `${p}}` })])
    out.push([`message ${e} array payload`, withMessage(e, { ...spec, payload: `[${p}]` })])
    out.push([`message ${e} empty payload`, withMessage(e, { ...spec, payload: "" })])
    out.push([`message ${e} BOM`, withMessage(e, { ...spec, payload: `\ufeff${p}` })])
    out.push([`message ${e} invalid UTF-8`, withMessage(e, { ...spec, payload: Buffer.concat([Buffer.from(p.slice(0, -1)), Buffer.from([0x22, 0xff, 0x22]), Buffer.from("}")]) })])
    out.push([`message ${e} overlong UTF-8`, withMessage(e, { ...spec, payload: Buffer.concat([Buffer.from(`{"s":"`), Buffer.from([0xc0, 0xaf]), Buffer.from(`",${p.slice(1)}`)]) })])
    out.push([`message ${e} a long payload`, withMessage(e, { ...spec, payload: `{"pad":"${"é".repeat(3000)}",${p.slice(1)}` })])
    out.push([`message ${e} dropped`, body(base.filter((_, i) => i !== e))])
    out.push([`message ${e} twice`, body(base.flatMap((s, i) => (i === e ? [s, s] : [s])))])
    const h = spec.headers
    const headerCases: Array<[string, ReadonlyArray<Header>]> = [
      ["no headers", []],
      ["no :event-type", h.filter(([n]) => n !== ":event-type")],
      ["empty :event-type", h.map(([n, t, v]) => (n === ":event-type" ? [n, t, ""] as const : [n, t, v] as const))],
      ["no :message-type", h.filter(([n]) => n !== ":message-type")],
      [":message-type exception", [...h.filter(([n]) => n !== ":message-type"), [":message-type", 7, "exception"], [":exception-type", 7, "throttlingException"]]],
      [":message-type exception without its type", [...h.filter(([n]) => n !== ":message-type"), [":message-type", 7, "exception"]]],
      [":message-type error", [[":message-type", 7, "error"], [":error-code", 7, "InternalFailure"], [":error-message", 7, "boom — é"]]],
      [":message-type error, bare", [[":message-type", 7, "error"]]],
      [":message-type other", [...h.filter(([n]) => n !== ":message-type"), [":message-type", 7, "other"]]],
      [":message-type as bytes", [...h.filter(([n]) => n !== ":message-type"), [":message-type", 6, "event"]]],
      [":event-type as bytes", [...h.filter(([n]) => n !== ":event-type"), [":event-type", 6, "messageStart"]]],
      [":event-type non-ASCII", h.map(([n, t, v]) => (n === ":event-type" ? [n, t, `${v}é文😀`] as const : [n, t, v] as const))],
      [":event-type invalid UTF-8", h.map(([n, t, v]) => (n === ":event-type" ? [n, t, Buffer.from([0x61, 0xff])] as const : [n, t, v] as const))],
      ["header name invalid UTF-8", [...h, [Buffer.from([0xc3]), 7, "x"]]],
      ["header name non-ASCII", [...h, ["é文😀", 7, "x"]]],
      ["repeated :event-type", [...h, [":event-type", 7, "messageStop"]]],
      ["repeated other header", [...h, ["x", 7, "1"], ["x", 7, "2"]]],
      ["every header type", [...h, ["t", 0, ""], ["f", 1, ""], ["b", 2, Buffer.from([0xff])], ["s", 3, Buffer.from([0x80, 1])], ["i", 4, Buffer.from([0xff, 0, 0, 1])], ["l", 5, Buffer.from([0, 0, 0, 0, 0, 0, 1, 2])], ["y", 6, Buffer.from([1, 2, 3])], ["ts", 8, Buffer.alloc(8, 7)], ["u", 9, Buffer.alloc(16, 9)]]],
      ["unknown header type", [...h, ["z", 10, "abc"]]],
      ["a header value of 70 bytes", [...h, ["long", 7, "v".repeat(70)]]],
      ["a name of 255 bytes", [...h, ["n".repeat(255), 7, "x"]]],
      ["a header cut: fixed value past the end", [...h, ["i", 4, Buffer.from([1, 2])]]],
      ["a header cut: string length past the end", [...h, ["s", 256 + 7, Buffer.from([0, 9])]]],
      ["a zero-length name", [...h, ["", 7, "x"]]]
    ]
    for (const [name, headers] of headerCases) out.push([`message ${e} ${name}`, withMessage(e, { headers, payload: spec.payload })])
  })
  const valid = body(base)
  for (let at = 0; at < valid.length; at += 5) {
    for (const bit of [0x01, 0x80]) {
      const flipped = valid.slice()
      flipped[at] = flipped[at]! ^ bit
      out.push([`byte ${at} ^ ${bit}`, flipped])
    }
  }
  for (let cut = 0; cut < valid.length; cut += 13) out.push([`cut at ${cut}`, valid.slice(0, cut)])
  const first = message(base[0]!.headers, base[0]!.payload)
  const setLength = (m: Buffer, total: number, headers: number, fixPrelude: boolean) => {
    const copy = Buffer.from(m)
    copy.writeUInt32BE(total, 0)
    copy.writeUInt32BE(headers, 4)
    if (fixPrelude) copy.writeUInt32BE(zlib.crc32(copy.subarray(0, 8)), 8)
    return new Uint8Array(Buffer.concat([copy, valid.subarray(first.length)]))
  }
  out.push(["total length 15", setLength(first, 15, first.readUInt32BE(4), true)])
  out.push(["total length 0", setLength(first, 0, first.readUInt32BE(4), true)])
  out.push(["total length past the limit", setLength(first, 0xffffffff, first.readUInt32BE(4), true)])
  out.push(["headers length past the message", setLength(first, first.length, first.length, true)])
  out.push(["headers length past the message, prelude CRC wrong", setLength(first, first.length, first.length, false)])
  return out
}

const failure = (e: unknown) => {
  const { _tag, ...fields } = { ...(e as object) } as Record<string, unknown>
  return `${(e as { _tag?: string })._tag ?? _tag} ${JSON.stringify(fields)}`
}

const headerValue = (v: unknown) => (v instanceof Uint8Array ? { bytes: Array.from(v) } : v)

/** `decodeEventStream`'s outcome, and the streaming route's (7-byte chunks, messages, members, accumulator). */
const outcome = (input: Uint8Array) => {
  const decoded = BedrockStream.decodeEventStream(input)
  const whole = Either.isRight(decoded) ? { response: digest(decoded.right) } : { failure: failure(decoded.left) }
  const decoder = new EventStream.Decoder(1 << 20)
  const accumulator = new BedrockStream.Accumulator()
  const seen: Array<unknown> = []
  let streamed: unknown
  read: {
    for (let at = 0; at < input.length; at += 7) {
      const { error, messages } = decoder.push(input.subarray(at, at + 7))
      for (const m of messages) {
        seen.push([[...m.headers.entries()].map(([k, v]) => [k, headerValue(v)]), Array.from(m.payload)])
        const member = BedrockStream.messageMember(m, seen.length)
        if (Either.isLeft(member)) {
          streamed = { member: failure(member.left) }
          break read
        }
        seen.push([member.right.name, member.right.body])
        const pushed = accumulator.pushMember(member.right.name, member.right.body)
        if (Either.isLeft(pushed)) {
          streamed = { push: failure(pushed.left) }
          break read
        }
      }
      if (error !== undefined) {
        streamed = { frame: `${error.kind} ${error.detail} ${error.size}` }
        break read
      }
    }
    const end = accumulator.response()
    streamed = { pending: decoder.pending, end: Either.isRight(end) ? digest(end.right) : failure(end.left) }
  }
  return { whole, streamed, seen: digest(seen) }
}

describe("BedrockStream: the same outcome for every hostile variation as the golden file", () => {
  it("hundreds of one-change variations of a ConverseStream body", () => {
    const all = cases()
    assert.isAbove(all.length, 500)
    const results = Object.fromEntries(all.map(([name, input]) => [name, outcome(input)]))
    assertGolden(goldenUrl, results)
    const kinds = new Set(Object.values(results).map((r) => Object.keys(r.whole)[0]))
    assert.deepStrictEqual([...kinds].sort(), ["failure", "response"])
  })
})
