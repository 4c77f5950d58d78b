/**
 * Content-Type parsing shared by the dispatcher and the HTML extractors (a
 * `<meta charset>` is checked with the same labels).
 *
 * @since 0.3.0
 */

/** The WHATWG labels of UTF-8. */
export const isUtf8Label = (label: string): boolean =>
  ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"].includes(
    label.trim().toLowerCase()
  )

/** A Content-Type split into its media type (lower case) and charset parameter (unquoted), if any. */
export const parseContentType = (contentType: string): { readonly mediaType: string; readonly charset: string | undefined } => {
  const [mediaType = "", ...parameters] = contentType.split(";")
  let charset: string | undefined
  for (const parameter of parameters) {
    const match = /^\s*charset\s*=\s*(?:"([^"]*)"|([^\s;]*))\s*$/i.exec(parameter)
    if (match !== null) charset = match[1] ?? match[2]
  }
  return { mediaType: mediaType.trim().toLowerCase(), charset }
}
