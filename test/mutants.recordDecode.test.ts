/**
 * The shared strict read path of a stored record (src/internal/recordDecode.ts):
 * each check with its exact reason and detail, and the edges of the anchor
 * checks (an anchor may end exactly at the text's end, a page may start
 * exactly where the previous one ended). Records are written here as JSON by
 * hand; digests come from node:crypto.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { createHash } from "node:crypto"
import { type CaptureRecord, captureFormatV2, type CaptureRecordV2, makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { CorruptCapture, LegacyCapture } from "../src/Errors.js"
import { checkBody, checkRecord, decodeRecordBytes, decodeRecordText } from "../src/internal/recordDecode.js"
import { accessedAt } from "./support.js"

const sha = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex") as CaptureRecordV2["sha256"]
const SRC = "https://d.test/r" as SourceUrl

const v1Json = (text: string, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    format: "citegate.capture/1",
    source: SRC,
    sha256: sha(text),
    accessedAt,
    contentType: "text/plain",
    byteLength: Buffer.byteLength(text),
    text,
    ...fields
  })

const v2 = (text: string, anchors: Partial<Pick<CaptureRecordV2, "pages" | "headings">>): CaptureRecordV2 => ({
  format: captureFormatV2,
  source: SRC,
  sha256: sha(text),
  accessedAt,
  extraction: "pdf/1",
  body: { sha256: sha("body"), byteLength: 4, contentType: "application/pdf" },
  ...anchors,
  text
})

const corrupt = (reason: CorruptCapture["reason"], detail: string, source: string = SRC) =>
  Either.left(new CorruptCapture({ source, reason, detail }))

const issuesOf = (result: Either.Either<CaptureRecord, CorruptCapture | LegacyCapture>) => {
  if (Either.isRight(result) || result.left._tag !== "CorruptCapture") return "not a CorruptCapture"
  assert.strictEqual(result.left.reason, "not-a-v1-record")
  const prefix = "not a citegate.capture/1 or citegate.capture/2 record: "
  assert.isTrue(result.left.detail.startsWith(prefix), result.left.detail)
  return result.left.detail.slice(prefix.length)
}

describe("recordDecode: bytes and JSON", () => {
  it("a valid v1 record decodes; the source used in errors may differ from the expected one", () => {
    const record = makeCaptureRecord({ source: SRC, text: "é", accessedAt, contentType: "text/plain" })
    assert.deepStrictEqual(decodeRecordBytes(SRC, SRC, Buffer.from(v1Json("é"))), Either.right(record))
    assert.deepStrictEqual(decodeRecordText("file.json", undefined, v1Json("é")), Either.right(record))
  })

  it("invalid UTF-8 anywhere is invalid-utf8, never a text with U+FFFD", () => {
    const bytes = Buffer.concat([Buffer.from(v1Json("ab").slice(0, -3)), Buffer.from([0xff]), Buffer.from("b\"}")])
    assert.deepStrictEqual(decodeRecordBytes("name", SRC, bytes), corrupt("invalid-utf8", "the record is not valid UTF-8", "name"))
  })

  it("a leading byte order mark is kept, so the record is not JSON", () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(v1Json("ab"))])
    const result = decodeRecordBytes(SRC, SRC, bytes)
    assert.isTrue(Either.isLeft(result) && result.left._tag === "CorruptCapture" && result.left.reason === "invalid-json")
  })

  it("not JSON, or repeated keys: invalid-json with the scanner's message", () => {
    const result = decodeRecordText(SRC, SRC, "{\"format\":1,\"format\":2}")
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.strictEqual(result.left._tag, "CorruptCapture")
      assert.strictEqual((result.left as CorruptCapture).reason, "invalid-json")
      assert.include(result.left.detail, "format")
    }
  })

  it("a legacy record: an object without format that has a text or a digest", () => {
    const legacy = Either.left(new LegacyCapture({ source: SRC, detail: "a record without a format field (pre-v1)" }))
    assert.deepStrictEqual(decodeRecordText(SRC, SRC, "{\"text\":\"x\"}"), legacy)
    assert.deepStrictEqual(decodeRecordText(SRC, SRC, "{\"sha256\":\"x\"}"), legacy)
    // Neither: an invalid record, not a legacy one.
    assert.strictEqual(issuesOf(decodeRecordText(SRC, SRC, "{\"source\":\"x\"}")), "format: is missing")
    // A format field, even a wrong one, is never legacy.
    const withFormat = decodeRecordText(SRC, SRC, "{\"format\":\"x\",\"text\":\"x\"}")
    assert.isTrue(Either.isLeft(withFormat) && withFormat.left._tag === "CorruptCapture")
    // Not an object at all.
    assert.strictEqual(issuesOf(decodeRecordText(SRC, SRC, "[\"text\"]")), "format: is missing")
    assert.strictEqual(issuesOf(decodeRecordText(SRC, SRC, "null")), "(root): Expected CaptureRecordV1 | CaptureRecordV2, actual null")
  })

  it("schema issues: every one, each with its dotted path, joined by '; '", () => {
    const two = issuesOf(decodeRecordText(SRC, SRC, v1Json("x", { accessedAt: "yesterday", byteLength: -1 })))
    const parts = two.split("; ")
    assert.strictEqual(parts.length, 2, two)
    assert.deepStrictEqual(parts.map((p) => p.slice(0, p.indexOf(": "))).sort(), ["accessedAt", "byteLength"])
    const nested = JSON.stringify({ ...v2("t", {}), body: { sha256: sha("body"), byteLength: -1, contentType: "x" } })
    const one = issuesOf(decodeRecordText(SRC, SRC, nested))
    assert.isTrue(one.startsWith("body.byteLength: "), one)
    assert.notInclude(one, "; ")
  })
})

describe("recordDecode: checkRecord", () => {
  it("the record must be of the expected source; without an expectation any source passes", () => {
    const record = makeCaptureRecord({ source: SRC, text: "x", accessedAt, contentType: "text/plain" })
    assert.deepStrictEqual(
      checkRecord("name", "https://d.test/other", record),
      corrupt("source-mismatch", `the record stored under this source's name is a capture of ${SRC}`, "name")
    )
    assert.deepStrictEqual(checkRecord("name", undefined, record), Either.right(record))
    assert.deepStrictEqual(checkRecord("name", SRC, record), Either.right(record))
  })

  it("a v1 text's UTF-8 length must be the declared byteLength", () => {
    const record = makeCaptureRecord({ source: SRC, text: "é😀", accessedAt, contentType: "text/plain" })
    assert.strictEqual(record.byteLength, 6)
    assert.deepStrictEqual(
      checkRecord(SRC, SRC, { ...record, byteLength: 3 }),
      corrupt("byte-length-mismatch", "the text is 6 bytes, the record says 3")
    )
  })

  it("pages: numbered from 1 in order, each inside the text, no overlap; edges accepted", () => {
    const text = "0123456789"
    const ok = v2(text, { pages: [{ number: 1, start: 0, end: 4 }, { number: 2, start: 4, end: 4 }, { number: 3, start: 4, end: 10 }] })
    assert.deepStrictEqual(checkRecord(SRC, SRC, ok), Either.right(ok))
    const bad = (i: number) => corrupt("invalid-anchor", `pages[${i}] is out of order or outside the text`)
    const cases: Array<[CaptureRecordV2["pages"], number]> = [
      [[{ number: 2, start: 0, end: 1 }], 0],
      [[{ number: 1, start: 0, end: 5 }, { number: 3, start: 5, end: 6 }], 1],
      [[{ number: 1, start: 0, end: 5 }, { number: 2, start: 4, end: 6 }], 1],
      [[{ number: 1, start: 3, end: 2 }], 0],
      [[{ number: 1, start: 0, end: 11 }], 0],
      [[{ number: 1, start: 0, end: 10 }, { number: 2, start: 10, end: 11 }], 1]
    ]
    for (const [pages, i] of cases) assert.deepStrictEqual(checkRecord(SRC, SRC, v2(text, { pages })), bad(i), JSON.stringify(pages))
  })

  it("headings: inside the text, end not before start; edges accepted, order not required", () => {
    const text = "0123456789"
    const heading = (start: number, end: number) => ({ level: 1, text: "h", path: ["h"], start, end })
    const ok = v2(text, { headings: [heading(5, 10), heading(0, 10), heading(3, 3)] })
    assert.deepStrictEqual(checkRecord(SRC, SRC, ok), Either.right(ok))
    const bad = (i: number) => corrupt("invalid-anchor", `headings[${i}] lies outside the text`)
    assert.deepStrictEqual(checkRecord(SRC, SRC, v2(text, { headings: [heading(0, 10), heading(4, 3)] })), bad(1))
    assert.deepStrictEqual(checkRecord(SRC, SRC, v2(text, { headings: [heading(0, 11)] })), bad(0))
  })
})

describe("recordDecode: checkBody", () => {
  it("the body's length, then its digest, against the record", () => {
    const record = v2("t", {})
    assert.deepStrictEqual(checkBody("name", record, Buffer.from("body")), Either.right(record))
    assert.deepStrictEqual(
      checkBody("name", record, Buffer.from("bod")),
      corrupt("body-mismatch", "the stored body is 3 bytes, the record says 4", "name")
    )
    assert.deepStrictEqual(
      checkBody("name", record, Buffer.from("BODY")),
      corrupt("body-mismatch", `the stored body hashes to ${sha("BODY")}, the record says ${sha("body")}`, "name")
    )
  })
})
