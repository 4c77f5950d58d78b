import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { makeCaptureRecord, type SourceUrl } from "../src/Domain.js"
import { InvalidReport } from "../src/Errors.js"
import * as StrictJson from "../src/internal/strictJson.js"
import { accessedAt, gateFor, runDirectoryWith } from "./support.js"

// Shapes found by an adversarial review: an object with millions of keys, and long arrays inside a fact
// of a value passed to `gate.check`. Both used to cost seconds to minutes and gigabytes.

const SOURCE = "https://hostile.example.com/a.txt" as SourceUrl
const record = makeCaptureRecord({ source: SOURCE, text: "Net sales were 4,210 units.", accessedAt, contentType: "text/plain" })
const config = { sources: [SOURCE], labels: ["a"] }
const cited = { state: "cited", label: "a", source: SOURCE, captureSha256: record.sha256, snippet: "4,210 units" }

const invalidReport = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) return assert.fail("expected InvalidReport, got success")
    if (exit.cause._tag !== "Fail") return assert.fail(`expected a typed failure, got ${exit.cause._tag}`)
    assert.instanceOf(exit.cause.error, InvalidReport)
    return exit.cause.error as InvalidReport
  })

describe("object keys are bounded", () => {
  it("the structural pass refuses an object of more than maxObjectKeys keys before parsing, at its path", () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":0`).join(",")
    assert.strictEqual(StrictJson.parse(`{${keys(StrictJson.maxObjectKeys)}}`)._tag, "Right")
    const result = StrictJson.parse(`{"facts":[{${keys(StrictJson.maxObjectKeys + 1)}}]}`)
    assert.strictEqual(result._tag, "Left")
    if (result._tag === "Left") {
      assert.deepStrictEqual(result.issue.path, ["facts", 0])
      assert.strictEqual(result.issue.message, StrictJson.tooManyKeysMessage(StrictJson.maxObjectKeys + 1))
    }
  })

  it.scoped("gate.checkJson: a report of a million root keys is one InvalidReport from the structural pass, not a million issues", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config)
      const text = `{"facts":[],${Array.from({ length: 1_000_000 }, (_, i) => `"${i}":0`).join(",")}}`
      const error = yield* invalidReport(gate.checkJson(text))
      assert.deepStrictEqual(error.issues.map((i) => i.path), [[]])
      assert.include(error.issues[0]!.message, `at most ${StrictJson.maxObjectKeys} keys`)
    }))

  it.scoped("gate.check: a value with too many keys is refused before any key is decoded", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config)
      const fact: Record<string, unknown> = { ...cited }
      for (let i = 0; i < 200_000; i++) fact[`extra${i}`] = 0
      const error = yield* invalidReport(gate.check({ facts: [fact] }))
      assert.deepStrictEqual(error.issues, [{ path: ["facts", 0], message: StrictJson.tooManyKeysMessage(200_005) }])
    }))
})

describe("arrays inside a value are bounded like the text's", () => {
  it.scoped("gate.check: a ten-million-element array inside a fact is refused before its elements are looked at", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config)
      const error = yield* invalidReport(gate.check({ facts: [{ ...cited, extra: new Array(10_000_000).fill(0) }] }))
      assert.deepStrictEqual(error.issues.map((i) => i.path), [["facts", 0, "extra"]])
      assert.include(error.issues[0]!.message, "at most 100 elements")
    }))

  it.scoped("gate.check: an array with an extra own property is not plain data", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config)
      const facts = Object.assign([cited], { extra: 1 })
      const error = yield* invalidReport(gate.check({ facts }))
      assert.deepStrictEqual(error.issues.map((i) => i.path), [["facts"]])
    }))

  it.scoped("gate.check: no trap of a Proxy runs, the facts-length check included", () =>
    Effect.gen(function*() {
      const directory = yield* runDirectoryWith([record])
      const gate = yield* gateFor(directory, config)
      let trapsRun = 0
      const proxy = new Proxy({ facts: [cited] }, {
        get: (target, key) => (trapsRun++, Reflect.get(target, key)),
        getOwnPropertyDescriptor: (target, key) => (trapsRun++, Reflect.getOwnPropertyDescriptor(target, key)),
        ownKeys: (target) => (trapsRun++, Reflect.ownKeys(target))
      })
      const error = yield* invalidReport(gate.check(proxy))
      assert.include(error.issues[0]!.message, "Proxy")
      assert.strictEqual(trapsRun, 0)
    }))
})
