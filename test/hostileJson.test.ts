import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, ParseResult, Schema } from "effect"
import * as fsp from "node:fs/promises"
import * as Config from "../src/Config.js"
import { decodeOptions, makeCaptureRecord, makeReport, type SourceUrl } from "../src/Domain.js"
import { CorruptCapture, InvalidConfig, InvalidReport, ReportRejected } from "../src/Errors.js"
import { maxMessageLength, maxQuotedLength } from "../src/internal/bounded.js"
import { maxIssues } from "../src/internal/decode.js"
import * as StrictJson from "../src/internal/strictJson.js"
import * as Render from "../src/render/Render.js"
import { RenderedResult } from "../src/render/Rendering.js"
import { accessedAt, cited, gateFor, recordPath, runDirectoryWith, unavailable } from "./support.js"

const SOURCE = "https://hostile.example.com/emoji.txt" as SourceUrl
// Surrogate pairs at the start, in the middle and at the end.
const emojiText = "😀 Net sales rose 😀😀 to 4,210 units 🚀"
const emojiRecord = makeCaptureRecord({ source: SOURCE, text: emojiText, accessedAt, contentType: "text/plain" })

const config = (labels: ReadonlyArray<string>, maxFacts = 100, mode: "reject" | "drop" = "reject") => ({
  sources: [SOURCE],
  labels,
  verify: { maxFacts, mode }
})

const nestedArrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

const nestedValue = (depth: number): unknown => {
  let value: unknown = []
  for (let i = 1; i < depth; i++) value = [value]
  return value
}

const strictIssue = (text: string) => {
  const result = StrictJson.parse(text)
  if (result._tag === "Right") return assert.fail("expected the text to be rejected")
  return result.issue
}

const invalidReport = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    // A defect (stack overflow, say) is a failure of this test, not an InvalidReport.
    if (Exit.isSuccess(exit)) return assert.fail("expected InvalidReport, got success")
    if (exit.cause._tag !== "Fail") return assert.fail(`expected a typed failure, got ${exit.cause._tag}`)
    assert.instanceOf(exit.cause.error, InvalidReport)
    return exit.cause.error as InvalidReport
  })

describe("strict JSON: nesting", () => {
  it("accepts the deepest allowed nesting, arrays and objects alike", () => {
    assert.strictEqual(StrictJson.parse(nestedArrays(StrictJson.maxDepth))._tag, "Right")
    const objects = `{"a":`.repeat(StrictJson.maxDepth - 1) + "{}" + "}".repeat(StrictJson.maxDepth - 1)
    assert.strictEqual(StrictJson.parse(objects)._tag, "Right")
  })

  it("rejects one level more, with the path to the container that is too deep", () => {
    const found = strictIssue(nestedArrays(StrictJson.maxDepth + 1))
    assert.strictEqual(found.message, StrictJson.depthMessage)
    assert.deepStrictEqual(found.path, Array(StrictJson.maxDepth).fill(0))
    const mixed = `{"a":[1,{"b":` + nestedArrays(StrictJson.maxDepth) + `}]}`
    const issue = strictIssue(mixed)
    assert.deepStrictEqual(issue.path.slice(0, 4), ["a", 1, "b", 0])
    assert.strictEqual(issue.path.length, StrictJson.maxDepth)
  })

  it("rejects 40,000 levels in one linear pass (the old scan copied a path per level)", () => {
    const text = `{"facts":[` + nestedArrays(40_000) + `]}`
    const start = performance.now()
    const found = strictIssue(text)
    const ms = performance.now() - start
    assert.strictEqual(found.message, StrictJson.depthMessage)
    assert.isBelow(ms, 1000)
  })

  it("rejects a million levels without parsing them", () => {
    const found = strictIssue(nestedArrays(1_000_000))
    assert.strictEqual(found.path.length, StrictJson.maxDepth)
  })

  it("depth counts only brackets outside strings", () => {
    const text = JSON.stringify({ a: "[".repeat(10_000), b: ["{".repeat(10_000)] })
    assert.strictEqual(StrictJson.parse(text)._tag, "Right")
  })

  it("reports repeated keys with their path built at error time", () => {
    const found = strictIssue(`{"a":[{"x":1},{"b":{"c":1,"c":2}}]}`)
    assert.deepStrictEqual(found.path, ["a", 1, "b"])
    assert.strictEqual(found.message, `repeated key "c"`)
  })

  it("prefers the syntax error to a key issue in text that is not JSON", () => {
    assert.match(strictIssue(`{"a":1,"a":2`).message, /^not valid JSON/)
  })

  it("cuts a long repeated key in the message and the path", () => {
    const key = "k".repeat(1_000_000)
    const found = strictIssue(`{"${key}":{"${key}":1,"${key}":2}}`)
    assert.isBelow(found.message.length, maxQuotedLength + 50)
    assert.include(found.message, "… (1000000 characters)")
    assert.strictEqual((found.path[0] as string).length, maxQuotedLength + "… (1000000 characters)".length)
  })
})

