/**
 * The service's own API, as the page calls it: the session cookie authenticates (the page never
 * holds a bearer token after signing in), and every state-changing request carries the session's
 * CSRF token in `x-citegate-csrf`.
 */

export interface Session {
  readonly name: string
  readonly csrfToken: string
  readonly expiresAt: string
}

/** A refusal of the service: its typed error (`_tag`, `message` when the page knows it). */
export class ApiError extends Error {
  constructor(readonly status: number, readonly body: { readonly _tag?: string } & Record<string, unknown>) {
    super(`${status} ${body._tag ?? "error"}`)
  }
}

let session: Session | undefined

export const current = (): Session | undefined => session

const readJson = async (response: Response): Promise<any> => {
  const text = await response.text()
  try {
    return JSON.parse(text)
  } catch {
    return { _tag: "NotJson", text: text.slice(0, 200) }
  }
}

const request = async (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<Response> => {
  const headers: Record<string, string> = { ...init.headers }
  if (method !== "GET" && session !== undefined) headers["x-citegate-csrf"] = session.csrfToken
  return fetch(path, { method, headers, credentials: "same-origin", cache: "no-store", ...(init.body === undefined ? {} : { body: init.body }) })
}

export const getJson = async <A>(path: string): Promise<A> => {
  const response = await request("GET", path)
  const body = await readJson(response)
  if (!response.ok) throw new ApiError(response.status, body)
  return body as A
}

export const postJson = async <A>(path: string, body: string): Promise<A> => {
  const response = await request("POST", path, { body, headers: { "content-type": "application/json" } })
  const json = await readJson(response)
  if (!response.ok) throw new ApiError(response.status, json)
  return json as A
}

/** The session the cookie names, if any (after a reload the page asks the service for its CSRF token). */
export const resume = async (): Promise<Session | undefined> => {
  const response = await request("GET", "/v1/session")
  if (!response.ok) return undefined
  session = await response.json() as Session
  return session
}

/** Exchanges a bearer token for a session cookie; the token is not kept. */
export const signIn = async (token: string): Promise<Session> => {
  const response = await fetch("/v1/session", { method: "POST", headers: { authorization: `Bearer ${token}` }, credentials: "same-origin" })
  const body = await readJson(response)
  if (!response.ok) throw new ApiError(response.status, body)
  session = body as Session
  return session
}

export const signOut = async (): Promise<void> => {
  await request("DELETE", "/v1/session")
  session = undefined
}

/**
 * Starts verifying `answer` (EVI1 text) against run `runId` over `POST /v1/stream/answer`, sent as
 * NDJSON deltas. Resolves with the stream id once the response starts; the response body is read to
 * its end in the background (the verification stops when its client goes away), while the page
 * follows the same events with an EventSource on `GET /v1/stream/answer/{id}`.
 */
export const streamAnswer = async (runId: string, answer: string): Promise<string> => {
  const lines: Array<string> = []
  for (let i = 0; i < answer.length; i += 200) lines.push(`${JSON.stringify({ type: "delta", text: answer.slice(i, i + 200) })}\n`)
  const response = await request("POST", `/v1/stream/answer?run=${encodeURIComponent(runId)}`, {
    body: lines.join(""),
    headers: { "content-type": "application/x-ndjson", accept: "application/x-ndjson" }
  })
  if (!response.ok) throw new ApiError(response.status, await readJson(response))
  const id = response.headers.get("citegate-stream-id")
  if (id === null) throw new ApiError(response.status, { _tag: "NoStreamId" })
  const reader = response.body?.getReader()
  if (reader !== undefined) {
    const drain = (): Promise<void> => reader.read().then((step) => (step.done ? undefined : drain()), () => undefined)
    void drain()
  }
  return id
}

/** POSTs `body` as is (a report's JSON text) and returns the status with the parsed answer. */
export const postText = async (path: string, body: string, contentType = "application/json"): Promise<{ readonly status: number; readonly body: any }> => {
  const response = await request("POST", path, { body, headers: { "content-type": contentType } })
  return { status: response.status, body: await readJson(response) }
}

/** The bytes at `path` (a PDF capture's stored body). */
export const getBytes = async (path: string): Promise<Uint8Array> => {
  const response = await request("GET", path)
  if (!response.ok) throw new ApiError(response.status, await readJson(response))
  return new Uint8Array(await response.arrayBuffer())
}
