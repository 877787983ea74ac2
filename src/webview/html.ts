/**
 * The HTML shell of the preview webview and its Content-Security-Policy. Built by the extension
 * host (src/extension/previewPanel.ts) and, unchanged, by the webview tests' host page, so the
 * tests run the bundle under exactly the policy the real panel uses. Pure: no `vscode`, no DOM;
 * not part of the browser bundle.
 */

export interface WebviewHtmlOptions {
  /** `webview.cspSource`: the origin the webview may load its own resources from. */
  cspSource: string;
  /** A fresh random nonce (base64/hex, no quotes) for this render. */
  nonce: string;
  /** URIs (as strings) of dist/media/webview.js and dist/media/webview.css. */
  scriptUri: string;
  styleUri: string;
  /** Page title (the panel title is set separately by the host). */
  title?: string;
}

/**
 * The policy: nothing by default; scripts only with this render's nonce; styles from the
 * extension's media or with the nonce; images from the media or data: URIs; fonts from the media.
 * No remote origins, no inline handlers, no eval.
 */
export function previewCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
  ].join('; ');
}

function attr(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function previewHtml(o: WebviewHtmlOptions): string {
  if (!/^[A-Za-z0-9+/=_-]{16,}$/.test(o.nonce)) throw new Error('nonce must be at least 16 base64/hex characters');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(previewCsp(o.cspSource, o.nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${attr(o.styleUri)}" nonce="${attr(o.nonce)}">
<title>${attr(o.title ?? 'Context Lens Preview')}</title>
</head>
<body>
<div id="root"></div>
<script nonce="${attr(o.nonce)}" src="${attr(o.scriptUri)}"></script>
</body>
</html>
`;
}