describe("strict JSON: array length", () => {
  const options = { maxArrayLength: 3 }

  it("accepts arrays up to the limit, empty ones included", () => {
    assert.strictEqual(StrictJson.parse(`{"a":[],"b":[1,2,3],"c":[[],[{}],["x,y,z"]]}`, options)._tag, "Right")
  })

  it("refuses a longer array before parsing: its length is reported even in text that is not JSON", () => {
    // Without the limit the same text is refused for its syntax.
    assert.match(strictIssue(`{"a":[1,[1,2,3,4]],"b":}`).message, /^not valid JSON/)
    const limited = StrictJson.parse(`{"a":[1,[1,2,3,4]],"b":}`, options)
    assert.deepStrictEqual(limited, {
      _tag: "Left",
      issue: { path: ["a", 1], message: "must hold at most 3 elements, got 4" }
    })
  })

  it("commas inside strings are not elements", () => {
    assert.strictEqual(StrictJson.parse(`["a,b,c,d,e", "\\",\\",\\","]`, options)._tag, "Right")
  })
})

describe("Gate: hostile reports are InvalidReport, never a defect", () => {
  it.scoped("checkJson: a report 3,000 arrays deep (the old error formatter overflowed the stack)", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const error = yield* invalidReport(gate.checkJson(nestedArrays(3_000)))
      assert.deepStrictEqual(error.issues, [{ path: Array(StrictJson.maxDepth).fill(0), message: StrictJson.depthMessage }])
    }))

  it.scoped("checkJson: facts 40,000 deep", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const error = yield* invalidReport(gate.checkJson(`{"facts":[` + nestedArrays(40_000) + `]}`))
      assert.deepStrictEqual(error.issues[0].path.slice(0, 2), ["facts", 0])
      assert.strictEqual(error.issues[0].message, StrictJson.depthMessage)
    }))

  it.scoped("check(value): an already-parsed value 3,000 deep, and a cyclic one", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const deep = yield* invalidReport(gate.check(nestedValue(3_000)))
      assert.deepStrictEqual(deep.issues, [{ path: Array(StrictJson.maxDepth).fill(0), message: StrictJson.depthMessage }])
      const inFacts = yield* invalidReport(gate.check({ facts: [nestedValue(3_000)] }))
      assert.deepStrictEqual(inFacts.issues[0].path.slice(0, 3), ["facts", 0, 0])
      const cyclic: { facts: Array<unknown> } = { facts: [] }
      cyclic.facts.push(cyclic)
      const cycle = yield* invalidReport(gate.check(cyclic))
      assert.strictEqual(cycle.issues[0].message, StrictJson.depthMessage)
    }))

  it.scoped("the deepest allowed value decodes to ordinary schema issues", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const error = yield* invalidReport(gate.check({ facts: [nestedValue(StrictJson.maxDepth - 2)] }))
      assert.deepStrictEqual(error.issues[0].path.slice(0, 2), ["facts", 0])
      assert.notStrictEqual(error.issues[0].message, StrictJson.depthMessage)
    }))

  it.scoped("a million facts over maxFacts: one issue at [\"facts\"], no fact decoded", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"], 100))
      const text = `{"facts":[` + Array(1_000_000).fill("{}").join(",") + `]}`
      const start = performance.now()
      const error = yield* invalidReport(gate.checkJson(text))
      const ms = performance.now() - start
      assert.deepStrictEqual(error.issues, [{ path: ["facts"], message: "must hold at most 100 facts, got 1000000" }])
      assert.isUndefined(error.omitted)
      assert.isBelow(ms, 5_000)
      // The same for an already-parsed value.
      const value = yield* invalidReport(gate.check({ facts: Array.from({ length: 1_000_000 }, () => ({})) }))
      assert.deepStrictEqual(value.issues, [{ path: ["facts"], message: "must hold at most 100 facts, got 1000000" }])
    }))

  it.scoped("maxFacts + 1 invalid facts: only the limit is reported", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"], 10))
      const error = yield* invalidReport(gate.check({ facts: Array.from({ length: 11 }, () => ({})) }))
      assert.deepStrictEqual(error.issues, [{ path: ["facts"], message: "must hold at most 10 facts, got 11" }])
    }))

  it.scoped(`at most ${maxIssues} issues are listed, the rest counted; every rendering shows the count`, () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"], 100))
      const report = { facts: Array.from({ length: 100 }, () => ({})) }
      const error = yield* invalidReport(gate.check(report))
      // Every issue the schema finds, counted independently of citegate's decoder.
      const all = Schema.decodeUnknownEither(makeReport(100), decodeOptions)(report)
      assert.strictEqual(all._tag, "Left")
      const total = all._tag === "Left" ? ParseResult.ArrayFormatter.formatErrorSync(all.left).length : 0
      assert.isAbove(total, maxIssues)
      assert.strictEqual(error.issues.length, maxIssues)
      assert.strictEqual(error.omitted, total - maxIssues)
      assert.include(error.message, `and ${total - maxIssues} more issues not listed`)
      const rendering = Render.Rendering.Rejected({ error })
      for (const format of ["text", "markdown", "html"] as const) {
        assert.include(Render.render(format, rendering), `and ${total - maxIssues} more issues not listed`)
      }
      const json = Schema.decodeUnknownSync(RenderedResult, decodeOptions)(JSON.parse(Render.render("json", rendering)))
      assert.strictEqual(json.status, "rejected")
      if (json.status === "rejected" && json.error._tag === "InvalidReport") {
        assert.strictEqual(json.error.omitted, total - maxIssues)
        assert.strictEqual(json.error.issues.length, maxIssues)
      } else assert.fail("expected a rendered InvalidReport")
    }))

  it.scoped("values quoted in messages are cut: a 1,000,000-character label or state does not come back", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const long = "x".repeat(1_000_000)
      const error = yield* invalidReport(gate.checkJson(JSON.stringify({
        facts: [{ ...cited(long, emojiRecord, "Net sales") }, { ...unavailable("a", "r"), state: long }],
        [long]: 1
      })))
      const rendered = Render.render("json", Render.Rendering.Rejected({ error }))
      assert.isBelow(rendered.length, 20_000)
      assert.isBelow(error.message.length, 20_000)
      for (const issue of error.issues) {
        assert.isAtMost(issue.message.length, maxMessageLength + 40)
        for (const segment of issue.path) if (typeof segment === "string") assert.isBelow(segment.length, 300)
      }
      const label = error.issues.find((i) => i.path.join(".") === "facts.0.label")
      assert.isDefined(label)
      assert.include(label!.message, "… (1000000 characters)")
    }))

  it.scoped("invalid JSON: the parser's message is bounded too", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const error = yield* invalidReport(gate.checkJson(`{"facts":[],"x":"${"y".repeat(500_000)}",}`))
      assert.match(error.issues[0].message, /^not valid JSON/)
      assert.isAtMost(error.issues[0].message.length, maxMessageLength + 40)
    }))
})

