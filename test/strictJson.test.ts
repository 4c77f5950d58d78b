import { assert, describe, it } from "@effect/vitest"
import * as StrictJson from "../src/internal/strictJson.js"

const issue = (text: string) => {
  const result = StrictJson.parse(text)
  if (result._tag === "Right") return assert.fail(`expected ${text} to be rejected`)
  return result.issue
}

describe("strict JSON", () => {
  it("parses ordinary JSON like JSON.parse", () => {
    const text = `{"a":[1,{"b":"x\\"y","c":null}],"d":{"a":1},"e":"}{,\\\\"}`
    const result = StrictJson.parse(text)
    assert.strictEqual(result._tag, "Right")
    if (result._tag === "Right") assert.deepStrictEqual(result.value, JSON.parse(text))
  })

  it("allows the same key in different objects", () => {
    assert.strictEqual(StrictJson.parse(`[{"a":1},{"a":2},{"x":{"a":3},"a":4}]`)._tag, "Right")
  })

  it("rejects a repeated key with its path", () => {
    const found = issue(`{"facts":[{"label":"a","n":1},{"label":"b","label":"c"}]}`)
    assert.deepStrictEqual(found.path, ["facts", 1])
    assert.match(found.message, /repeated key "label"/)
  })

  it("rejects a repeated key spelled with an escape", () => {
    assert.match(issue(`{"label":"a","\\u006cabel":"b"}`).message, /repeated key "label"/)
  })

  it("rejects __proto__, constructor and prototype keys, escaped or not", () => {
    assert.match(issue(`{"__proto__":{}}`).message, /forbidden key "__proto__"/)
    assert.match(issue(`{"a":{"constructor":1}}`).message, /forbidden key "constructor"/)
    assert.match(issue(`{"\\u0070rototype":1}`).message, /forbidden key "prototype"/)
  })

  it("does not mistake string contents for keys", () => {
    assert.strictEqual(StrictJson.parse(`{"a":"\\"a\\":1","b":"{\\"a\\":2}"}`)._tag, "Right")
  })

  it("rejects invalid JSON", () => {
    assert.match(issue(`{"a":1,}`).message, /not valid JSON/)
  })
})
