/**
 * The coarse pass (src/anchor/CoarsePass.ts) as it was before the block bounds of a packed word's
 * patterns were taken from one shared pass over the packed counts: each pattern's bounds by its own
 * sliding sum over the chunks, and the counting sort over every block. The reference of
 * test/anchor.coarsePass.equivalence.test.ts.
 */

import { chunk, chunkShift, patternTable, textIds, type TrigramTable } from "../../src/anchor/TrigramIds.js"

/** Above this share of blocks counted exactly, the bound route counts them all in one slide. */
const maxExactShare = 1 / 8

/** Patterns per packed word: four bits each. */
const perWord = 8

/** The best `size` blocks by count (positive only), then by position: the fine pass's starts, best first. */
class Top {
  private readonly count: Array<number>
  private readonly block: Array<number>
  private readonly at: Array<number>
  constructor(private readonly size: number) {
    this.count = Array.from({ length: size }, () => -1)
    this.block = Array.from({ length: size }, () => 0)
    this.at = Array.from({ length: size }, () => 0)
  }
  /** Whether a block with count `value` at `block` would enter the best ones. */
  admits(value: number, block: number): boolean {
    const last = this.size - 1
    return value > 0 && (value > this.count[last]! || (value === this.count[last]! && block < this.block[last]!))
  }
  offer(value: number, block: number, at: number): void {
    if (!this.admits(value, block)) return
    let r = this.size - 1
    while (r > 0 && (this.count[r - 1]! < value || (this.count[r - 1]! === value && this.block[r - 1]! > block))) {
      this.count[r] = this.count[r - 1]!
      this.block[r] = this.block[r - 1]!
      this.at[r] = this.at[r - 1]!
      r--
    }
    this.count[r] = value
    this.block[r] = block
    this.at[r] = at
  }
  starts(): Array<number> {
    const out: Array<number> = []
    for (let r = 0; r < this.size && this.count[r]! > 0; r++) out.push(this.at[r]!)
    return out
  }
}

/** The geometry of one pattern's blocks over a text of `count` trigrams. */
interface Blocks {
  readonly window: number
  readonly block: number
  /** The last window's start. */
  readonly last: number
  readonly blocks: number
}

const blocksOf = (count: number, m: number): Blocks => {
  const window = m - 2
  const block = Math.max(1, m >> 1)
  const last = count - window
  return { window, block, last, blocks: Math.floor(last / block) + 1 }
}

/** Block numbers in order of `bound`, highest first, then by position (a counting sort: bounds are at most `max`). */
const byBound = (bound: Int32Array, max: number): Int32Array => {
  const blocks = bound.length
  const first = new Int32Array(max + 2)
  for (let b = 0; b < blocks; b++) first[bound[b]!]!++
  for (let v = max, at = 0; v >= 0; v--) {
    const n = first[v]!
    first[v] = at
    at += n
  }
  const order = new Int32Array(blocks)
  for (let b = 0; b < blocks; b++) order[first[bound[b]!]!++] = b
  return order
}

/**
 * The coarse pass of several patterns over one text. The text's trigrams are looked up once, in
 * one table of every pattern's trigrams (`ids`: 1 + the trigram's index in that table, 0 for a
 * trigram in no pattern); each pattern then finds its blocks from those ids and the packed chunk
 * counts, which is array reads and no hashing.
 */
export class SharedPassBefore {
  private readonly table: TrigramTable
  private readonly patternIds: ReadonlyArray<Uint16Array>
  private ids: Uint16Array | undefined
  /** The packed chunk counts of one word's patterns (`packedWord`), the last computed. */
  private packed: Int32Array | undefined
  private packedWord = -1
  /** @param candidates how many blocks `starts` returns at most. */
  constructor(private readonly text: string, private readonly patterns: ReadonlyArray<string>, private readonly candidates: number) {
    const { patternIds, table } = patternTable(patterns)
    this.table = table
    this.patternIds = patternIds
  }

  /** Drops the text's trigram ids and packed counts (2.5 bytes per code unit); they are computed again if needed. */
  release(): void {
    this.ids = undefined
    this.packed = undefined
    this.packedWord = -1
  }

