/**
 * The coarse pass's block bounds from pair maxima shared by the patterns of a packed word, and the
 * counting sort placing only the blocks its loop may read (src/anchor/CoarsePass.ts), against the
 * pass before them (test/support/coarsePassBefore.ts): every block's bound equal, the counts by bound
 * equal, and the same starts for every pattern, best first. Seeded texts built from pieces of the
 * patterns between fillers (bounds tight in many blocks, ties, blocks past the exact-count limit),
 * patterns of clustered lengths (shared spans) and of scattered ones, one to twelve patterns (one
 * and two packed words), the bench's kind of prose with its "absent" quotes, and the hostile
 * captures of the nearest-passage tests.
 */
import { assert, describe, it } from "@effect/vitest"
import { pairMaxima, SharedPass } from "../src/anchor/CoarsePass.js"
import { minFuzzyLength, prepare } from "../src/anchor/Nearest.js"
import { normalize } from "../src/anchor/Normalize.js"
import { makeText } from "../scripts/benchText.js"
import { SharedPassBefore } from "./support/coarsePassBefore.js"
import { hostileCaptures, prose } from "./support/hostileCaptures.js"
import { random } from "./support/seeded.js"

interface Geometry {
  readonly window: number
  readonly block: number
  readonly last: number
  readonly blocks: number
}

/** The passes' private steps, reached for this check only. */
interface Steps {
  textIds(): Uint16Array
  packedOf(ids: Uint16Array, k: number): Int32Array
  blockBounds(packed: Int32Array, k: number, geometry: Geometry, counts: Int32Array): Int32Array
  chunkBounds(packed: Int32Array, lane: number, geometry: Geometry): Int32Array
  pairs: unknown
}

/** As CoarsePass.ts `blocksOf`. */
const geometryOf = (count: number, m: number): Geometry => {
  const window = m - 2
  const block = Math.max(1, m >> 1)
  const last = count - window
  return { window, block, last, blocks: Math.floor(last / block) + 1 }
}

interface Tally {
  patterns: number
  shared: number
  blocks: number
}

/** The patterns (normalised) that get a coarse pass in `text`, as Nearest.ts picks them. */
const searched = (text: string, patterns: ReadonlyArray<string>) =>
  patterns.filter((p) => p.length >= minFuzzyLength && text.length > 2 * p.length && p.length <= 1_000)

const same = (text: string, all: ReadonlyArray<string>, label: string, tally: Tally) => {
  const patterns = searched(text, all)
  if (patterns.length === 0) return
  // Bounds and counts, block by block.
  const now = new SharedPass(text, patterns, 3) as unknown as Steps
  const before = new SharedPassBefore(text, patterns, 3) as unknown as Steps
  const ids = now.textIds()
  const idsBefore = before.textIds()
  assert.deepStrictEqual(ids, idsBefore, label)
  patterns.forEach((pattern, k) => {
    const geometry = geometryOf(ids.length, pattern.length)
    const counts = new Int32Array(geometry.window + 2)
    now.pairs = undefined
    const bound = now.blockBounds(now.packedOf(ids, k), k, geometry, counts)
    if (now.pairs !== undefined) tally.shared++
    const expected = before.chunkBounds(before.packedOf(idsBefore, k), k % 8, geometry)
    assert.strictEqual(bound.length, expected.length, `${label}, pattern ${k}`)
    const histogram = new Int32Array(geometry.window + 2)
    for (let b = 0; b < bound.length; b++) {
      if (bound[b] !== expected[b]) assert.fail(`${label}, pattern ${k} (${pattern.length} units), block ${b}: ${bound[b]} against ${expected[b]}`)
      histogram[expected[b]!]!++
    }
    assert.deepStrictEqual(counts, histogram, `${label}, pattern ${k}: counts by bound`)
    tally.blocks += bound.length
  })
  // Starts, through the whole pass, asked in order and then again backwards (kept maxima reused).
  const fresh = new SharedPass(text, patterns, 3)
  const old = new SharedPassBefore(text, patterns, 3)
  const order = [...patterns.keys(), ...[...patterns.keys()].reverse()]
  for (const k of order) {
    assert.deepStrictEqual(fresh.starts(k, patterns[k]!.length), old.starts(k, patterns[k]!.length), `${label}, starts of pattern ${k}`)
  }
  tally.patterns += patterns.length
}

