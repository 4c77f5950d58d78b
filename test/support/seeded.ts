/**
 * A seeded linear congruential generator that answers its state's high 24 bits: the same cases on
 * every run. The low bits of such a generator repeat with short periods (the lowest alternates
 * 0, 1, 0, 1), so `next() % 2` on the raw state would draw a fixed pattern, not a coin toss.
 */
export const random = (seed: number) => {
  let state = seed >>> 0
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) >>> 8
}