  /** For each shared id, bit 4·l set when the trigram occurs in pattern `perWord`·`word` + l. */
  private memberBits(word: number): Int32Array {
    const bits = new Int32Array(this.table.size + 1)
    const first = word * perWord
    for (let l = 0; l < perWord && first + l < this.patternIds.length; l++) {
      for (const id of this.patternIds[first + l]!) bits[id] = bits[id]! | (1 << (4 * l))
    }
    return bits
  }

  /**
   * The text's trigram ids, computed on first use (one look-up per code unit, TrigramIds.ts), with
   * the packed chunk counts of the first word's patterns made in the same loop.
   */
  private textIds(): Uint16Array {
    if (this.ids !== undefined) return this.ids
    const { ids, packed } = textIds(this.text, this.patterns, this.patternIds, this.table, this.memberBits(0))
    this.packed = packed
    this.packedWord = 0
    return this.ids = ids
  }

  /** The packed chunk counts of the word holding pattern `k` (one pass over the ids when not the last made). */
  private packedOf(ids: Uint16Array, k: number): Int32Array {
    const word = Math.floor(k / perWord)
    if (this.packed !== undefined && this.packedWord === word) return this.packed
    const bits = this.memberBits(word)
    const packed = new Int32Array(Math.ceil(ids.length / chunk))
    for (let j = 0, i = 0; j < packed.length; j++) {
      let sum = 0
      for (const end = Math.min(i + chunk, ids.length); i < end; i++) sum += bits[ids[i]!]!
      packed[j] = sum
    }
    this.packed = packed
    this.packedWord = word
    return packed
  }

  /** Pattern `k`'s wanted count of each shared id (0 for another pattern's trigram, or none). */
  private wantedOf(k: number): Int32Array {
    const wanted = new Int32Array(this.table.size + 1)
    for (const id of this.patternIds[k]!) wanted[id]!++
    return wanted
  }

  /**
   * Where the fine pass looks for pattern `k` (of length `m`): the best window of each half-pattern
   * block by Dice count, the best `candidates` blocks, best first (ties: the earlier block).
   *
   * A window's count is at most its number of trigrams that occur in the pattern at all (its hits),
   * and so at most the hits of the chunks it touches. Blocks are counted exactly in order of that
   * bound, best first, until no block left can enter the best ones; past `maxExactShare` of the
   * blocks, the full slide counts them all.
   */
  starts(k: number, m: number): Array<number> {
    const ids = this.textIds()
    const wanted = this.wantedOf(k)
    const geometry = blocksOf(ids.length, m)
    const bound = this.chunkBounds(this.packedOf(ids, k), k % perWord, geometry)
    const { blocks, window } = geometry
    const order = byBound(bound, window)
    const top = this.countInOrder(ids, wanted, geometry, order, bound, Math.max(64, Math.ceil(blocks * maxExactShare)))
    return top === undefined ? this.slideAll(ids, wanted, geometry) : top.starts()
  }

  /**
   * Each block's bound from lane `lane` of the packed chunk counts: the windows starting in chunk j
   * cover chunks j to e (the chunk of the last trigram the last of them covers), so their hits are
   * at most the hits of chunks j..e; a block's bound is the most of its chunks', at most `window`.
   */
  private chunkBounds(packed: Int32Array, lane: number, { block, blocks, last, window }: Blocks): Int32Array {
    const chunks = packed.length
    const shift = 4 * lane
    // The last trigram the windows starting in chunk j cover is in chunk j + span - 1 at most.
    const span = ((chunk - 2 + window) >> chunkShift) + 1
    // reach: the hits of chunks j to j + span - 1 (those before `chunks`), one sliding sum as j
    // moves on; a block's chunks follow the previous block's (sharing at most its last), so one pass.
    let reach = 0
    let at = 0 // the chunk `reach` is for
    for (let j = 0; j < span && j < chunks; j++) reach += (packed[j]! >>> shift) & 15
    const bound = new Int32Array(blocks)
    for (let b = 0, from = 0; b < blocks; b++, from += block) {
      const to = Math.min(from + block - 1, last)
      let best = 0
      for (let j = from >> chunkShift, end = to >> chunkShift; j <= end; j++) {
        for (; at < j; at++) {
          reach -= (packed[at]! >>> shift) & 15
          if (at + span < chunks) reach += (packed[at + span]! >>> shift) & 15
        }
        if (reach > best) best = reach
      }
      bound[b] = Math.min(best, window)
    }
    return bound
  }

