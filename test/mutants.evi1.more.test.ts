/**
 * More mutation-killing tests for src/answer/Evi1.ts (the parser's end, the
 * size limit counted across chunks, serializing parsed texts back exactly),
 * light enough for every mutant: no input is parsed past a few hundred characters.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Evi1 from "../src/answer/Evi1.js"
import { limits } from "../src/answer/Records.js"
import { AnswerTooLarge, Evi1Invalid } from "../src/Errors.js"
import { left, right } from "./mutants.support.js"

describe("the parser's end", () => {
  it("past maxChars (counted across chunks) the rest is not stored and end is AnswerTooLarge with both counts; push after end throws", () => {
    const parser = new Evi1.Parser()
    // Exactly the limit, then one character more: only the total decides (the text is never parsed).
    parser.push("a".repeat(limits.maxChars))
    parser.push("\n")
    parser.push("bc")
    const error = left(parser.end())
    assert.instanceOf(error, AnswerTooLarge)
    assert.deepStrictEqual(error, new AnswerTooLarge({ maxChars: 16 * 1024 * 1024, receivedChars: 16 * 1024 * 1024 + 3 }))
    assert.throws(() => parser.push("x"), "EVI1 parser: push after end")
    const done = new Evi1.Parser()
    right(done.end())
    assert.throws(() => done.push(""), "EVI1 parser: push after end")
  })
})

describe("serialize(parse(t)) === t", () => {
  it("texts with and without an appendix, blank lines after it, a manifest line, escapes", () => {
    const texts = [
      "",
      "\n",
      "Plain prose.\nSecond line.",
      "a.[1]{c1}\nEVI1\nc1|1|\"q\"\nEND_EVI1",
      "a.[1]{c1}\nEVI1\nc1|1|\"q\"\nEND_EVI1\n",
      "a.[1]{c1}\nEVI1\nc1|1|\"q\"\nEND_EVI1\n\n  \n",
      `Intro.\n\nb.[2][1]{c2} tail\nEVI1\nMANIFEST ${"0123456789abcdef".repeat(4)}\nc2|2|"x \\" y \\\\ z\\n"\nc2|1|"w"\nEND_EVI1\n`
    ]
    for (const t of texts) assert.strictEqual(Evi1.serialize(right(Evi1.parse(t))), t, JSON.stringify(t))
    const doc = right(Evi1.parse(texts[5]!))
    assert.deepStrictEqual(doc.appendix, { manifest: undefined, evidence: [{ claimId: "c1", source: 1, quote: "q", line: 3 }], trailing: "\n\n  \n" })
    assert.strictEqual(right(Evi1.parse(texts[3]!)).appendix!.trailing, "")
    assert.strictEqual(Evi1.cleanText(right(Evi1.parse(texts[6]!))), "Intro.\n\nb.[2][1] tail\n")
  })
})

describe("the body's segments", () => {
  it("no empty text segment before a leading citation group, or for an empty text", () => {
    assert.deepStrictEqual(right(Evi1.parse("[1]{c1}\nEVI1\nc1|1|\"q\"\nEND_EVI1")).body, [
      { _tag: "Cite", sources: [1], claimId: "c1", line: 1 },
      { _tag: "Text", text: "\n" }
    ])
    assert.deepStrictEqual(right(Evi1.parse("")), { body: [], appendix: undefined })
    assert.deepStrictEqual(right(Evi1.parse("x")), { body: [{ _tag: "Text", text: "x" }], appendix: undefined })
  })
})

describe("the appendix starts at the first EVI1 line", () => {
  it("an END_EVI1 line before it is an issue, and so is an appendix without END_EVI1", () => {
    const error = left(Evi1.parse("a\nEND_EVI1\nEVI1"))
    assert.instanceOf(error, Evi1Invalid)
    assert.deepStrictEqual((error as Evi1Invalid).issues, [
      { _tag: "Evi1MalformedLine", line: 2, detail: "END_EVI1 without an EVI1 line before it" },
      { _tag: "Evi1MalformedLine", line: 3, detail: "the appendix does not end with END_EVI1" }
    ])
  })
})
