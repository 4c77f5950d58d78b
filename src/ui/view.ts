/** What a page gets from the router: its root element, a title, navigation, and clean-up on leaving. */
export interface View {
  readonly root: HTMLElement
  readonly title: (text: string) => void
  readonly go: (hash: `#/${string}`) => void
  readonly reload: () => void
  readonly onLeave: (cleanup: () => void) => void
}
