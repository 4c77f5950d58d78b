/**
 * The v1 record decode's hand check (`fastRecordV1`, src/internal/recordDecode.ts) against the
 * record Schema alone. For every input (records as the store writes them, every one-change
 * variation of them: a key removed or added, a value of another type, a bad digest, timestamp or
 * URL, an ill-formed text; seeded combinations of changes; timestamps swept over every field's
 * edges; hostile texts), `decodeRecordText` must return exactly what the read path returned before
 * the hand check (`reference` below, that code as it was): the same record (key order included) or
 * the same error, word for word. The hand check alone may only accept what the Schema accepts, and
 * must accept the records the store writes, or it saves nothing. `sha256Of` is compared with
 * `createHash` on seeded strings and bytes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { createHash } from "node:crypto"
import {
  captureFormat,
  type CaptureRecord,
  captureFormatV2,
  makeCaptureRecord,
  type Rfc3339Utc,
  sha256Of,
  type SourceUrl
} from "../src/Domain.js"
import { type CorruptCapture, LegacyCapture } from "../src/Errors.js"
import {
  checkRecord,
  corrupt,
  decodeRecord,
  decodeRecordText,
  fastRecordV1,
  maxRememberedSourceLength,
  rememberedSources
} from "../src/internal/recordDecode.js"
import * as StrictJson from "../src/internal/strictJson.js"

/** `decodeRecordText` before the hand check: strict JSON, the legacy check, the Schema, `checkRecord`. */
const reference = (
  source: string,
  expected: string | undefined,
  text: string
): Either.Either<CaptureRecord, CorruptCapture | LegacyCapture> => {
  const parsed = StrictJson.parse(text)
  if (parsed._tag === "Left") return Either.left(corrupt(source, "invalid-json", parsed.issue.message))
  const value = parsed.value
  if (
    typeof value === "object" && value !== null && !Array.isArray(value) && !("format" in value) &&
    ("text" in value || "sha256" in value)
  ) {
    return Either.left(new LegacyCapture({ source, detail: "a record without a format field (pre-v1)" }))
  }
  const decoded = decodeRecord(value)
  if (decoded._tag === "Left") {
    const detail = decoded.left.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")
    return Either.left(corrupt(source, "not-a-v1-record", `not a ${captureFormat} or ${captureFormatV2} record: ${detail}`))
  }
  return checkRecord(source, expected, decoded.right)
}

const SRC = "https://bench.example.com/source-1.txt" as SourceUrl
const at = "2026-11-30T00:00:00.000Z" as Rfc3339Utc

const record = (text: string, fields: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...makeCaptureRecord({ source: SRC, text, accessedAt: at, contentType: "text/plain" }),
  ...fields
})

const texts = [
  "Net sales rose 4% to 4,210 units in Q3 2026.\n",
  "",
  " ",
  "\ufeffa BOM kept",
  "é 文 😀 \u2028 \u0000 \"quoted\" \\ back",
  "x".repeat(5_000)
]

const validRecords: ReadonlyArray<Record<string, unknown>> = [
  ...texts.map((text) => record(text)),
  // Key orders other than the store's: the decoded record has the Schema's order.
  Object.fromEntries(Object.entries(record("reversed")).reverse()),
  record("no fraction", { accessedAt: "2026-11-30T23:59:59Z" }),
  record("one digit", { accessedAt: "2026-11-30T00:00:00.1Z" }),
  record("nine digits", { accessedAt: "2026-11-30T00:00:00.123456789Z" }),
  record("leap day", { accessedAt: "2024-02-29T12:00:00.000Z" }),
  record("leap century", { accessedAt: "2000-02-29T12:00:00.000Z" }),
  record("year 0", { accessedAt: "0000-01-01T00:00:00.000Z" }),
  record("year 9999", { accessedAt: "9999-12-31T23:59:59.999Z" }),
  record("other type", { contentType: "" }),
  record("port and path", { source: "http://127.0.0.1:8080/a/b?c=d" })
]