  /**
   * The best window of block `b` by exact count: its count and start (the first best). `have` is
   * all zeros before and after.
   */
  private exactBlock(ids: Uint16Array, wanted: Int32Array, have: Int32Array, { block, last, window }: Blocks, b: number) {
    const from = b * block
    const to = Math.min(from + block - 1, last)
    let common = 0
    // (h - w) >> 31 is -1 when h < w, else 0 (counts are far below 2^31): no data-dependent branch.
    for (let i = from; i < from + window; i++) {
      const id = ids[i]!
      const h = have[id]!
      have[id] = h + 1
      common -= (h - wanted[id]!) >> 31
    }
    let best = common
    let bestAt = from
    for (let p = from + 1; p <= to; p++) {
      const entering = ids[p + window - 1]!
      const h = have[entering]!
      have[entering] = h + 1
      common -= (h - wanted[entering]!) >> 31
      const leaving = ids[p - 1]!
      const g = have[leaving]!
      have[leaving] = g - 1
      common -= 1 + ((wanted[leaving]! - g) >> 31)
      if (common > best) {
        best = common
        bestAt = p
      }
    }
    // Back to all zeros for the next block.
    for (let i = to; i < to + window; i++) have[ids[i]!]!--
    return { best, bestAt }
  }

  /**
   * Exact counts of the blocks of `order` (by `bound`, highest first, then by position) until no
   * block left can enter the best ones. `undefined` when more than `limit` blocks would be counted.
   */
  private countInOrder(
    ids: Uint16Array,
    wanted: Int32Array,
    geometry: Blocks,
    order: Int32Array,
    bound: Int32Array,
    limit: number
  ): Top | undefined {
    const have = new Int32Array(wanted.length)
    const top = new Top(this.candidates)
    for (let r = 0; r < order.length; r++) {
      const b = order[r]!
      // No block from here on can rank above the last kept (an equal count ranks below an earlier block).
      if (!top.admits(bound[b]!, b)) break
      if (r >= limit) return undefined
      const { best, bestAt } = this.exactBlock(ids, wanted, have, geometry, b)
      top.offer(best, b, bestAt)
    }
    return top
  }

  /** The general path: every block's best window by one slide over the whole text. */
  private slideAll(ids: Uint16Array, wanted: Int32Array, { block, last, window }: Blocks): Array<number> {
    const have = new Int32Array(wanted.length)
    // common = Σ min(have, wanted) over this pattern's trigrams, kept as windows enter and leave;
    // (h - w) >> 31 is -1 when h < w, else 0 (counts are far below 2^31): no data-dependent branch.
    let common = 0
    for (let i = 0; i < window; i++) {
      const id = ids[i]!
      const h = have[id]!
      have[id] = h + 1
      common -= (h - wanted[id]!) >> 31
    }
    const top = new Top(this.candidates)
    for (let b = 0, from = 0; from <= last; b++, from += block) {
      const to = Math.min(from + block - 1, last)
      // The window at 0 is complete already; every later one enters one trigram and drops one.
      let best = from === 0 ? common : -1
      let bestAt = from
      for (let p = from === 0 ? 1 : from; p <= to; p++) {
        const entering = ids[p + window - 1]!
        const h = have[entering]!
        have[entering] = h + 1
        common -= (h - wanted[entering]!) >> 31
        const leaving = ids[p - 1]!
        const g = have[leaving]!
        have[leaving] = g - 1
        // min(have, wanted) drops when have was at most wanted: (wanted - g) >> 31 is 0 then, else -1.
        common -= 1 + ((wanted[leaving]! - g) >> 31)
        if (common > best) {
          best = common
          bestAt = p
        }
      }
      top.offer(best, b, bestAt)
    }
    return top.starts()
  }
}
