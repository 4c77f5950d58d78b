/**
 * Reading citegate's streamed events in tests: the NDJSON event reader of a `fetch` response (one
 * decoded `StreamEvent` at a time, or all up to a type), and the checks every stream must pass.
 */
import { assert } from "@effect/vitest"
import * as AnswerStream from "../../src/server/AnswerStream.js"

export type Event = AnswerStream.StreamEvent
export type Done = Extract<Event, { type: "done" }>

/** NDJSON events of a response, one at a time (strictly decoded). */
export const ndjsonReader = (response: Response) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffered = ""
  const next = async (): Promise<Event | undefined> => {
    while (!buffered.includes("\n")) {
      const { done, value } = await reader.read()
      if (done) return undefined
      buffered += decoder.decode(value, { stream: true })
    }
    const nl = buffered.indexOf("\n")
    const text = buffered.slice(0, nl)
    buffered = buffered.slice(nl + 1)
    return AnswerStream.decodeEvent(text)
  }
  const until = async (type: Event["type"]): Promise<Array<Event>> => {
    const out: Array<Event> = []
    for (let e = await next(); e !== undefined; e = await next()) {
      out.push(e)
      if (e.type === type) return out
    }
    throw new Error(`the stream ended before a ${type} event`)
  }
  return { next, until, cancel: () => reader.cancel() }
}

export const byType = <T extends Event["type"]>(events: ReadonlyArray<Event>, type: T) =>
  events.filter((e): e is Extract<Event, { type: T }> => e.type === type)

export const streamedText = (events: ReadonlyArray<Event>) => byType(events, "delta").map((e) => e.text).join("")

/** Every stream: ids 1, 2, 3, …, exactly one `done`, last. */
export const wellFormed = (events: ReadonlyArray<Event>): Done => {
  assert.deepStrictEqual(events.map((e) => e.id), events.map((_, i) => i + 1))
  assert.strictEqual(byType(events, "done").length, 1)
  const done = events.at(-1)!
  assert.strictEqual(done.type, "done")
  return done as Done
}