describe("Gate: lone surrogates", () => {
  const highHalf = emojiText.slice(0, emojiText.indexOf("🚀") + 1) // ends in the high half of 🚀

  it.scoped("a snippet ending in half an emoji that is in the capture is InvalidReport (it used to verify)", () =>
    Effect.gen(function*() {
      assert.isTrue(emojiText.includes(highHalf))
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const error = yield* invalidReport(gate.check({ facts: [cited("a", emojiRecord, highHalf)] }))
      assert.deepStrictEqual(error.issues, [
        { path: ["facts", 0, "snippet"], message: "must be well-formed Unicode (no lone surrogates)" }
      ])
    }))

  it.scoped("labels, reasons and sources with a lone surrogate are InvalidReport, each at its path", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a", "b", "c"]))
      const error = yield* invalidReport(gate.check({
        facts: [
          cited("a\uDE00", emojiRecord, "Net sales"),
          unavailable("b", "no source \uD83D"),
          { ...cited("c", emojiRecord, "Net sales"), source: SOURCE + "\uDE00" }
        ]
      }))
      assert.deepStrictEqual(error.issues.map((i) => i.path.join(".")), ["facts.0.label", "facts.1.reason", "facts.2.source"])
      for (const issue of error.issues) assert.match(issue.message, /well-formed Unicode/)
    }))

  it.scoped("a verified span never splits a surrogate pair: every well-formed substring of a text with pairs", () =>
    Effect.gen(function*() {
      const text = emojiText
      const substrings = new Set<string>()
      for (let start = 0; start < text.length; start++) {
        for (let end = start + 1; end <= text.length; end++) {
          const s = text.slice(start, end)
          if (s.isWellFormed() && /\S/u.test(s)) substrings.add(s)
        }
      }
      const snippets = [...substrings]
      const labels = snippets.map((_, i) => `f${i}`)
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(labels, 10_000, "drop"))
      const report = yield* gate.check({ facts: snippets.map((s, i) => cited(labels[i]!, emojiRecord, s)) })
      assert.strictEqual(report.retractions.length, 0)
      assert.strictEqual(report.facts.length, snippets.length)
      const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
      const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff
      const splits = (i: number) => i > 0 && i < text.length && isHigh(text.charCodeAt(i - 1)) && isLow(text.charCodeAt(i))
      for (const entry of report.facts) {
        if (entry.fact.state !== "cited" || !("evidence" in entry)) continue
        const { end, start } = entry.evidence.span
        assert.isFalse(splits(start) || splits(end), `span ${start}-${end} splits a pair`)
        assert.isTrue(text.slice(start, end).isWellFormed())
      }
      // And every substring that does split a pair is refused before any search.
      const halves = [text.slice(0, 1), text.slice(1, 5), highHalf]
      for (const half of halves) {
        assert.isFalse(half.isWellFormed())
        yield* invalidReport(gate.check({ facts: [cited("f0", emojiRecord, half)] }))
      }
    }))

  it.scoped("configuration labels with a lone surrogate are InvalidConfig", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Config.decode({ sources: [SOURCE], labels: ["ok", "bad\uD800"] }))
      assert.instanceOf(error, InvalidConfig)
      assert.deepStrictEqual(error.issues.map((i) => i.path), [["labels", 1]])
      assert.match(error.issues[0].message, /well-formed Unicode/)
    }))
})

