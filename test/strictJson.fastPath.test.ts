/**
 * The strict JSON fast path against the full parser. `parse` must return exactly what `parseFull`
 * returns (accept or reject, the value, the issue's path and message) on every text: random JSON,
 * the same with keys repeated at any depth (also through escapes), forbidden keys, deep nesting,
 * wide objects, long arrays, huge numbers, lone surrogates, a BOM, trailing garbage and cut texts.
 * And the fast path must actually take the small texts it is for, or it saves nothing.
 */
import { assert, describe, it, vi } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as StrictJson from "../src/internal/strictJson.js"

/** Both parsers agree on `text` (under `options`); returns whether the fast path proved it. */
const agree = (text: string, options?: StrictJson.Options): boolean => {
  const full = StrictJson.parseFull(text, options)
  const fast = StrictJson.parseFast(text, options)
  assert.deepStrictEqual(StrictJson.parse(text, options), full, text.slice(0, 200))
  if (fast !== undefined) {
    // It only ever accepts, and only what the full parser accepts, with the same value.
    assert.strictEqual(full._tag, "Right", text.slice(0, 200))
    assert.deepStrictEqual(fast, full, text.slice(0, 200))
  }
  return fast !== undefined
}

/** A key spelled in JSON: plain, or with some characters as \u escapes (upper or lower hex). */
const spell = (key: string, escapes: ReadonlyArray<boolean>, upper: boolean): string => {
  let out = ""
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i)
    if (escapes[i % Math.max(1, escapes.length)] === true || code < 0x20 || code === 0x22 || code === 0x5c) {
      const hex = code.toString(16).padStart(4, "0")
      out += "\\u" + (upper ? hex.toUpperCase() : hex)
    } else out += key[i]
  }
  return `"${out}"`
}

const keyNames = fc.oneof(
  fc.constantFrom("a", "b", "text", "citation", "__proto__", "constructor", "prototype", "", "\ud800", "é", "😀", "0", "00", "1"),
  fc.string({ maxLength: 4 })
)
const scalars = fc.oneof(
  fc.constantFrom("0", "-0", "1e400", "-1e400", "123456789012345678901234567890", "1.5e-400", "true", "false", "null", '"\\ud800"', '"\\udc00x"', '"a:b"', '"{\\"a\\":1}"', '":"'),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s))
)

/** JSON texts, written by hand so that a key can be repeated and spelled with escapes. */
const { value: jsonTextUntyped } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalars, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 5 }).map((items) => `[${(items as Array<string>).join(",")}]`),
  object: fc.array(
    fc.tuple(keyNames, fc.array(fc.boolean(), { maxLength: 3 }), fc.boolean(), tie("value")),
    { maxLength: 5 }
  ).map((members) => `{${members.map(([k, esc, up, v]) => `${spell(k, esc, up)}:${v as string}`).join(",")}}`)
}))
const jsonText = jsonTextUntyped as fc.Arbitrary<string>

/** Hostile edits of a text: whitespace, a BOM, trailing garbage, a cut, or a repeated member. */
const edited = fc.tuple(jsonText, fc.nat(), fc.constantFrom("none", "ws", "bom", "trail", "cut", "repeat", "colon")).map(([text, n, edit]) => {
  switch (edit) {
    case "ws":
      return ` \n\t${text.replace(/,/g, " ,\r\n ").replace(/:/g, " : ")} `
    case "bom":
      return "\ufeff" + text
    case "trail":
      return text + ["x", "}", "]", ",", " 1", "\"", "{}", ":"][n % 8]!
    case "cut":
      return text.slice(0, n % (text.length + 1))
    case "repeat": {
      // The first member of the innermost object that has one, repeated (same spelling) at its end.
      const match = /\{("(?:[^"\\]|\\.)*":(?:[^{}[\],]|"(?:[^"\\]|\\.)*")+)[^{}[\]]*\}/.exec(text)
      return match === null ? text : text.slice(0, match.index) + match[0].slice(0, -1) + "," + match[1] + "}" + text.slice(match.index + match[0].length)
    }
    default:
      return edit === "colon" ? text.replace("{", '{":":":",') : text
  }
})

