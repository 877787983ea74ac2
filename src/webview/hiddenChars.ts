/**
 * Makes invisible characters visible. Fixture text can carry characters a reader cannot see but a
 * model reads: zero-width characters, bidi controls that reorder what is shown, Unicode tag
 * characters (U+E0000-E007F) that smuggle ASCII, variation selectors, a BOM, C0/C1 controls. Each
 * one is shown as a marker like `⟨U+200B⟩` instead of the character itself; a run of tag
 * characters is grouped, followed by its decoded ASCII as text (`hidden tag text "…"`).
 *
 * Text without such characters (nearly all of it) becomes one text node: the scan is a single
 * native regex test, and the text is split only where a match occurs.
 */

/**
 * C0/C1 controls except tab, newline and carriage return; soft hyphen; combining grapheme joiner;
 * Arabic letter mark; Hangul fillers; Khmer/Mongolian invisible vowels and separator; zero-width
 * space/joiners and direction marks; bidi embeddings, overrides and isolates; word joiner and
 * invisible operators; deprecated format controls; variation selectors; BOM; interlinear
 * annotation controls; tag characters and variation selectors supplement (surrogate pairs).
 */
const HIDDEN_SOURCE =
  '[\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F' +
  '\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF9-\\uFFFB]' +
  '|\\uDB40[\\uDC00-\\uDC7F\\uDD00-\\uDDEF]';

const HIDDEN_TEST = new RegExp(HIDDEN_SOURCE);

const NAMES: Record<number, string> = {
  0x00ad: 'SOFT HYPHEN',
  0x034f: 'COMBINING GRAPHEME JOINER',
  0x061c: 'ARABIC LETTER MARK',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION',
  0x2062: 'INVISIBLE TIMES',
  0x2063: 'INVISIBLE SEPARATOR',
  0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'BYTE ORDER MARK (ZERO WIDTH NO-BREAK SPACE)',
  0xe0001: 'LANGUAGE TAG',
  0xe007f: 'CANCEL TAG',
};

export function hiddenCharName(cp: number): string {
  const known = NAMES[cp];
  if (known) return known;
  if (cp >= 0xe0020 && cp <= 0xe007e) return `TAG ${JSON.stringify(String.fromCharCode(cp - 0xe0000))}`;
  if ((cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef)) return 'VARIATION SELECTOR';
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return 'CONTROL CHARACTER';
  return 'INVISIBLE FORMAT CHARACTER';
}

export function codePointLabel(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

function isTag(cp: number): boolean {
  return cp >= 0xe0000 && cp <= 0xe007f;
}

export function hasHiddenChars(text: string): boolean {
  return HIDDEN_TEST.test(text);
}

/** `text` with each hidden character replaced by its marker, for places that take only a string (options, tooltips). */
export function visibleString(text: string): string {
  if (!HIDDEN_TEST.test(text)) return text;
  return text.replace(new RegExp(HIDDEN_SOURCE, 'g'), (c) => `⟨${codePointLabel(c.codePointAt(0) ?? 0)}⟩`);
}

/** A node showing `text` with hidden characters marked: a bare text node in the usual case. */
export function visibleNode(text: string): Node {
  if (!HIDDEN_TEST.test(text)) return document.createTextNode(text);
  const span = document.createElement('span');
  appendVisibleText(span, text);
  return span;
}

/** Where a long id or name may break: after these separators (`first_name`, `docs/a.md`, `ev-12`). */
const SEPARATORS = /[_\-/.:@]+/g;

/**
 * Like `visibleNode`, with a line-break opportunity (`<wbr>`) after each separator, so that an id
 * that must wrap in a narrow table breaks as `first_` / `name_1`, not inside a word.
 */
export function breakableNode(text: string): Node {
  SEPARATORS.lastIndex = 0;
  if (!SEPARATORS.test(text)) return visibleNode(text);
  const frag = document.createDocumentFragment();
  let last = 0;
  SEPARATORS.lastIndex = 0;
  for (let m = SEPARATORS.exec(text); m !== null; m = SEPARATORS.exec(text)) {
    const end = m.index + m[0].length;
    if (end >= text.length) break;
    appendVisibleText(frag, text.slice(last, end));
    frag.appendChild(document.createElement('wbr'));
    last = end;
  }
  appendVisibleText(frag, text.slice(last));
  return frag;
}

function marker(cp: number): HTMLSpanElement {
  const span = document.createElement('span');
  span.className = 'hidden-char';
  span.title = `${codePointLabel(cp)} ${hiddenCharName(cp)}`;
  span.textContent = `⟨${codePointLabel(cp)}⟩`;
  return span;
}

/**
 * Appends `text` to `parent`, as one text node when it holds no hidden characters, otherwise as
 * text nodes around marker spans. Returns how many hidden characters were marked.
 */
export function appendVisibleText(parent: Node, text: string): number {
  if (text.length === 0) return 0;
  if (!HIDDEN_TEST.test(text)) {
    parent.appendChild(document.createTextNode(text));
    return 0;
  }
  const re = new RegExp(HIDDEN_SOURCE, 'g');
  let last = 0;
  let count = 0;
  let tagRun: HTMLSpanElement | undefined;
  let tagText = '';
  let tagEnd = -1;
  const closeRun = (): void => {
    if (!tagRun) return;
    const decoded = `Hidden tag text: ${JSON.stringify(tagText)}`;
    tagRun.title = decoded;
    // The decoded text is text on the page, for the eye and for a screen reader alike (a label on
    // a plain span is not read); the run's markers, one per character, are left to the eye.
    for (const m of Array.from(tagRun.children)) m.setAttribute('aria-hidden', 'true');
    const shown = document.createElement('span');
    shown.className = 'hidden-decoded';
    shown.textContent = `hidden tag text ${JSON.stringify(tagText)}`;
    tagRun.appendChild(shown);
    tagRun = undefined;
    tagText = '';
  };
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const cp = m[0].codePointAt(0) ?? 0;
    if (m.index > last) {
      closeRun();
      parent.appendChild(document.createTextNode(text.slice(last, m.index)));
    }
    count++;
    if (isTag(cp)) {
      // Consecutive tag characters form one group, so the smuggled ASCII can be read at once.
      if (!tagRun || tagEnd !== m.index) {
        closeRun();
        tagRun = document.createElement('span');
        tagRun.className = 'hidden-run';
        parent.appendChild(tagRun);
      }
      tagRun.appendChild(marker(cp));
      if (cp >= 0xe0020 && cp <= 0xe007e) tagText += String.fromCharCode(cp - 0xe0000);
      tagEnd = m.index + m[0].length;
    } else {
      closeRun();
      parent.appendChild(marker(cp));
    }
    last = m.index + m[0].length;
  }
  closeRun();
  if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  return count;
}