const REMOVE = Symbol("remove")
const replacements: ReadonlyArray<unknown> = [
  REMOVE, null, true, 0, -1, 1, 1.5, -0, 2 ** 53, 2 ** 53 - 1, 1e21, "", " ", "x", "\ud800", "a\udc00b", "😀",
  captureFormat, captureFormatV2, "citegate.capture/3", sha256Of("x"), sha256Of("x").toUpperCase(), sha256Of("x").slice(1),
  `${sha256Of("x")}0`, "2026-11-30T00:00:00.000Z", "2026-11-30T00:00:00Z", "2026-11-30 00:00:00.000Z",
  "2026-11-30T00:00:00.000+00:00", "2026-02-30T00:00:00.000Z", "2023-02-29T00:00:00.000Z", "1900-02-29T00:00:00.000Z",
  "2026-11-30T24:00:00.000Z", "2026-11-30T00:60:00.000Z", "2026-11-30T00:00:60.000Z", "2026-13-01T00:00:00.000Z",
  "2026-00-01T00:00:00.000Z", "2026-11-00T00:00:00.000Z", "2026-11-31T00:00:00.000Z", "2026-11-30T00:00:00.0000000000Z",
  "2026-11-30T00:00:00.Z", "+02026-11-30T00:00:00.000Z", "2026-11-30t00:00:00.000z", "2026-1a-30T00:00:00.000Z",
  "https://bench.example.com/source-1.txt", "https://bench.example.com/source-2.txt", "HTTPS://bench.example.com/x",
  "https://Bench.example.com/x", "https://bench.example.com", "https://bench.example.com/x#f", "https://u@bench.example.com/x",
  "ftp://bench.example.com/x", "https://bench.example.com/a b", "https://bench.example.com/x ", "/relative", [], {},
  ["x"], { text: "x" }
]