describe("Gate: plain data only", () => {
  it.scoped("facts inherited through a prototype do not count (they used to)", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const inherited = Object.create({ facts: [cited("a", emojiRecord, "Net sales")] }) as unknown
      const error = yield* invalidReport(gate.check(inherited))
      assert.deepStrictEqual(error.issues.map((i) => i.path), [[]])
      assert.match(error.issues[0].message, /plain object/)
      // A fact with inherited fields is refused the same way, at its path.
      const fact = Object.create(cited("a", emojiRecord, "Net sales")) as unknown
      const nested = yield* invalidReport(gate.check({ facts: [fact] }))
      assert.deepStrictEqual(nested.issues[0].path, ["facts", 0])
    }))

  it.scoped("getters, Proxies, class instances and functions are refused, and no getter runs", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      let calls = 0
      const getter = {
        get facts() {
          calls++
          return [cited("a", emojiRecord, "Net sales")]
        }
      }
      const refused = yield* invalidReport(gate.check(getter))
      assert.deepStrictEqual(refused.issues, [{ path: ["facts"], message: "must be plain JSON data, not a getter" }])
      assert.strictEqual(calls, 0)
      const proxy = new Proxy({ facts: [] }, {})
      assert.match((yield* invalidReport(gate.check(proxy))).issues[0].message, /Proxy/)
      const revocable = Proxy.revocable({ facts: [] }, {})
      revocable.revoke()
      yield* invalidReport(gate.check(revocable.proxy))
      class Fact {
        state = "unavailable"
        label = "a"
        reason = "r"
      }
      assert.deepStrictEqual((yield* invalidReport(gate.check({ facts: [new Fact()] }))).issues[0].path, ["facts", 0])
      assert.match((yield* invalidReport(gate.check({ facts: [() => 1] }))).issues[0].message, /not a function/)
    }))

  it.scoped("a configuration inherited through a prototype is InvalidConfig", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([emojiRecord])
      const error = yield* Effect.flip(gateFor(directory, Object.create(config(["a"]))))
      assert.instanceOf(error, InvalidConfig)
      assert.match(error.issues[0].message, /plain object/)
    }))

  it.scoped("plain JSON data still verifies: null prototypes and frozen values included", () =>
    Effect.gen(function*() {
      const gate = yield* gateFor(yield* runDirectoryWith([emojiRecord]), config(["a"]))
      const fact = Object.assign(Object.create(null) as object, cited("a", emojiRecord, "Net sales rose 😀"))
      const report = yield* gate.check(Object.freeze({ facts: Object.freeze([fact]) }))
      assert.strictEqual(report.outcome, "grounded")
    }))
})

