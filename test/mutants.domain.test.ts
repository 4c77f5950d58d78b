/**
 * The records' Schemas (src/Domain.ts) as citegate decodes them (`decodeUnknown`: plain data first,
 * then the Schema with `errors: "all"` and unknown keys refused): each filter's accept/refuse
 * boundary with the exact issue a user sees, each limit's value and its edge, every struct's
 * strictness (also when decoded without options, as its annotation promises), the identifiers that
 * name the records in issues and in the service's OpenAPI document, and the helpers' results.
 * Pure and fast: no I/O. Expected values are written by hand (digests from `sha256sum`).
 */
import * as OpenApi from "@effect/platform/OpenApi"
import { assert, describe, it } from "@effect/vitest"
import { Either, ParseResult, Schema } from "effect"
import * as D from "../src/Domain.js"
import { decodeUnknown } from "../src/internal/decode.js"
import { CitegateApi } from "../src/server/Api.js"

const SHA = "0123456789abcdef".repeat(4)
const SHA2 = "f".repeat(64)
const URL_ = "https://example.test/a"
const TS = "2026-01-31T12:00:00.000Z"

type Issues = ReadonlyArray<{ readonly path: ReadonlyArray<string | number>; readonly message: string }>

const decode = <A, I>(schema: Schema.Schema<A, I, never>, value: unknown) => decodeUnknown(schema)(value)

const accepted = <A, I>(schema: Schema.Schema<A, I, never>, value: unknown): A => {
  const result = decode(schema, value)
  if (Either.isLeft(result)) assert.fail(`refused ${JSON.stringify(value)}: ${JSON.stringify(result.left)}`)
  return (result as Either.Right<unknown, A>).right
}

const issuesOf = <A, I>(schema: Schema.Schema<A, I, never>, value: unknown): Issues => {
  const result = decode(schema, value)
  if (Either.isRight(result)) assert.fail(`accepted ${JSON.stringify(value)}`)
  return (result as Either.Left<{ readonly issues: Issues }, A>).left.issues
}

const refused = <A, I>(schema: Schema.Schema<A, I, never>, value: unknown, message: string, path: ReadonlyArray<string | number> = []) =>
  assert.deepStrictEqual(issuesOf(schema, value), [{ path, message }], JSON.stringify(value))

/** Decoded with no options at all: only the struct's own annotation can refuse an unknown key. */
const plainIssues = <A, I>(schema: Schema.Schema<A, I, never>, value: unknown) => {
  const result = Schema.decodeUnknownEither(schema)(value)
  if (Either.isRight(result)) return "accepted"
  return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((issue) => issue.path.join("."))
}

const nonBlankMessage = "must not be empty or blank"
const wellFormedMessage = "must be well-formed Unicode (no lone surrogates)"
const shaMessage = "must be 64 lowercase hex characters (SHA-256)"
const tsMessage = "must be an RFC 3339 UTC timestamp such as 2026-01-31T12:00:00.000Z"

const cited = (fields: Record<string, unknown> = {}) => ({
  state: "cited",
  label: "Revenue",
  source: "s1",
  captureSha256: SHA,
  snippet: "grew 5%",
  ...fields
})
const unavailable = (fields: Record<string, unknown> = {}) => ({ state: "unavailable", label: "Margin", reason: "not published", ...fields })

const v1 = (fields: Record<string, unknown> = {}) => ({
  format: "citegate.capture/1",
  source: URL_,
  sha256: SHA,
  accessedAt: TS,
  contentType: "text/plain",
  byteLength: 3,
  text: "abc",
  ...fields
})
const body = { sha256: SHA2, byteLength: 10, contentType: "application/pdf" }
const v2 = (fields: Record<string, unknown> = {}) => ({
  format: "citegate.capture/2",
  source: URL_,
  sha256: SHA,
  accessedAt: TS,
  extraction: "pdf/1",
  body,
  text: "abc",
  ...fields
})
const span = { start: 1, end: 3 }
const evidence = (fields: Record<string, unknown> = {}) => ({ span, occurrences: 1, accessedAt: TS, ...fields })

