/**
 * When a control's new value becomes a request to the host. Every commit costs a re-assembly, so a
 * value is committed when the user means it, not at every step on the way: a choice made with
 * the pointer (an option picked from an open list, a slider released) at once; keyboard steps
 * (arrow keys, Home, End, Page Up/Down, a typed letter on a slider or a closed picker) once the keys stop for
 * `KEY_COMMIT_MS`, at Enter, or when focus leaves the control.
 */

/** Quiet time after the last keyboard step before it is committed. */
export const KEY_COMMIT_MS = 800;

const STEP_KEYS = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);

/** Calls `commit` for the control's changes as described above; `commit` reads the control's value itself. */
export function commitOnIntent(control: HTMLElement, commit: () => void): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stepping = false;
  const cancel = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  const flush = (): void => {
    if (timer === undefined) return;
    cancel();
    commit();
  };
  control.addEventListener('keydown', (e) => {
    // Alt+Arrow opens a picker's list, and Space too; the choice made there arrives as a change
    // of its own. Typing a letter jumps a closed picker to an option, a step like an arrow key.
    const typed = e.key.length === 1 && e.key !== ' ';
    if ((STEP_KEYS.has(e.key) || typed) && !e.altKey && !e.ctrlKey && !e.metaKey) stepping = true;
    else if (e.key === 'Enter') flush();
  });
  control.addEventListener('change', () => {
    cancel();
    if (stepping) {
      stepping = false;
      timer = setTimeout(() => {
        timer = undefined;
        commit();
      }, KEY_COMMIT_MS);
    } else {
      commit();
    }
  });
  control.addEventListener('blur', flush);
}

/** A slider step that fits its range: 1, 2 or 5 times a power of ten, about a hundredth of `max`. */
export function sliderStep(max: number): number {
  const target = max / 100;
  if (target <= 1) return 1;
  const pow = 10 ** Math.floor(Math.log10(target));
  return [5, 2, 1].map((k) => k * pow).find((s) => s <= target) ?? pow;
}
