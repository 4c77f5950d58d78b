/**
 * BedrockStream.Accumulator: ConverseStream events (as the AWS SDK yields them, one member each)
 * to the Converse response's content blocks.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as BedrockStream from "../src/answer/BedrockStream.js"

const citation = (text: string, start: number) => ({
  title: "Source 1",
  sourceContent: [{ text }],
  location: { documentChar: { documentIndex: 0, start, end: start + [...text].length } }
})

const run = (events: ReadonlyArray<unknown>): Either.Either<ReadonlyArray<BedrockStream.ConverseBlock>, BedrockStream.BedrockStreamFailure> => {
  const accumulator = new BedrockStream.Accumulator()
  for (const event of events) {
    const pushed = accumulator.push(event)
    if (Either.isLeft(pushed)) return Either.left(pushed.left)
  }
  return accumulator.end()
}

const answer = [
  { messageStart: { role: "assistant" } },
  { contentBlockDelta: { contentBlockIndex: 0, delta: { text: "Here is a summary. " } } },
  { contentBlockStop: { contentBlockIndex: 0 } },
  { contentBlockDelta: { contentBlockIndex: 1, delta: { text: "The 🚲 fleet grew " } } },
  { contentBlockDelta: { contentBlockIndex: 1, delta: { text: "to 42 bikes." } } },
  { contentBlockDelta: { contentBlockIndex: 1, delta: { citation: citation("The 🚲 fleet grew to 42 bikes", 18) } } },
  { contentBlockDelta: { contentBlockIndex: 1, delta: { citation: citation("42 bikes", 39) } } },
  { contentBlockStop: { contentBlockIndex: 1 } },
  { contentBlockStart: { contentBlockIndex: 2, start: { toolUse: { toolUseId: "t", name: "lookup" } } } },
  { contentBlockDelta: { contentBlockIndex: 2, delta: { toolUse: { input: "{}" } } } },
  { contentBlockStop: { contentBlockIndex: 2 } },
  { messageStop: { stopReason: "end_turn" } },
  { metadata: { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, metrics: { latencyMs: 1 } } }
]

describe("BedrockStream.Accumulator", () => {
  it("text deltas join; citation deltas make a citationsContent block with every citation; tool use is skipped", () => {
    const blocks = run(answer)
    assert.isTrue(Either.isRight(blocks))
    if (Either.isLeft(blocks)) return
    assert.deepStrictEqual(blocks.right, [
      { text: "Here is a summary. " },
      {
        citationsContent: {
          content: [{ text: "The 🚲 fleet grew to 42 bikes." }],
          citations: [citation("The 🚲 fleet grew to 42 bikes", 18), citation("42 bikes", 39)]
        }
      }
    ])
  })

  it("typed failures: a stream exception, a cut stream, a delta for a block that is not open, text in a tool-use block", () => {
    const error = run([answer[0], { throttlingException: { message: "Too many requests" } }])
    assert.isTrue(Either.isLeft(error) && error.left._tag === "ProviderStreamError" && error.left.errorType === "throttlingException")
    const cut = run(answer.slice(0, 5))
    assert.isTrue(Either.isLeft(cut) && cut.left._tag === "ProviderStreamIncomplete" && cut.left.at === "inside-block")
    const late = run([...answer.slice(0, 3), { contentBlockDelta: { contentBlockIndex: 0, delta: { text: "x" } } }])
    assert.isTrue(Either.isLeft(late) && late.left._tag === "ProviderEventInvalid")
    const tool = run([answer[0], answer[8], { contentBlockDelta: { contentBlockIndex: 2, delta: { text: "x" } } }])
    assert.isTrue(Either.isLeft(tool) && tool.left._tag === "ProviderEventInvalid")
    const noStop = run(answer.slice(0, 11))
    assert.isTrue(Either.isLeft(noStop) && noStop.left._tag === "ProviderStreamIncomplete" && noStop.left.at === "before-message-stop")
  })
  it("a block index that is not a non-negative safe integer, a delta that is not an object or text that is not a string: ProviderEventInvalid", () => {
    const start = answer[0]
    const detail = (events: ReadonlyArray<unknown>) => {
      const outcome = run([start, ...events])
      return Either.isLeft(outcome) && outcome.left._tag === "ProviderEventInvalid" ? outcome.left.detail : "accepted"
    }
    for (const index of [-1, 0.5, "0", null, 2 ** 53]) {
      assert.strictEqual(detail([{ contentBlockDelta: { contentBlockIndex: index, delta: { text: "x" } } }]), "contentBlockDelta without a contentBlockIndex and a delta")
      assert.strictEqual(detail([{ contentBlockStart: { contentBlockIndex: index } }]), "contentBlockStart without a contentBlockIndex")
    }
    assert.strictEqual(detail([{ contentBlockStart: {} }]), "contentBlockStart without a contentBlockIndex")
    for (const delta of [null, "text", 7, { text: 7 }, { text: null }]) {
      assert.strictEqual(detail([{ contentBlockDelta: { contentBlockIndex: 0, delta } }]), "contentBlockDelta without a contentBlockIndex and a delta")
    }
    assert.strictEqual(detail([{ contentBlockDelta: { contentBlockIndex: 0 } }]), "contentBlockDelta without a contentBlockIndex and a delta")
    const opened = { contentBlockDelta: { contentBlockIndex: 0, delta: { text: "x" } } }
    assert.strictEqual(detail([opened, { contentBlockStop: { contentBlockIndex: "0" } }]), "contentBlockStop for a block that is not open")
    // Any citation value is passed on (the response's strict decode judges it); unknown delta keys are ignored.
    assert.strictEqual(detail([opened, { contentBlockDelta: { contentBlockIndex: 0, delta: { text: "y", extra: 1 } } }, { contentBlockStop: { contentBlockIndex: 0 } }]), "accepted")
  })
})

describe("BedrockStream.Accumulator.pushMember", () => {
  // The wire's route (an :event-type and a payload) must be push({ [name]: body }) exactly: the same
  // blocks, the same failures, the same event numbers in them.
  const viaMembers = (events: ReadonlyArray<Record<string, unknown>>) => {
    const accumulator = new BedrockStream.Accumulator()
    for (const event of events) {
      const [name, body] = Object.entries(event)[0]!
      const pushed = accumulator.pushMember(name, body)
      if (Either.isLeft(pushed)) return Either.left(pushed.left)
    }
    return accumulator.end()
  }

  it("gives what push gives, on the answer and on every prefix and misordering of it", () => {
    const cases: Array<ReadonlyArray<Record<string, unknown>>> = [answer]
    for (let n = 0; n < answer.length; n++) cases.push(answer.slice(0, n), [...answer.slice(0, n), ...answer.slice(n + 1)], [answer[n]!, ...answer])
    cases.push([answer[0]!, { throttlingException: { message: "slow down" } }], [answer[0]!, { __proto__x: {} }, ...answer.slice(1)])
    for (const events of cases) assert.deepStrictEqual(viaMembers(events), run(events))
  })

  it("a refused non-event still counts: the next failure names the same event number", () => {
    const accumulator = new BedrockStream.Accumulator()
    assert.isTrue(Either.isLeft(accumulator.push(7)))
    assert.isTrue(Either.isLeft(accumulator.push({ a: {}, b: {} })))
    assert.strictEqual(accumulator.count, 2)
    const next = accumulator.pushMember("contentBlockStop", { contentBlockIndex: 0 })
    assert.isTrue(Either.isLeft(next))
    if (Either.isLeft(next)) assert.strictEqual((next.left as { event?: number }).event, 3)
  })
})
