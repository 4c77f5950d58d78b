/**
 * The coarse pass of the nearest-passage search (Nearest.ts): for each fuzzy pattern, the start of
 * the best window (Sørensen–Dice count over character trigrams, a window of the pattern's length)
 * in each half-pattern block of the normalised text, and the best `candidates` of those blocks,
 * best first (ties: the earlier block). Same windows, same counts and same blocks as one full slide
 * per pattern (test/support/nearestReference.ts; test/anchor.nearest.shared*.test.ts).
 *
 * Several patterns of one text share one trigram look-up of it (`ids`), and, in the same loop, a
 * count per `chunk` code units of how many of the chunk's trigrams occur in each pattern at all
 * (eight patterns packed in one 32-bit word, four bits each). From those counts each pattern bounds
 * every block's best count (the most such trigrams any of its windows can cover): patterns of one
 * word with the same span share one pass over the chunks for all their lanes (`pairMaxima`), then
 * read a few bytes per block; others take one step per chunk. Blocks are then counted exactly in
 * order of that bound until no block left can enter the best ones: on prose a few hundred of some
 * 30,000 blocks per MiB (the counting sort places only as many as may be read). When more than `maxExactShare`
 * of the blocks would need exact counts (a text where most windows look alike), one full slide
 * counts every block instead. Linear per pattern either way, whatever the text.
 *
 * @since 0.6.0
 */

import { chunk, chunkShift, patternTable, textIds, type TrigramTable } from "./TrigramIds.js"

/** Fuzzy patterns whose trigrams share one table and one pass over the text: at most this many trigrams in all (the ids are 16-bit). */
export const maxSharedTrigrams = 32_000

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

/** The chunks the windows starting in one chunk touch: the last trigram they cover is in chunk j + span - 1 at most. */
const spanOf = (window: number) => ((chunk - 2 + window) >> chunkShift) + 1

/**
 * The longest span whose sums fit the shared form: a lane's count in a chunk is at most `chunk` (8),
 * so a sum over 15 chunks is at most 120, below 128, which the byte-wise maximum needs.
 */
const maxByteSpan = 15

/** Four lanes of a packed word, one byte each (lanes 0, 2, 4, 6 from the even nibbles; 1, 3, 5, 7 from the odd). */
const nibbles = 0x0f0f0f0f
/** The top bit of each byte. */
const tops = 0x80808080 | 0

/**
 * For every lane of a packed word at once, at chunk j: the larger of the lane's sums of `span`
 * chunks starting at j and at j + 1 (those before the end), for each j up to `chunks` - 2. Even lanes in
 * `even`, odd lanes in `odd`, a byte each.
 */
export interface PairMaxima {
  readonly packed: Int32Array
  readonly span: number
  readonly even: Int32Array
  readonly odd: Int32Array
}

/**
 * `PairMaxima` in one pass over the chunks, whatever the number of lanes: a sliding sum of four
 * bytes per word (no byte exceeds 120 + 8, so no carry crosses into the next byte, and the chunk
 * dropped is part of the sum, so no borrow) and a byte-wise maximum of each sum and the one before
 * (bytes below 128: the top bit of (a | 0x80) - b tells a ≥ b).
 */
