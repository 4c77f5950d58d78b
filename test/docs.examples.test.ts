/**
 * The documentation's TypeScript compiles: every ```ts block of README.md and docs/ is type-checked
 * against the package (see docExamples.ts for the `example-context` and `example-source` comments a
 * fragment or a copy carries). docs/examples/*.ts are compiled by `tsc` and run by example.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { documentationFiles, driftFrom, type Example, examplesOf, root, typeCheck } from "./docExamples.js"

const examples: ReadonlyArray<Example> = documentationFiles().flatMap((file) =>
  examplesOf(file, readFileSync(path.join(root, file), "utf8"))
)

/** A block that must fail: an export that does not exist, and a type error. */
const [wrong] = examplesOf("wrong.md", [
  "<!-- example-context",
  "import { Gate } from \"citegate\"",
  "-->",
  "```ts",
  "const layer = Gate.layerWithStor(\"{}\")",
  "const n: number = \"text\"",
  "```"
].join("\n"))

// One program for all of them (type-checking loads the package once: about 20 s on a busy machine).
let checked: ReadonlyArray<string> | undefined
const diagnostics = () => (checked ??= typeCheck([...examples, wrong!]))

describe("documentation examples", () => {
  it("README.md and docs/ hold TypeScript examples, all found", () => {
    assert.isAtLeast(examples.length, 7)
    assert.isTrue(examples.some((e) => e.at.startsWith("README.md:")))
    assert.isTrue(examples.some((e) => e.at.startsWith("docs/")))
  })

  it("every ```ts block type-checks against the package", () => {
    assert.deepStrictEqual(diagnostics().filter((m) => !m.startsWith("wrong.md:")), [])
  }, 120_000)

  it("a block copied from docs/examples/ matches its file", () => {
    const copies = examples.filter((e) => e.source !== undefined)
    assert.isAtLeast(copies.length, 2)
    for (const example of copies) {
      const text = readFileSync(path.join(root, example.source!), "utf8")
      assert.isUndefined(driftFrom(example.code, text), `${example.at} differs from ${example.source}`)
    }
  })

  it("a wrong example fails: an unknown export, a type error, a copy that drifted", () => {
    const messages = diagnostics().filter((m) => m.startsWith("wrong.md:"))
    assert.strictEqual(messages.length, 2, messages.join("\n"))
    assert.match(messages[0]!, /^wrong\.md:5: .*layerWithStor/)
    assert.match(messages[1]!, /^wrong\.md:6: .*not assignable/)
    assert.isUndefined(driftFrom("f(a,\n  b)", "// f\nf(a, b) // call"))
    assert.strictEqual(driftFrom("f(a, c)", "f(a, b)"), "f ( a , >>> c")
  })
})