describe("hostile configuration and capture records", () => {
  it.effect("configuration JSON nested 3,000 deep is InvalidConfig", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Config.decodeText(`{"sources":` + nestedArrays(3_000) + `}`))
      assert.instanceOf(error, InvalidConfig)
      assert.strictEqual(error.issues[0].message, StrictJson.depthMessage)
    }))

  it.effect("a configuration value nested 3,000 deep is InvalidConfig", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Config.decode({ sources: nestedValue(3_000), labels: ["a"] }))
      assert.instanceOf(error, InvalidConfig)
      assert.strictEqual(error.issues[0].message, StrictJson.depthMessage)
    }))

  it.scoped("a capture record nested 3,000 deep is CorruptCapture for the fact citing it", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([])
      yield* Effect.promise(() => fsp.writeFile(recordPath(directory, SOURCE), nestedArrays(3_000)))
      const gate = yield* gateFor(directory, config(["a"]))
      const exit = yield* Effect.exit(gate.check({ facts: [cited("a", emojiRecord, "Net sales")] }))
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return assert.fail("expected a typed failure")
      const error = exit.cause.error
      assert.instanceOf(error, ReportRejected)
      const failure = (error as ReportRejected).failures[0].error
      assert.instanceOf(failure, CorruptCapture)
      assert.strictEqual((failure as CorruptCapture).reason, "invalid-json")
      assert.strictEqual((failure as CorruptCapture).detail, StrictJson.depthMessage)
    }))
})
