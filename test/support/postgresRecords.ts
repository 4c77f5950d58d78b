/** The record worker process `INDEX` writes in test/postgres.test.ts (all of the same source). */
import { makeCaptureRecord, type Rfc3339Utc, type SourceUrl } from "../../src/Domain.js"

export const childRecord = (index: string) =>
  makeCaptureRecord({
    source: "https://reports.northwind.test/q3-sales.txt" as SourceUrl,
    text: `written by worker ${index}`,
    accessedAt: "2026-10-01T09:30:00.000Z" as Rfc3339Utc,
    contentType: "text/plain"
  })