/** Seeded (LCG) so that a failure is reproducible. */
const random = (seed: number) => () => (seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32

const replaced = (value: Record<string, unknown>, key: string, by: unknown): Record<string, unknown> => {
  const copy = { ...value }
  if (by === REMOVE) delete copy[key]
  else copy[key] = by
  return copy
}

/** Timestamps of the form the hand check looks at, every field around its edges, and the odd ones. */
const timestamps = (): Array<string> => {
  const pad = (n: number, width: number) => String(n).padStart(width, "0")
  const out: Array<string> = []
  const years = [0, 1, 4, 100, 400, 1900, 1970, 2000, 2023, 2024, 2026, 2100, 9999]
  for (const year of years) {
    for (let month = 0; month <= 13; month++) {
      for (const day of [0, 1, 28, 29, 30, 31, 32]) out.push(`${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T12:00:00.000Z`)
    }
  }
  for (const [h, m, s] of [[23, 59, 59], [24, 0, 0], [0, 60, 0], [0, 0, 60], [99, 0, 0], [0, 0, 0]] as const) {
    for (const fraction of ["", ".0", ".00", ".000", ".999", ".0000", ".123456789", ".1234567890", "."]) {
      out.push(`2026-01-31T${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${fraction}Z`)
    }
  }
  const next = random(271)
  const chars = "0123456789-T:.Z+ zx"
  for (let n = 0; n < 400; n++) {
    const base = [..."2026-11-30T00:00:00.000Z"]
    for (let c = 0; c < 1 + Math.floor(next() * 2); c++) base[Math.floor(next() * base.length)] = chars[Math.floor(next() * chars.length)]!
    out.push(base.join(""))
  }
  return out
}

const cases = (): Array<[string, Record<string, unknown>]> => {
  const out: Array<[string, Record<string, unknown>]> = validRecords.map((r, i) => [`valid ${i}`, r])
  const base = record("Net sales rose 4% to 4,210 units in Q3 2026.\n")
  for (const key of Object.keys(base)) {
    replacements.forEach((by, r) => out.push([`${key} := ${r}`, replaced(base, key, by)]))
  }
  for (const key of ["extra", "body", "extraction", "headings", "pages", "Text", "toString", "constructor"]) {
    out.push([`+ ${key}`, { ...base, [key]: 1 }])
  }
  out.push(["text and byteLength of another text", { ...base, text: "other" }])
  out.push(["a wrong digest (the Verifier's to find)", { ...base, sha256: sha256Of("something else") }])
  out.push(["a v2 format with v1 fields", { ...base, format: captureFormatV2 }])
  out.push(["no format (legacy)", replaced(base, "format", REMOVE)])
  for (const stamp of timestamps()) out.push([`accessedAt ${stamp}`, { ...base, accessedAt: stamp }])
  // Seeded combinations of two or three changes.
  const next = random(20261202)
  const keys = Object.keys(base)
  for (let n = 0; n < 500; n++) {
    let value = base
    for (let c = 0; c < 2 + Math.floor(next() * 2); c++) {
      value = replaced(value, keys[Math.floor(next() * keys.length)]!, replacements[Math.floor(next() * replacements.length)])
    }
    out.push([`random ${n}`, value])
  }
  return out
}

/** Texts that are not a record: truncated, not JSON, repeated or prototype keys, other shapes. */
const hostileTexts = (): Array<[string, string]> => {
  const text = JSON.stringify(record("Net sales rose."))
  return [
    ...[1, 10, text.length / 2, text.length - 2, text.length - 1].map((n): [string, string] => [`truncated to ${n}`, text.slice(0, n)]),
    ["empty", ""],
    ["null", "null"],
    ["array", `[${text}]`],
    ["string", JSON.stringify(text)],
    ["a repeated key", text.replace("{", "{\"text\":\"a\",")],
    ["a repeated format", text.replace("{", `{"format":"${captureFormat}",`)],
    ["a __proto__ key", text.replace("{", "{\"__proto__\":{},")],
    ["a constructor key", text.replace("{", "{\"constructor\":1,")],
    ["trailing garbage", `${text}x`],
    ["two records", `${text}${text}`],
    ["deep", text.replace("\"contentType\":\"text/plain\"", `"contentType":${"[".repeat(80)}${"]".repeat(80)}`)],
    ["many keys", text.replace("{", `{${Array.from({ length: 2_000 }, (_, i) => `"k${i}":0`).join(",")},`)],
    ["a lone surrogate escaped in the text", text.replace("Net", "\\ud800Net")],
    // Seven members, as many as a record has, but six distinct keys: strict JSON refuses it.
    ["a key repeated in place of another", text.replace("\"contentType\":\"text/plain\"", "\"text\":\"Net sales rose.\"")],
    ["a key repeated in place of another, last", text.replace("\"contentType\":\"text/plain\",", "").replace("}", ",\"format\":\"citegate.capture/1\"}")],
    ["a __proto__ key in place of another", text.replace("\"contentType\":\"text/plain\"", "\"__proto__\":\"text/plain\"")],
    ["an empty object in place of a value (seven members)", text.replace("\"text/plain\"", "{}")],
    ["an object in place of a value (eight members)", text.replace("\"text/plain\"", "{\"a\":1}")],
    ["an empty array in place of a value", text.replace("\"text/plain\"", "[]")]
  ]
}

/** An Either's JSON (key order included), and the value itself for a deep comparison. */
const same = (actual: unknown, expected: unknown, name: string) => {
  assert.deepStrictEqual(actual, expected, name)
  assert.strictEqual(JSON.stringify(actual), JSON.stringify(expected), name)
}

describe("record decode: the hand check returns what the Schema returns", () => {
  it("records as written, one-change variations, timestamps at every edge, seeded combinations", () => {
    const all = cases()
    assert.isAbove(all.length, 2_000)
    let fastAccepted = 0
    let schemaAccepted = 0
    for (const [name, value] of all) {
      const text = JSON.stringify(value)
      for (const expected of [SRC, undefined, "https://bench.example.com/other"]) {
        same(decodeRecordText(SRC, expected, text), reference(SRC, expected, text), `${name} (expecting ${expected})`)
      }
      // The same value written another way: white space between the members, around the value.
      for (const spaced of [JSON.stringify(value, null, 2), ` ${text}\n`]) {
        same(decodeRecordText(SRC, SRC, spaced), reference(SRC, SRC, spaced), `${name}, spaced`)
      }
      // The hand check alone, on the value as JSON.parse gives it: only ever a record the Schema
      // accepts, and that very record.
      const schema = decodeRecord(JSON.parse(text))
      const accepted = fastRecordV1(JSON.parse(text))
      if (schema._tag === "Right") schemaAccepted++
      if (accepted !== undefined) {
        fastAccepted++
        assert.strictEqual(schema._tag, "Right", `the hand check accepted what the Schema refuses: ${name}`)
        if (schema._tag === "Right") same(accepted, schema.right, name)
        // A second time (the canonical source is now remembered): the same.
        same(fastRecordV1(JSON.parse(text)), accepted, `${name} again`)
      }
    }
    assert.isAbove(schemaAccepted, 500)
    assert.isAbove(all.length - schemaAccepted, 1_000)
    assert.isAbove(fastAccepted, schemaAccepted * 0.9)
  })

  it("hostile texts: the same error, word for word", () => {
    for (const [name, text] of hostileTexts()) {
      const expected = reference(SRC, SRC, text)
      assert.isTrue(Either.isLeft(expected), name)
      same(decodeRecordText(SRC, SRC, text), expected, name)
    }
    // A key written with an escape is the same key: a record all the same.
    const escaped = JSON.stringify(record("Net sales rose.")).replace("\"text\"", "\"t\\u0065xt\"")
    assert.isTrue(Either.isRight(reference(SRC, SRC, escaped)))
    same(decodeRecordText(SRC, SRC, escaped), reference(SRC, SRC, escaped), "an escaped key")
  })

  it("the records the store writes are decoded by the hand check, keys in the Schema's order", () => {
    for (const text of texts) {
      const written = makeCaptureRecord({ source: SRC, text, accessedAt: at, contentType: "text/plain" })
      const accepted = fastRecordV1(JSON.parse(JSON.stringify(written)))
      assert.isDefined(accepted, JSON.stringify(text).slice(0, 80))
      assert.deepStrictEqual(Object.keys(accepted!), ["format", "source", "sha256", "accessedAt", "contentType", "byteLength", "text"])
    }
    // Values that are not plain JSON data are the Schema's to word.
    const nullProto = Object.assign(Object.create(null) as object, record("x"))
    assert.isUndefined(fastRecordV1(nullProto))
    assert.isUndefined(fastRecordV1(Object.assign(new (class R {})(), record("x"))))
    assert.isUndefined(fastRecordV1([record("x")]))
  })

  it("an enumerable key on Object.prototype (its own or one of a record's) changes nothing", () => {
    // The hand check walks the keys with `for…in`, which also yields the prototype's enumerable keys.
    const all = cases().filter((_, k) => k % 7 === 0)
    const expected = all.map(([, value]) => fastRecordV1(JSON.parse(JSON.stringify(value))))
    for (const key of ["polluted", "text", "format"]) {
      Object.defineProperty(Object.prototype, key, { value: "x", enumerable: true, configurable: true, writable: true })
      try {
        all.forEach(([name, value], k) => same(fastRecordV1(JSON.parse(JSON.stringify(value))), expected[k], `${name} with Object.prototype.${key}`))
      } finally {
        delete (Object.prototype as Record<string, unknown>)[key]
      }
    }
    assert.isAbove(expected.filter((r) => r !== undefined).length, 20)
  })

  it("remembers canonical sources of an ordinary URL's length only: a long source is accepted, not kept", () => {
    const fields = { format: "citegate.capture/1", sha256: "a".repeat(64), accessedAt: at, contentType: "text/plain", byteLength: 1, text: "x" }
    const long = `https://long.example/${"a".repeat(maxRememberedSourceLength)}`
    const before = rememberedSources()
    assert.isDefined(fastRecordV1({ ...fields, source: long }))
    assert.strictEqual(rememberedSources(), before)
    const short = `https://short.example/${before}`
    assert.isDefined(fastRecordV1({ ...fields, source: short }))
    assert.strictEqual(rememberedSources(), before + 1)
  })
})

describe("sha256Of: the digest createHash gives", () => {
  it("strings (lone surrogates included) and bytes, seeded", () => {
    const next = random(7)
    for (let n = 0; n < 300; n++) {
      const length = Math.floor(next() * 3_000)
      const units = Array.from({ length }, () => Math.floor(next() * (next() < 0.9 ? 0x80 : 0x10000)))
      const text = String.fromCharCode(...units)
      assert.strictEqual(sha256Of(text), createHash("sha256").update(text).digest("hex"), `string ${n}`)
      const bytes = Uint8Array.from(units, (u) => u & 0xff)
      assert.strictEqual(sha256Of(bytes), createHash("sha256").update(bytes).digest("hex"), `bytes ${n}`)
    }
    assert.strictEqual(sha256Of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })
})
