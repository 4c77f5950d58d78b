/**
 * Exact outputs of the escaping functions, written out by hand, so that mutants of `render/Escape.ts`
 * (a character class narrowed, a boundary moved, a branch dropped) fail.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Escape from "../src/render/Escape.js"

describe("Escape (mutants)", () => {
  it("terminal: backslash doubled, controls and invisible characters as \\u{…}, printable text kept", () => {
    assert.strictEqual(Escape.terminal("a\\b"), "a\\\\b")
    assert.strictEqual(Escape.terminal("\u0000\t\n\u001f\u007f\u009f"), "\\u{0000}\\u{0009}\\u{000a}\\u{001f}\\u{007f}\\u{009f}")
    assert.strictEqual(Escape.terminal("\u200b\u200f\u2028\u202e\u2060\u2069\ufeff"), "\\u{200b}\\u{200f}\\u{2028}\\u{202e}\\u{2060}\\u{2069}\\u{feff}")
    // Just outside the ranges: kept.
    assert.strictEqual(Escape.terminal(" ~\u00a0\u200a\u2010\u202f\u205f\u206a"), " ~\u00a0\u200a\u2010\u202f\u205f\u206a")
    assert.strictEqual(Escape.terminal("😀é"), "😀é")
  })

  it("visiblePieces: text and escapes alternate; tab, LF and CR stay in the text", () => {
    assert.deepStrictEqual(Escape.visiblePieces("a\tb\nc\rd"), ["a\tb\nc\rd"])
    assert.deepStrictEqual(Escape.visiblePieces("x\u202ey\u0000"), ["x", "\\u{202e}", "y", "\\u{0000}", ""])
    assert.deepStrictEqual(Escape.visiblePieces("\u000b\u000c"), ["", "\\u{000b}", "", "\\u{000c}", ""])
    assert.deepStrictEqual(Escape.visiblePieces(""), [""])
  })

  it("quoted: double quotes escaped inside the literal", () => {
    assert.strictEqual(Escape.quoted(`say "hi"\n`), `"say \\"hi\\"\\u{000a}"`)
  })

  it("markdown: markup characters escaped, intraword underscores and ordinary punctuation kept", () => {
    assert.strictEqual(Escape.markdown("\\`*[]<>&|~#@"), "\\\\\\\\\\`\\*\\[\\]\\<\\>\\&\\|\\~\\#\\@")
    assert.strictEqual(Escape.markdown("snake_case _lead trail_ a_ _"), "snake_case \\_lead trail\\_ a\\_ \\_")
    assert.strictEqual(Escape.markdown("é_1"), "é_1")
    assert.strictEqual(Escape.markdown("a_"), "a\\_")
    assert.strictEqual(Escape.markdown("http://x 10:30 a:/b"), "http\\://x 10:30 a:/b")
    assert.strictEqual(Escape.markdown("www.a WWW.b xwww.c ww.d .e"), "www\\.a WWW\\.b xwww\\.c ww.d .e")
    assert.strictEqual(Escape.markdown("4,210 (approx.) !"), "4,210 (approx.) !")
  })

  it("markdownCode: the fence is one longer than the longest backtick run, padded only when an edge needs it", () => {
    assert.strictEqual(Escape.markdownCode(""), "` `")
    assert.strictEqual(Escape.markdownCode("a"), "`a`")
    assert.strictEqual(Escape.markdownCode("a``b`c"), "```a``b`c```")
    assert.strictEqual(Escape.markdownCode("`a"), "`` `a ``")
    assert.strictEqual(Escape.markdownCode("a`"), "`` a` ``")
    assert.strictEqual(Escape.markdownCode(" a"), "`  a `")
    assert.strictEqual(Escape.markdownCode("a "), "` a  `")
    assert.strictEqual(Escape.markdownCode("   "), "`   `")
    assert.strictEqual(Escape.markdownCode("a\nb"), "`a\\u{000a}b`")
  })

  it("markdownBlock: fence of at least three, longer than any run inside; LF kept, CR made visible", () => {
    assert.strictEqual(Escape.markdownBlock("a\nb\r"), "```text\na\nb\\u{000d}\n```")
    assert.strictEqual(Escape.markdownBlock("x ```` y"), "`````text\nx ```` y\n`````")
    assert.strictEqual(Escape.markdownBlock("``"), "```text\n``\n```")
  })

  it("markdownUrl: only a canonical http(s) URL becomes an autolink", () => {
    assert.strictEqual(Escape.markdownUrl("https://example.com/a?b=1"), "<https://example.com/a?b=1>")
    assert.strictEqual(Escape.markdownUrl("http://example.com/"), "<http://example.com/>")
    assert.strictEqual(Escape.markdownUrl("https://example.com"), "`https://example.com`")
    assert.strictEqual(Escape.markdownUrl("ftp://example.com/"), "`ftp://example.com/`")
    assert.strictEqual(Escape.markdownUrl("javascript:alert(1)"), "`javascript:alert(1)`")
    assert.strictEqual(Escape.markdownUrl("not a url"), "`not a url`")
  })

  it("markdown: an underscore opening the text; `//` or `www` after any other character", () => {
    // At index 0 there is no character before: never intraword.
    assert.strictEqual(Escape.markdown("_a"), "\\_a")
    // Only a colon before `//` starts an autolink scheme; only a dot after `www` a www-autolink.
    assert.strictEqual(Escape.markdown("a//b"), "a//b")
    assert.strictEqual(Escape.markdown("wwwx"), "wwwx")
  })

  it("markdownUrl: the http(s) scheme must open the URL, not merely occur in it", () => {
    assert.strictEqual(Escape.markdownUrl("ftp://example.com/http://x"), "`ftp://example.com/http://x`")
  })

  it("html: the five markup characters and CR, nothing else", () => {
    assert.strictEqual(Escape.html(`&<>"'\r\n\té`), "&amp;&lt;&gt;&quot;&#39;&#13;\n\té")
  })
})