describe("the coarse pass's shared block bounds and limited counting sort: as before", () => {
  it("pair maxima: each lane's larger of two sliding sums, byte by byte, up to eight hits in every chunk", () => {
    const next = random(7)
    for (let round = 0; round < 300; round++) {
      const chunks = 1 + (next() % 300)
      // Lanes of 0 to 8 hits; now and then whole runs of full chunks (the largest sums).
      const full = next() % 3 === 0
      const packed = Int32Array.from({ length: chunks }, () => {
        let word = 0
        for (let l = 0; l < 8; l++) word |= (full && next() % 4 !== 0 ? 8 : next() % 9) << (4 * l)
        return word
      })
      for (let span = 1; span <= 15; span++) {
        const { even, odd } = pairMaxima(packed, span)
        for (let lane = 0; lane < 8; lane++) {
          const sum = (j: number) => {
            let s = 0
            for (let i = j; i < Math.min(j + span, chunks); i++) s += (packed[i]! >>> (4 * lane)) & 15
            return s
          }
          const words = lane % 2 === 0 ? even : odd
          for (let j = 0; j + 1 < chunks; j++) {
            const got = (words[j]! >>> (8 * (lane >> 1))) & 255
            if (got !== Math.max(sum(j), sum(j + 1))) assert.fail(`round ${round}, span ${span}, lane ${lane}, chunk ${j}: ${got}`)
          }
        }
      }
    }
  })

  it("over seeded texts and patterns", () => {
    const seeded = random(20261203)
    const next = (n: number) => seeded() % n
    const word = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[next(alphabet.length)]).join("")
    const tally: Tally = { patterns: 0, shared: 0, blocks: 0 }
    for (let round = 0; round < 400; round++) {
      const alphabet = ["abcdef", "ab", "abcdefghijklmnop", "ab cd"][next(4)]!
      // Clustered lengths share spans (every span from 2 to 16 and past 15 comes up); scattered ones mostly not.
      const base = 8 + next(140)
      const clustered = next(3) !== 0
      const patterns = Array.from({ length: 1 + next(12) }, () => word(alphabet, clustered ? base + next(4) : 8 + next(200)))
      const pieces: Array<string> = []
      const target = 40 + next(next(4) === 0 ? 20_000 : 3_000)
      let length = 0
      while (length < target) {
        const piece = next(3) === 0
          ? word(next(2) === 0 ? "xyz \n" : alphabet, 1 + next(30))
          : (() => {
            const pattern = patterns[next(patterns.length)]!
            const from = next(pattern.length)
            const cut = pattern.slice(from, from + 1 + next(pattern.length))
            return next(2) === 0 ? cut : cut.replace(/[a-f]/, "g")
          })()
        pieces.push(piece)
        length += piece.length
      }
      same(pieces.join(""), patterns, `round ${round}`, tally)
    }
    // Not vacuous: most patterns took the shared bounds, over many blocks.
    assert.isAbove(tally.patterns, 1_000)
    assert.isAbove(tally.shared, 500, `${tally.shared} shared of ${tally.patterns}`)
    assert.isAbove(tally.blocks, 200_000)
  })

  it("where most blocks look alike (the count in order gives up for the full slide), with 1 to 40 candidates", () => {
    // Texts of the quotes' own pieces and long runs of one unit: many blocks share the top bounds,
    // so the count in order reaches its limit of blocks, and must then give up (the sort places one
    // block past the limit for that), not answer with the blocks it has.
    const seeded = random(20261204)
    const next = (n: number) => seeded() % n
    const word = (alphabet: string, length: number) => Array.from({ length }, () => alphabet[next(alphabet.length)]).join("")
    let compared = 0
    for (let round = 0; round < 1_500; round++) {
      const alphabet = ["a", "ab", "abc", "ab ", "abcdefgh"][next(5)]!
      const base = 8 + next(next(2) === 0 ? 40 : 130)
      const count = 1 + next(next(2) === 0 ? 8 : 16)
      const patterns = Array.from({ length: count }, () => word(alphabet, next(2) === 0 ? base : base + next(3)))
      const longest = Math.max(...patterns.map((p) => p.length))
      const target = 2 * longest + (next(3) === 0 ? 1 + next(20) : next(next(2) === 0 ? 500 : 8_000))
      let text = ""
      while (text.length < target) {
        const kind = next(4)
        if (kind === 0) text += word(next(2) === 0 ? alphabet : "xyz", 1 + next(20))
        else if (kind === 1) text += alphabet[0]!.repeat(1 + next(200))
        else {
          const pattern = patterns[next(count)]!
          const from = next(pattern.length)
          text += pattern.slice(from, from + 1 + next(pattern.length))
        }
      }
      const fit = patterns.filter((p) => text.length > 2 * p.length)
      if (fit.length === 0) continue
      const candidates = 1 + next(next(2) === 0 ? 4 : 40)
      const now = new SharedPass(text, fit, candidates)
      const before = new SharedPassBefore(text, fit, candidates)
      for (const k of [...fit.keys(), ...[...fit.keys()].reverse()]) {
        assert.deepStrictEqual(now.starts(k, fit[k]!.length), before.starts(k, fit[k]!.length), `round ${round}, pattern ${k}`)
        compared++
      }
    }
    assert.isAbove(compared, 10_000)
  })

  it("holds one word's packed counts and pair maxima at a time (3.5 bytes per code unit at most)", () => {
    // Eight quotes of one span (shared maxima), then two long ones in the next word.
    const text = prepare(makeText(9, 200_000)).normalized.text
    const next = random(9)
    const quote = (m: number) => {
      const start = next() % (text.length - m)
      return normalize(`absent ${text.slice(start, start + m)}`).text.slice(0, m)
    }
    const patterns = [...Array.from({ length: 8 }, () => quote(40)), quote(200), quote(200)]
    const pass = new SharedPass(text, patterns, 3)
    const state = pass as unknown as { packed: Int32Array | undefined; pairs: { packed: Int32Array } | undefined }
    pass.starts(0, 40)
    pass.starts(1, 40)
    assert.isDefined(state.pairs, "the first word's quotes share pair maxima")
    pass.starts(8, 200)
    // The second word's quotes do not share: nothing of the first word's is kept.
    assert.isTrue(state.pairs === undefined || state.pairs.packed === state.packed)
    assert.isUndefined(state.pairs)
  })

  it("over the bench's kind of prose and its absent quotes, and over the hostile captures", () => {
    const tally: Tally = { patterns: 0, shared: 0, blocks: 0 }
    for (const [seed, size, count] of [[1, 64 * 1024, 5], [2, 200_000, 8], [3, 100_000, 9], [4, 50_000, 12], [5, 30_000, 1], [6, 8_000, 3]] as const) {
      const text = prepare(makeText(seed, size)).normalized.text
      const next = random(seed)
      const quotes = Array.from({ length: count }, (_, i) => {
        const start = next() % (text.length - 60)
        return normalize(`absent ${i * 7} ${text.slice(start, start + 60)}`).text
      })
      same(text, quotes, `prose ${seed}`, tally)
      // The same prose with a quote of every length from 8 to 130 units (spans 2 to 17) in words of eight.
      const lengths = Array.from({ length: 123 }, (_, i) => 8 + i)
      for (let w = 0; w < lengths.length; w += 8) {
        same(text.slice(0, 20_000), lengths.slice(w, w + 8).map((m, i) => {
          const start = next() % 19_000
          return normalize(`x${i} ${text.slice(start, start + m)}`).text.slice(0, m)
        }), `prose ${seed}, lengths from ${lengths[w]}`, tally)
      }
    }
    for (const capture of hostileCaptures()) {
      const text = prepare(capture.text).normalized.text
      same(text, capture.quotes(capture.text).map((q) => normalize(q).text), capture.name, tally)
    }
    // Runs of one unit: sums of whole chunks (eight hits each) up to the most a byte holds here
    // (span 15: 120), and past it (span 16 and 17: the bounds route), at each offset of the run's ends.
    for (let offset = 0; offset < 16; offset++) {
      const text = prose(2_000 + offset, 10 + offset, "\n") + "a".repeat(3_000 + 3 * offset) + prose(2_000, 30 + offset, "\n")
      for (let m = 100; m <= 136; m += 4) same(text, [0, 1, 2, 3].map((d) => "a".repeat(m + d - 1) + "b"), `a run, offset ${offset}, from ${m}`, tally)
    }
    same(prepare(prose(30_000, 9, "\n")).normalized.text, ["net sales rose by 12 per cent absent", "absent net sales fell by 12 per cent"], "two quotes", tally)
    assert.isAbove(tally.shared, 100, `${tally.shared} shared of ${tally.patterns}`)
  })
})
