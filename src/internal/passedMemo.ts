/**
 * A small memory in front of a pure check of strings that sees the same few values again and again
 * (a capture's timestamp, a record's source): the strings that passed are remembered, so a repeat
 * costs one look-up. Bounded in count (when full it is cleared: forgetting only costs a check
 * again) and, when asked, in length (a longer string that passes is checked each time, not kept),
 * so hostile input cannot grow it past `maxEntries × maxLength` code units. A string that fails is
 * never kept: the check words the failure each time.
 *
 * @internal
 */

export interface PassedMemo {
  /** `check(s)`, remembered when it passed. */
  (s: string): boolean
  /** How many strings are remembered now. */
  readonly size: () => number
}

export const passedMemo = (
  check: (s: string) => boolean,
  bounds: { readonly maxEntries: number; readonly maxLength?: number | undefined }
): PassedMemo => {
  const passed = new Set<string>()
  const maxLength = bounds.maxLength ?? Infinity
  const memo = (s: string): boolean => {
    if (passed.has(s)) return true
    if (!check(s)) return false
    if (s.length > maxLength) return true
    if (passed.size >= bounds.maxEntries) passed.clear()
    passed.add(s)
    return true
  }
  return Object.assign(memo, { size: () => passed.size })
}
