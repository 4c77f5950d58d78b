/**
 * The coarse pass prunes blocks by a bound (CoarsePass.ts `chunkBounds`): a block whose bound is below
 * the best counts found is never counted exactly, so the bound must never be below the block's true
 * best window count, or the nearest passage could be missed. Seeded texts built from pieces of the
 * patterns between fillers of other letters make the bound tight in many blocks (bound = best), where
 * a bound one too low is caught; the bound also never exceeds the window.
 */
import { assert, describe, it } from "@effect/vitest"
import { SharedPass } from "../src/anchor/CoarsePass.js"
import { random } from "./support/seeded.js"

interface Geometry {
  readonly window: number
  readonly block: number
  readonly last: number
  readonly blocks: number
}

/** The pass's private steps, reached for this check only. */
interface Steps {
  textIds(): Uint16Array
  packedOf(ids: Uint16Array, k: number): Int32Array
  wantedOf(k: number): Int32Array
  chunkBounds(packed: Int32Array, lane: number, geometry: Geometry): Int32Array
  exactBlock(ids: Uint16Array, wanted: Int32Array, have: Int32Array, geometry: Geometry, b: number): { readonly best: number }
}

/** As CoarsePass.ts `blocksOf`: windows of m - 2 trigrams, blocks of half a pattern. */
const geometryOf = (count: number, m: number): Geometry => {
  const window = m - 2
  const block = Math.max(1, m >> 1)
  const last = count - window
  return { window, block, last, blocks: Math.floor(last / block) + 1 }
}

describe("the coarse pass's block bound", () => {
  it("is never below a block's best window count, and never above the window", () => {
    const seeded = random(20261203)
    const next = (n: number) => seeded() % n
    const word = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[next(alphabet.length)]).join("")
    let checked = 0
    let tight = 0
    for (let round = 0; round < 300; round++) {
      const patterns = Array.from({ length: 1 + next(12) }, () => word("abcdef", 6 + next(40)))
      const pieces: Array<string> = []
      const target = 60 + next(2500)
      let length = 0
      while (length < target) {
        const piece = next(3) === 0
          ? word("xyz \n", 1 + next(30))
          : (() => {
            const pattern = patterns[next(patterns.length)]!
            const from = next(pattern.length)
            const cut = pattern.slice(from, from + 1 + next(pattern.length))
            // Now and then a unit changed, as in a near miss.
            return next(2) === 0 ? cut : cut.replace(/[a-f]/, "g")
          })()
        pieces.push(piece)
        length += piece.length
      }
      const text = pieces.join("")
      const pass = new SharedPass(text, patterns, 4) as unknown as Steps
      const ids = pass.textIds()
      patterns.forEach((pattern, k) => {
        if (ids.length < pattern.length - 2) return
        const geometry = geometryOf(ids.length, pattern.length)
        const wanted = pass.wantedOf(k)
        const have = new Int32Array(wanted.length)
        const bound = pass.chunkBounds(pass.packedOf(ids, k), k % 8, geometry)
        assert.strictEqual(bound.length, geometry.blocks)
        for (let b = 0; b < geometry.blocks; b++) {
          const { best } = pass.exactBlock(ids, wanted, have, geometry, b)
          assert.isAtLeast(bound[b]!, best, `round ${round}, pattern ${k}, block ${b}`)
          assert.isAtMost(bound[b]!, geometry.window, `round ${round}, pattern ${k}, block ${b}`)
          checked++
          if (bound[b] === best && best > 0) tight++
        }
      })
    }
    // The check has teeth only where the bound is tight.
    assert.isAbove(checked, 10_000)
    assert.isAbove(tight, 1_000, `${tight} tight blocks of ${checked}`)
  })
})