export const pairMaxima = (packed: Int32Array, span: number): PairMaxima => {
  const chunks = packed.length
  const even = new Int32Array(chunks)
  const odd = new Int32Array(chunks)
  let sumEven = 0
  let sumOdd = 0
  for (let j = 0; j < span && j < chunks; j++) {
    const p = packed[j]!
    sumEven = (sumEven + (p & nibbles)) | 0
    sumOdd = (sumOdd + ((p >>> 4) & nibbles)) | 0
  }
  let prevEven = sumEven
  let prevOdd = sumOdd
  // At j, the sums go from chunk j - 1's to chunk j's (chunk j - 1 leaves, chunk j - 1 + span enters
  // while there is one), and entry j - 1 takes the larger of the two, byte by byte.
  const entering = chunks - span + 1
  let j = 1
  for (; j < entering; j++) {
    const p = packed[j - 1]!
    const q = packed[j - 1 + span]!
    sumEven = (sumEven + (q & nibbles) - (p & nibbles)) | 0
    sumOdd = (sumOdd + ((q >>> 4) & nibbles) - ((p >>> 4) & nibbles)) | 0
    // 0xff in each byte where the earlier sum's byte is at least the later's.
    const geEven = Math.imul((((prevEven | tops) - sumEven) & tops) >>> 7, 255)
    const geOdd = Math.imul((((prevOdd | tops) - sumOdd) & tops) >>> 7, 255)
    even[j - 1] = (prevEven & geEven) | (sumEven & ~geEven)
    odd[j - 1] = (prevOdd & geOdd) | (sumOdd & ~geOdd)
    prevEven = sumEven
    prevOdd = sumOdd
  }
  for (; j < chunks; j++) {
    const p = packed[j - 1]!
    sumEven = (sumEven - (p & nibbles)) | 0
    sumOdd = (sumOdd - ((p >>> 4) & nibbles)) | 0
    const geEven = Math.imul((((prevEven | tops) - sumEven) & tops) >>> 7, 255)
    const geOdd = Math.imul((((prevOdd | tops) - sumOdd) & tops) >>> 7, 255)
    even[j - 1] = (prevEven & geEven) | (sumEven & ~geEven)
    odd[j - 1] = (prevOdd & geOdd) | (sumOdd & ~geOdd)
    prevEven = sumEven
    prevOdd = sumOdd
  }
  return { packed, span, even, odd }
}

/**
 * Block numbers in order of `bound`, highest first, then by position (a counting sort: bounds are
 * at most `max`; `counts[v]`, the blocks of bound v, counted as the bounds were made), as far as the
 * first `need` of that order reach: only the blocks whose bound is at least the `need`-th highest
 * are placed (all of them when there are fewer), the rest never being read.
 */
const byBound = (bound: Int32Array, max: number, counts: Int32Array, need: number): Int32Array => {
  const blocks = bound.length
  const first = counts
  let floor = 0
  let placed = blocks
  for (let v = max, at = 0; v >= 0; v--) {
    const n = first[v]!
    first[v] = at
    at += n
    if (at >= need && floor === 0) {
      floor = v
      placed = at
    }
  }
  const order = new Int32Array(placed)
  for (let b = 0; b < blocks; b++) {
    const v = bound[b]!
    if (v >= floor) order[first[v]!++] = b
  }
  return order
}

/**
 * The coarse pass of several patterns over one text. The text's trigrams are looked up once, in
 * one table of every pattern's trigrams (`ids`: 1 + the trigram's index in that table, 0 for a
 * trigram in no pattern); each pattern then finds its blocks from those ids and the packed chunk
 * counts, which is array reads and no hashing.
 */
export class SharedPass {
  private readonly table: TrigramTable
  private readonly patternIds: ReadonlyArray<Uint16Array>
  private ids: Uint16Array | undefined
  /** The packed chunk counts of one word's patterns (`packedWord`), the last computed. */
  private packed: Int32Array | undefined
  private packedWord = -1
  /** The shared pair maxima (`pairsOf`) last made. */
  private pairs: PairMaxima | undefined
  /** @param candidates how many blocks `starts` returns at most. */
  constructor(private readonly text: string, private readonly patterns: ReadonlyArray<string>, private readonly candidates: number) {
    const { patternIds, table } = patternTable(patterns)
    this.table = table
    this.patternIds = patternIds
  }

  /** Drops the text's trigram ids, packed counts and pair maxima (3.5 bytes per code unit at most); they are computed again if needed. */
  release(): void {
    this.ids = undefined
    this.packed = undefined
    this.packedWord = -1
    this.pairs = undefined
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
    // The previous word's counts and pair maxima are not needed again: dropped before the new ones
    // are made, so the pass holds one word's at a time (3.5 bytes per code unit at most).
    this.packed = undefined
    this.pairs = undefined
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
    const counts = new Int32Array(geometry.window + 2)
    const bound = this.blockBounds(this.packedOf(ids, k), k, geometry, counts)
    const { blocks, window } = geometry
    const limit = Math.max(64, Math.ceil(blocks * maxExactShare))
    // The loop below reads at most limit + 1 blocks of the order.
    const order = byBound(bound, window, counts, limit + 1)
    const top = this.countInOrder(ids, wanted, geometry, order, bound, limit)
    return top === undefined ? this.slideAll(ids, wanted, geometry) : top.starts()
  }

