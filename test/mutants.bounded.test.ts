import { assert, describe, it } from "@effect/vitest"
import { boundMessage, boundSegment, closingQuote, cut, quote } from "../src/internal/bounded.js"

// Expected strings are written out (or built from repeat and JSON.stringify), never with the code under test.
const a = (n: number) => "a".repeat(n)

describe("bounded: cut", () => {
  it("keeps 200 code units whole, cuts 201 to 200 plus the total length", () => {
    assert.strictEqual(cut(a(200)), a(200))
    assert.strictEqual(cut(a(201)), `${a(200)}… (201 characters)`)
  })

  it("honours its own maximum", () => {
    assert.strictEqual(cut("abc", 3), "abc")
    assert.strictEqual(cut("abcdef", 3), "abc… (6 characters)")
  })

  it("never splits a surrogate pair: a high surrogate at the cut is left out, a low one kept", () => {
    // The pair spans units 199-200: unit 199 is the high half.
    assert.strictEqual(cut(`${a(199)}\ud83d\ude00b`), `${a(199)}… (202 characters)`)
    // The pair spans units 198-199: it fits whole.
    assert.strictEqual(cut(`${a(198)}\ud83d\ude00bb`), `${a(198)}\ud83d\ude00… (202 characters)`)
  })

  it("the high-surrogate range is exactly U+D800 to U+DBFF", () => {
    for (const high of ["\ud800", "\udbff"]) assert.strictEqual(cut(`${a(199)}${high}bb`), `${a(199)}… (202 characters)`)
    for (const other of ["\ud7ff", "\udc00"]) {
      assert.strictEqual(cut(`${a(199)}${other}bb`), `${a(199)}${other}… (202 characters)`)
    }
  })
})

describe("bounded: quote", () => {
  it("a JSON literal of the whole value up to 200 code units, else of its head with the length outside", () => {
    assert.strictEqual(quote(a(200)), `"${a(200)}"`)
    assert.strictEqual(quote('say "hi"'), '"say \\"hi\\""')
    assert.strictEqual(quote(a(201)), `"${a(200)}"… (201 characters)`)
    assert.strictEqual(quote(`${a(199)}\ud83d\ude00`), `"${a(199)}"… (201 characters)`)
  })
})

describe("bounded: closingQuote", () => {
  it("skips quotes escaped by an odd run of backslashes, stops at an even run", () => {
    //          0123 4 5678
    const odd = 'x"ab\\"c"d'
    assert.strictEqual(closingQuote(odd, 1), 7)
    const even = 'x"ab\\\\"c"'
    assert.strictEqual(closingQuote(even, 1), 6)
    const three = '"\\\\\\"x"'
    assert.strictEqual(closingQuote(three, 0), 6)
  })

  it("an empty literal closes at once; no closing quote is -1", () => {
    assert.strictEqual(closingQuote('""', 0), 1)
    assert.strictEqual(closingQuote('"abc', 0), -1)
    assert.strictEqual(closingQuote('"abc\\"', 0), -1)
  })
})

describe("bounded: boundMessage", () => {
  it("a message up to 200 code units is returned as it is, unterminated quote and all", () => {
    const short = `Expected "${a(150)}`
    assert.strictEqual(boundMessage(short), short)
  })

  it("cuts every literal over 200 code units, keeps those of exactly 200 and the text around them", () => {
    const message = `Expected string, actual "${"x".repeat(300)}" near "${a(200)}" end`
    assert.strictEqual(
      boundMessage(message),
      `Expected string, actual "${"x".repeat(200)}"… (300 characters) near "${a(200)}" end`
    )
  })

  it("the literal's length counts its escapes; the value is unescaped before it is cut", () => {
    // 101 escaped quotes: 202 code units between the quotes, 101 characters once parsed.
    const literal = '\\"'.repeat(101)
    const message = `${a(10)} "${literal}" tail`
    assert.strictEqual(boundMessage(message), `${a(10)} ${JSON.stringify('"'.repeat(101))} tail`)
  })

  it("literals of up to 200 code units are kept byte for byte, escapes as written, even when invalid", () => {
    // Parsing and re-quoting them would turn \u0041 into A and a raw control character into \u0001.
    const l199 = `\\u0041${a(193)}`
    const l200 = `\\u0041${a(194)}`
    assert.strictEqual(l199.length, 199)
    assert.strictEqual(l200.length, 200)
    const message = `${"m".repeat(150)} "${l199}" "${l200}" "\\/" "\u0001" end`
    assert.strictEqual(boundMessage(message), message)
  })

  it("a literal that is not valid JSON is cut from its raw text", () => {
    const raw = "a\u0001".repeat(150) // a raw control character: JSON.parse refuses it
    const message = `Expected "${raw}"`
    assert.strictEqual(boundMessage(message), `Expected ${JSON.stringify(raw.slice(0, 200))}… (300 characters)`)
  })

  it("an unterminated literal ends the scan, the rest is kept; the whole is cut at 1000", () => {
    const unterminated = `${"x".repeat(300)} "${"y".repeat(300)}`
    assert.strictEqual(boundMessage(unterminated), unterminated)
    const long = "z".repeat(1500)
    assert.strictEqual(boundMessage(long), `${"z".repeat(1000)}… (1500 characters)`)
    const exact = "z".repeat(1000)
    assert.strictEqual(boundMessage(exact), exact)
  })
})

describe("bounded: boundSegment", () => {
  it("cuts long string segments like quoted values, keeps numbers", () => {
    assert.strictEqual(boundSegment(a(201)), `${a(200)}… (201 characters)`)
    assert.strictEqual(boundSegment(a(200)), a(200))
    assert.strictEqual(boundSegment(123456), 123456)
  })
})
