/**
 * Where a section of its own (signatures, the judge's review, recorded human review) goes in a
 * rendered page, written once for every such section.
 *
 * @since 0.3.0
 */

/** A section's three renderings of one value. */
export interface SectionRenderers<A> {
  readonly html: (value: A) => string
  readonly markdown: (value: A) => string
  readonly text: (value: A) => string
}

/**
 * `page` with the section of `value` added: before `</body>` in HTML (at the end when there is
 * none), after the page in Markdown (one line feed between) and otherwise (text). The caller decides
 * when there is no section and which formats carry the value in their own data instead (JSON).
 */
export const withSection = <A>(format: string, page: string, value: A, section: SectionRenderers<A>): string => {
  if (format === "html") {
    const at = page.lastIndexOf("</body>")
    const html = section.html(value)
    return at < 0 ? page + html : `${page.slice(0, at)}${html}\n${page.slice(at)}`
  }
  return format === "markdown" ? `${page.replace(/\n*$/, "\n")}${section.markdown(value)}` : `${page}${section.text(value)}`
}