  /** Whether pattern `k`'s block bounds come from pair maxima shared with another pattern of its word (`blockBounds`). */
  private sharesMaxima(k: number, span: number): boolean {
    const first = k - (k % perWord)
    let same = 0
    for (let i = first; i < first + perWord && i < this.patterns.length; i++) {
      const m = this.patterns[i]!.length
      if (spanOf(m - 2) === span && Math.max(1, m >> 1) > chunk) same++
    }
    return same >= 2
  }

  /**
   * Each block's bound, as `chunkBounds` gives it. When the sums fit in a byte, each block covers
   * at least two chunks and another pattern of the word has the same span, from the pair maxima
   * shared by those patterns (`pairMaxima`, made once): a whole block's chunks a..e are covered by
   * the pairs starting at a, a + 2, … (as many as every whole block needs) and at e - 1, so its
   * bound is the largest of a few bytes (three for blocks of 25 to 40 trigrams) instead of a sliding
   * sum over every chunk.
   */
  private blockBounds(packed: Int32Array, k: number, geometry: Blocks, counts: Int32Array): Int32Array {
    const { block, blocks, window } = geometry
    const lane = k % perWord
    const span = spanOf(window)
    if (span > maxByteSpan || block <= chunk || !this.sharesMaxima(k, span)) return this.chunkBounds(packed, lane, geometry, counts)
    const pairs = this.pairsOf(packed, span)
    const max = (lane & 1) === 0 ? pairs.even : pairs.odd
    const shift = 8 * (lane >> 1)
    // A block covers `least` or `least` + 1 chunks, a..e: the `pairCount` pairs from a on, then the pair ending at e.
    const least = ((block - 1) >> chunkShift) + 1
    const pairCount = least >> 1
    const bound = new Int32Array(blocks)
    for (let b = 0, from = 0; b < blocks; b++, from += block) {
      // The last block, cut at the last window, is taken whole: chunk `last` >> chunkShift's sum
      // already reaches the text's last chunk, and the sums after it are parts of it, so the bound
      // is the same; its chunks end before the text's last (block - 1 < window).
      const a = from >> chunkShift
      const e = (from + block - 1) >> chunkShift
      let best = (max[e - 1]! >>> shift) & 255
      for (let i = 0, j = a; i < pairCount; i++, j += 2) best = Math.max(best, (max[j]! >>> shift) & 255)
      const v = Math.min(best, window)
      bound[b] = v
      counts[v]!++
    }
    return bound
  }

  /** The shared pair maxima of `packed` for `span`, kept until another span is asked for or the packed counts change. */
  private pairsOf(packed: Int32Array, span: number): PairMaxima {
    const kept = this.pairs
    if (kept !== undefined && kept.packed === packed && kept.span === span) return kept
    this.pairs = undefined
    const made = pairMaxima(packed, span)
    this.pairs = made
    return made
  }

  /**
   * Each block's bound from lane `lane` of the packed chunk counts: the windows starting in chunk j
   * cover chunks j to e (the chunk of the last trigram the last of them covers), so their hits are
   * at most the hits of chunks j..e; a block's bound is the most of its chunks', at most `window`.
   */
  private chunkBounds(packed: Int32Array, lane: number, { block, blocks, last, window }: Blocks, counts?: Int32Array): Int32Array {
    const chunks = packed.length
    const shift = 4 * lane
    // The last trigram the windows starting in chunk j cover is in chunk j + span - 1 at most.
    const span = spanOf(window)
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
      const v = Math.min(best, window)
      bound[b] = v
      if (counts !== undefined) counts[v]!++
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
