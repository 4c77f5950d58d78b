/**
 * `spanOffsets` of an all-ASCII text (anchor/Offsets.ts `asciiOffsets`: one code point and one
 * UTF-8 byte per code unit, no counting pass) against the general pass (`positions`): seeded ASCII
 * texts of every length up to past the check's limit, spans anywhere, empty, reversed, before the
 * start and past the end. A text with one non-ASCII character takes the general pass.
 */
import { assert, describe, it } from "@effect/vitest"
import { positions, spanOffsets } from "../src/anchor/Offsets.js"
import type { Span } from "../src/Domain.js"
import { random } from "./searchSupport.js"

/** What the general pass gives for `spans` (the counting pass over `text`, never the ASCII shortcut). */
const general = (text: string, spans: ReadonlyArray<Span>) => {
  const at = positions(text, spans.flatMap((s) => [s.start, s.end]))
  return spans.map((span, k) => ({
    utf16: { start: span.start, end: span.end },
    codePoints: { start: at[2 * k]!.codePoint, end: at[2 * k + 1]!.codePoint },
    utf8: { start: at[2 * k]!.utf8, end: at[2 * k + 1]!.utf8 }
  }))
}

describe("spanOffsets on all-ASCII text", () => {
  it("the general pass's answers for seeded texts and spans, in range and out of it", () => {
    const next = random(7)
    const alphabet = "ab c.\n\t~0\u007f"
    for (const length of [0, 1, 2, 17, 1024, 4096, 64 * 1024, 64 * 1024 + 1, 70_000]) {
      const text = Array.from({ length }, () => alphabet[next() % alphabet.length]).join("")
      for (let round = 0; round < 20; round++) {
        const spans = Array.from({ length: 1 + (next() % 6) }, (): Span => {
          const a = (next() % (length + 20)) - 10
          const b = (next() % (length + 20)) - 10
          return next() % 4 === 0 ? { start: b, end: a } : { start: Math.min(a, b), end: Math.max(a, b) }
        })
        assert.deepStrictEqual(spanOffsets(text, spans), general(text, spans), `length ${length}: ${JSON.stringify(spans)}`)
      }
    }
  })

  it("a text with one character past ASCII counts code points and bytes apart", () => {
    const text = "net sales é rose 😀 by 4%"
    const end = text.length
    assert.deepStrictEqual(spanOffsets(text, [{ start: 12, end }]), general(text, [{ start: 12, end }]))
    assert.deepStrictEqual(spanOffsets(text, [{ start: 12, end }])[0]!.utf8, { start: 13, end: end + 3 })
  })

  it("spans that are not integers (a caller's 2.5, NaN, Infinity) get the general pass's answers", () => {
    const text = "net sales rose by 4% in the third quarter"
    for (const spans of [[{ start: 2.5, end: 5 }], [{ start: NaN, end: 5 }], [{ start: 1, end: Infinity }], [{ start: 0, end: 3 }, { start: 4, end: 6.75 }]]) {
      assert.deepStrictEqual(spanOffsets(text, spans), general(text, spans), JSON.stringify(spans))
    }
  })
})
