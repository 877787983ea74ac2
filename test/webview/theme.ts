/**
 * The subset of VS Code theme variables the preview uses, with the values of the Dark Modern,
 * Light Modern and Dark High Contrast themes, so the host page looks like a real panel. VS Code sets these on <html> in
 * every webview; the test host page sets them in a nonce'd <style>.
 */

export const DARK_MODERN: Record<string, string> = {
  'font-family': '"Segoe WPC", "Segoe UI", "Ubuntu", "Droid Sans", "DejaVu Sans", sans-serif',
  'font-size': '13px',
  'font-weight': 'normal',
  'editor-font-family': '"Droid Sans Mono", "DejaVu Sans Mono", monospace',
  'editor-font-size': '13px',
  'editor-background': '#1f1f1f',
  'editor-foreground': '#cccccc',
  'editorWidget-background': '#202020',
  'descriptionForeground': '#9d9d9d',
  'panel-border': '#2b2b2b',
  'focusBorder': '#0078d4',
  'textLink-foreground': '#4daafc',
  'textCodeBlock-background': '#2b2b2b',
  'textPreformat-foreground': '#d0d0d0',
  'errorForeground': '#f85149',
  'editorWarning-foreground': '#cca700',
  'editorInfo-foreground': '#3794ff',
  'button-background': '#0078d4',
  'button-foreground': '#ffffff',
  'button-hoverBackground': '#026ec1',
  'button-border': '#ffffff12',
  'button-secondaryBackground': '#313131',
  'button-secondaryForeground': '#cccccc',
  'button-secondaryHoverBackground': '#3c3c3c',
  'dropdown-background': '#313131',
  'dropdown-foreground': '#cccccc',
  'dropdown-border': '#3c3c3c',
  'badge-background': '#616161',
  'badge-foreground': '#f8f8f8',
  'list-hoverBackground': '#2a2d2e',
  'inputValidation-errorBackground': '#5a1d1d',
  'charts-foreground': '#cccccc',
  'charts-lines': '#cccccc80',
  'charts-red': '#f14c4c',
  'charts-blue': '#3794ff',
  'charts-yellow': '#cca700',
  'charts-orange': '#d18616',
  'charts-green': '#89d185',
  'charts-purple': '#b180d7',
  'terminal-ansiCyan': '#11a8cd',
  'terminal-ansiMagenta': '#bc3fbc',
};

export const LIGHT_MODERN: Record<string, string> = {
  ...DARK_MODERN,
  'editor-background': '#ffffff',
  'editor-foreground': '#3b3b3b',
  'editorWidget-background': '#f8f8f8',
  'descriptionForeground': '#3b3b3b',
  'panel-border': '#e5e5e5',
  'textLink-foreground': '#005fb8',
  'textCodeBlock-background': '#f8f8f8',
  'textPreformat-foreground': '#3b3b3b',
  'errorForeground': '#f85149',
  'editorWarning-foreground': '#bf8803',
  'editorInfo-foreground': '#1a85ff',
  'button-background': '#005fb8',
  'button-hoverBackground': '#0258a8',
  'button-border': '#0000001a',
  'button-secondaryBackground': '#e5e5e5',
  'button-secondaryForeground': '#3b3b3b',
  'button-secondaryHoverBackground': '#cccccc',
  'dropdown-background': '#ffffff',
  'dropdown-foreground': '#3b3b3b',
  'dropdown-border': '#cecece',
  'badge-background': '#cccccc',
  'badge-foreground': '#3b3b3b',
  'list-hoverBackground': '#f2f2f2',
  'inputValidation-errorBackground': '#f2dede',
  'charts-foreground': '#616161',
  'charts-lines': '#61616180',
  'charts-red': '#e51400',
  'charts-blue': '#1a85ff',
  'charts-yellow': '#bf8803',
  'charts-orange': '#d18616',
  'charts-green': '#388a34',
  'charts-purple': '#652d90',
  'terminal-ansiCyan': '#0598bc',
  'terminal-ansiMagenta': '#bc05bc',
};

/**
 * Dark High Contrast: the `hcDark` defaults of VS Code's colour registry (foreground #FFFFFF on
 * black, contrast border #6FC3DF, focus border #F38518, warning #FFD370, error #F48771, link
 * #21A6FF). Colours the registry leaves unset in this theme (button background, list hover) are
 * left out, as VS Code leaves them out of a webview's variables, so the panel's own fallbacks show.
 */
export const HIGH_CONTRAST: Record<string, string> = {
  ...Object.fromEntries(Object.entries(DARK_MODERN).filter(([k]) => !['button-background', 'button-hoverBackground', 'button-secondaryBackground', 'button-secondaryHoverBackground', 'list-hoverBackground'].includes(k))),
  'editor-background': '#000000',
  'editor-foreground': '#ffffff',
  'editorWidget-background': '#0c141f',
  'descriptionForeground': '#ffffffb3',
  'panel-border': '#6fc3df',
  'contrastBorder': '#6fc3df',
  'contrastActiveBorder': '#f38518',
  'focusBorder': '#f38518',
  'textLink-foreground': '#21a6ff',
  'textCodeBlock-background': '#000000',
  'textPreformat-foreground': '#ffffff',
  'errorForeground': '#f48771',
  'editorWarning-foreground': '#ffd370',
  'editorInfo-foreground': '#3794ff',
  'button-foreground': '#ffffff',
  'button-border': '#6fc3df',
  'button-secondaryForeground': '#ffffff',
  'dropdown-background': '#000000',
  'dropdown-foreground': '#ffffff',
  'dropdown-border': '#6fc3df',
  'badge-background': '#000000',
  'badge-foreground': '#ffffff',
  'inputValidation-errorBackground': '#000000',
  'charts-foreground': '#ffffff',
  'charts-lines': '#ffffff80',
  'charts-red': '#f48771',
  'charts-blue': '#3794ff',
  'charts-yellow': '#ffd370',
  'charts-orange': '#ab5a00',
  'charts-green': '#89d185',
  'charts-purple': '#b180d7',
};

/** The themes the tests render in, by the name the host page takes (`?theme=`). */
export const THEMES = { dark: DARK_MODERN, light: LIGHT_MODERN, hc: HIGH_CONTRAST } as const;
export type ThemeName = keyof typeof THEMES;

export function themeCss(vars: Record<string, string>): string {
  return `:root {\n${Object.entries(vars)
    .map(([k, v]) => `  --vscode-${k}: ${v};`)
    .join('\n')}\n}\n`;
}
