/**
 * Digests pin what `html/2`, `markdown/2` and the normalisations make of generated hostile text
 * (seeded, so the inputs never change): hidden styles, scripts, tables, superscripts, character
 * references, combining marks, lone surrogates, the limits. The golden fixtures pin a few real
 * documents; these reach the corners. A capture's text digest is stored, so any change of output
 * for an id fails here (a new rule needs a new id). `CITEGATE_UPDATE_GOLDEN=1` rewrites the file.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { normalize, normalizeCapture, normalizedVersion, normalizedVersion2 } from "../src/anchor/Normalize.js"
import * as Html2 from "../src/extract/Html2.js"
import * as Markdown2 from "../src/extract/Markdown2.js"
import { fixturePath } from "./support.js"

/** mulberry32: a small deterministic generator. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const text = [
  "a", "B", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u00ad", "\u200b", "\u201c", "\u2019", "\u2013", "\u2212", "\u0301", "\u0308",
  "e\u0301", "\ufb01", "\u0130", "\u1100", "\u1161", "\u11a8", "\ud83d\ude00", "\ud800", "\udc00", "\u00bd", "\u00b2", "\u2075",
  "\u2103", "\u212a", "\u3358", "\ufdfa", "\u2011", "\u207b", "\u03a3", "\u00df", "1", "9", ".", ",", "%", "\u3000", "\u2028", "\u00aa",
  "\u2460", "&amp;", "&#x41;", "&nbsp;", "x"
]
const html = [
  "<p>", "</p>", "<div>", "</div>", "<sup>", "</sup>", "<sub>", "</sub>", "<table>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "</th>",
  "<pre>", "</pre>", "<br>", "<h1>", "</h1>", "<h2>", "</h2>", "<span style=\"display:none\">", "<span style='font-size:0px'>", "</span>",
  "<a href=x>", "</a>", "<script>x</script>", "<!-- c -->", "<svg><title>t</title><desc>d</desc></svg>", "<math><annotation>a</annotation></math>",
  "<b hidden>", "</b>", "<li>", "<ul>", "</ul>", "<details>", "</details>", "<sup><a>[1]</a></sup>", "<sup>-3</sup>", "<sup>n+1</sup>", "<sup>®</sup>"
]
const markdown = [
  "# ", "## ", "\n\n", "\n", "> ", "- ", "1. ", "*", "**", "_", "`", "```\n", "    code\n", "[a](b \"t\")", "![img](x)", "\\*",
  "|a|b|\n|-|-|\n|c||\n", "---\n", "<sup>6</sup>", "<sub>2</sub>", "<sup>n+1</sup>", "</sup>", "<sup>", "<div hidden>x</div>\n",
  "<span style=\"display:none\">h</span>", "<script>s</script>\n", "<!-- c -->", "<b>", "</b>", "[x]: /url\n", "  \n", "\\\n", "&#x1F600;"
]

const generate = (seed: number, count: number, length: number, markup: ReadonlyArray<string>) => {
  const next = random(seed)
  const pick = (atoms: ReadonlyArray<string>) => atoms[Math.floor(next() * atoms.length)]!
  return Array.from({ length: count }, () => {
    let out = ""
    for (let i = 0; i < length; i++) out += markup.length > 0 && next() < 0.5 ? pick(markup) : pick(text)
    return out
  })
}

const digest = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex")

const limits = { maxPages: 1, maxCharacters: 16 * 1024 * 1024, maxDepth: 512 }
const small = { maxPages: 1, maxCharacters: 200, maxDepth: 8 }

/** The normalisation with its whole map: every raw start and the raw span of every unit and of every empty span. */
const normalizedDigest = (input: string) =>
  [normalizedVersion, normalizedVersion2].map((version) =>
    [normalize(input, Number.POSITIVE_INFINITY, version), normalizeCapture(input, version), normalize(input, 10, version)].map((n) => {
      const map: Array<number> = []
      for (let i = -1; i <= n.text.length + 1; i++) {
        const unit = n.toRaw(i, i + 1)
        const empty = n.toRaw(i, i)
        map.push(n.rawStart(i), unit.start, unit.end, empty.start, empty.end)
      }
      return digest([n.text, n.truncated, map])
    }).join(" ")
  )

const outcome = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.either(effect), (e) => digest(e._tag === "Right" ? e.right : { failure: e.left._tag, ...e.left }))

const expectedFile = fixturePath("extraction", "generated.digests.json")

describe("digests of generated hostile text", () => {
  it.live("html/2, markdown/2, normalized/1 and normalized/2 make what they always made", () =>
    Effect.gen(function*() {
      const htmlInputs = generate(1, 40, 120, html)
      const markdownInputs = generate(2, 6, 400, markdown)
      const textInputs = generate(3, 40, 200, [])
      const actual = {
        "html/2": yield* Effect.forEach(htmlInputs, (input) =>
          Effect.all([outcome(Html2.extract("s", input, limits, undefined)), outcome(Html2.extract("s", input, small, "utf-8"))])),
        "markdown/2": yield* Effect.forEach(markdownInputs, (input) =>
          Effect.all([outcome(Markdown2.extract("s", input, limits)), outcome(Markdown2.extract("s", input, { ...limits, maxCharacters: 150 }))])),
        normalized: textInputs.map(normalizedDigest)
      }
      if (process.env["CITEGATE_UPDATE_GOLDEN"] === "1") fs.writeFileSync(expectedFile, JSON.stringify(actual, null, 1) + "\n")
      const expected = JSON.parse(fs.readFileSync(expectedFile, "utf8"))
      // Not vacuous: every input gives its own output, and the small limits a failure.
      assert.isAbove(new Set(actual["html/2"].flat()).size, 40)
      assert.isAbove(new Set(actual["markdown/2"].flat()).size, 6)
      assert.isAbove(new Set(actual.normalized.flat()).size, 70)
      assert.deepStrictEqual(actual, expected)
    }), { timeout: 120_000 })
})
