/**
 * Extraction's dispatch by content type: the charset rule, the UTF-8 labels,
 * which decoder keeps a BOM, and invalid UTF-8, on `Extraction.extract` itself.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ExtractionFailed, InvalidEncoding, UnsupportedEncoding } from "../src/Errors.js"
import * as Extraction from "../src/extract/Extraction.js"
import { failureOf } from "./mutants.support.js"

const source = "https://example.com/doc"
const limits: Extraction.ExtractionLimits = { maxPages: 10, maxCharacters: 10_000, maxDepth: 64 }
const bytes = (text: string) => new TextEncoder().encode(text)
const extract = (contentType: string, body: Uint8Array | string) =>
  Extraction.extract(source, contentType, typeof body === "string" ? bytes(body) : body, limits)

describe("isUtf8Label and parseContentType", () => {
  it("the six WHATWG labels of UTF-8, in any case and with surrounding spaces; nothing else", () => {
    for (const label of ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"]) {
      assert.isTrue(Extraction.isUtf8Label(label), label)
      assert.isTrue(Extraction.isUtf8Label(` ${label.toUpperCase()}\t`), label)
    }
    for (const label of ["", "utf-16", "latin1", "utf-8x", "xutf-8", "unicode"]) {
      assert.isFalse(Extraction.isUtf8Label(label), label)
    }
  })

  it("media type lower-cased and trimmed; the charset unquoted; the last charset wins; other parameters ignored", () => {
    assert.deepStrictEqual(Extraction.parseContentType(" Text/HTML "), { mediaType: "text/html", charset: undefined })
    assert.deepStrictEqual(Extraction.parseContentType(""), { mediaType: "", charset: undefined })
    assert.deepStrictEqual(Extraction.parseContentType("text/plain; charset=UTF-8"), { mediaType: "text/plain", charset: "UTF-8" })
    // No space, or several, before the parameter's name.
    assert.deepStrictEqual(Extraction.parseContentType("text/plain;charset=latin1"), { mediaType: "text/plain", charset: "latin1" })
    assert.deepStrictEqual(Extraction.parseContentType("text/plain;  \tcharset=x"), { mediaType: "text/plain", charset: "x" })
    assert.deepStrictEqual(
      Extraction.parseContentType("text/plain;format=flowed; CHARSET = \"utf 8\" ;x=y"),
      { mediaType: "text/plain", charset: "utf 8" }
    )
    assert.deepStrictEqual(Extraction.parseContentType("text/plain; charset=\"\""), { mediaType: "text/plain", charset: "" })
    assert.deepStrictEqual(
      Extraction.parseContentType("text/plain; charset=latin1; charset=utf-8"),
      { mediaType: "text/plain", charset: "utf-8" }
    )
    // Not a charset parameter: a longer name, a value with a space, a value that is cut.
    for (const parameter of ["xcharset=latin1", "charsets=latin1", "charset=a b", "charset"]) {
      assert.deepStrictEqual(
        Extraction.parseContentType(`text/plain; ${parameter}`),
        { mediaType: "text/plain", charset: undefined },
        parameter
      )
    }
  })

  it("the accepted media types", () => {
    assert.deepStrictEqual(
      [...Extraction.mediaTypes],
      ["text/plain", "text/markdown", "text/html", "application/xhtml+xml", "application/pdf"]
    )
  })
})

describe("Extraction.extract", () => {
  it.effect("a charset that is not UTF-8 is refused for every text type, whatever the body", () =>
    Effect.gen(function*() {
      for (const mediaType of ["text/plain", "text/markdown", "text/html", "application/xhtml+xml", "text/csv"]) {
        const error = yield* failureOf(extract(`${mediaType}; charset=" Latin1 "`, "x"))
        assert.instanceOf(error, UnsupportedEncoding)
        assert.deepStrictEqual({ ...error }, {
          _tag: "UnsupportedEncoding",
          source,
          charset: " Latin1 ",
          declaredIn: "content-type"
        }, mediaType)
      }
    }))

  it.effect("a PDF's charset parameter is ignored: the body decides", () =>
    Effect.gen(function*() {
      const error = yield* failureOf(extract("application/pdf; charset=latin1", "not a pdf"))
      assert.instanceOf(error, ExtractionFailed)
      assert.deepStrictEqual({ ...error }, {
        _tag: "ExtractionFailed",
        source,
        format: "pdf",
        reason: "malformed",
        detail: "no %PDF- header in the first 1024 bytes"
      })
    }))

  it.effect("text/plain keeps a BOM; HTML drops it as a browser does", () =>
    Effect.gen(function*() {
      const plain = yield* extract("text/plain; charset=utf-8", "\ufeffplain")
      assert.deepStrictEqual(plain, { extraction: "text/1", text: "\ufeffplain" })
      const other = yield* extract("Text/CSV", "\ufeffa,b")
      assert.deepStrictEqual(other, { extraction: "text/1", text: "\ufeffa,b" })
      const html = yield* extract("text/html;charset=UTF8", "\ufeff<p>page</p>")
      assert.deepStrictEqual(html, { extraction: "html/2", text: "page", headings: [] })
      const xhtml = yield* extract("application/xhtml+xml", "\ufeff<h1>x</h1>")
      assert.deepStrictEqual(xhtml, {
        extraction: "html/2",
        text: "x",
        headings: [{ level: 1, text: "x", path: ["x"], start: 0, end: 1 }]
      })
    }))

  it.live("text/markdown is rendered (markdown/2): the BOM is not text, the map counts it in the body", () =>
    Effect.gen(function*() {
      const markdown = yield* extract("TEXT/MARKDOWN", "\ufeff# M")
      assert.deepStrictEqual(markdown, {
        extraction: "markdown/2",
        text: "M",
        headings: [{ level: 1, text: "M", path: ["M"], start: 0, end: 1 }],
        bodyMap: [[0, 3, 1]]
      })
    }))

  it.effect("the header's charset reaches the HTML extractor: it takes precedence over a meta element", () =>
    Effect.gen(function*() {
      const page = "<head><meta charset=latin1></head><p>x</p>"
      assert.strictEqual((yield* extract("text/html; charset=utf-8", page)).text, "x")
      const error = yield* failureOf(extract("text/html", page))
      assert.instanceOf(error, UnsupportedEncoding)
      assert.deepStrictEqual([error.charset, error.declaredIn], ["latin1", "meta"])
    }))

  it.effect("a body that is not valid UTF-8 is InvalidEncoding, with its length, for every text type", () =>
    Effect.gen(function*() {
      const body = new Uint8Array([0x61, 0xff, 0x62, 0xc3])
      for (const contentType of ["text/plain", "text/markdown", "text/html", "application/xhtml+xml", "text/csv"]) {
        const error = yield* failureOf(extract(contentType, body))
        assert.instanceOf(error, InvalidEncoding)
        assert.deepStrictEqual({ ...error }, { _tag: "InvalidEncoding", source, byteLength: 4 }, contentType)
      }
    }))
})