describe("Domain: decode options and strictness", () => {
  it("decodeOptions collects every issue and refuses unknown keys", () => {
    assert.deepStrictEqual(D.decodeOptions, { errors: "all", onExcessProperty: "error" })
  })

  // Each struct with one valid value and the same value with one unknown key, decoded with no options.
  const structs: ReadonlyArray<readonly [string, Schema.Schema<any, any, never>, Record<string, unknown>]> = [
    ["CitedFact", D.CitedFact, cited()],
    ["UnavailableFact", D.UnavailableFact, unavailable()],
    ["Report", D.Report, { facts: [] }],
    ["CaptureRecordV1", D.CaptureRecordV1, v1()],
    ["BodyRef", D.BodyRef, body],
    ["PageAnchor", D.PageAnchor, { number: 1, start: 0, end: 2 }],
    ["HeadingAnchor", D.HeadingAnchor, { level: 1, text: "T", path: ["T"], start: 0, end: 2 }],
    ["CaptureRecordV2", D.CaptureRecordV2, v2()],
    ["CaptureRef", D.CaptureRef, { source: URL_, sha256: SHA, accessedAt: TS, byteLength: 0 }],
    ["Span", D.Span, span],
    ["SpanOffsets", D.SpanOffsets, { utf16: span, codePoints: span, utf8: span }],
    ["TextQuoteSelector", D.TextQuoteSelector, { type: "TextQuoteSelector", exact: "x", prefix: "", suffix: "" }],
    ["TextPositionSelector", D.TextPositionSelector, { type: "TextPositionSelector", start: 0, end: 1 }],
    ["Evidence", D.Evidence, evidence()],
    ["VerifiedCitation", D.VerifiedCitation, { index: 0, fact: cited(), evidence: evidence() }],
    ["UnavailableEntry", D.UnavailableEntry, { index: 2, fact: unavailable() }]
  ]

  for (const [name, schema, value] of structs) {
    it(`${name}: valid as given, an unknown key refused even without options, named in issues`, () => {
      assert.deepStrictEqual<unknown>(accepted(schema, value), value)
      assert.deepStrictEqual(plainIssues(schema, value), "accepted")
      assert.deepStrictEqual(plainIssues(schema, { ...value, extra: 1 }), ["extra"])
      refused(schema, null, `Expected ${name}, actual null`)
      const keys = Object.keys(value).map((key) => `"${key}"`)
      const unexpected = issuesOf(schema, { ...value, extra: 1 })
      assert.strictEqual(unexpected.length, 1)
      assert.deepStrictEqual(unexpected[0]!.path, ["extra"])
      assert.isTrue(unexpected[0]!.message.startsWith(`is unexpected, expected: ${keys[0]}`), unexpected[0]!.message)
    })
  }

  it("the unions name both members", () => {
    refused(D.Fact, null, "Expected CitedFact | UnavailableFact, actual null")
    refused(D.CaptureRecord, null, "Expected CaptureRecordV1 | CaptureRecordV2, actual null")
    assert.deepStrictEqual(issuesOf(D.VerifiedEntry, null), [
      { path: [], message: "Expected VerifiedCitation, actual null" },
      { path: [], message: "Expected UnavailableEntry, actual null" }
    ])
  })

  it("the service's OpenAPI document names the records and the two string filters", () => {
    const schemas = (OpenApi.fromApi(CitegateApi) as unknown as { components: { schemas: Record<string, any> } }).components
      .schemas
    for (
      const name of [
        "NonBlankString",
        "QuoteContext",
        "CitedFact",
        "UnavailableFact",
        "VerifiedCitation",
        "UnavailableEntry",
        "Evidence",
        "Span",
        "SpanOffsets",
        "TextQuoteSelector",
        "TextPositionSelector"
      ]
    ) assert.isDefined(schemas[name], name)
    assert.strictEqual(schemas["CitedFact"].properties.snippet.$ref, "#/components/schemas/NonBlankString")
    assert.strictEqual(schemas["CitedFact"].properties.prefix.$ref, "#/components/schemas/QuoteContext")
    assert.strictEqual(schemas["UnavailableFact"].properties.reason.$ref, "#/components/schemas/NonBlankString")
  })
})