describe("strict JSON fast path", () => {
  it("agrees with the full parser on random and hostile texts, with and without an array limit", () => {
    let proven = 0
    let accepted = 0
    fc.assert(
      fc.property(edited, fc.option(fc.nat({ max: 4 }), { nil: undefined }), (text, maxArrayLength) => {
        const options = maxArrayLength === undefined ? undefined : { maxArrayLength }
        if (agree(text, options)) proven++
        if (StrictJson.parseFull(text, options)._tag === "Right") accepted++
        // The same text inside one over the fast path's length (its sizes are then checked before parsing).
        agree(`{"pad":"${"x".repeat(StrictJson.fastPathMaxLength)}","v":${text}}`, options)
        agree(`[${text},"${"x".repeat(StrictJson.fastPathMaxLength)}"]`, options)
      }),
      { numRuns: 3000, seed: 20261202 }
    )
    // Most accepted texts are proven by the fast path (they are all small).
    assert.isAbove(accepted, 500)
    assert.isAbove(proven, accepted * 0.9)
  })

  it("repeated keys at any depth, plain or escaped, are never accepted", () => {
    const repeated = [
      `{"a":1,"a":2}`,
      `{"a":1,"\\u0061":2}`,
      `{"\\u0061":1,"\\u0061":2}`,
      `{"ab":1,"a\\u0062":2}`,
      `{"A":1,"\\u0041":2}`,
      `{"\\u00e9":1,"é":2}`,
      `{"\\uD83D\\uDE00":1,"😀":2}`,
      `{"x":[{"y":{"z":[1,{"k":1,"k":1}]}}]}`,
      `[[[{"":1,"":2}]]]`,
      `{"a":{"b":1},"c":{"b":2,"b":3}}`,
      `{"a":1,"b":{"a":2},"a":3}`,
      `{"__proto__":1}`,
      `{"x":{"\\u005f_proto__":{}}}`,
      `{"constructor":{}}`,
      `[{"prototype":null}]`
    ]
    for (const text of repeated) {
      assert.strictEqual(StrictJson.parseFast(text), undefined, text)
      assert.strictEqual(StrictJson.parse(text)._tag, "Left", text)
      agree(text)
    }
  })

  it("a member count the walk cannot see differently is still refused: colons in strings, keys and values", () => {
    for (const text of [`{"a:":":","a:":1}`, `{":":1,"\\u003a":2}`, `{"a":"\\u003a","a":":"}`, `{"a\\\\":1,"a\\\\":2}`]) {
      assert.strictEqual(StrictJson.parse(text)._tag, "Left", text)
      agree(text)
    }
    assert.isTrue(agree(`{"a:":":","b":"\\":\\"","c\\u003a":{"d":"::"}}`))
  })

  it("limits: depth 64 and 64 keys proven, one more handed to the full parser with its issue", () => {
    assert.isTrue(agree("[".repeat(64) + "]".repeat(64)))
    assert.isFalse(agree("[".repeat(65) + "]".repeat(65)))
    assert.isFalse(agree(`{"a":`.repeat(65) + "1" + "}".repeat(65)))
    const keys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",")}}`
    assert.isTrue(agree(keys(64)))
    assert.isFalse(agree(keys(65)))
    assert.isTrue(agree(`[1,2,3]`, { maxArrayLength: 3 }))
    assert.isFalse(agree(`[1,2,3,4]`, { maxArrayLength: 3 }))
    // One element under a limit of 0: what the full parser says (its scan counts commas) stands.
    agree(`[1]`, { maxArrayLength: 0 })
  })

  it("texts over the fast path's length: proven within the limits (checked before parsing), else the full parser's answer", () => {
    const pad = `"${"x".repeat(StrictJson.fastPathMaxLength)}"`
    assert.isTrue(agree(`{"a":${pad}}`))
    const keys = (n: number) => `{"pad":${pad},${Array.from({ length: n - 1 }, (_, i) => `"k${i}":${i}`).join(",")}}`
    assert.isTrue(agree(keys(64)))
    assert.isFalse(agree(keys(65)))
    // 64 distinct keys with a repeat among 65 members: refused by the fast path, the full parser's issue.
    assert.isFalse(agree(keys(64).replace("}", `,"k0":1}`)))
    const array = (n: number) => `[${pad}${",1".repeat(n - 1)}]`
    assert.isTrue(agree(array(3), { maxArrayLength: 3 }))
    assert.isFalse(agree(array(4), { maxArrayLength: 3 }))
    assert.isTrue(agree(array(2000)))
    assert.isFalse(agree(`[${pad},${"[".repeat(64)}${"]".repeat(64)}]`))
    assert.isTrue(agree(`[${pad},${"[".repeat(63)}${"]".repeat(63)}]`))
    // A report of the fact limit's size and one over it.
    const fact = `{"state":"unavailable","label":"l","reason":${pad}}`
    assert.isTrue(agree(`{"facts":[${Array(100).fill(fact).join(",")}]}`, { maxArrayLength: 100 }))
    assert.isFalse(agree(`{"facts":[${Array(101).fill(fact).join(",")}]}`, { maxArrayLength: 100 }))
    for (const text of [`${pad}]]`, `]]${pad}`, `{"a":${pad}}}`, `{"a":${pad}`, `{"a":${pad},"a":1}`, `{"__proto__":${pad}}`]) agree(text)
  })

  it("a long text over a size limit is refused before JSON.parse builds anything", () => {
    const pad = `"${"x".repeat(StrictJson.fastPathMaxLength)}"`
    const parse = vi.spyOn(JSON, "parse")
    try {
      for (const [text, options] of [
        [`{"facts":[${pad}${",{}".repeat(100)}]}`, { maxArrayLength: 100 }],
        [`{"pad":${pad},${Array.from({ length: 64 }, (_, i) => `"k${i}":{}`).join(",")}}`, undefined],
        [`[${pad},${"[".repeat(64)}${"]".repeat(64)}]`, undefined]
      ] as const) {
        parse.mockClear()
        assert.strictEqual(StrictJson.parseFast(text, options), undefined)
        assert.strictEqual(parse.mock.calls.length, 0, text.slice(-80))
      }
      // Within the limits it parses (one call), as the full parser would.
      parse.mockClear()
      assert.notStrictEqual(StrictJson.parseFast(`{"facts":[${pad}${",{}".repeat(99)}]}`, { maxArrayLength: 100 }), undefined)
      assert.strictEqual(parse.mock.calls.length, 1)
    } finally {
      parse.mockRestore()
    }
  })

  it("BOM, trailing garbage, huge numbers and lone surrogates: the full parser's answer", () => {
    for (const text of ["\ufeff{}", "{} x", "{}}", "[1]]", "1e999", "-1e999", "123456789012345678901234567890", `"\\ud800"`, `{"\\udc00":"\\ud800"}`, "", " ", "{", `{"a"}`, `{"a":}`]) agree(text)
    assert.isTrue(agree(`{"n":1e999,"m":-0,"s":"\\ud800"}`))
  })

  it("the payloads of a streamed answer are proven without the full scan", () => {
    const events = [
      `{"role":"assistant"}`,
      `{"contentBlockIndex":3,"delta":{"text":"Net sales rose 4 % in Q3 — «über» 文字 😀."}}`,
      `{"contentBlockIndex":3,"delta":{"citation":{"title":"t","sourceContent":[{"text":"quoted: \\"text\\""}],"location":{"documentChar":{"documentIndex":1,"start":5,"end":65}}}}}`,
      `{"contentBlockIndex":3}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x","document_index":0,"document_title":null,"start_char_index":1,"end_char_index":2}}}`
    ]
    for (const text of events) assert.isTrue(agree(text), text)
  })
})
