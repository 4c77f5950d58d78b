/** The records the crash child writes, one per index, so that the test can tell each complete record. */
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../src/Domain.js"

export const crashSource = (index: number) => `https://crash.example/source-${index}.txt` as SourceUrl

/** 0.5 to 2 MiB of text with control characters (escaped six-fold in the record), a non-ASCII letter and a pair. */
export const crashRecord = (index: number) => {
  const unit = `line ${index}: \u0001\u0002 net sales é 😀\n`
  const bytes = (1 + (index % 4)) * 512 * 1024
  return makeCaptureRecord({
    source: crashSource(index),
    text: unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit))),
    accessedAt: "2026-11-30T00:00:00.000Z" as Rfc3339Utc,
    contentType: "text/plain"
  })
}