describe("Domain: string filters", () => {
  it("NonBlankString: any non-whitespace character; blank or ill-formed refused", () => {
    for (const s of ["a", " a ", "\u00a0x", "😀", "\ud83d\ude00 ", "."]) assert.strictEqual<unknown>(accepted(D.NonBlankString, s), s)
    for (const s of ["", " ", "\t\n\r", "\u00a0\u2003\u3000", "\ufeff"]) refused(D.NonBlankString, s, nonBlankMessage)
    for (const s of ["\ud800", "a\udc00", " \ud83d", "\ude00x"]) refused(D.NonBlankString, s, wellFormedMessage)
    refused(D.NonBlankString, 5, "Expected string, actual 5")
  })

  it("Sha256Hex: exactly 64 lowercase hex characters", () => {
    assert.strictEqual<unknown>(accepted(D.Sha256Hex, SHA), SHA)
    assert.strictEqual<unknown>(accepted(D.Sha256Hex, "9".repeat(64)), "9".repeat(64))
    for (
      const s of [
        "",
        SHA.slice(1),
        SHA + "0",
        SHA.toUpperCase(),
        "g" + SHA.slice(1),
        SHA.slice(1) + "G",
        "x" + SHA,
        SHA + "x",
        SHA + "\n",
        " " + SHA.slice(1),
        SHA.slice(0, 32) + "-" + SHA.slice(33)
      ]
    ) refused(D.Sha256Hex, s, shaMessage)
  })

  it("sha256Of: the SHA-256 of a string's UTF-8 bytes, or of bytes", () => {
    assert.strictEqual(D.sha256Of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    assert.strictEqual(D.sha256Of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert.strictEqual(D.sha256Of(new Uint8Array([0x61, 0x62, 0x63])), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    assert.strictEqual(D.sha256Of("é😀"), "1184d1f608158eea09d297565575892231550c403aaa913008d867a97cfd5c76")
  })

  it("Label: non-blank, at most 200 code units", () => {
    assert.strictEqual<unknown>(accepted(D.Label, "x".repeat(200)), "x".repeat(200))
    assert.deepStrictEqual(issuesOf(D.Label, "x".repeat(201)).map((issue) => issue.message.slice(0, 48)), [
      "Expected a string at most 200 character(s) long,"
    ])
    refused(D.Label, " ", nonBlankMessage)
    // A consumer formatting a parse error of the exported Schema sees the brand beside the length limit.
    const formatted = Either.mapLeft(Schema.decodeUnknownEither(D.Label)(5), ParseResult.TreeFormatter.formatErrorSync)
    assert.deepStrictEqual(Either.getLeft(formatted).pipe((o) => o._tag === "Some" ? o.value.split("\n")[0] : ""), "NonBlankString & maxLength(200) & Brand<\"Label\">")
  })

  it("QuoteContext: non-empty (whitespace counts), at most 1000 code units, well-formed", () => {
    assert.strictEqual(D.maxQuoteContext, 1000)
    for (const s of [" ", "\n", "a", "x".repeat(1000), "😀".repeat(500)]) assert.strictEqual<unknown>(accepted(D.QuoteContext, s), s)
    refused(D.QuoteContext, "", "must not be empty")
    refused(D.QuoteContext, "x".repeat(1001), "must be at most 1000 characters")
    refused(D.QuoteContext, "😀".repeat(500) + "x", "must be at most 1000 characters")
    refused(D.QuoteContext, "a\ud800", wellFormedMessage)
    refused(D.QuoteContext, "\udfff", wellFormedMessage)
  })

  it("Rfc3339Utc: a day the month does not have, or hour 24, is refused (Date.parse rolls them over)", () => {
    for (
      const s of [
        "2026-02-29T00:00:00Z",
        "2026-02-30T00:00:00.000Z",
        "2026-04-31T12:00:00Z",
        "1900-02-29T00:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-12-31T24:00:00.000Z"
      ]
    ) refused(D.Rfc3339Utc, s, tsMessage)
    // The last second of a leap day, and a fraction past milliseconds (Date.parse truncates it).
    for (const s of ["2000-02-29T23:59:59.999999999Z", "2026-12-31T23:59:59.9999Z"]) assert.strictEqual<unknown>(accepted(D.Rfc3339Utc, s), s)
  })

  it("Rfc3339Utc: date, time, an optional fraction of 1 to 9 digits, then Z", () => {
    for (
      const s of [
        "2026-01-31T12:00:00Z",
        TS,
        "2026-01-31T12:00:00.1Z",
        "2026-01-31T12:00:00.123456789Z",
        "2024-02-29T23:59:59.999Z",
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z"
      ]
    ) assert.strictEqual<unknown>(accepted(D.Rfc3339Utc, s), s)
    for (
      const s of [
        "",
        "2026-01-31",
        "2026-01-31T12:00:00",
        "2026-01-31T12:00:00.Z",
        "2026-01-31T12:00:00.1234567890Z",
        "2026-01-31T12:00:00+00:00",
        "2026-01-31T12:00:00z",
        "2026-01-31t12:00:00Z",
        "2026-01-31 12:00:00Z",
        "2026-01-31T12:00:00ZZ",
        "2026-01-31T12:00:00Z ",
        " 2026-01-31T12:00:00Z",
        "x2026-01-31T12:00:00Z",
        "202-01-31T12:00:00Z",
        "20260-01-31T12:00:00Z",
        "2026-1-31T12:00:00Z",
        "2026-001-31T12:00:00Z",
        "2026-01-1T12:00:00Z",
        "2026-01-011T12:00:00Z",
        "2026-01-31T1:00:00Z",
        "2026-01-31T012:00:00Z",
        "2026-01-31T12:0:00Z",
        "2026-01-31T12:000:00Z",
        "2026-01-31T12:00:0Z",
        "2026-01-31T12:00:000Z",
        "2026-01-31T12:00:00x1Z",
        "2026/01/31T12:00:00Z",
        "2026-01-31T12-00-00Z",
        "2026-01-31T12:00:00.1a2Z",
        "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z",
        "2026-01-32T00:00:00Z",
        "2026-01-00T00:00:00Z",
        "2026-01-01T25:00:00Z",
        "2026-01-01T00:60:00Z",
        "2026-01-01T00:00:60Z",
        "abcd-ef-ghTij:kl:mnZ"
      ]
    ) refused(D.Rfc3339Utc, s, tsMessage)
  })
})

describe("Domain: URLs", () => {
  const problem = (reason: D.UrlProblem["reason"], detail: string) => ({ reason, detail })
  const canonical = (parsed: string) => problem("not-canonical", `is not in canonical form (it parses as ${parsed})`)
  const scheme = (protocol: string) => problem("scheme-not-allowed", `uses ${protocol}; only https (and http in test mode) are allowed`)
  const userinfo = problem("userinfo", "must not contain userinfo")
  const fragment = problem("fragment", "must not contain a fragment")

  it("urlProblem: canonical http(s) URLs pass", () => {
    for (const s of ["https://a.test/", "http://a.test/", "https://a.test/?q=1", "https://a.test/p@x", "https://a.test/a?b@c", URL_]) {
      assert.strictEqual(D.urlProblem(s), undefined, s)
    }
  })

  it("urlProblem: each refusal with its reason and detail", () => {
    const cases: ReadonlyArray<readonly [string, D.UrlProblem]> = [
      ["not a url", problem("not-canonical", "is not an absolute URL")],
      ["/relative", problem("not-canonical", "is not an absolute URL")],
      ["ftp://a.test/", scheme("ftp:")],
      ["file:///x", scheme("file:")],
      ["data:,x", scheme("data:")],
      ["https://u@a.test/", userinfo],
      ["https://u:p@a.test/", userinfo],
      ["https://:p@a.test/", userinfo],
      // An empty userinfo leaves no username or password after parsing: the raw authority tells.
      ["https://@a.test/", userinfo],
      ["https://:@a.test/", userinfo],
      ["https:@a.test/", userinfo],
      ["https:\\\\@a.test/", userinfo],
      ["HTTPS://@a.test/", userinfo],
      // With leading space the raw authority is not looked at; the parsed userinfo still is.
      [" https://u@a.test/", userinfo],
      [" https://:p@a.test/", userinfo],
      [" https://@a.test/", canonical("https://a.test/")],
      [" https://a.test/", canonical("https://a.test/")],
      // The raw authority ends at `/`, `?`, `#` or `\`: an `@` after one of them is no userinfo.
      ["https://a.test?@x", canonical("https://a.test/?@x")],
      ["https://a.test\\@x", canonical("https://a.test/@x")],
      ["https://a.test#@x", fragment],
      ["https://a.test/#", fragment],
      ["https://a.test/#x", fragment],
      ["https://a.test", canonical("https://a.test/")],
      ["HTTPS://a.test/", canonical("https://a.test/")],
      ["https://A.test/", canonical("https://a.test/")],
      ["https://a.test:443/", canonical("https://a.test/")],
      ["https:/a.test/", canonical("https://a.test/")]
    ]
    for (const [s, expected] of cases) assert.deepStrictEqual(D.urlProblem(s), expected, s)
  })

  it("SourceUrl: the problem's detail, after `URL`", () => {
    assert.strictEqual<unknown>(accepted(D.SourceUrl, URL_), URL_)
    refused(D.SourceUrl, "https://a.test/#x", "URL must not contain a fragment")
    refused(D.SourceUrl, "nope", "URL is not an absolute URL")
    refused(D.SourceUrl, "https://u@a.test/", "URL must not contain userinfo")
    refused(D.SourceUrl, 5, "Expected string, actual 5")
  })
})

describe("Domain: facts and reports", () => {
  it("a cited fact: page between 1 and 1,000,000, at most 6 headings of at most 1000 code units, quote context", () => {
    const full = cited({ page: 1_000_000, heading: ["A", "x".repeat(1000), "C", "D", "E", "F"], prefix: " ", suffix: "x".repeat(1000) })
    assert.deepStrictEqual<unknown>(accepted(D.CitedFact, full), full)
    assert.deepStrictEqual<unknown>(accepted(D.CitedFact, cited({ page: 1, heading: ["A"] })), cited({ page: 1, heading: ["A"] }))
    refused(D.CitedFact, cited({ page: 0 }), "Expected a number between 1 and 1000000, actual 0", ["page"])
    refused(D.CitedFact, cited({ page: 1_000_001 }), "Expected a number between 1 and 1000000, actual 1000001", ["page"])
    refused(D.CitedFact, cited({ page: 1.5 }), "Expected an integer, actual 1.5", ["page"])
    refused(D.CitedFact, cited({ heading: [] }), "is missing", ["heading", 0])
    refused(D.CitedFact, cited({ heading: ["A", "B", "C", "D", "E", "F", "G"] }), "Expected an array of at most 6 item(s), actual [\"A\",\"B\",\"C\",\"D\",\"E\",\"F\",\"G\"]", ["heading"])
    assert.deepStrictEqual(issuesOf(D.CitedFact, cited({ heading: ["x".repeat(1001)] })).map((issue) => [issue.path, issue.message.slice(0, 49)]), [
      [["heading", 0], "Expected a string at most 1000 character(s) long,"]
    ])
    refused(D.CitedFact, cited({ heading: [" "] }), nonBlankMessage, ["heading", 0])
    refused(D.CitedFact, cited({ prefix: "" }), "must not be empty", ["prefix"])
    refused(D.CitedFact, cited({ suffix: "x".repeat(1001) }), "must be at most 1000 characters", ["suffix"])
    refused(D.CitedFact, cited({ snippet: " " }), nonBlankMessage, ["snippet"])
    refused(D.CitedFact, cited({ source: "" }), nonBlankMessage, ["source"])
    refused(D.CitedFact, cited({ captureSha256: SHA.toUpperCase() }), shaMessage, ["captureSha256"])
    refused(D.CitedFact, cited({ state: "unavailable" }), "Expected \"cited\", actual \"unavailable\"", ["state"])
  })

  it("an unavailable fact carries a reason and nothing else", () => {
    refused(D.UnavailableFact, unavailable({ reason: "\t" }), nonBlankMessage, ["reason"])
    refused(D.UnavailableFact, unavailable({ state: "cited" }), "Expected \"unavailable\", actual \"cited\"", ["state"])
    assert.deepStrictEqual<unknown>(accepted(D.Fact, unavailable()), unavailable())
    assert.deepStrictEqual<unknown>(accepted(D.Fact, cited()), cited())
  })

  it("the fact limit: 100 by default, exactly the limit accepted, one more refused by the Schema itself", () => {
    assert.strictEqual(D.defaultMaxFacts, 100)
    const facts = (n: number) => Array.from({ length: n }, (_, i) => unavailable({ label: `L${i}` }))
    // The Schema's own filter (no precheck), as a consumer of the exported Schema sees it.
    const schemaIssues = (schema: Schema.Schema<any, any, never>, value: unknown) => {
      const result = Schema.decodeUnknownEither(schema, D.decodeOptions)(value)
      return Either.isRight(result) ? "accepted" : ParseResult.ArrayFormatter.formatErrorSync(result.left)
    }
    assert.strictEqual(schemaIssues(D.makeReport(3), { facts: facts(3) }), "accepted")
    assert.deepStrictEqual(schemaIssues(D.makeReport(3), { facts: facts(4) }), [
      { _tag: "Refinement", path: ["facts"], message: "must hold at most 3 facts, got 4" }
    ])
    assert.strictEqual(schemaIssues(D.Report, { facts: facts(100) }), "accepted")
    assert.deepStrictEqual(schemaIssues(D.Report, { facts: facts(101) }), [
      { _tag: "Refinement", path: ["facts"], message: "must hold at most 100 facts, got 101" }
    ])
    assert.deepStrictEqual<unknown>(accepted(D.makeReport(0), { facts: [] }), { facts: [] })
    assert.deepStrictEqual(schemaIssues(D.makeReport(0), { facts: facts(1) }), [
      { _tag: "Refinement", path: ["facts"], message: "must hold at most 0 facts, got 1" }
    ])
  })

  it("factLimits: the array limit, its messages, and a precheck that reads only an own `facts` array", () => {
    const limits = D.factLimits(3)
    assert.strictEqual(limits.maxArrayLength, 3)
    assert.strictEqual(limits.arrayTooLong(["facts"], 4), "must hold at most 3 facts, got 4")
    assert.strictEqual(limits.arrayTooLong(["facts", 0, "heading"], 7), "must hold at most 3 elements (the fact limit), got 7")
    assert.strictEqual(limits.arrayTooLong(["other"], 9), "must hold at most 3 elements (the fact limit), got 9")
    assert.strictEqual(limits.arrayTooLong([0], 5), "must hold at most 3 elements (the fact limit), got 5")
    assert.strictEqual(limits.arrayTooLong([], 5), "must hold at most 3 elements (the fact limit), got 5")

    const { precheck } = limits
    for (const input of [null, undefined, 5, "facts", {}, { facts: [1, 2, 3] }, { facts: "abcd" }, { facts: { length: 9 } }, [1, 2, 3, 4]]) {
      assert.strictEqual(precheck(input), undefined, JSON.stringify(input))
    }
    assert.deepStrictEqual(precheck({ facts: [1, 2, 3, 4] }), { path: ["facts"], message: "must hold at most 3 facts, got 4" })
    // Inherited, or behind a getter: not an own data property, not read (and no getter runs).
    assert.strictEqual(precheck(Object.create({ facts: [1, 2, 3, 4] })), undefined)
    let reads = 0
    const withGetter = {
      get facts() {
        reads++
        return [1, 2, 3, 4]
      }
    }
    assert.strictEqual(precheck(withGetter), undefined)
    assert.strictEqual(reads, 0)

    // Through the decode path the Verifier uses: one issue before any fact is decoded.
    const report = decodeUnknown(D.makeReport(3), D.factLimits(3))
    assert.deepStrictEqual(Either.getOrUndefined(report({ facts: [unavailable(), unavailable(), unavailable()] }))?.facts.length, 3)
    assert.deepStrictEqual(Either.getLeft(report({ facts: [1, 2, 3, 4, 5] })), Either.getLeft(Either.left({
      issues: [{ path: ["facts"], message: "must hold at most 3 facts, got 5" }]
    })))
  })
})

describe("Domain: capture records", () => {
  it("the format names", () => {
    assert.strictEqual(D.captureFormat, "citegate.capture/1")
    assert.strictEqual(D.captureFormatV2, "citegate.capture/2")
    assert.strictEqual(D.verifiedFormat, "citegate.verified/1")
  })

  it("v1: a well-formed text, a non-negative integer byte length, its URL, digest and time checked", () => {
    assert.deepStrictEqual<unknown>(accepted(D.CaptureRecordV1, v1({ byteLength: 0, text: "" })), v1({ byteLength: 0, text: "" }))
    assert.deepStrictEqual<unknown>(accepted(D.CaptureRecordV1, v1({ text: " " })), v1({ text: " " }))
    refused(D.CaptureRecordV1, v1({ text: "a\ud800b" }), wellFormedMessage, ["text"])
    refused(D.CaptureRecordV1, v1({ byteLength: -1 }), "Expected a non-negative number, actual -1", ["byteLength"])
    refused(D.CaptureRecordV1, v1({ byteLength: 0.5 }), "Expected an integer, actual 0.5", ["byteLength"])
    refused(D.CaptureRecordV1, v1({ source: "https://a.test/#" }), "URL must not contain a fragment", ["source"])
    refused(D.CaptureRecordV1, v1({ accessedAt: "2026-01-31" }), tsMessage, ["accessedAt"])
    refused(D.CaptureRecordV1, v1({ format: "citegate.capture/2" }), "Expected \"citegate.capture/1\", actual \"citegate.capture/2\"", ["format"])
    refused(D.CaptureRecordV1, v1({ contentType: 1 }), "Expected string, actual 1", ["contentType"])
  })

  it("v2: the seven extractions, the body, page and heading anchors", () => {
    for (const extraction of ["text/1", "markdown/1", "html/1", "pdf/1", "markdown/2", "html/2", "pdf/2"]) {
      assert.deepStrictEqual<unknown>(accepted(D.CaptureRecordV2, v2({ extraction })), v2({ extraction }))
    }
    assert.deepStrictEqual(
      issuesOf(D.CaptureRecordV2, v2({ extraction: "text/2" })),
      ["text/1", "markdown/1", "html/1", "pdf/1", "markdown/2", "html/2", "pdf/2"].map((id) => ({ path: ["extraction"], message: `Expected "${id}", actual "text/2"` }))
    )
    const anchored = v2({
      pages: [{ number: 1, start: 0, end: 1 }, { number: 2, start: 1, end: 3 }],
      headings: [{ level: 1, text: "", path: [], start: 0, end: 0 }, { level: 6, text: "H", path: ["A", "H"], start: 1, end: 3 }]
    })
    assert.deepStrictEqual<unknown>(accepted(D.CaptureRecordV2, anchored), anchored)
    refused(D.CaptureRecordV2, v2({ pages: [{ number: 0, start: 0, end: 1 }] }), "Expected a number greater than or equal to 1, actual 0", ["pages", 0, "number"])
    refused(D.CaptureRecordV2, v2({ headings: [{ level: 0, text: "", path: [], start: 0, end: 0 }] }), "Expected a number between 1 and 6, actual 0", ["headings", 0, "level"])
    refused(D.CaptureRecordV2, v2({ headings: [{ level: 7, text: "", path: [], start: 0, end: 0 }] }), "Expected a number between 1 and 6, actual 7", ["headings", 0, "level"])
    refused(D.CaptureRecordV2, v2({ body: { ...body, sha256: "0" } }), shaMessage, ["body", "sha256"])
    refused(D.CaptureRecordV2, v2({ body: { ...body, extra: 1 } }), "is unexpected, expected: \"sha256\" | \"byteLength\" | \"contentType\"", ["body", "extra"])
    refused(D.CaptureRecordV2, v2({ text: "\udc00" }), wellFormedMessage, ["text"])
    // The union picks either format.
    assert.deepStrictEqual<unknown>(accepted(D.CaptureRecord, v1()), v1())
    assert.deepStrictEqual<unknown>(accepted(D.CaptureRecord, v2()), v2())
  })

  it("recordBody and recordExtraction: a v1 record's own text, a v2 record's stored body", () => {
    const one = accepted(D.CaptureRecord, v1({ contentType: "text/plain; charset=utf-8" }))
    const two = accepted(D.CaptureRecord, v2({ extraction: "html/1" }))
    assert.deepStrictEqual(D.recordBody(one), { sha256: SHA, byteLength: 3, contentType: "text/plain; charset=utf-8" })
    assert.deepStrictEqual(D.recordBody(two), body)
    assert.strictEqual(D.recordExtraction(one), "text/1")
    assert.strictEqual(D.recordExtraction(two), "html/1")
  })

  it("makeCaptureRecord: digest and byte length of the text's UTF-8 bytes", () => {
    const record = D.makeCaptureRecord({
      source: URL_ as D.SourceUrl,
      text: "é😀",
      accessedAt: TS as D.Rfc3339Utc,
      contentType: "text/plain"
    })
    assert.deepStrictEqual(record, {
      format: "citegate.capture/1",
      source: URL_,
      sha256: "1184d1f608158eea09d297565575892231550c403aaa913008d867a97cfd5c76",
      accessedAt: TS,
      contentType: "text/plain",
      byteLength: 6,
      text: "é😀"
    } as unknown as D.CaptureRecordV1)
  })
})

describe("Domain: verified entries", () => {
  it("evidence: occurrences and page at least 1, the methods, the selectors in order", () => {
    const full = evidence({
      page: 1,
      heading: [],
      method: "normalized/1",
      ambiguous: false,
      offsets: { utf16: span, codePoints: span, utf8: span },
      selector: [
        { type: "TextQuoteSelector", exact: "x", prefix: "", suffix: "" },
        { type: "TextPositionSelector", start: 0, end: 1 }
      ]
    })
    assert.deepStrictEqual<unknown>(accepted(D.Evidence, full), full)
    assert.deepStrictEqual<unknown>(accepted(D.Evidence, evidence({ method: "exact" })), evidence({ method: "exact" }))
    assert.deepStrictEqual(issuesOf(D.Evidence, evidence({ method: "fuzzy" })), [
      { path: ["method"], message: "Expected \"exact\", actual \"fuzzy\"" },
      { path: ["method"], message: "Expected \"normalized/1\", actual \"fuzzy\"" },
      { path: ["method"], message: "Expected \"normalized/2\", actual \"fuzzy\"" }
    ])
    // Results stored under the older normalisation still decode, with their own label.
    assert.deepStrictEqual<unknown>(accepted(D.Evidence, evidence({ method: "normalized/2" })), evidence({ method: "normalized/2" }))
    refused(D.Evidence, evidence({ occurrences: 0 }), "Expected a number greater than or equal to 1, actual 0", ["occurrences"])
    refused(D.Evidence, evidence({ page: 0 }), "Expected a number greater than or equal to 1, actual 0", ["page"])
    refused(D.Evidence, evidence({ span: { start: -1, end: 0 } }), "Expected a non-negative number, actual -1", ["span", "start"])
    refused(D.TextQuoteSelector, { type: "TextPositionSelector", exact: "", prefix: "", suffix: "" }, "Expected \"TextQuoteSelector\", actual \"TextPositionSelector\"", ["type"])
    refused(D.TextPositionSelector, { type: "TextQuoteSelector", start: 0, end: 0 }, "Expected \"TextPositionSelector\", actual \"TextQuoteSelector\"", ["type"])
  })

  it("isVerifiedCitation tells a citation from an unavailable entry; outcome and mode literals", () => {
    const citation = accepted(D.VerifiedEntry, { index: 0, fact: cited(), evidence: evidence() })
    const entry = accepted(D.VerifiedEntry, { index: 1, fact: unavailable() })
    assert.isTrue(D.isVerifiedCitation(citation))
    assert.isFalse(D.isVerifiedCitation(entry))
    refused(D.UnavailableEntry, { index: -1, fact: unavailable() }, "Expected a non-negative number, actual -1", ["index"])
    for (const outcome of ["grounded", "no_evidence"]) assert.strictEqual<unknown>(accepted(D.Outcome, outcome), outcome)
    assert.deepStrictEqual(issuesOf(D.Outcome, "").map((issue) => issue.message), ["Expected \"grounded\", actual \"\"", "Expected \"no_evidence\", actual \"\""])
    for (const mode of ["reject", "drop"]) assert.strictEqual<unknown>(accepted(D.Mode, mode), mode)
    assert.deepStrictEqual(issuesOf(D.Mode, "").map((issue) => issue.message), ["Expected \"reject\", actual \"\"", "Expected \"drop\", actual \"\""])
  })
})
